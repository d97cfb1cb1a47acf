"""The shadow execution module: hashes, and /etc/shadow entries as root."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import warnings

import pytest

from briny.common.loader import minion_mods


@pytest.fixture
def salt():
    return minion_mods({"id": "t"})


def test_gen_password(salt) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        first = salt["shadow.gen_password"]("secret", crypt_salt="abcdefgh")
        assert first.startswith("$6$abcdefgh$")
        assert salt["shadow.gen_password"]("secret", crypt_salt="abcdefgh") == first
        assert salt["shadow.gen_password"]("secret", crypt_salt="abcdefgh", algorithm="sha256").startswith("$5$")
        assert salt["shadow.gen_password"]("secret") != first
    assert salt["shadow.default_hash"]() == "!"


@pytest.fixture
def name():
    user = "brinytest" + secrets.token_hex(3)
    yield user
    for cmd in (["userdel", "-r", user], ["groupdel", user]):
        subprocess.run(cmd, capture_output=True, timeout=60, check=False)


@pytest.mark.host  # adds users or groups on this host
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("chpasswd") is None, reason="needs root and shadow-utils")
def test_info_and_setters(salt, name: str) -> None:
    assert subprocess.run(["useradd", "-M", name], timeout=60).returncode == 0
    info = salt["shadow.info"](name)
    assert list(info) == ["name", "passwd", "lstchg", "min", "max", "warn", "inact", "expire"]
    assert info["passwd"] == "!" and info["expire"] == -1
    assert salt["shadow.set_password"](name, "$6$x$y") and salt["shadow.info"](name)["passwd"] == "$6$x$y"
    assert salt["shadow.set_maxdays"](name, 100) and salt["shadow.info"](name)["max"] == 100
    assert salt["shadow.set_warndays"](name, 3) and salt["shadow.info"](name)["warn"] == 3
    assert salt["shadow.lock_password"](name) and salt["shadow.info"](name)["passwd"] == "!$6$x$y"
    assert salt["shadow.unlock_password"](name) and salt["shadow.del_password"](name)
    assert salt["shadow.info"](name)["passwd"] == ""
    assert salt["shadow.info"]("nosuchuser-briny")["passwd"] == ""
