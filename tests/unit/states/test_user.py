"""user.present / user.absent on real accounts (root only; random names, removed by name after)."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("useradd") is None, reason="needs root and shadow-utils"
)


def _states(test: bool = False) -> Any:
    opts = {"test": test, "id": "t"}
    return loader.states(opts, loader.minion_mods(opts, {"kernel": "Linux"}))


@pytest.fixture
def name():
    user = "brinytest" + secrets.token_hex(3)
    yield user
    for cmd in (["userdel", "-r", user], ["groupdel", user]):
        subprocess.run(cmd, capture_output=True, timeout=60, check=False)


def test_comma_in_gecos_refused() -> None:
    ret = _states()["user.present"]("whoever", fullname="a,b")
    assert ret == {"name": "whoever", "changes": {}, "result": False, "comment": "Unsupported char ',' in a,b"}


@pytest.mark.host  # adds users or groups on this host
@needs_root
def test_present_update_absent(name: str, tmp_path: Path) -> None:
    home = tmp_path / name
    dry = _states(True)["user.present"](name, groups=["users"], home=str(home))
    assert (dry["result"], dry["comment"]) == (None, f"User {name} set to be added")
    st = _states()
    ret = st["user.present"](
        name, groups=["users"], home=str(home), shell="/bin/sh", fullname="F", password="$6$a$b", mindays=1
    )
    assert ret["comment"] == f"New user {name} created" and ret["result"] is True
    assert ret["changes"]["groups"] == sorted([name, "users"]) and ret["changes"]["password"] == "XXX-REDACTED-XXX"
    assert ret["changes"]["mindays"] == 1 and home.is_dir()
    same = st["user.present"](
        name, groups=["users"], home=str(home), shell="/bin/sh", fullname="F", password="$6$a$b", mindays=1
    )
    assert (same["changes"], same["comment"]) == ({}, f"User {name} is present and up to date")
    dry = _states(True)["user.present"](name, shell="/bin/bash", password="$6$c$d", remove_groups=False)
    assert dry["comment"] == (
        "The following user attributes are set to be changed:\nshell: /bin/bash\npasswd: XXX-REDACTED-XXX\n"
    )
    ret = st["user.present"](name, shell="/bin/bash", password="$6$c$d", enforce_password=True)
    assert ret["changes"] == {"shell": "/bin/bash", "passwd": "XXX-REDACTED-XXX"}
    kept = st["user.present"](name, password="$6$e$f", enforce_password=False)
    assert kept["changes"] == {}  # an existing hash is kept without enforce_password
    ret = st["user.present"](name, uid=47999)
    assert ret["result"] is False and ret["comment"].startswith(
        "Encountered error checking for needed changes. Additional info follows:\n\n- Changing uid ("
    )
    ret = st["user.present"](name, groups=["nosuchgroup-briny"])
    assert ret["comment"] == "The following group(s) are not present: nosuchgroup-briny"
    assert _states(True)["user.absent"](name)["comment"] == f"User {name} set for removal"
    ret = st["user.absent"](name, purge=True)
    assert ret["changes"] == {f"{name} group": "removed", name: "removed"} and not home.exists()
    assert st["user.absent"](name)["comment"] == f"User {name} is not present"


@pytest.mark.host  # adds users or groups on this host
@needs_root
def test_bad_uid(name: str) -> None:
    ret = _states()["user.present"](name, uid="abc", createhome=False)
    assert ret["result"] is False and ret["comment"].startswith(f"Failed to create new user {name}: ")
