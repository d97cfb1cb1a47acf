"""group.present / group.absent on real groups (root only; random names, removed by name after)."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from typing import Any

import pytest

from briny.common import loader


def _states(test: bool = False) -> Any:
    opts = {"test": test, "id": "t"}
    return loader.states(opts, loader.minion_mods(opts))


def test_conflicting_options() -> None:
    ret = _states()["group.present"]("g", members=["a"], addusers=["b"])
    assert ret["result"] is None and ret["comment"].startswith('Error: Conflicting options "members"')
    ret = _states()["group.present"]("g", addusers=["a"], delusers=["a"])
    assert ret["comment"] == "Error. Same user(s) can not be added and deleted simultaneously"
    assert _states()["group.present"]("g", gid="abc")["comment"] == "Invalid gid: abc"


@pytest.fixture
def name():
    group = "brinytest" + secrets.token_hex(3)
    yield group
    for made in (group, group + "x"):
        subprocess.run(["groupdel", made], capture_output=True, timeout=60, check=False)


@pytest.mark.host  # adds users or groups on this host
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("groupadd") is None, reason="needs root and shadow-utils")
def test_present_members_absent(name: str) -> None:
    assert _states(True)["group.present"](name)["comment"] == f"Group {name} set to be added"
    st = _states()
    ret = st["group.present"](name, members=["root"])
    assert ret["comment"] == f"New group {name} created"
    assert ret["changes"]["members"] == ["root"] and set(ret["changes"]) == {"name", "passwd", "gid", "members"}
    assert st["group.present"](name, members=["root"])["comment"] == f"Group {name} is present and up to date"
    dry = _states(True)["group.present"](name, addusers=["daemon"], delusers=["root"])
    assert dry["comment"] == (
        "The following group attributes are set to be changed:\naddusers: ['daemon']\ndelusers: ['root']\n"
    )
    ret = st["group.present"](name, addusers=["daemon"], delusers=["root"])
    assert ret["changes"] == {"Final": "All changes applied successfully"}
    ret = st["group.present"](name, members=[])
    assert ret["comment"].endswith("delusers: {'daemon'}\n")
    taken = st["group.present"](name + "x", gid=0)
    assert taken["comment"] == f"Group {name}x is not present but gid 0 is already taken by group root"
    assert st["group.absent"](name) == {
        "name": name,
        "changes": {name: ""},
        "result": True,
        "comment": f"Removed group {name}",
    }
    assert st["group.absent"](name)["comment"] == "Group not present"
