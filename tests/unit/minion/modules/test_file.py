"""The file execution module: Salt's signatures and return values, on tmp_path."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader
from briny.common.exceptions import CommandExecutionError, SaltInvocationError


@pytest.fixture
def salt(tmp_path: Path) -> Any:
    opts = {"test": False, "file_roots": {"base": [str(tmp_path)]}, "id": "t", "cachedir": str(tmp_path / "cache")}
    return loader.minion_mods(opts)


def test_queries(salt: Any, tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("a\nb\n")
    assert salt["file.file_exists"](str(f)) is True
    assert salt["file.file_exists"](str(tmp_path)) is False
    assert salt["file.directory_exists"](str(tmp_path)) is True
    assert salt["file.dirname"]("/a/b/c") == "/a/b"
    assert salt["file.basename"]("/a/b/c") == "c"
    assert salt["file.join"]("/a", "b", "c") == "/a/b/c"
    assert salt["file.read"](str(f)) == "a\nb\n"
    assert salt["file.read"](str(f), binary=True) == b"a\nb\n"
    assert salt["file.search"](str(f), "^b$", multiline=True) is True
    assert salt["file.search"](str(f), "zz") is False
    assert salt["file.search"](str(tmp_path / "nope"), "x", ignore_if_missing=True) is False
    with pytest.raises(SaltInvocationError):
        salt["file.search"](str(tmp_path / "nope"), "x")
    with pytest.raises(CommandExecutionError):
        salt["file.read"](str(tmp_path / "nope"))


def test_hash_mode_stats(salt: Any, tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"data")
    f.chmod(0o640)
    assert salt["file.get_hash"](str(f)) == hashlib.sha256(b"data").hexdigest()
    assert salt["file.get_hash"](str(f), "md5") == hashlib.md5(b"data").hexdigest()
    assert salt["file.get_mode"](str(f)) == "0640"
    assert salt["file.set_mode"](str(f), 600) == "0600"
    assert salt["file.set_mode"](str(f), "999") == "Invalid Mode 999"
    with pytest.raises(CommandExecutionError, match="File not found"):
        salt["file.set_mode"](str(tmp_path / "nope"), "600")
    with pytest.raises(CommandExecutionError, match="Path not found"):
        salt["file.get_mode"](str(tmp_path / "nope"))
    st = salt["file.stats"](str(f))
    assert st["size"] == 4 and st["mode"] == "0600" and st["type"] == "file"
    assert st["uid"] == os.getuid() and st["target"] == str(f)
    assert set(st) >= {"inode", "uid", "gid", "user", "group", "atime", "mtime", "ctime"}
    assert salt["file.stats"](str(tmp_path))["type"] == "dir"


def test_users_and_groups(salt: Any, tmp_path: Path) -> None:
    import grp
    import pwd

    me = pwd.getpwuid(os.getuid()).pw_name
    mygroup = grp.getgrgid(os.getgid()).gr_name
    assert salt["file.user_to_uid"](me) == os.getuid()
    assert salt["file.user_to_uid"](os.getuid()) == os.getuid()
    assert salt["file.user_to_uid"]("nosuchuser_briny") == ""
    assert salt["file.group_to_gid"](mygroup) == os.getgid()
    assert salt["file.group_to_gid"]("nosuchgroup_briny") == ""
    f = tmp_path / "f"
    f.write_text("x")
    assert salt["file.get_user"](str(f)) == me
    assert salt["file.get_group"](str(f)) == mygroup
    assert salt["file.chown"](str(f), me, mygroup) is None
    assert salt["file.chown"](str(f), "nosuchuser_briny", mygroup) == "User does not exist\n"
    assert salt["file.chown"](str(tmp_path / "nope"), me, mygroup) == "File not found"


def test_write_touch_remove(salt: Any, tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    assert salt["file.write"](str(f), "a", "b") == f'Wrote 2 lines to "{f}"'
    assert f.read_text() == "a\nb\n"
    t = tmp_path / "t"
    assert salt["file.touch"](str(t)) is True and t.exists()
    salt["file.touch"](str(t), mtime=1000)
    assert t.stat().st_mtime == 1000
    with pytest.raises(CommandExecutionError, match="No such file or directory"):
        salt["file.touch"](str(tmp_path / "nodir" / "x"))
    assert salt["file.remove"](str(t)) is True and not t.exists()
    assert salt["file.remove"](str(t)) is False
    d = tmp_path / "d" / "sub"
    d.mkdir(parents=True)
    keep = tmp_path / "keep"
    keep.mkdir()
    (d / "link").symlink_to(keep)
    assert salt["file.remove"](str(tmp_path / "d")) is True
    assert keep.is_dir()


def test_mkdir_makedirs(salt: Any, tmp_path: Path) -> None:
    assert salt["file.mkdir"](str(tmp_path / "a" / "b"), mode="0700") is True
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert salt["file.makedirs"](str(tmp_path / "m" / "n" / "file")) is None
    assert (tmp_path / "m" / "n").is_dir() and not (tmp_path / "m" / "n" / "file").exists()
    assert salt["file.makedirs"](str(tmp_path / "m" / "n" / "file")).startswith("Directory")
    (tmp_path / "blocker").write_text("x")
    with pytest.raises(CommandExecutionError):
        salt["file.makedirs"](str(tmp_path / "blocker" / "x" / "y"))


def test_atomic_write(salt: Any, tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("old")
    f.chmod(0o640)
    salt["file.atomic_write"](str(f), "new")
    assert f.read_text() == "new" and stat.S_IMODE(f.stat().st_mode) == 0o640
    salt["file.atomic_write"](str(f), b"bytes", mode="0600")
    assert f.read_bytes() == b"bytes" and stat.S_IMODE(f.stat().st_mode) == 0o600
    target = tmp_path / "target"
    target.write_text("t")
    link = tmp_path / "link"
    link.symlink_to(target)
    salt["file.atomic_write"](str(link), "through")
    assert link.is_symlink() and target.read_text() == "through"
    salt["file.atomic_write"](str(link), "replaced", follow_symlinks=False)
    assert not link.is_symlink() and target.read_text() == "through"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f", "link", "target"]
    with pytest.raises(SaltInvocationError):
        salt["file.atomic_write"](str(f), "x", mode="abc")
