"""The file state module beyond the first slice, on a real tmp_path (live and test=True).

Expected comments and changes are the ones Salt 3007.17 returned for the
same calls (checked side by side with the reference, see the report of issue 4).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

NOTE = "\nNote: No changes made, actual changes may\nbe different due to other states."
PLAIN = b"plain\ncontent\n"
SHA = hashlib.sha256(PLAIN).hexdigest()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "files" / "rtree" / "sub" / "deep").mkdir(parents=True)
    (root / "files" / "plain.txt").write_bytes(PLAIN)
    (root / "files" / "plain.txt.sha256").write_text(f"{SHA}  plain.txt\n")
    (root / "files" / "tmpl.j2").write_text(
        "foo={{ foo }}\nbaz={{ baz }}\nid={{ grains['id'] }}\nfun={{ salt['test.echo']('hi') }}\n"
        "{{ source }} {{ sls|default('nosls') }}\n"
    )
    (root / "files" / "bad.j2").write_text("{{ nope.x }}\n")
    (root / "files" / "rtree" / "a.txt").write_text("one\n")
    (root / "files" / "rtree" / "c.skip").write_text("sk\n")
    (root / "files" / "rtree" / "sub" / "b.txt").write_text("two\n")
    (root / "files" / "rtree" / "sub" / "deep" / "d.conf").write_text("d\n")
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
        "id": "golden",
        "cachedir": str(tmp_path / "cache"),
    }
    salt = loader.minion_mods(opts, pillar=pillar or {}, grains={"id": "golden", "os": "Linux"})
    return loader.states(opts, salt)


def _rcc(ret: dict) -> tuple:
    return ret["result"], ret["comment"], ret["changes"]


def _mode(p: Path) -> str:
    return f"{stat.S_IMODE(p.stat().st_mode):04o}"


def _twice(tmp_path: Path, fun: str, **kwargs: Any) -> tuple[dict, dict]:
    first = _states(tmp_path)[fun](**kwargs)
    return first, _states(tmp_path)[fun](**kwargs)


# -- managed: templates, hashes, backup, check_cmd -----------------------------------------
def test_managed_template_with_context_defaults_and_salt(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "tmpl.conf"
    kw = dict(
        name=str(f),
        source="salt://files/tmpl.j2",
        template="jinja",
        context={"foo": "bar"},
        defaults={"foo": "default", "baz": "qux"},
        mode=640,
    )
    assert _rcc(_states(tmp_path, test=True)["file.managed"](**kw)) == (
        None,
        f"The file {f} is set to be changed" + NOTE,
        {"newfile": str(f)},
    )
    first, second = _twice(tmp_path, "file.managed", **kw)
    assert _rcc(first) == (True, f"File {f} updated", {"diff": "New file", "mode": "0640"})
    assert f.read_text() == "foo=bar\nbaz=qux\nid=golden\nfun=hi\nsalt://files/tmpl.j2 nosls\n"
    assert _mode(f) == "0640"
    assert _rcc(second) == (True, f"File {f} is in the correct state", {})


def test_managed_contents_template(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "ctx.txt"
    ret = _states(tmp_path, pillar={"pk": "pv"})["file.managed"](
        name=str(f), contents="x={{ x }} p={{ pillar.get('pk') }}", template="jinja", context={"x": 5}
    )
    assert _rcc(ret) == (True, f"File {f} updated", {"diff": "New file"})
    assert f.read_text() == "x=5 p=pv\n"


def test_managed_template_error_is_a_comment(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "te.txt"
    for test in (True, False):
        ret = _states(tmp_path, test=test)["file.managed"](name=str(f), source="salt://files/bad.j2", template="jinja")
        assert _rcc(ret) == (
            False,
            "Unable to manage file: Jinja variable 'nope' is undefined; line 1\n\n"
            "---\n{{ nope.x }}    <======================\n---",
            {},
        )
    assert not f.exists()


def test_managed_source_hash_forms(tmp_path: Path, tree: Path, out: Path) -> None:
    src = out / "src.txt"
    src.write_bytes(PLAIN)
    (out / "hashes").write_text(f"{SHA}  src.txt\n{'0' * 64}  other\n")
    for i, shash in enumerate([f"sha256={SHA}", SHA, str(out / "hashes"), "salt://files/plain.txt.sha256"]):
        f = out / f"h{i}"
        source = str(src) if i < 3 else "salt://files/plain.txt"
        first, second = _twice(tmp_path, "file.managed", name=str(f), source=source, source_hash=shash)
        assert _rcc(first) == (True, f"File {f} updated", {"diff": "New file", "mode": "0644"})
        assert _rcc(second) == (True, f"File {f} is in the correct state", {})


def test_managed_source_hash_mismatch_and_bad_forms(tmp_path: Path, tree: Path, out: Path) -> None:
    src = out / "src.txt"
    src.write_text("src\n")
    f = out / "h.txt"
    zero = "0" * 64
    ret = _states(tmp_path)["file.managed"](name=str(f), source=str(src), source_hash=f"sha256={zero}")
    actual = hashlib.sha256(b"src\n").hexdigest()
    assert _rcc(ret) == (
        False,
        f"Specified sha256 checksum for {f} ({zero}) does not match actual checksum ({actual})",
        {},
    )
    assert not f.exists()
    # test mode does not fetch and verify, as in Salt
    assert (
        _states(tmp_path, test=True)["file.managed"](name=str(f), source=str(src), source_hash=f"sha256={zero}")[
            "result"
        ]
        is None
    )
    ret = _states(tmp_path)["file.managed"](name=str(f), source=str(src), source_hash="foo=abc")
    assert ret["result"] is False and ret["comment"].startswith("Unable to manage file: Invalid hash type 'foo'.")
    ret = _states(tmp_path)["file.managed"](name=str(f), source=str(src), source_hash=str(src))
    assert ret["result"] is False and ret["comment"].startswith(
        f"Unable to manage file: Source hash {src} format is invalid."
    )
    ret = _states(tmp_path)["file.managed"](
        name=str(f), source=str(src), source_hash=f"sha256={zero}", skip_verify=True
    )
    assert ret["result"] is True and f.read_text() == "src\n"


def test_managed_backup_minion(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "bk.txt"
    f.write_text("old\n")
    ret = _states(tmp_path)["file.managed"](name=str(f), contents="newer", backup="minion")
    assert _rcc(ret) == (True, f"File {f} updated", {"diff": "--- \n+++ \n@@ -1 +1 @@\n-old\n+newer\n"})
    folder = tmp_path / "cache" / "file_backup" / str(out).lstrip("/")
    backups = list(folder.iterdir())
    assert len(backups) == 1 and backups[0].name.startswith("bk.txt_") and backups[0].read_text() == "old\n"


def test_managed_check_cmd(tmp_path: Path, tree: Path, out: Path) -> None:
    good, bad = out / "cc1.txt", out / "cc2.txt"
    ret = _states(tmp_path)["file.managed"](name=str(good), contents="good", check_cmd="grep -q good")
    assert _rcc(ret) == (True, f"File {good} updated", {"diff": "New file"})
    ret = _states(tmp_path)["file.managed"](name=str(bad), contents="bad", check_cmd="grep -q good")
    assert _rcc(ret) == (False, "check_cmd execution failed", {}) and ret["skip_watch"] is True
    assert not bad.exists()


def test_managed_new_file_modes_like_salt(tmp_path: Path, tree: Path, out: Path) -> None:
    cases = [
        ({"contents": "x", "mode": 600}, {"diff": "New file"}),
        ({"contents": "x", "mode": 640}, {"diff": "New file", "mode": "0640"}),
        ({"source": "salt://files/plain.txt", "mode": 600}, {"diff": "New file"}),
        ({"source": "salt://files/plain.txt"}, {"diff": "New file", "mode": "0644"}),
        ({"contents": "x", "user": "nobody"}, {"diff": "New file", "user": "nobody"}),
    ]
    for i, (kw, changes) in enumerate(cases):
        f = out / f"n{i}"
        assert _states(tmp_path)["file.managed"](name=str(f), **kw)["changes"] == changes, kw


def test_managed_follow_symlinks(tmp_path: Path, tree: Path, out: Path) -> None:
    (out / "target").write_text("target\n")
    (out / "link").symlink_to("target")
    ret = _states(tmp_path)["file.managed"](name=str(out / "link"), contents="via link")
    assert ret["changes"] == {"diff": "--- \n+++ \n@@ -1 +1 @@\n-target\n+via link\n"}
    assert (out / "link").is_symlink() and (out / "target").read_text() == "via link\n"
    (out / "t2").write_text("target2\n")
    (out / "l2").symlink_to("t2")
    ret = _states(tmp_path)["file.managed"](name=str(out / "l2"), contents="replaced", follow_symlinks=False)
    assert ret["result"] is True
    assert not (out / "l2").is_symlink() and (out / "t2").read_text() == "target2\n"


# -- directory / recurse -------------------------------------------------------------------------
def test_directory_recurse_and_clean(tmp_path: Path, tree: Path, out: Path) -> None:
    d = out / "t"
    (d / "s").mkdir(parents=True)
    (d / "f1").write_text("a")
    (d / "s" / "f2").write_text("b")
    os.chmod(d / "f1", 0o644)
    os.chmod(d / "s" / "f2", 0o644)
    kw = dict(name=str(d), file_mode=600, dir_mode=700, recurse=["mode"])
    ret = _states(tmp_path, test=True)["file.directory"](**kw)
    assert _rcc(ret) == (
        None,
        f"The following files will be changed:\n{d}/f1: mode - 0600\n{d}/s: mode - 0700\n"
        f"{d}/s/f2: mode - 0600\n{d}: mode - 0700\n",
        {
            str(d): {"mode": "0700"},
            f"{d}/f1": {"mode": "0600"},
            f"{d}/s": {"mode": "0700"},
            f"{d}/s/f2": {"mode": "0600"},
        },
    )
    first, second = _twice(tmp_path, "file.directory", **kw)
    assert _rcc(first) == (
        True,
        f"Directory {d} updated",
        {
            str(d): {"mode": "0700"},
            f"{d}/f1": {"mode": "0600"},
            f"{d}/s": {"mode": "0700"},
            f"{d}/s/f2": {"mode": "0600"},
            "mode": "0600",
        },
    )
    assert _rcc(second) == (True, f"The directory {d} is in the correct state", {})
    first, second = _twice(tmp_path, "file.directory", name=str(d), clean=True)
    removed = {"removed": "Removed due to clean"}
    assert _rcc(first) == (
        True,
        f"Files cleaned from directory {d}",
        {f"{d}/f1": removed, f"{d}/s": removed, f"{d}/s/f2": removed, "removed": [f"{d}/f1", f"{d}/s"]},
    )
    assert os.listdir(d) == []
    assert second["changes"] == {}


def test_directory_clean_lists_in_the_directorys_own_order(tmp_path: Path, tree: Path, out: Path) -> None:
    """Salt lists what ``clean`` removes as ``os.walk`` meets it (in each folder its files, then its
    folders; tests/golden/fidelity/expected/directory_clean.json), not sorted. The file system's
    order is its own, so the expected order is os.walk's on the same folder."""
    d = out / "c"
    d.mkdir()
    for name in ("m", "c", "x", "a", "q", "k", "b", "z", "e"):  # neither sorted nor reversed
        (d / name).write_text(name)
    for sub in ("yy", "dd", "pp"):
        (d / sub).mkdir()
        for name in ("n", "f", "t", "b"):
            (d / sub / name).write_text(name)
    walked = [os.path.join(root, n) for root, dirs, files in os.walk(d) for n in files + dirs]
    assert walked != sorted(walked), "this file system lists in sorted order: the test would show nothing"
    tops = [p for p in walked if os.path.dirname(p) == str(d)]
    removed = {"removed": "Removed due to clean"}
    ret = _states(tmp_path, test=True)["file.directory"](name=str(d), clean=True)
    assert list(ret["changes"]) == walked
    assert ret["comment"] == "The following files will be changed:\n" + "".join(
        f"{p}: removed - Removed due to clean\n" for p in walked
    )
    ret = _states(tmp_path)["file.directory"](name=str(d), clean=True)
    assert ret["changes"] == {**{p: removed for p in walked}, "removed": tops}
    assert list(ret["changes"]) == [*walked, "removed"]
    assert os.listdir(d) == []


