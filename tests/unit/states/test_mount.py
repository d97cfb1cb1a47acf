"""mount states on tables in a temporary folder, without mounting anything (tests/integration mounts).

Salt's answers for the same kinds of cases are in tests/golden/files (mount_*).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from briny.common import loader

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/mountinfo"), reason="needs Linux /proc")
TABLE = "# mine\nproc /proc proc defaults 0 0\n\nthis line is no entry\n"


def _states(tmp_path: Path, test: bool = False) -> Any:
    opts = {"test": test, "id": "t", "cachedir": str(tmp_path / "cache")}
    salt = loader.minion_mods(opts, {"kernel": "Linux", "os": "Debian"})
    return loader.states(opts, salt)


def test_persist_only_keeps_every_other_line(tmp_path: Path) -> None:
    conf = tmp_path / "fstab"
    conf.write_text(TABLE)
    args = {"device": "/dev/brinynosuch", "fstype": "ext4", "opts": "noatime", "mount": False, "config": str(conf)}
    dry = _states(tmp_path, test=True)["mount.mounted"](str(tmp_path), **args)
    assert dry["result"] is None and conf.read_text() == TABLE
    assert (
        dry["comment"]
        == f"{tmp_path} would not be mounted. {tmp_path} needs to be written to the fstab in order to be made persistent."
    )
    st = _states(tmp_path)
    ret = st["mount.mounted"](str(tmp_path), **args)
    assert (ret["changes"], ret["comment"]) == (
        {"persist": "new"},
        f"{tmp_path} not mounted. Added new entry to the fstab.",
    )
    assert conf.read_text() == TABLE + f"/dev/brinynosuch\t\t{tmp_path}\text4\tnoatime\t0 0\n"
    again = st["mount.mounted"](str(tmp_path), **args)
    assert (again["changes"], again["comment"]) == ({}, f"{tmp_path} not mounted. Entry already exists in the fstab.")
    gone = st["mount.unmounted"](str(tmp_path), persist=True, config=str(conf))
    assert gone["changes"] == {"persist": "purged"} and conf.read_text() == TABLE


def test_bad_input_fails_that_state(tmp_path: Path) -> None:
    st = _states(tmp_path)
    for missing in ("name", "device", "fstype"):
        args = {"name": str(tmp_path), "device": "tmpfs", "fstype": "tmpfs", missing: ""}
        assert st["mount.mounted"](**args)["comment"] == f"Must provide {missing} to mount.mounted"
    ret = st["mount.mounted"](str(tmp_path), "tmpfs", "tmpfs", mount=False, config=str(tmp_path / "none"))
    assert (ret["result"], ret["comment"]) == (False, f"{tmp_path} not mounted. However, the fstab was not found.")
    conf = tmp_path / "fstab"
    conf.write_text(TABLE)
    ret = st["mount.mounted"](str(tmp_path), "tmpfs", "tmpfs", mount=False, config=str(conf), match_on="bogus")
    assert ret["result"] is False and ret["comment"].endswith('Unrecognized keys in match_on: "bogus"')
    ret = st["mount.mounted"](str(tmp_path), "tmpfs", "tmpfs", mount=False, persist=False, colour="blue")
    assert ret["result"] is True and ret["warnings"] == ["mount.mounted does not take: colour (ignored)"]
    assert st["mount.unmounted"]("")["comment"] == "Must provide name to mount.unmounted"
    assert conf.read_text() == TABLE


def test_mod_watch(tmp_path: Path) -> None:
    st = _states(tmp_path)
    assert st["mount.mod_watch"]("/x", sfun="unmounted")["comment"] == "Watch not supported in unmounted at this time"
    if os.geteuid() != 0:
        pytest.skip("mount needs root")
    ret = st["mount.mod_watch"](str(tmp_path), sfun="mounted", device="nodev", fstype="brinynosuchfs", opts="defaults")
    assert ret["result"] is False and ret["comment"].startswith(f"{tmp_path} failed to remount: ")
