"""The user execution module: reads anywhere, real accounts as root (random names, removed after)."""

from __future__ import annotations

import grp
import os
import pwd
import secrets
import shutil
import subprocess

import pytest

from briny.common.loader import minion_mods

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("useradd") is None, reason="needs root and shadow-utils"
)


@pytest.fixture
def salt():
    return minion_mods({"id": "t"})


def test_info_shape(salt) -> None:
    info = salt["user.info"]("root")
    assert list(info) == [
        "gid",
        "groups",
        "home",
        "name",
        "passwd",
        "shell",
        "uid",
        "fullname",
        "roomnumber",
        "workphone",
        "homephone",
        "other",
    ]
    assert info["uid"] == 0 and "root" in info["groups"]
    assert salt["user.info"]("nosuchuser-briny") == {}
    assert salt["user.list_groups"]("nosuchuser-briny") == []
    assert "root" in salt["user.list_users"]()


@pytest.fixture
def name():
    user = "brinytest" + secrets.token_hex(3)
    yield user
    for cmd in (["userdel", "-r", user], ["groupdel", user]):
        subprocess.run(cmd, capture_output=True, timeout=60, check=False)


@pytest.mark.host  # adds users or groups on this host
@needs_root
def test_add_change_delete(salt, name: str) -> None:
    assert salt["user.add"](name, shell="/bin/sh", fullname="A B", roomnumber="1", createhome=False) is True
    info = salt["user.info"](name)
    assert (info["shell"], info["fullname"], info["roomnumber"], info["groups"]) == ("/bin/sh", "A B", "1", [name])
    assert salt["user.chshell"](name, "/bin/bash") and pwd.getpwnam(name).pw_shell == "/bin/bash"
    assert salt["user.chhomephone"](name, "555") and salt["user.info"](name)["homephone"] == "555"
    assert salt["user.info"](name)["fullname"] == "A B"  # other GECOS fields kept
    assert salt["user.chgroups"](name, ["users"]) and name in grp.getgrnam("users").gr_mem
    assert salt["user.chgroups"](name, []) and name not in grp.getgrnam("users").gr_mem
    assert salt["user.primary_group"](name) == name
    assert salt["user.add"](name) is False  # exists already
    assert "exists" in salt.pack["__context__"]["user.error"]
    assert salt["user.delete"](name) is True and salt["user.info"](name) == {}


@pytest.mark.host  # adds users or groups on this host
@needs_root
def test_bad_uid_fails_with_reason(salt, name: str) -> None:
    assert salt["user.add"](name, uid="notanumber", createhome=False) is False
    assert "invalid user ID" in salt.pack["__context__"]["user.error"]