def test_directory_owner_and_failures(tmp_path: Path, tree: Path, out: Path) -> None:
    d = out / "new" / "a"
    first, second = _twice(
        tmp_path, "file.directory", name=str(d), makedirs=True, user="nobody", group="nogroup", dir_mode=750
    )
    assert _rcc(first) == (True, "", {str(d): {"directory": "new"}})
    assert (d.owner(), d.group(), _mode(d)) == ("nobody", "nogroup", "0750")
    assert (d.parent.owner(), _mode(d.parent)) == ("nobody", "0750")
    assert _rcc(second) == (True, f"The directory {d} is in the correct state", {})
    (out / "afile").write_text("x")
    assert _rcc(_states(tmp_path)["file.directory"](name=str(out / "afile"))) == (
        False,
        f"Specified location {out}/afile exists and is a file",
        {},
    )
    ret = _states(tmp_path)["file.directory"](name=str(out / "t6"), user="nosuchuser_briny")
    assert _rcc(ret) == (False, "User nosuchuser_briny is not available ", {})


def test_recurse(tmp_path: Path, tree: Path, out: Path) -> None:
    d = out / "dest"
    (d / "extra").mkdir(parents=True)
    (d / "extra" / "old.txt").write_text("x")
    kw = dict(name=str(d), source="salt://files/rtree", clean=True, file_mode=600, exclude_pat="*.skip")
    ret = _states(tmp_path, test=True)["file.recurse"](**kw)
    assert ret["result"] is None and ret["comment"].endswith(f"#### removed ####\n{d}/extra\n{d}/extra/old.txt")
    first, second = _twice(tmp_path, "file.recurse", **kw)
    assert first["result"] is True and first["comment"] == f"Recursively updated {d}"
    assert first["changes"][f"{d}/a.txt"] == {"diff": "New file"}
    assert first["changes"][f"{d}/sub/deep"] == {f"{d}/sub/deep": {"directory": "new"}}
    assert first["changes"]["removed"] == [f"{d}/extra"]
    assert sorted(str(p.relative_to(d)) for p in d.rglob("*")) == [
        "a.txt",
        "sub",
        "sub/b.txt",
        "sub/deep",
        "sub/deep/d.conf",
    ]
    assert _mode(d / "a.txt") == "0600"
    assert _rcc(second) == (True, f"The directory {d} is in the correct state", {})
    assert _rcc(_states(tmp_path)["file.recurse"](name=str(out / "x"), source="salt://files/nope")) == (
        False,
        "Recurse failed: none of the specified sources were found",
        {},
    )
    assert _rcc(_states(tmp_path)["file.recurse"](name=str(out / "x"), source="/etc")) == (
        False,
        "Invalid source '/etc' (must be a salt:// URI)",
        {},
    )


