"""Mount tables (briny.minion.host.sysfiles.fstab) and the ``mount`` / ``disk`` execution modules' table functions.

Pure parsing and fstab edits on files in a temporary folder; tests/integration
mounts tmpfs and loop devices for real.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods
from briny.minion.host.sysfiles import fstab

FSTAB = "# comment\nUUID=abcd / ext4 errors=remount-ro 0 1\n\nproc /proc proc defaults\nbroken line\n/dev/sdb1 /srv xfs a,b 0 2\n"
MOUNTINFO = (
    "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n"
    "42 27 0:39 / /tmp/a\\040b rw,relatime - tmpfs tmpfs rw,size=1024k,uid=0\n"
    "43 27 7:0 / /mnt/l rw - ext4 /dev/loop0 rw\n"
)


@pytest.fixture
def salt(tmp_path: Path):
    return minion_mods({"id": "t", "cachedir": str(tmp_path / "cache")}, {"kernel": "Linux", "os": "Debian"})


def test_parse_and_list() -> None:
    lines = FSTAB.splitlines(keepends=True)
    assert fstab.parse_entry(lines[0]) is None and fstab.parse_entry("broken line\n") is None
    assert fstab.parse_entry("proc /proc proc defaults\n") == {
        "device": "proc",
        "name": "/proc",
        "fstype": "proc",
        "opts": "defaults",
        "dump": "0",
        "pass_num": "0",
    }
    listed = fstab.listing(lines + ["tmpfs /proc tmpfs defaults 0 0\n"])
    assert listed["/"] == {
        "device": "UUID=abcd",
        "fstype": "ext4",
        "opts": ["errors=remount-ro"],
        "dump": "0",
        "pass": "1",
    }
    assert set(listed) == {"/", "/proc", "/srv", "/proc_"}


def test_set_entry_keeps_other_lines() -> None:
    lines = FSTAB.splitlines(keepends=True)
    entry = fstab.criteria(name="/srv", device="/dev/sdb1", fstype="xfs", opts="b,a", dump=0, pass_num=2)
    assert fstab.set_entry(lines, entry, fstab.match_keys("auto", "xfs"))[1] == "present"
    entry["opts"] = "noatime"
    out, status = fstab.set_entry(lines, entry, ["device"])
    assert status == "change" and out[-1] == "/dev/sdb1\t\t/srv\txfs\tnoatime\t0 2\n" and out[:-1] == lines[:-1]
    new = fstab.criteria(name="/t", device="tmpfs", fstype="tmpfs", opts="defaults", dump=0, pass_num=0)
    out, status = fstab.set_entry(["last line without newline"], new, fstab.match_keys("auto", "tmpfs"))
    assert status == "new" and out == ["last line without newline\n", "tmpfs\t\t/t\ttmpfs\tdefaults\t0 0\n"]
    assert fstab.set_entry(lines, entry, ["device"], not_change=True)[1] == "present"
    kept, removed = fstab.remove_entries(lines, fstab.criteria(name="/proc", device=None))
    assert removed and kept == [line for line in lines if not line.startswith("proc")]


def test_match_on_is_checked() -> None:
    assert fstab.match_keys("auto", "tmpfs") == ["name"] and fstab.match_keys("auto", "ext4") == ["device"]
    assert fstab.match_keys(["name", "fstype"], "x") == ["name", "fstype"]
    with pytest.raises(CommandExecutionError, match='^Unrecognized keys in match_on: "bogus"$'):
        fstab.match_keys("bogus", "ext4")
    with pytest.raises(CommandExecutionError, match="^match_on must be a string or list of strings$"):
        fstab.match_keys(3, "ext4")


def test_kernel_views() -> None:
    ids = {("uid", "root"): 0}
    info = fstab.mountinfo(
        MOUNTINFO,
        {"/mnt/l": "/dev/loop0"},
        {"/dev/loop0": {"UUID": "AB-CD", "LABEL": "L"}},
        lambda k, n: ids.get((k, n)),
    )
    assert info["/"]["superopts"] == ["rw", "discard"] and info["/"]["opts"] == ["rw", "relatime"]
    assert info["/tmp/a\\040b"]["fstype"] == "tmpfs" and info["/tmp/a\\040b"]["superopts"][1] == "size=1024k"
    assert (info["/mnt/l"]["device_uuid"], info["/mnt/l"]["device_label"], info["/mnt/l"]["alt_device"]) == (
        "ab-cd",
        "L",
        "/dev/loop0",
    )
    assert fstab.unescape_opts(["uid=root", "gid=nosuch", "a\\040b"], lambda k, n: ids.get((k, n))) == [
        "uid=0",
        "gid=nosuch",
        "a\\ b",
    ]
    assert fstab.list_mounts("tmpfs on /x type tmpfs (rw)\n") == {"/x": "tmpfs"}
    assert fstab.swaps("Filename Type Size Used Priority\n/swap file 60 0 -2\n") == {
        "/swap": {"type": "file", "size": "60", "used": "0", "priority": "-2"}
    }
    assert fstab.blkid('/dev/loop0: LABEL="x y" UUID="u" TYPE="ext4"\n') == {
        "/dev/loop0": {"LABEL": "x y", "UUID": "u", "TYPE": "ext4"}
    }


def test_execution_functions_on_a_table(salt, tmp_path: Path) -> None:
    conf = tmp_path / "fstab"
    conf.write_text(FSTAB)
    os.chmod(conf, 0o640)
    assert set(salt["mount.fstab"](str(conf))) == {"/", "/proc", "/srv"}
    assert salt["mount.fstab"](str(tmp_path / "none")) == {}
    args = ("/data", "/dev/sdc1", "ext4", ["noatime", "nofail"], 0, 2, str(conf))
    assert salt["mount.set_fstab"](*args, test=True) == "new" and conf.read_text() == FSTAB
    assert salt["mount.set_fstab"](*args) == "new"
    assert salt["mount.set_fstab"](*args) == "present"
    assert conf.read_text() == FSTAB + "/dev/sdc1\t\t/data\text4\tnoatime,nofail\t0 2\n"
    assert conf.stat().st_mode & 0o777 == 0o640
    assert salt["mount.rm_fstab"]("/data", "/dev/other", str(conf)) is True and "/data" in conf.read_text()
    assert salt["mount.rm_fstab"]("/data", None, str(conf)) is True and conf.read_text() == FSTAB
    with pytest.raises(CommandExecutionError, match=f'^Bad config file "{tmp_path}/none"$'):
        salt["mount.set_fstab"]("/x", "tmpfs", "tmpfs", config=str(tmp_path / "none"))
    with pytest.raises(CommandExecutionError, match="Couldn't read from"):
        salt["mount.rm_fstab"]("/x", None, config=str(tmp_path / "none"))
    vfs = tmp_path / "vfstab"
    vfs.write_text("#device\n/devices - /devices devfs - no -\n")
    assert salt["mount.set_vfstab"]("/m", "/dev/dsk/c0", "ufs", config=str(vfs)) == "new"
    assert vfs.read_text().endswith("/dev/dsk/c0 -   /m                  ufs      -   yes    -\n")


def test_live_views_and_the_mount_cache(salt) -> None:
    active = salt["mount.active"]()
    assert "/" in active and {"device", "fstype", "opts", "alt_device"} <= set(active["/"])
    assert "superopts" in salt["mount.active"](extended=True)["/"]
    assert salt["mount.is_mounted"]("/") and not salt["mount.is_mounted"]("/brinynosuch")
    assert salt["mount.get_mount_from_path"]("/proc/self") == "/proc"
    assert salt["mount.get_device_from_path"]("/") == active["/"]["device"]
    assert isinstance(salt["mount.swaps"](), dict)
    assert salt["mount.umount"]("/brinynosuch") == "/brinynosuch does not have anything mounted"
    assert salt["mount.read_mount_cache"]("/m") == {}
    assert salt["mount.write_mount_cache"]("/m", "tmpfs", False, "tmpfs", ["size=1m"]) is True
    assert salt["mount.read_mount_cache"]("/m") == {
        "device": "tmpfs",
        "fstype": "tmpfs",
        "mkmnt": False,
        "opts": ["size=1m"],
    }
    assert salt["mount.delete_mount_cache"]("/m") is True and salt["mount.read_mount_cache"]("/m") == {}
    with pytest.raises(CommandExecutionError, match="util=guestfs is not supported"):
        salt["mount.mount"]("/x", "img", util="guestfs")
