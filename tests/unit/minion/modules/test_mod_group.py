"""The group execution module: reads anywhere, real groups as root (random names, removed after)."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess

import pytest

from briny.common.loader import minion_mods


@pytest.fixture
def salt():
    return minion_mods({"id": "t"})


def test_info_shape(salt) -> None:
    root = salt["group.info"]("root")
    assert list(root) == ["name", "passwd", "gid", "members"] and root["gid"] == 0
    assert salt["group.info"](0)["name"] == "root"
    assert salt["group.info"]("nosuchgroup-briny") == {}
    assert "root" in salt["group.list_groups"]()


@pytest.fixture
def name():
    group = "brinytest" + secrets.token_hex(3)
    yield group
    subprocess.run(["groupdel", group], capture_output=True, timeout=60, check=False)


@pytest.mark.host  # adds users or groups on this host
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("groupadd") is None, reason="needs root and shadow-utils")
def test_add_members_chgid_delete(salt, name: str) -> None:
    assert salt["group.add"](name, system=True) is True
    assert salt["group.info"](name)["gid"] < 1000
    assert salt["group.members"](name, "root,daemon") and salt["group.info"](name)["members"] == ["root", "daemon"]
    assert salt["group.deluser"](name, "daemon") and salt["group.info"](name)["members"] == ["root"]
    assert salt["group.deluser"](name, "daemon") is True
    assert salt["group.adduser"](name, "bin") and "bin" in salt["group.info"](name)["members"]
    free = next(g for g in range(47900, 48900) if not salt["group.info"](g))
    assert salt["group.chgid"](name, free) and salt["group.info"](name)["gid"] == free
    assert salt["group.add"](name) is False
    assert salt["group.delete"](name) is True and salt["group.info"](name) == {}