def test_recurse_include_exclude_lists(tmp_path: Path, tree: Path, out: Path) -> None:
    """``include_pat``/``exclude_pat`` as lists (Salt >= 3001), matched as Salt 3007 does against the
    whole path relative to the source (``_*`` keeps ``sub/_y.conf``); the sets of paths are the ones
    Salt 3007.17 reported for the same tree."""
    rtree = tree / "files" / "rtree"
    (rtree / "_x.conf").write_text("5\n")
    (rtree / "sub" / "_y.conf").write_text("6\n")
    (rtree / "raas.conf").write_text("7\n")

    def paths(**kw: Any) -> list[str]:
        d = out / "d"
        ret = _states(tmp_path, test=True)["file.recurse"](name=str(d), source="salt://files/rtree", **kw)
        assert ret["result"] is None, ret
        return sorted(os.path.relpath(p, d) for p in ret["changes"])

    assert paths(exclude_pat=["_*", "raas.conf", "*.skip"]) == [
        ".",
        "a.txt",
        "sub",
        "sub/_y.conf",
        "sub/b.txt",
        "sub/deep",
        "sub/deep/d.conf",
    ]
    assert paths(include_pat=["*.txt", "E@deep/"], exclude_pat="E@^sub/b") == [
        ".",
        "a.txt",
        "sub/deep",
        "sub/deep/d.conf",
    ]
    assert "sub/_y.conf" in paths(exclude_pat="_*") and "_x.conf" not in paths(exclude_pat="_*")
    d = out / "live"
    first = _states(tmp_path)["file.recurse"](name=str(d), source="salt://files/rtree", exclude_pat=["_*", "*.skip"])
    assert first["result"] is True
    assert sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file()) == [
        "a.txt",
        "raas.conf",
        "sub/_y.conf",
        "sub/b.txt",
        "sub/deep/d.conf",
    ]
    (d / "_keep.me").write_text("k")
    (d / "gone.txt").write_text("g")
    ret = _states(tmp_path)["file.recurse"](
        name=str(d), source="salt://files/rtree", exclude_pat=["_*", "*.skip"], clean=True
    )
    assert ret["changes"]["removed"] == [f"{d}/gone.txt"]
    assert (d / "_keep.me").exists() and not (d / "gone.txt").exists()


