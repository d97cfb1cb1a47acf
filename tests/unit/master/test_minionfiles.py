"""One msgpack file per minion (master/minionfiles.py): the store of the grains cache, the mine and
the cached pillars."""

import ast
import os
import stat
from pathlib import Path

import pytest

from briny.common.exceptions import SaltInvocationError
from briny.master.minionfiles import MinionFiles

ROOT = Path(__file__).resolve().parents[3]


def test_write_read_list_remove(tmp_path):
    files = MinionFiles(str(tmp_path / "grains"), "grains cache", fsync=True)
    assert files.ids() == [] and files.read_all() == {} and files.read("m1") is None
    files.write("m1", {"os": "Debian", "n": [1, 2]})
    files.write("m2", {"os": "Ubuntu"})
    assert files.read("m1") == {"os": "Debian", "n": [1, 2]}
    assert files.ids() == ["m1", "m2"]
    assert files.read_all() == {"m1": {"os": "Debian", "n": [1, 2]}, "m2": {"os": "Ubuntu"}}
    assert stat.S_IMODE(os.stat(tmp_path / "grains").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / "grains" / "m1.msgpack").st_mode) == 0o600
    files.remove("m1")
    files.remove("m1")  # gone already: nothing to do
    assert files.ids() == ["m2"] and files.read("m1") is None


def test_an_id_that_cannot_be_a_file_name_is_refused(tmp_path):
    files = MinionFiles(str(tmp_path), "mine")
    with pytest.raises(SaltInvocationError):
        files.write("../evil", {"x": 1})
    assert files.read("../evil") is None
    files.remove("../evil")  # refused quietly: there is no such file
    assert not (tmp_path.parent / "evil.msgpack").exists()


def test_a_file_that_does_not_read_is_skipped_and_named(tmp_path, caplog):
    files = MinionFiles(str(tmp_path), "mine")
    files.write("good", {"a": 1})
    (tmp_path / "bad.msgpack").write_bytes(b"\xc1")  # never valid msgpack
    (tmp_path / "list.msgpack").write_bytes(b"\x91\x01")  # msgpack, not a mapping
    (tmp_path / "notes.txt").write_bytes(b"\x80")  # not a minion file
    with caplog.at_level("WARNING"):
        assert files.read_all() == {"good": {"a": 1}}
        assert files.read("bad") is None and files.read("list") is None
    assert "ignoring the mine file bad.msgpack" in caplog.text
    assert "ignoring the mine of bad" in caplog.text


def test_the_caches_share_it():
    """One owner: no other master module reads or writes msgpack files of its own (issue 21)."""
    users, copies = [], []
    for path in sorted((ROOT / "master").rglob("*.py")):
        text = path.read_text()
        if "MinionFiles(" in text and path.name != "minionfiles.py":
            users.append(path.name)
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.Constant) and node.value == ".msgpack" and path.name != "minionfiles.py":
                copies.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert {"grainscache.py", "mine.py", "pillarcache.py"} <= set(users)
    assert copies == []
