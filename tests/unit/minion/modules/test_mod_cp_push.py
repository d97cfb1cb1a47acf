"""``cp.push``: a local file goes to the master in chunks (here straight into the master's
:class:`FileReceiver`, the daemons are in tests/e2e/test_cp_push.py)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from briny.common.jobcontext import JobContext
from briny.common.loader import minion_mods
from briny.master.filerecv import FileReceiver


@pytest.fixture
def master(tmp_path: Path) -> FileReceiver:
    return FileReceiver({"cachedir": str(tmp_path / "master"), "file_recv": True, "file_recv_max_size": 1})


def loader(tmp_path: Path, master: FileReceiver | None, sent: list[dict[str, Any]], buf: int = 4) -> Any:
    def channel(payload: dict[str, Any], timeout: float | None) -> dict[str, Any] | None:
        sent.append(payload)
        return master.receive("web1", payload) if master is not None else None

    opts = {"id": "web1", "cachedir": str(tmp_path / "minion"), "file_buffer_size": buf}
    return minion_mods(opts, {}, {}, extra_dirs=[], job=JobContext(master=channel))


def stored(tmp_path: Path, *parts: str) -> Path:
    return tmp_path / "master" / "minions" / "web1" / "files" / Path(*parts)


def test_push_sends_the_file_in_chunks(tmp_path: Path, master: FileReceiver) -> None:
    src = tmp_path / "src" / "app.conf"
    src.parent.mkdir()
    src.write_bytes(b"0123456789")
    sent: list[dict[str, Any]] = []
    assert loader(tmp_path, master, sent)["cp.push"](str(src)) is True
    assert [(p["loc"], p["data"]) for p in sent] == [(0, b"0123"), (4, b"4567"), (8, b"89")]
    assert all(p["cmd"] == "file_recv" and p["path"] == [*src.parts[1:]] for p in sent)
    assert stored(tmp_path, *src.parts[1:]).read_bytes() == b"0123456789"
    assert src.exists()


def test_upload_path_symlinks_empty_files_and_remove_source(tmp_path: Path, master: FileReceiver) -> None:
    src = tmp_path / "data.txt"
    src.write_bytes(b"abc")
    link = tmp_path / "link.txt"
    link.symlink_to(src)
    push = loader(tmp_path, master, [])["cp.push"]
    assert push(str(link), upload_path="/new/place/data") is True
    assert stored(tmp_path, "new", "place", "data").read_bytes() == b"abc"
    assert push(str(link)) is True  # resolved: sent under the target's path
    assert stored(tmp_path, *src.parts[1:]).read_bytes() == b"abc"
    assert push(str(link), keep_symlinks=True) is True
    assert stored(tmp_path, *link.parts[1:]).read_bytes() == b"abc"
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert push(str(empty), remove_source=True) is True
    assert stored(tmp_path, *empty.parts[1:]).read_bytes() == b"" and not empty.exists()


def test_push_refusals_return_false_and_say_why(
    tmp_path: Path, master: FileReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    src = tmp_path / "f"
    src.write_bytes(b"x")
    sent: list[dict[str, Any]] = []
    push = loader(tmp_path, master, sent)["cp.push"]
    caplog.set_level(logging.ERROR)
    assert push("relative/path") is False
    assert push(f"{tmp_path}/../{tmp_path.name}/f") is False
    assert push(str(tmp_path)) is False  # a folder
    assert push(str(src), upload_path="../../etc/passwd") is False
    assert push(str(src), upload_path="/a/../../etc/passwd") is False
    assert sent == []  # none of these reached the master
    master.opts = {**master.opts, "file_recv": False}
    assert push(str(src)) is False
    assert "the master refused it: this master does not take pushed files" in caplog.text
    assert loader(tmp_path, None, [])["cp.push"](str(src)) is False  # the master did not answer
    assert "no answer" in caplog.text


def test_push_without_a_master(tmp_path: Path) -> None:
    src = tmp_path / "f"
    src.write_bytes(b"x")
    mods = minion_mods({"id": "web1"}, {}, {}, extra_dirs=[])
    assert mods["cp.push"](str(src)) is False


def test_recv_writes_whole_files_as_salt(tmp_path: Path) -> None:
    recv = minion_mods({"id": "web1"}, {}, {}, extra_dirs=[])["cp.recv"]
    (tmp_path / "d").mkdir()
    assert recv({"/src/a.txt": b"A"}, str(tmp_path / "d")) == {str(tmp_path / "d" / "a.txt"): True}
    assert recv({"/src/a.txt": "text"}, str(tmp_path / "b.txt")) == {str(tmp_path / "b.txt"): True}
    assert (tmp_path / "b.txt").read_text() == "text"
    assert recv({"/src/a.txt": b"A"}, str(tmp_path / "no" / "such" / "x")) == "Destination unavailable"


def test_recv_chunked_appends_sets_the_mode_and_makes_folders(tmp_path: Path) -> None:
    import base64
    import gzip

    mods = minion_mods({"id": "web1"}, {}, {}, extra_dirs=[])
    recv = mods["cp.recv_chunked"]
    dest = tmp_path / "a" / "b" / "f"
    assert recv(str(dest), base64.b64encode(gzip.compress(b"12")).decode(), False, True, 0o600) is True
    assert recv(str(dest), base64.b64encode(b"34").decode(), True, False) is True
    assert dest.read_bytes() == b"1234" and oct(dest.stat().st_mode & 0o777) == "0o600"
    assert recv(str(tmp_path / "empty"), None) is True and (tmp_path / "empty").is_dir()
    assert recv(str(dest), None) == "Path exists and is a file"
    bad = recv(str(dest), "not base64 !!", False, True)
    assert isinstance(bad, str) and "does not decode" in bad
    assert mods.pack["__context__"]["retcode"] == 1
    assert dest.read_bytes() == b"1234"