# -- text edits -------------------------------------------------------------------------------------
def test_line_replace_blockreplace(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "f"
    f.write_text("a=1\nb=2\nd=4\n")
    kw = dict(name=str(f), mode="ensure", after="^b=.*", content="c=3")
    diff = "--- \n+++ \n@@ -1,3 +1,4 @@\n a=1\n b=2\n+c=3\n d=4\n"
    assert _rcc(_states(tmp_path, test=True)["file.line"](**kw)) == (None, "Changes would be made", {"diff": diff})
    first, second = _twice(tmp_path, "file.line", **kw)
    assert _rcc(first) == (True, "Changes were made", {"diff": diff})
    assert _rcc(second) == (True, "No changes needed to be made", {})
    assert _rcc(_states(tmp_path)["file.line"](name=str(out / "nope"), mode="ensure", content="x", after="y")) == (
        False,
        f"{out}/nope: file not found",
        {},
    )
    assert _states(tmp_path)["file.line"](name=str(f), mode="frob", content="x")["comment"] == 'Unknown mode: "frob"'

    first, second = _twice(tmp_path, "file.replace", name=str(f), pattern="^d=.*", repl="d=5")
    assert _rcc(first) == (
        True,
        "Changes were made",
        {"diff": "--- \n+++ \n@@ -1,4 +1,4 @@\n a=1\n b=2\n c=3\n-d=4\n+d=5\n"},
    )
    assert (out / "f.bak").read_text() == "a=1\nb=2\nc=3\nd=4\n"
    assert _rcc(second) == (True, "No changes needed to be made", {})

    kw = dict(name=str(f), marker_start="# START", marker_end="# END", content="x", append_if_not_found=True)
    first, second = _twice(tmp_path, "file.blockreplace", **kw)
    assert first["comment"] == "Changes were made" and f.read_text().endswith("d=5\n# START\nx\n# END\n")
    assert _rcc(second) == (True, "No changes needed to be made", {})
    ret = _states(tmp_path)["file.blockreplace"](name=str(f), marker_start="# NO", marker_end="# NOEND", content="x")
    assert _rcc(ret) == (
        False,
        "Encountered error managing block: Cannot edit marked block. Markers were not "
        "found in file.. See the log for details.",
        {},
    )


def test_comment_uncomment_prepend_append(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "f"
    f.write_text("host=a\nport=80\n")
    assert _rcc(_states(tmp_path, test=True)["file.comment"](name=str(f), regex="^port=")) == (
        None,
        f"File {f} is set to be updated",
        {str(f): "updated"},
    )
    first, second = _twice(tmp_path, "file.comment", name=str(f), regex="^port=")
    assert _rcc(first) == (
        True,
        "Commented lines successfully",
        {"diff": "--- \n+++ \n@@ -1,2 +1,2 @@\n host=a\n-port=80\n+#port=80\n"},
    )
    assert _rcc(second) == (True, "Pattern already commented", {})
    assert _rcc(_states(tmp_path)["file.comment"](name=str(f), regex="^zzz")) == (False, "zzz: Pattern not found", {})
    first, second = _twice(tmp_path, "file.uncomment", name=str(f), regex="port=")
    assert first["comment"] == "Uncommented lines successfully" and f.read_text() == "host=a\nport=80\n"
    assert _rcc(second) == (True, "Pattern already uncommented", {})
    first, second = _twice(tmp_path, "file.prepend", name=str(f), text=["# one", "# two"])
    assert _rcc(first) == (
        True,
        "Prepended 2 lines",
        {"diff": "--- \n+++ \n@@ -1,2 +1,4 @@\n+# one\n+# two\n host=a\n port=80\n"},
    )
    assert _rcc(second) == (True, f"File {f} is in correct state", {})
    first, second = _twice(tmp_path, "file.append", name=str(f), source="salt://files/plain.txt")
    assert _rcc(first) == (
        True,
        "Appended 2 lines",
        {"diff": "--- \n\n+++ \n\n@@ -2,3 +2,5 @@\n\n # two\n host=a\n port=80\n+plain\n+content"},
    )
    assert second["changes"] == {}


def test_keyvalue(tmp_path: Path, tree: Path, out: Path) -> None:
    f = out / "f"
    f.write_text("host=a\nport=80\n# comment\n")
    kw = dict(name=str(f), key_values={"port": "8080", "host": "web"})
    ret = _states(tmp_path, test=True)["file.keyvalue"](**kw)
    assert _rcc(ret) == (
        None,
        f"File {f} is set to be changed (2 lines)\nPredicted diff:\n\r\t\t- host=a\n"
        "\r\t\t+ host=web\n\r\t\t- port=80\n\r\t\t+ port=8080\n",
        {"diff": "- host=a\n+ host=web\n- port=80\n+ port=8080\n"},
    )
    first, second = _twice(tmp_path, "file.keyvalue", **kw)
    assert _rcc(first) == (True, "Changed 2 lines", {"diff": "- host=a\n+ host=web\n- port=80\n+ port=8080\n"})
    assert _rcc(second) == (True, "", {})
    assert _rcc(_states(tmp_path)["file.keyvalue"](name=str(out / "nope"), key_values={"a": 1})) == (
        False,
        f"unable to open {out}/nope",
        {},
    )


# -- links, copies, renames, serialize ------------------------------------------------------------
def test_symlink(tmp_path: Path, tree: Path, out: Path) -> None:
    tgt, link = out / "tgt", out / "l"
    tgt.write_text("t")
    assert _rcc(_states(tmp_path, test=True)["file.symlink"](name=str(link), target=str(tgt))) == (
        None,
        f"Symlink {link} to {tgt} is set for creation",
        {"new": str(link)},
    )
    first, second = _twice(tmp_path, "file.symlink", name=str(link), target=str(tgt), user="nobody", group="nogroup")
    assert _rcc(first) == (True, f"Created new symlink {link} -> {tgt}", {"new": str(link)})
    assert os.readlink(link) == str(tgt) and link.lstat().st_uid != 0
    assert _rcc(second) == (True, f"Symlink {link} is present and owned by nobody:nogroup", {})
    (out / "l3").write_text("f")
    assert _rcc(_states(tmp_path)["file.symlink"](name=str(out / "l3"), target=str(tgt))) == (
        False,
        f"File exists where the symlink {out}/l3 should be",
        {},
    )
    ret = _states(tmp_path)["file.symlink"](name=str(out / "l3"), target=str(tgt), force=True)
    assert ret["result"] is True and (out / "l3").is_symlink()
    (out / "l4").symlink_to("other")
    assert _rcc(_states(tmp_path, test=True)["file.symlink"](name=str(out / "l4"), target=str(tgt))) == (
        None,
        f"Link {out}/l4 target is set to be changed to {tgt}",
        {"change": f"{out}/l4"},
    )
    assert _rcc(_states(tmp_path)["file.symlink"](name=str(out / "no" / "l"), target=str(tgt))) == (
        False,
        f"Directory {out}/no for symlink is not present",
        {},
    )


def test_copy_and_rename(tmp_path: Path, tree: Path, out: Path) -> None:
    src = out / "src"
    src.write_text("src\n")
    os.chmod(src, 0o640)
    dst = out / "sub" / "c"
    first, second = _twice(tmp_path, "file.copy", name=str(dst), source=str(src), makedirs=True)
    assert _rcc(first) == (True, f'Copied "{src}" to "{dst}"', {str(dst): str(src)})
    assert _mode(dst) == "0640" and _mode(dst.parent) == "0750"
    assert _rcc(second) == (True, f'The target file "{dst}" exists and will not be overwritten', {})
    ret = _states(tmp_path)["file.copy"](name=str(out / "c8"), source=str(src), mode=600, user="nobody")
    assert ret["changes"] == {f"{out}/c8": str(src), "group": "nogroup", "mode": "0600", "user": "nobody"}
    assert _rcc(_states(tmp_path)["file.copy"](name=str(out / "c9"), source=str(out / "nope"))) == (
        False,
        f'Source file "{out}/nope" is not present',
        {},
    )
    first, second = _twice(tmp_path, "file.rename", name=str(out / "moved"), source=str(src))
    assert _rcc(first) == (True, f'Moved "{src}" to "{out}/moved"', {f"{out}/moved": str(src)})
    assert _rcc(second) == (True, f'Source file "{src}" has already been moved out of place', {})


def test_serialize(tmp_path: Path, tree: Path, out: Path) -> None:
    y, j, m = out / "a.yaml", out / "a.json", out / "m.json"
    data = {"b": 2, "a": [1, 2], "c": {"x": "y"}}
    assert _rcc(_states(tmp_path, test=True)["file.serialize"](name=str(y), dataset=data, formatter="yaml")) == (
        None,
        f"Dataset will be serialized and stored into {y}",
        {"newfile": str(y)},
    )
    first, second = _twice(tmp_path, "file.serialize", name=str(y), dataset=data, formatter="yaml")
    assert _rcc(first) == (True, f"File {y} updated", {"diff": "New file"})
    assert y.read_text() == "a:\n- 1\n- 2\nb: 2\nc:\n  x: y\n"
    assert _rcc(second) == (True, f"File {y} is in the correct state", {})
    _states(tmp_path)["file.serialize"](name=str(j), dataset={"b": 2, "a": [1, 2]}, formatter="json")
    assert j.read_text() == '{\n  "a": [\n    1,\n    2\n  ],\n  "b": 2\n}\n'
    m.write_text('{"old": 1}\n')
    first, second = _twice(
        tmp_path, "file.serialize", name=str(m), dataset={"new": 1}, formatter="json", merge_if_exists=True
    )
    assert _rcc(first) == (True, f"File {m} updated", {"diff": {"new": {"new": 1, "old": "<_null_>"}}})
    assert json.loads(m.read_text()) == {"new": 1, "old": 1}
    assert _rcc(second) == (True, f"The file {m} is in the correct state", {})
    ret = _states(tmp_path, pillar={"app": {"conf": {"k": "v"}}})["file.serialize"](
        name=str(out / "p.yaml"), dataset_pillar="app:conf", mode=600
    )
    assert ret["result"] is True and (out / "p.yaml").read_text() == "k: v\n" and _mode(out / "p.yaml") == "0600"
    assert _rcc(_states(tmp_path)["file.serialize"](name=str(out / "x"), dataset={}, formatter="nope")) == (
        False,
        "The nope serializer could not be found. It either does not exist or its prerequisites are not installed.",
        {},
    )
