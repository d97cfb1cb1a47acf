"""``briny-cp``'s pure parts: where each file lands, how files are chunked, usage errors."""

from __future__ import annotations

import base64
import gzip
import io
from pathlib import Path

from briny.master import cpcli


def test_remote_paths_as_salt_cp(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "f").write_text("x")
    (tree / "empty").mkdir()
    single = tmp_path / "one.txt"
    single.write_text("1")
    files, empty = cpcli.list_files([str(tree), str(single)])
    assert sorted(files) == [str(single), str(tree / "sub" / "f")]
    assert empty == [str(tree / "empty")]
    sources = [str(tree), str(single)]
    assert cpcli.remote_path(str(single), sources, "/dest", True) == "/dest/one.txt"
    assert cpcli.remote_path(str(single), sources, "/dest/new.txt", False) == "/dest/new.txt"
    assert cpcli.remote_path(str(tree / "sub" / "f"), sources, "/dest", True) == "/dest/tree/sub/f"
    assert cpcli.remote_path(str(tree / "sub" / "f"), [str(tree) + "/"], "/d", True) == "/d/tree/sub/f"


def test_chunks_compressed_or_not(tmp_path: Path) -> None:
    src = tmp_path / "f"
    src.write_bytes(b"abcdefg")
    plain = [base64.b64decode(c) for c in cpcli.chunks(str(src), 3, False)]
    assert plain == [b"abc", b"def", b"g"]
    packed = [gzip.decompress(base64.b64decode(c)) for c in cpcli.chunks(str(src), 3, True)]
    assert packed == [b"abc", b"def", b"g"]
    (tmp_path / "e").write_bytes(b"")
    assert [base64.b64decode(c) for c in cpcli.chunks(str(tmp_path / "e"), 3, False)] == [b""]


def test_usage_errors_exit_2_before_anything_is_sent(tmp_path: Path) -> None:
    err = io.StringIO()
    assert cpcli.run(["-c", str(tmp_path), "web1", "/etc/hostname"], io.StringIO(), err) == 2
    assert "give a target, one or more sources and a destination" in err.getvalue()
    err = io.StringIO()
    assert cpcli.run(["-c", str(tmp_path / "nope"), "web1", "/a", "/b"], io.StringIO(), err) == 2
    assert "does not exist" in err.getvalue()
