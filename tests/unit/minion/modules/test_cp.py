"""The cp execution module: salt:// through file_roots in masterless mode."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader


@pytest.fixture
def salt(tmp_path: Path) -> Any:
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "x.sls").write_text("")
    (tree / "a" / "init.sls").write_text("")
    (tree / "top.sls").write_text("")
    (tree / "c.txt").write_text("see\n")
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "c.txt").write_text("dev\n")
    opts = {
        "test": False,
        "file_roots": {"base": [str(tree)], "dev": [str(dev)]},
        "id": "t",
        "cachedir": str(tmp_path / "cache"),
    }
    return loader.minion_mods(opts)


def test_cache_file(salt: Any, tmp_path: Path) -> None:
    path = salt["cp.cache_file"]("salt://c.txt")
    assert Path(path).read_text() == "see\n"
    assert salt["cp.cache_file"]("salt://nope") is False
    assert salt["cp.cache_file"]("salt://../etc/passwd") is False
    assert Path(salt["cp.cache_file"]("salt://c.txt", "dev")).read_text() == "dev\n"
    assert Path(salt["cp.cache_file"]("salt://c.txt?saltenv=dev")).read_text() == "dev\n"
    local = tmp_path / "tree" / "c.txt"
    assert salt["cp.cache_file"](str(local)) == str(local)
    assert salt["cp.cache_file"](str(tmp_path / "nope")) is False


def test_get_file_str(salt: Any) -> None:
    assert salt["cp.get_file_str"]("salt://c.txt") == "see\n"
    assert salt["cp.get_file_str"]("salt://nope") is False


def test_listings(salt: Any) -> None:
    assert salt["cp.list_master"]() == ["a/b/x.sls", "a/init.sls", "c.txt", "top.sls"]
    assert salt["cp.list_master"](prefix="a/b") == ["a/b/x.sls"]
    assert salt["cp.list_master"]("dev") == ["c.txt"]
    assert salt["cp.list_master_dirs"]() == ["a", "a/b"]
    assert salt["cp.list_master_dirs"](prefix="a/") == ["a", "a/b"]  # as Salt: the folder named too
    assert salt["cp.list_states"]() == ["a", "a.b.x", "top"]


def test_get_file_and_get_dir_in_local_mode(salt: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    assert salt["cp.get_file"]("salt://c.txt", str(out / "c")) == str(out / "c")
    assert (out / "c").read_text() == "see\n"
    assert salt["cp.get_file"]("salt://c.txt", str(out)) == str(out / "c.txt")  # into a folder
    assert salt["cp.get_file"]("salt://c.txt?saltenv=dev", str(out / "d")) == str(out / "d")
    assert (out / "d").read_text() == "dev\n"
    assert salt["cp.get_file"]("salt://nope", str(out / "n")) == ""
    assert salt["cp.get_file"]("salt://c.txt", str(out / "x" / "y")) == ""  # no makedirs
    assert salt["cp.get_file"]("salt://c.txt", str(out / "x" / "y"), makedirs=True) == str(out / "x" / "y")
    assert salt["cp.get_file"]("salt://../etc/passwd", str(out / "p")) == ""
    assert salt["cp.get_dir"]("salt://a", str(out / "tree")) == [
        str(out / "tree" / "a" / "b" / "x.sls"),
        str(out / "tree" / "a" / "init.sls"),
    ]
    assert salt["cp.get_dir"]("salt://a/b/", str(out / "t2")) == [str(out / "t2" / "b" / "x.sls")]
    assert salt["cp.get_dir"]("salt://../", str(out / "t3")) == []
    assert salt["cp.hash_file"]("salt://c.txt")["hsum"] == hashlib.sha256(b"see\n").hexdigest()
