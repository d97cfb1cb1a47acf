"""Files pushed by minions (``cp.push``, ``file_recv``): where they land, and every refusal."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from briny.master.filerecv import FileReceiver, minion_folder


@pytest.fixture
def opts(tmp_path: Path) -> dict[str, Any]:
    return {"cachedir": str(tmp_path / "cache"), "file_recv": True, "file_recv_max_size": 1}


def push(recv: FileReceiver, parts: Any, data: bytes, loc: int = 0, minion: str = "web1") -> dict[str, Any]:
    return recv.receive(minion, {"path": parts, "loc": loc, "data": data})


def landed(opts: dict[str, Any], *parts: str, minion: str = "web1") -> Path:
    return Path(opts["cachedir"]) / "minions" / minion / "files" / Path(*parts)


def test_a_pushed_file_lands_under_the_minions_folder_in_chunks(opts: dict[str, Any]) -> None:
    recv = FileReceiver(opts)
    assert push(recv, ["etc", "fstab"], b"abc") == {"ok": True, "size": 3}
    assert push(recv, ["etc", "fstab"], b"def", loc=3) == {"ok": True, "size": 6}
    assert landed(opts, "etc", "fstab").read_bytes() == b"abcdef"
    assert oct(landed(opts, "etc", "fstab").stat().st_mode & 0o777) == "0o600"
    # a new push (loc 0) replaces the file
    assert push(recv, ["etc", "fstab"], b"x") == {"ok": True, "size": 1}
    assert landed(opts, "etc", "fstab").read_bytes() == b"x"
    assert push(recv, ["empty"], b"") == {"ok": True, "size": 0}
    assert landed(opts, "empty").read_bytes() == b""
    assert minion_folder(opts, "web1") == str(Path(opts["cachedir"]) / "minions" / "web1" / "files")


def test_off_by_default_as_salt(opts: dict[str, Any]) -> None:
    del opts["file_recv"]
    got = push(FileReceiver(opts), ["etc", "fstab"], b"abc")
    assert got == {"error": "this master does not take pushed files (file_recv: False in its config)"}
    assert not Path(opts["cachedir"]).exists()
    assert "error" in push(FileReceiver({**opts, "file_recv": "yes"}), ["a"], b"abc")


@pytest.mark.parametrize(
    "parts, why",
    [
        (["..", "..", "etc", "passwd"], "is not a plain name"),
        (["a", "..", "..", "..", "x"], "is not a plain name"),
        (["/etc/passwd"], "holds a separator"),
        (["a/../../b"], "holds a separator"),
        (["a", ""], "is not a plain name"),
        (["."], "is not a plain name"),
        (["a\0b"], "holds a separator or NUL"),
        (["a\\..\\b"], "holds a separator"),
        ("etc/passwd", "must be a non-empty list"),
        ([], "must be a non-empty list"),
        ([1, 2], "is not a plain name"),
        (["x"] * 65, "more than 64 parts"),
        (["x" * 256], "longer than 255 bytes"),
    ],
)
def test_hostile_paths_are_refused(opts: dict[str, Any], parts: Any, why: str) -> None:
    got = push(FileReceiver(opts), parts, b"pwned")
    assert why in got["error"]
    written = [p for p in Path(opts["cachedir"]).rglob("*") if p.is_file()] if Path(opts["cachedir"]).exists() else []
    assert written == []


def test_symlinks_are_never_followed(opts: dict[str, Any], tmp_path: Path) -> None:
    recv = FileReceiver(opts)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target").write_text("keep")
    assert push(recv, ["seed"], b"x")["ok"]
    root = landed(opts)
    (root / "dirlink").symlink_to(outside)
    (root / "filelink").symlink_to(outside / "target")
    assert "is a symlink or not a folder" in push(recv, ["dirlink", "target"], b"pwned")["error"]
    assert "is a symlink or not a regular file" in push(recv, ["filelink"], b"pwned")["error"]
    assert (outside / "target").read_text() == "keep"
    assert sorted(os.listdir(outside)) == ["target"]
    # a file where a folder is needed
    assert "is a symlink or not a folder" in push(recv, ["seed", "x"], b"x")["error"]
    # the minion's own folder replaced by a symlink: refused too
    os.rename(root, tmp_path / "moved")
    root.symlink_to(outside)
    assert "error" in push(recv, ["new"], b"pwned")
    assert sorted(os.listdir(outside)) == ["target"]


def test_size_limit_and_offsets(opts: dict[str, Any]) -> None:
    recv = FileReceiver(opts)
    mb = 1024 * 1024
    assert push(recv, ["big"], b"x" * mb)["ok"]
    got = push(recv, ["big"], b"x", loc=mb)
    assert got == {"error": "the file is larger than file_recv_max_size (1 MB)"}
    assert landed(opts, "big").stat().st_size == mb
    assert "larger than file_recv_max_size" in push(recv, ["huge"], b"x" * (mb + 1))["error"]
    # a chunk that does not continue the file (a hole, an overlap) and bad fields
    assert push(recv, ["f"], b"ab")["ok"]
    assert "does not continue the file (2 bytes so far)" in push(recv, ["f"], b"x", loc=10)["error"]
    assert "does not continue" in push(recv, ["f"], b"x", loc=1)["error"]
    assert "does not continue" in push(recv, ["nothing-yet"], b"x", loc=5)["error"]
    assert "'loc' must be an offset" in push(recv, ["f"], b"x", loc=-1)["error"]
    assert "'loc' must be an offset" in recv.receive("web1", {"path": ["f"], "loc": True, "data": b"x"})["error"]
    assert "'data' must be bytes" in recv.receive("web1", {"path": ["f"], "loc": 0, "data": "text"})["error"]
    assert landed(opts, "f").read_bytes() == b"ab"


def test_the_session_id_decides_the_folder(opts: dict[str, Any]) -> None:
    recv = FileReceiver(opts)

    class Session:
        id = "db1"

    assert recv.handle_request(Session(), {"path": ["a"], "loc": 0, "data": b"1", "id": "web1"})["ok"]
    assert landed(opts, "a", minion="db1").read_bytes() == b"1"
    assert not landed(opts, "a").exists()
