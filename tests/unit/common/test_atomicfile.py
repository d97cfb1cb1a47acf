"""write_atomic: the content and mode land whole, the temp file never stays, errors propagate."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from briny.common import atomicfile
from briny.common.atomicfile import TMP_PREFIX, write_atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_bytes_and_text_with_the_mode_asked_whatever_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "key.pem"
    old = os.umask(0o077)
    try:
        write_atomic(target, b"\x00secret\xff")
        assert target.read_bytes() == b"\x00secret\xff" and _mode(target) == 0o600
        write_atomic(str(target), "pid 42\n", mode=0o644, fsync=True)
    finally:
        os.umask(old)
    assert target.read_text(encoding="utf-8") == "pid 42\n" and _mode(target) == 0o644
    assert os.listdir(tmp_path) == ["key.pem"]


def test_replaces_the_file_not_writes_through_it(tmp_path: Path) -> None:
    """A reader holding the old file keeps the old content; a symlink at the path is replaced,
    never followed."""
    target = tmp_path / "cache"
    target.write_bytes(b"old")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"untouched")
    with open(target, "rb") as reader:
        write_atomic(target, b"new")
        assert reader.read() == b"old"
    assert target.read_bytes() == b"new"
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    write_atomic(link, b"mine")
    assert not link.is_symlink() and link.read_bytes() == b"mine" and elsewhere.read_bytes() == b"untouched"


def test_a_failure_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "grains"
    target.write_bytes(b"old")

    def refuse(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomicfile.os, "fsync", refuse)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, b"new", fsync=True)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["grains"]


def test_a_folder_at_the_path_or_a_missing_folder_raise_and_leave_nothing(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path / "dir", b"x")
    assert sorted(os.listdir(tmp_path)) == ["dir"] and os.listdir(tmp_path / "dir") == []
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "missing" / "f", b"x")


def test_temp_names_carry_the_prefix_and_a_taken_name_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / f"{TMP_PREFIX}aa").write_bytes(b"")  # a temp file of a crashed writer
    names = iter(["aa", "bb"])
    monkeypatch.setattr(atomicfile.secrets, "token_hex", lambda n: next(names))
    seen: list[str] = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        seen.append(os.path.basename(src))
        real_replace(src, dst)

    monkeypatch.setattr(atomicfile.os, "replace", spy)
    write_atomic(tmp_path / "a", b"1")
    assert seen == [f"{TMP_PREFIX}bb"] and (tmp_path / "a").read_bytes() == b"1"
    assert (tmp_path / f"{TMP_PREFIX}aa").read_bytes() == b""  # the other writer's file is left alone
    monkeypatch.setattr(atomicfile.secrets, "token_hex", lambda n: "aa")
    with pytest.raises(FileExistsError, match="names taken"):
        write_atomic(tmp_path / "c", b"3")
    assert not (tmp_path / "c").exists()
