"""The file state module (first slice) on a real tmp_path, live and under test=True."""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

NOTE = "\nNote: No changes made, actual changes may\nbe different due to other states."
ROOT = os.geteuid() == 0


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "src.txt").write_text("hello\nworld\n")
    (root / "bin2").write_bytes(b"\x00\x02bin")
    return root


@pytest.fixture
def out(tmp_path: Path) -> Path:
    d = tmp_path / "out"
    d.mkdir()
    return d


def _states(tmp_path: Path, test: bool = False, pillar: dict | None = None) -> Any:
    opts = {
        "test": test,
        "file_roots": {"base": [str(tmp_path / "tree")]},
        "id": "t",
        "cachedir": str(tmp_path / "cache"),
    }
    salt = loader.minion_mods(opts, pillar=pillar or {}, grains={"os": "Linux"})
    return loader.states(opts, salt)


def _mode(p: Path) -> str:
    return f"{stat.S_IMODE(p.stat().st_mode):04o}"


def _rcc(ret: dict) -> tuple:
    return ret["result"], ret["comment"], ret["changes"]


# -- file.managed ---------------------------------------------------------------
def test_managed_new_from_contents(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "new.txt"
    ret = _states(tmp_path, test=True)["file.managed"](name=str(f), contents="abc")
    assert _rcc(ret) == (None, f"The file {f} is set to be changed" + NOTE, {"newfile": str(f)})
    assert not f.exists()
    ret = _states(tmp_path)["file.managed"](name=str(f), contents="abc")
    assert _rcc(ret) == (True, f"File {f} updated", {"diff": "New file"})
    assert f.read_bytes() == b"abc\n"
    ret = _states(tmp_path)["file.managed"](name=str(f), contents="abc")
    assert _rcc(ret) == (True, f"File {f} is in the correct state", {})
    ret = _states(tmp_path, test=True)["file.managed"](name=str(f), contents="abc")
    assert _rcc(ret) == (True, f"The file {f} is in the correct state", {})


def test_managed_contents_list_and_pillar(tmp_path: Path, tree: Path, out: Path) -> None:
    st = _states(tmp_path, pillar={"foo": {"bar": "pillar text"}})
    st["file.managed"](name=str(out / "list.txt"), contents=["a", "b"])
    assert (out / "list.txt").read_text() == "a\nb\n"
    ret = st["file.managed"](name=str(out / "cp.txt"), contents_pillar="foo:bar")
    assert ret["changes"] == {"diff": "New file"}
    assert (out / "cp.txt").read_text() == "pillar text\n"
    ret = st["file.managed"](name=str(out / "cpm.txt"), contents_pillar="nope")
    assert _rcc(ret) == (False, "Pillar nope does not exist", {})
    assert not (out / "cpm.txt").exists()


def test_managed_contents_pillar_and_grains_look_up_as_salt(tmp_path: Path, out: Path) -> None:
    """contents_pillar / contents_grains read through pillar.get / grains.get (Salt's nested
    lookup: a dict inside a list, a numeric index, another delimiter)."""
    opts = {"test": False, "id": "t", "cachedir": str(tmp_path / "cache")}
    salt = loader.minion_mods(opts, pillar={"a": [{"b": "in a list"}]}, grains={"g": {"h": ["x", "second"]}})
    st = loader.states(opts, salt)
    ret = st["file.managed"](name=str(out / "p.txt"), contents_pillar="a:b")
    assert ret["result"] is True
    assert (out / "p.txt").read_text() == "in a list\n"
    ret = st["file.managed"](name=str(out / "g.txt"), contents_grains="g/h/1", contents_delimiter="/")
    assert ret["result"] is True
    assert (out / "g.txt").read_text() == "second\n"
    ret = st["file.managed"](name=str(out / "gm.txt"), contents_grains="g:nope")
    assert _rcc(ret) == (False, "Grain g:nope does not exist", {})


def test_managed_sources(tmp_path: Path, tree: Path, out: Path) -> None:
    st = _states(tmp_path)
    f = out / "newsrc.txt"
    ret = st["file.managed"](name=str(f), source="salt://src.txt", mode=640)
    assert _rcc(ret) == (True, f"File {f} updated", {"diff": "New file", "mode": "0640"})
    assert f.read_text() == "hello\nworld\n" and _mode(f) == "0640"
    ret = st["file.managed"](name=str(out / "local.txt"), source=str(tree / "src.txt"))
    assert ret["changes"]["diff"] == "New file" and "mode" in ret["changes"]
    ret = st["file.managed"](name=str(out / "l.txt"), source=["salt://nope.txt", "salt://src.txt"])
    assert ret["result"] is True and (out / "l.txt").read_text() == "hello\nworld\n"


def test_managed_existing_diff_and_mode(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "exist.txt"
    f.write_text("old\nworld\n")
    f.chmod(0o644)
    diff = "--- \n+++ \n@@ -1,2 +1,2 @@\n-old\n+hello\n world\n"
    ret = _states(tmp_path, test=True)["file.managed"](name=str(f), source="salt://src.txt", mode="0600")
    assert _rcc(ret) == (None, f"The file {f} is set to be changed" + NOTE, {"diff": diff, "mode": "0600"})
    assert f.read_text() == "old\nworld\n"
    ret = _states(tmp_path)["file.managed"](name=str(f), source="salt://src.txt", mode="0600")
    assert _rcc(ret) == (True, f"File {f} updated", {"diff": diff, "mode": "0600"})
    assert f.read_text() == "hello\nworld\n" and _mode(f) == "0600"
    ret = _states(tmp_path)["file.managed"](name=str(f), source="salt://src.txt", mode=644)
    assert _rcc(ret) == (True, f"File {f} updated", {"mode": "0644"})
    leftovers = [p.name for p in out.iterdir() if p.name != "exist.txt"]
    assert leftovers == []


def test_managed_no_eol_binary_and_hidden(tmp_path: Path, tree: Path, out: Path) -> None:
    st = _states(tmp_path)
    (out / "noeol.txt").write_text("noeol")
    ret = st["file.managed"](name=str(out / "noeol.txt"), contents="eol")
    assert ret["changes"] == {"diff": "--- \n+++ \n@@ -1 +1 @@\n-noeol+eol\n"}
    (out / "bin").write_bytes(b"\x00\x01bin")
    ret = st["file.managed"](name=str(out / "bin"), source="salt://bin2")
    assert ret["changes"] == {"diff": "Replace binary file"}
    assert (out / "bin").read_bytes() == b"\x00\x02bin"
    (out / "h.txt").write_text("old\n")
    ret = st["file.managed"](name=str(out / "h.txt"), contents="new", show_changes=False)
    assert ret["changes"] == {"diff": "<show_changes=False>"}


def test_managed_replace_false_and_empty(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "exist.txt"
    f.write_text("keep\n")
    ret = _states(tmp_path)["file.managed"](name=str(f), contents="zzz", replace=False)
    assert _rcc(ret) == (True, f"File {f} exists with proper permissions. No changes made.", {})
    ret = _states(tmp_path, test=True)["file.managed"](name=str(f), contents="zzz", replace=False)
    assert _rcc(ret) == (True, f"File {f} not updated", {})
    assert f.read_text() == "keep\n"
    e = out / "empty.txt"
    ret = _states(tmp_path)["file.managed"](name=str(e))
    assert _rcc(ret) == (True, "Empty file", {"new": f"file {e} created"})
    assert e.read_bytes() == b""


def test_managed_makedirs(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "sub" / "deep" / "f.txt"
    ret = _states(tmp_path)["file.managed"](name=str(f), contents="x")
    assert _rcc(ret) == (False, "Parent directory not present", {})
    ret = _states(tmp_path, test=True)["file.managed"](name=str(f), contents="x")
    assert ret["result"] is None
    ret = _states(tmp_path)["file.managed"](name=str(f), contents="x", makedirs=True, dir_mode=700)
    assert ret["result"] is True and f.read_text() == "x\n"
    assert _mode(out / "sub") == "0700"


@pytest.mark.parametrize(
    "kwargs,comment",
    [
        (
            {"source": "salt://nope.txt"},
            "Unable to manage file: Source file salt://nope.txt not found in saltenv 'base'",
        ),
        (
            {"contents": "x", "source": "salt://src.txt"},
            "'source' cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'",
        ),
        ({"contents": "x", "mode": 999}, "Invalid mode 999: a mode is up to four octal digits, like 0644"),
        ({"contents": "x", "user": "nosuchuser_briny"}, "User nosuchuser_briny is not available "),
        ({"contents": "x", "group": "nosuchgroup_briny"}, "Group nosuchgroup_briny is not available"),
        ({"contents": "x", "template": "mako"}, "Specified template format mako is not supported"),
    ],
)
def test_managed_bad_inputs(tmp_path: Path, tree: Path, out: Path, kwargs: dict, comment: str) -> None:
    f = out / "bad.txt"
    ret = _states(tmp_path)["file.managed"](name=str(f), **kwargs)
    assert _rcc(ret) == (False, comment, {})
    assert not f.exists() and list(out.iterdir()) == []


def test_managed_missing_source_test_mode(tmp_path: Path, tree: Path, out: Path) -> None:
    st = _states(tmp_path, test=True)
    ret = st["file.managed"](name=str(out / "m"), source="salt://nope.txt")
    assert _rcc(ret) == (False, "Source file salt://nope.txt not found in saltenv 'base'", {})
    ret = st["file.managed"](name=str(out / "m"), source="rel/path")
    assert _rcc(ret) == (False, "Local file source rel/path does not exist", {})
    ret = st["file.managed"](name=str(out / "m"), source=["salt://n1", "salt://n2"])
    assert _rcc(ret) == (False, "Unable to manage file: none of the specified sources were found", {})
    ret = _states(tmp_path)["file.managed"](name=str(out / "m"), source=str(tmp_path / "nope"))
    assert _rcc(ret) == (False, f"Unable to manage file: Local file source {tmp_path / 'nope'} does not exist", {})


def test_managed_permissions_only(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "e"
    f.write_text("x\n")
    f.chmod(0o644)
    ret = _states(tmp_path, test=True)["file.managed"](name=str(f), mode=600)
    assert _rcc(ret) == (
        None,
        f"File {f} will be updated with permissions 0600 from its current state of 0644",
        {"mode": "0600"},
    )
    assert _rcc(_states(tmp_path)["file.managed"](name=str(f), mode=600)) == (True, "", {"mode": "0600"})
    assert _mode(f) == "0600" and f.read_text() == "x\n"
    ret = _states(tmp_path)["file.managed"](name=str(out / "nc"), contents="x", create=False)
    assert _rcc(ret) == (True, f"File {out / 'nc'} is not present and is not set for creation", {})


def test_managed_directory_and_relative(tmp_path: Path, tree: Path, out: Path) -> None:
    for test in (False, True):
        st = _states(tmp_path, test=test)
        ret = st["file.managed"](name=str(out), contents="x")
        assert _rcc(ret) == (False, f"Specified target {out} is a directory", {})
        ret = st["file.managed"](name="relative/path", contents="x")
        assert _rcc(ret) == (False, "Specified file relative/path is not an absolute path", {})


def test_managed_symlinks(tmp_path: Path, tree: Path, out: Path) -> None:
    target = tmp_path / "target"
    target.write_text("t\n")
    link = out / "link"
    link.symlink_to(target)
    ret = _states(tmp_path)["file.managed"](name=str(link), contents="via link")
    assert ret["changes"] == {"diff": "--- \n+++ \n@@ -1 +1 @@\n-t\n+via link\n"}
    assert link.is_symlink() and target.read_text() == "via link\n"
    ret = _states(tmp_path)["file.managed"](name=str(link), contents="own", follow_symlinks=False)
    assert ret["result"] is True
    assert not link.is_symlink() and link.read_text() == "own\n" and target.read_text() == "via link\n"


@pytest.mark.skipif(not ROOT, reason="chown needs root")
def test_managed_owner(tmp_path: Path, tree: Path, out: Path) -> None:
    user = pwd.getpwuid(65534).pw_name if _has_uid(65534) else None
    if user is None:
        pytest.skip("no uid 65534 here")
    group = grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name
    f = out / "e.txt"
    f.write_text("x\n")
    ret = _states(tmp_path, test=True)["file.managed"](name=str(f), contents="x", user=user, group=group)
    assert ret["changes"] == {"user": user, "group": group} and ret["result"] is None
    ret = _states(tmp_path)["file.managed"](name=str(f), contents="x", user=user, group=group)
    assert _rcc(ret) == (True, f"File {f} updated", {"user": user, "group": group})
    assert f.stat().st_uid == 65534
    new = out / "n.txt"
    _states(tmp_path)["file.managed"](name=str(new), contents="x", user=user, mode=600)
    assert new.stat().st_uid == 65534 and _mode(new) == "0600"


def _has_uid(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


# -- file.directory -----------------------------------------------------------------
def test_directory(tmp_path: Path, tree: Path, out: Path) -> None:
    d = out / "d1"
    msg = f"The following files will be changed:\n{d}: directory - new\n"
    ret = _states(tmp_path, test=True)["file.directory"](name=str(d))
    assert _rcc(ret) == (None, msg, {str(d): {"directory": "new"}})
    assert not d.exists()
    ret = _states(tmp_path)["file.directory"](name=str(d))
    assert _rcc(ret) == (True, "", {str(d): {"directory": "new"}}) and d.is_dir()
    ret = _states(tmp_path)["file.directory"](name=str(d))
    assert _rcc(ret) == (True, f"The directory {d} is in the correct state", {})
    d.chmod(0o755)
    ret = _states(tmp_path, test=True)["file.directory"](name=str(d), mode=700)
    assert _rcc(ret) == (None, f"The following files will be changed:\n{d}: mode - 0700\n", {str(d): {"mode": "0700"}})
    ret = _states(tmp_path)["file.directory"](name=str(d), dir_mode="0700")
    assert _rcc(ret) == (True, f"Directory {d} updated", {str(d): {"mode": "0700"}, "mode": "0700"})
    assert _mode(d) == "0700"


def test_directory_makedirs_and_failures(tmp_path: Path, tree: Path, out: Path) -> None:
    deep = out / "a" / "b" / "c"
    ret = _states(tmp_path)["file.directory"](name=str(deep))
    assert _rcc(ret) == (False, f"No directory to create {deep} in", {})
    ret = _states(tmp_path)["file.directory"](name=str(deep), makedirs=True, mode=750)
    assert ret["result"] is True and _mode(deep) == "0750" and _mode(out / "a") == "0750"
    f = out / "file"
    f.write_text("x")
    for test in (False, True):
        ret = _states(tmp_path, test=test)["file.directory"](name=str(f))
        assert _rcc(ret) == (False, f"Specified location {f} exists and is a file", {})
    ret = _states(tmp_path)["file.directory"](name=str(out / "u"), user="nosuchuser_briny")
    assert _rcc(ret) == (False, "User nosuchuser_briny is not available ", {})
    ret = _states(tmp_path)["file.directory"](name=str(out / "m"), mode="rwx")
    assert ret["result"] is False and not (out / "m").exists()


# -- absent / exists / missing / touch ------------------------------------------------
def test_absent(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "f"
    f.write_text("x")
    d = out / "d"
    (d / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("k")
    (d / "sub" / "escape").symlink_to(outside)
    ret = _states(tmp_path, test=True)["file.absent"](name=str(f))
    assert _rcc(ret) == (None, f"File {f} is set for removal", {"removed": str(f)}) and f.exists()
    ret = _states(tmp_path, test=True)["file.absent"](name=str(d))
    assert _rcc(ret) == (None, f"Directory {d} is set for removal", {"removed": str(d)})
    assert _rcc(_states(tmp_path)["file.absent"](name=str(f))) == (True, f"Removed file {f}", {"removed": str(f)})
    ret = _states(tmp_path)["file.absent"](name=str(d))
    assert _rcc(ret) == (True, f"Removed directory {d}", {"removed": str(d)})
    assert not d.exists() and (outside / "keep").exists()
    assert _rcc(_states(tmp_path)["file.absent"](name=str(f))) == (True, f"File {f} is not present", {})
    assert _states(tmp_path)["file.absent"](name="/")["comment"] == 'Refusing to make "/" absent'
    assert _states(tmp_path)["file.absent"](name="rel")["comment"] == "Specified file rel is not an absolute path"


def test_exists_and_missing(tmp_path: Path, tree: Path, out: Path) -> None:
    for test in (False, True):
        st = _states(tmp_path, test=test)
        assert _rcc(st["file.exists"](name=str(out))) == (True, f"Path {out} exists", {})
        nope = str(out / "nope")
        assert _rcc(st["file.exists"](name=nope)) == (False, f"Specified path {nope} does not exist", {})
        assert _rcc(st["file.missing"](name=nope)) == (True, f"Path {nope} is missing", {})
        assert _rcc(st["file.missing"](name=str(out))) == (False, f"Specified path {out} exists", {})


def test_touch(tmp_path: Path, tree: Path, out: Path) -> None:
    t = out / "touched"
    ret = _states(tmp_path, test=True)["file.touch"](name=str(t))
    assert _rcc(ret) == (None, f"File {t} is set to be created", {"new": str(t)}) and not t.exists()
    ret = _states(tmp_path)["file.touch"](name=str(t))
    assert _rcc(ret) == (True, f"Created empty file {t}", {"new": str(t)}) and t.exists()
    ret = _states(tmp_path, test=True)["file.touch"](name=str(t))
    assert _rcc(ret) == (True, f"File {t} exists and has the correct times", {"new": str(t)})
    ret = _states(tmp_path)["file.touch"](name=str(t), mtime=1000000)
    assert _rcc(ret) == (True, f"Updated times on file {t}", {"touched": str(t)})
    assert t.stat().st_mtime == 1000000
    nd = out / "nod" / "x"
    ret = _states(tmp_path)["file.touch"](name=str(nd))
    assert _rcc(ret) == (False, f"Directory not present to touch file {nd}", {})
    assert _states(tmp_path)["file.touch"](name=str(nd), makedirs=True)["result"] is True


# -- file.append -----------------------------------------------------------------------
def test_append(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "e3.txt"
    f.write_text("x\n")
    diff = "--- \n\n+++ \n\n@@ -1 +1,2 @@\n\n x\n+line a"
    ret = _states(tmp_path, test=True)["file.append"](name=str(f), text=["line a", "x"])
    assert _rcc(ret) == (None, f"File {f} is set to be updated", {"diff": diff})
    ret = _states(tmp_path)["file.append"](name=str(f), text=["line a", "x"])
    assert _rcc(ret) == (True, "Appended 1 lines", {"diff": diff})
    assert f.read_text() == "x\nline a\n"
    ret = _states(tmp_path)["file.append"](name=str(f), text="line   a")
    assert _rcc(ret) == (True, f"File {f} is in correct state", {})
    n = out / "noeol.txt"
    n.write_text("eol")
    ret = _states(tmp_path)["file.append"](name=str(n), text="zzz")
    assert ret["changes"] == {"diff": "--- \n\n+++ \n\n@@ -1 +1,2 @@\n\n eol\n+zzz"}
    assert n.read_text() == "eol\nzzz\n"


def test_append_matches_chunks_as_salt(tmp_path: Path, tree: Path, out: Path) -> None:
    """Each text item (or source file) is one chunk: skipped only when its lines are already there
    together; without ignore_whitespace a chunk is a regular expression searched anywhere."""
    f = out / "chunks.txt"
    f.write_text("alpha\nzeta\nbeta\n")
    ret = _states(tmp_path)["file.append"](name=str(f), text=["alpha\nbeta", "zeta"])
    assert ret["comment"] == "Appended 2 lines" and f.read_text() == "alpha\nzeta\nbeta\nalpha\nbeta\n"
    ret = _states(tmp_path)["file.append"](name=str(f), text="et", ignore_whitespace=False)
    assert ret["comment"] == f"File {f} is in correct state"  # "et" is found inside "beta", as Salt's search
    ret = _states(tmp_path)["file.append"](name=str(f), text="z.ta", ignore_whitespace=False)
    assert ret["comment"] == f"File {f} is in correct state"


def test_append_sources_in_salts_order(tmp_path: Path, tree: Path, out: Path) -> None:
    (tree / "two.txt").write_text("{{ 'two' | upper }}\n")
    f = out / "src.txt"
    ret = _states(tmp_path)["file.append"](name=str(f), sources=["salt://src.txt", "salt://two.txt"])
    assert ret["comment"] == "Appended 3 lines" and f.read_text() == "hello\nworld\nTWO\n"  # rendered: Jinja
    g = out / "gone.txt"
    ret = _states(tmp_path)["file.append"](name=str(g), sources=["salt://src.txt", "salt://nope.txt"])
    assert (ret["result"], ret["name"], ret["comment"], ret["data"]) == (
        False,
        "salt://nope.txt",
        "Failed to load template file salt://nope.txt",
        [],
    )
    assert g.read_text() == ""  # Salt makes the target before it reads the sources
    ret = _states(tmp_path)["file.append"](name=str(g), source="salt://src.txt", sources=["salt://src.txt"])
    assert ret["comment"] == "source and sources are mutually exclusive"
    ret = _states(tmp_path)["file.append"](name=str(f), text="x", encoding="latin-1")
    assert ret["warnings"] == ["briny does not support encoding here; ignored"]


def test_append_new_files(tmp_path: Path, tree: Path, out: Path) -> None:
    a = out / "apnew.txt"
    ret = _states(tmp_path, test=True)["file.append"](name=str(a), text="hi")
    assert _rcc(ret) == (None, f"File {a} is set to be created", {"new": str(a)})
    ret = _states(tmp_path)["file.append"](name=str(a), text="hi")
    assert _rcc(ret) == (True, "Appended 1 lines", {"diff": "--- \n\n+++ \n\n@@ -0,0 +1 @@\n\n+hi"})
    nd = out / "nodir" / "x"
    assert _rcc(_states(tmp_path)["file.append"](name=str(nd), text="hi")) == (False, f"{nd}: file not found", {})
    assert _states(tmp_path)["file.append"](name=str(nd), text="hi", makedirs=True)["result"] is True
    assert _states(tmp_path)["file.append"](name=str(a))["result"] is False
