"""The archive execution module: listing, extraction and refusal of unsafe members (no root needed)."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods


@pytest.fixture
def arc(tmp_path: Path):
    return minion_mods({"id": "t", "file_roots": {"base": [str(tmp_path)]}, "cachedir": str(tmp_path / "c")})


def _tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tf:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tf.addfile(m)
            else:
                ti = tarfile.TarInfo(m[0])
                ti.size, ti.mode, ti.mtime = len(m[1]), 0o4775, 1_000_000
                tf.addfile(ti, io.BytesIO(m[1]))
    return path


def _dir(name: str) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode = tarfile.DIRTYPE, 0o755
    return ti


def _link(name: str, target: str, hard: bool = False) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.type, ti.linkname = (tarfile.LNKTYPE if hard else tarfile.SYMTYPE), target
    return ti


@pytest.mark.parametrize("mode", ["w:gz", "w:bz2", "w:xz", "w"])
def test_list_and_extract_tar(arc, tmp_path: Path, mode: str) -> None:
    src = _tar(tmp_path / "a.tar", [_dir("app"), ("app/a.txt", b"hi\n"), _link("app/l", "a.txt")], mode)
    assert arc["archive.list"](str(src)) == ["app/", "app/a.txt", "app/l"]
    assert arc["archive.list"](str(src), verbose=True) == {
        "dirs": ["app/"],
        "files": ["app/a.txt"],
        "links": ["app/l"],
        "top_level_dirs": ["app/"],
        "top_level_files": [],
        "top_level_links": [],
    }
    dest = tmp_path / "out"
    dest.mkdir()
    assert arc["archive.extract"](str(src), str(dest)) == ["app", "app/a.txt", "app/l"]
    f = dest / "app" / "a.txt"
    assert f.read_text() == "hi\n" and os.readlink(dest / "app" / "l") == "a.txt"
    assert f.stat().st_mode & 0o7777 == 0o755  # no setuid, no group write
    assert int(f.stat().st_mtime) == 1_000_000


def test_zip_and_salt_url(arc, tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "z.zip", "w") as zf:
        zf.writestr("top/x.txt", "x")
        zf.writestr("top/d/", "")
    assert arc["archive.list"]("salt://z.zip", verbose=True)["top_level_dirs"] == ["top/"]
    dest = tmp_path / "out"
    dest.mkdir()
    assert arc["archive.extract"]("salt://z.zip", str(dest)) == ["top/x.txt", "top/d/"]
    assert (dest / "top" / "x.txt").read_text() == "x" and (dest / "top" / "d").is_dir()


@pytest.mark.parametrize(
    "members,why",
    [
        ([("../evil", b"x")], "climbs out"),
        ([("/etc/evil", b"x")], "absolute path"),
        ([("ok/../../evil", b"x")], "climbs out"),
        ([_link("l", "/etc")], "absolute path"),
        ([_link("d/l", "../../x")], "leaves the destination"),
        ([_link("l", "sub"), ("l/x", b"x")], "through the symlink"),
        ([_link("h", "../x", hard=True)], "hard link"),
    ],
)
def test_unsafe_members_refused_whole(arc, tmp_path: Path, members: list, why: str) -> None:
    src = _tar(tmp_path / "bad.tar.gz", [("good.txt", b"g")] + members)
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(CommandExecutionError, match=why):
        arc["archive.extract"](str(src), str(dest))
    with pytest.raises(CommandExecutionError):
        arc["archive.list"](str(src))
    assert list(dest.iterdir()) == []


def test_zip_traversal_refused(arc, tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "z.zip", "w") as zf:
        zf.writestr("../evil", "x")
    with pytest.raises(CommandExecutionError, match="climbs out"):
        arc["archive.list"](str(tmp_path / "z.zip"))


def test_existing_symlink_on_disk_is_never_followed(arc, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "app").symlink_to(outside)
    src = _tar(tmp_path / "a.tar.gz", [("app/a.txt", b"x")])
    with pytest.raises(CommandExecutionError, match="symlink"):
        arc["archive.extract"](str(src), str(dest))
    assert list(outside.iterdir()) == []
    (dest / "app").unlink()
    (dest / "f").symlink_to(outside / "target")
    arc["archive.extract"](str(_tar(tmp_path / "b.tar.gz", [("f", b"new")])), str(dest))
    assert not (outside / "target").exists() and (dest / "f").read_text() == "new"


def test_strip_components_and_errors(arc, tmp_path: Path) -> None:
    src = _tar(tmp_path / "a.tar.gz", [("top/sub/a", b"1"), ("top/b", b"2")])
    assert arc["archive.list"](str(src), options="--strip-components=1") == ["sub/a", "b"]
    with pytest.raises(CommandExecutionError, match="does not exist"):
        arc["archive.list"](str(tmp_path / "nope.tar.gz"))
    (tmp_path / "junk.bin").write_bytes(b"not an archive")
    with pytest.raises(CommandExecutionError, match="Unsupported archive format"):
        arc["archive.list"](str(tmp_path / "junk.bin"))
