"""archive.extracted on archives built here, extracted into a temporary folder (no root needed)."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

APP = {"app/a.txt": b"hello\n", "app/sub/b.txt": b"world\n"}


def _tar(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "srv"
    root.mkdir()
    _tar(root / "app.tar.gz", APP)
    _tar(root / "flat.tar.gz", {"one": b"1", "two": b"2"})
    _tar(root / "evil.tar.gz", {"ok/fine": b"f", "../evil": b"e"})
    with zipfile.ZipFile(root / "app.zip", "w") as zf:
        for name, data in APP.items():
            zf.writestr(name, data)
    return root


def _states(tmp_path: Path, tree: Path, test: bool = False) -> Any:
    opts = {
        "test": test,
        "id": "t",
        "file_client": "local",
        "file_roots": {"base": [str(tree)]},
        "cachedir": str(tmp_path / "cache"),
    }
    return loader.states(opts, loader.minion_mods(opts))


def test_extract_then_present(tmp_path: Path, tree: Path) -> None:
    dest = tmp_path / "d"
    dry = _states(tmp_path, tree, test=True)["archive.extracted"](str(dest), source="salt://app.tar.gz")
    assert dry == {
        "name": str(dest),
        "result": None,
        "changes": {},
        "comment": f"Archive salt://app.tar.gz would be extracted to {dest}/, due to absence of one or more files/dirs",
    }
    assert not dest.exists()
    st = _states(tmp_path, tree)
    digest = hashlib.sha256((tree / "app.tar.gz").read_bytes()).hexdigest()
    ret = st["archive.extracted"](str(dest), source="salt://app.tar.gz", source_hash=f"sha256={digest}")
    assert ret["result"] is True
    assert ret["comment"] == f"salt://app.tar.gz extracted to {dest}/, due to absence of one or more files/dirs"
    assert ret["changes"] == {"directories_created": [f"{dest}/"], "extracted_files": ["app/a.txt", "app/sub/b.txt"]}
    assert (dest / "app" / "sub" / "b.txt").read_text() == "world\n"
    again = st["archive.extracted"](str(dest), source="salt://app.tar.gz")
    assert (again["result"], again["changes"], again["comment"]) == (
        True,
        {},
        "All files in archive are already present",
    )
    zipped = st["archive.extracted"](str(tmp_path / "z"), source=str(tree / "app.zip"), trim_output=1)
    assert zipped["changes"]["extracted_files"] == ["app/a.txt"]
    assert zipped["comment"].endswith(". Output was trimmed to 1 number of lines")


def test_refusals(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    dest = tmp_path / "d"
    ret = st["archive.extracted"](str(dest), source="salt://flat.tar.gz")
    assert ret["result"] is False and ret["comment"].startswith("Archive does not have a single top-level directory.")
    ret = st["archive.extracted"](str(dest), source="salt://evil.tar.gz", enforce_toplevel=False)
    assert ret["result"] is False and "- ../evil (path climbs out of the destination)" in ret["comment"]
    assert not dest.exists() and not (tmp_path / "evil").exists()
    ret = st["archive.extracted"](str(dest), source="salt://nope.tar.gz")
    assert ret["comment"] == "Failed to cache salt://nope.tar.gz, check minion log for more information"
    ret = st["archive.extracted"](str(dest), source=str(tmp_path / "nope.tar.gz"))
    assert ret["comment"] == f"Source file '{tmp_path / 'nope.tar.gz'}' does not exist"
    ret = st["archive.extracted"](str(dest), source="salt://app.tar.gz", source_hash="sha256=" + "0" * 64)
    assert ret["result"] is False and "does not match the specified hash" in ret["comment"]
    assert (
        st["archive.extracted"]("relative", source="salt://app.tar.gz")["comment"] == "relative is not an absolute path"
    )


def test_if_missing_overwrite_clean_force(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    dest = tmp_path / "d"
    marker = tmp_path / "marker"
    marker.write_text("")
    assert (
        st["archive.extracted"](str(dest), source="salt://app.tar.gz", if_missing=str(marker))["comment"]
        == f"Path {marker} exists"
    )
    st["archive.extracted"](str(dest), source="salt://app.tar.gz")
    (dest / "app" / "a.txt").write_text("edited")
    ret = st["archive.extracted"](str(dest), source="salt://app.tar.gz", overwrite=True)
    assert ret["comment"] == f"salt://app.tar.gz extracted to {dest}/" and "directories_created" not in ret["changes"]
    assert (dest / "app" / "a.txt").read_text() == "hello\n"
    (dest / "app" / "extra").write_text("x")
    (dest / "app" / "sub" / "b.txt").unlink()
    ret = st["archive.extracted"](str(dest), source="salt://app.tar.gz", clean=True)
    assert ret["changes"]["removed"] == [f"{dest}/app"] and not (dest / "app" / "extra").exists()
    (dest / "app" / "a.txt").unlink()
    (dest / "app" / "a.txt").mkdir()
    ret = st["archive.extracted"](str(dest), source="salt://app.tar.gz")
    assert ret["result"] is False and "incorrect type" in ret["comment"] and ret["comment"].endswith("- app/a.txt")
    ret = st["archive.extracted"](str(dest), source="salt://app.tar.gz", force=True)
    assert ret["result"] is True and ret["changes"]["removed"] == [f"{dest}/app/a.txt"]
    assert (dest / "app" / "a.txt").read_text() == "hello\n"


def test_url_source_that_cannot_be_downloaded(tmp_path: Path, tree: Path) -> None:
    # nothing listens on port 9 of 127.0.0.1; Salt 3007.17 returned these for the same state
    src = "http://127.0.0.1:9/x.tar.gz"
    kw = dict(name=str(tmp_path / "out"), source=src, source_hash="sha256=" + "0" * 64)
    ret = _states(tmp_path, tree, test=True)["archive.extracted"](**kw)
    assert (ret["result"], ret["comment"]) == (
        None,
        f"Archive {src} would be cached (if necessary) and checked to discover if extraction is needed",
    )
    ret = _states(tmp_path, tree)["archive.extracted"](**kw)
    assert (ret["result"], ret["comment"]) == (False, "Error: [Errno 111] Connection refused reading /x.tar.gz")
    assert not (tmp_path / "out").exists()
