"""The master's file server (master/fileserver.py): environments, first match, listings and their
cache, hashes, chunks, every traversal form, symlinks under both settings."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from briny.common.exceptions import FileServerError
from briny.master.fileserver import CHUNK_MAX, FileServer, check_path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """base: two roots (r1 wins), dev: one root; a secret outside every root."""
    r1, r2, dev = tmp_path / "r1", tmp_path / "r2", tmp_path / "dev"
    for d in (r1 / "web" / "files", r2 / "web", r2 / "db", dev, r1 / ".git", r1 / "empty"):
        d.mkdir(parents=True)
    (r1 / "top.sls").write_text("base: {'*': [web]}\n")
    (r1 / "web" / "init.sls").write_text("from r1\n")
    (r1 / "web" / "files" / "index.html").write_text("<h1>{{ grains.id }}</h1>\n")
    (r1 / ".git" / "config").write_text("[core]\n")
    (r2 / "web" / "init.sls").write_text("from r2\n")
    (r2 / "db" / "init.sls").write_text("db\n")
    (dev / "web.sls").write_text("dev\n")
    (tmp_path / "secret").write_text("root:x:0:0\n")
    return tmp_path


def server(tree: Path, **opts: Any) -> FileServer:
    conf = {"file_roots": {"base": [str(tree / "r1"), str(tree / "r2")], "dev": [str(tree / "dev")]}, **opts}
    return FileServer(conf)


SESS = SimpleNamespace(id="web1")


# -- environments, first match, listings ---------------------------------------------------------


def test_envs_and_first_match_wins(tree: Path) -> None:
    fs = server(tree)
    assert fs.envs() == ["base", "dev"]
    assert fs.handle_envs(SESS, {}) == {"envs": ["base", "dev"]}
    rel, full, _ = fs.resolve("web/init.sls", "base")
    assert (rel, full) == ("web/init.sls", str(tree / "r1" / "web" / "init.sls"))
    assert fs.resolve("db/init.sls", "base")[1] == str(tree / "r2" / "db" / "init.sls")
    assert fs.resolve("web.sls", "base") is None
    assert fs.resolve("web.sls", "dev")[1] == str(tree / "dev" / "web.sls")
    assert fs.resolve("./web//init.sls", None)[0] == "web/init.sls"  # no saltenv: base


def test_file_list_merges_roots_with_dirs_and_prefix(tree: Path) -> None:
    fs = server(tree)
    listing = fs.handle_list(SESS, {"saltenv": "base"})
    assert listing == {
        "files": ["db/init.sls", "top.sls", "web/files/index.html", "web/init.sls"],
        "dirs": ["db", "empty", "web", "web/files"],
    }  # .git is left out
    assert fs.handle_list(SESS, {"saltenv": "base", "prefix": "web/"}) == {
        "files": ["web/files/index.html", "web/init.sls"],
        "dirs": ["web/files"],
    }
    assert fs.handle_list(SESS, {"saltenv": "dev"}) == {"files": ["web.sls"], "dirs": []}


def age(tree: Path, step: int) -> None:
    """Set every folder's mtime well in the past (each step to a new value), so listings made
    afterwards are not racy."""
    when = time.time() - 1000 + step
    for dirpath, _dirs, _files in os.walk(tree):
        os.utime(dirpath, (when, when))


def test_listing_is_cached_and_refreshed_by_folder_mtimes(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fs = server(tree, fileserver_list_cache_time=0)
    walks = []
    real_walk = fs._walk
    monkeypatch.setattr(fs, "_walk", lambda env: walks.append(env) or real_walk(env))
    age(tree, 1)
    first = fs.file_list("base")
    for _ in range(5):
        assert fs.file_list("base") == first
    assert walks == ["base"]  # unchanged folders: no new walk
    (tree / "r1" / "web" / "files" / "new.txt").write_text("x")
    age(tree, 2)
    assert "web/files/new.txt" in fs.file_list("base")["files"]
    assert walks == ["base", "base"]
    os.unlink(tree / "r2" / "db" / "init.sls")
    age(tree, 3)
    assert "db/init.sls" not in fs.file_list("base")["files"]
    (tree / "r2" / "web" / "more").mkdir()
    (tree / "r2" / "web" / "more" / "x.sls").write_text("")
    age(tree, 4)
    assert "web/more/x.sls" in fs.file_list("base")["files"]
    assert len(walks) == 4
    # content changes do not need a walk (hashes are read per file)
    (tree / "r1" / "top.sls").write_text("changed\n")
    fs.file_list("base")
    assert len(walks) == 4


def test_a_change_in_the_tick_of_the_walk_is_not_missed(tree: Path) -> None:
    """Folder times are coarse: a folder changed just before the walk may change again without a
    new mtime; such a listing is walked again at the next check."""
    fs = server(tree, fileserver_list_cache_time=0)
    folder = tree / "r1" / "web"
    before = fs.file_list("base")["files"]
    stamp = folder.stat().st_mtime_ns
    (folder / "same_tick.sls").write_text("")
    os.utime(folder, ns=(stamp, stamp))  # as if written in the same clock tick
    assert "web/same_tick.sls" in fs.file_list("base")["files"]
    assert "web/same_tick.sls" not in before


def test_listing_ttl_and_explicit_update(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fs = server(tree, fileserver_list_cache_time=3600)
    checks = []
    real_fresh = fs._fresh
    monkeypatch.setattr(fs, "_fresh", lambda listing: checks.append(1) or real_fresh(listing))
    fs.file_list("base")
    (tree / "r1" / "later.sls").write_text("")
    assert "later.sls" not in fs.file_list("base")["files"]  # within the TTL: not even a stat
    assert checks == []
    fs.update("base")
    assert "later.sls" in fs.file_list("base")["files"]
    fs.update()
    assert "later.sls" in fs.file_list("base")["files"]


def test_a_root_that_appears_later_is_seen(tree: Path) -> None:
    fs = FileServer({"file_roots": {"base": [str(tree / "nope"), str(tree / "r2")]}, "fileserver_list_cache_time": 0})
    assert fs.file_list("base")["files"] == ["db/init.sls", "web/init.sls"]
    (tree / "nope").mkdir()
    (tree / "nope" / "a.sls").write_text("")
    assert fs.file_list("base")["files"] == ["a.sls", "db/init.sls", "web/init.sls"]


# -- hashes and chunks -----------------------------------------------------------------------------


def test_an_unchanged_file_is_hashed_once(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from briny.master import fileserver

    fs = server(tree)
    path = tree / "r1" / "top.sls"
    os.utime(path, (time.time() - 100, time.time() - 100))
    made = []
    real = hashlib.sha256
    monkeypatch.setattr(fileserver.hashlib, "sha256", lambda *a: made.append(1) or real(*a))
    first = fs.file_hash("top.sls", "base")
    assert fs.file_hash("top.sls", "base") == first and len(made) == 1
    path.write_text("new content\n")  # new mtime and ctime: hashed again
    assert fs.file_hash("top.sls", "base")["hsum"] == real(b"new content\n").hexdigest()
    assert len(made) == 2


def test_file_hash_is_sha256_and_follows_changes(tree: Path) -> None:
    fs = server(tree)
    path = tree / "r1" / "top.sls"
    rep = fs.handle_hash(SESS, {"path": "top.sls", "saltenv": "base"})
    assert rep == {
        "hash_type": "sha256",
        "hsum": hashlib.sha256(path.read_bytes()).hexdigest(),
        "size": path.stat().st_size,
        "mode": path.stat().st_mode & 0o7777,
    }
    path.chmod(0o750)
    assert fs.handle_hash(SESS, {"path": "top.sls", "saltenv": "base"})["mode"] == 0o750  # mode: keep reads it
    path.write_text("something else entirely\n")
    again = fs.handle_hash(SESS, {"path": "top.sls", "saltenv": "base"})
    assert again["hsum"] == hashlib.sha256(b"something else entirely\n").hexdigest()
    assert fs.handle_hash(SESS, {"path": "nope.sls", "saltenv": "base"})["missing"] is True
    assert fs.handle_hash(SESS, {"path": "web", "saltenv": "base"})["missing"] is True  # a folder


def test_chunks_of_a_large_file(tree: Path) -> None:
    fs = server(tree)
    blob = os.urandom(3 * 1024 * 1024 + 123)
    (tree / "r1" / "big.bin").write_bytes(blob)
    got, offset, replies = b"", 0, 0
    while True:
        rep = fs.handle_chunk(SESS, {"path": "big.bin", "saltenv": "base", "offset": offset})
        replies += 1
        assert len(rep["data"]) <= 1024 * 1024 and rep["size"] == len(blob)
        got += rep["data"]
        offset += len(rep["data"])
        if rep["eof"]:
            break
    assert got == blob and replies == 4
    small = fs.handle_chunk(SESS, {"path": "top.sls", "saltenv": "base", "offset": 0, "size": 5})
    assert small == {"data": b"base:", "eof": False, "size": 19}
    past = fs.handle_chunk(SESS, {"path": "top.sls", "saltenv": "base", "offset": 100})
    assert past["data"] == b"" and past["eof"] is True
    for bad in ({"offset": -1}, {"offset": "0"}, {"size": 0}, {"size": CHUNK_MAX + 1}, {"offset": True}):
        rep = fs.handle_chunk(SESS, {"path": "top.sls", "saltenv": "base", "offset": 0, **bad})
        assert "error" in rep and "data" not in rep


# -- every traversal form is refused, and logged with the minion id ------------------------------

TRAVERSALS = [
    "../etc/passwd",
    "a/../../x",
    "web/../../secret",
    "..",
    "%2e%2e/x",
    "%2E%2E/secret",
    "web/%2e%2e/%2e%2e/secret",
    "/etc/passwd",
    "%2fetc/passwd",
    "a\x00b",
    "top.sls%00.txt",
    "..\\x",
    "web\\..\\..\\secret",
    "C:/windows",
    "",
    "web/\n/init.sls",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_forms_are_refused_and_logged(tree: Path, path: str, caplog: pytest.LogCaptureFixture) -> None:
    fs = server(tree)
    with pytest.raises(FileServerError):
        check_path(path)
    for cmd, handler, extra in (("file_hash", fs.handle_hash, {}), ("file_chunk", fs.handle_chunk, {"offset": 0})):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="briny.master.fileserver"):
            rep = handler(SESS, {"path": path, "saltenv": "base", **extra})
        assert set(rep) == {"error"}, (cmd, rep)
        assert any(cmd in r.getMessage() and "web1" in r.getMessage() for r in caplog.records)


def test_non_string_paths_and_prefixes_are_refused(tree: Path) -> None:
    fs = server(tree)
    for path in (None, 3, b"top.sls", ["top.sls"], "x" * 5000):
        assert set(fs.handle_hash(SESS, {"path": path, "saltenv": "base"})) == {"error"}
    for prefix in ("../", "/etc", 5, "a\x00"):
        assert set(fs.handle_list(SESS, {"saltenv": "base", "prefix": prefix})) == {"error"}


@pytest.mark.parametrize("saltenv", ["prod", "../base", "base/..", "", 7, ["base"], "x" * 300])
def test_unknown_saltenv_is_refused(tree: Path, saltenv: Any, caplog: pytest.LogCaptureFixture) -> None:
    fs = server(tree)
    with caplog.at_level(logging.WARNING, logger="briny.master.fileserver"):
        hashed = fs.handle_hash(SESS, {"path": "top.sls", "saltenv": saltenv})
        listed = fs.handle_list(SESS, {"saltenv": saltenv})
        chunk = fs.handle_chunk(SESS, {"path": "top.sls", "saltenv": saltenv, "offset": 0})
    if saltenv == "":  # empty means base, as Salt's default
        assert hashed["hash_type"] == "sha256" and "files" in listed and chunk["data"]
        return
    assert set(hashed) == set(listed) == set(chunk) == {"error"}
    assert "web1" in caplog.text


def test_percent_names_are_literal_not_decoded(tree: Path) -> None:
    fs = server(tree)
    (tree / "r1" / "a%20b.txt").write_text("lit")
    assert fs.handle_chunk(SESS, {"path": "a%20b.txt", "saltenv": "base", "offset": 0})["data"] == b"lit"
    assert fs.handle_hash(SESS, {"path": "a b.txt", "saltenv": "base"})["missing"] is True


# -- symlinks ----------------------------------------------------------------------------------------


@pytest.fixture
def linked(tree: Path) -> Path:
    """A formula linked in from outside the root, a file link leaving it, one staying inside."""
    outside = tree / "formulas" / "nginx"
    outside.mkdir(parents=True)
    (outside / "init.sls").write_text("nginx\n")
    os.symlink(outside, tree / "r1" / "nginx")
    os.symlink(tree / "secret", tree / "r1" / "passwd")
    os.symlink(tree / "r1" / "top.sls", tree / "r1" / "alias.sls")
    os.symlink(tree / "r1", tree / "r1" / "web" / "loop")  # a cycle
    os.symlink(tree / "gone", tree / "r1" / "dangling")
    return tree


def test_symlinks_followed_by_default(linked: Path) -> None:
    fs = server(linked)
    files = fs.file_list("base")["files"]
    assert {"nginx/init.sls", "passwd", "alias.sls"} <= set(files)
    assert "dangling" not in files and not any("loop/loop" in f for f in files)
    assert fs.read_chunk("nginx/init.sls", "base", 0)["data"] == b"nginx\n"
    assert fs.read_chunk("alias.sls", "base", 0)["data"] == fs.read_chunk("top.sls", "base", 0)["data"]


def test_symlinks_leaving_the_root_refused_without_followsymlinks(
    linked: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fs = server(linked, fileserver_followsymlinks=False)
    files = fs.file_list("base")["files"]
    assert "nginx/init.sls" not in files and "passwd" not in files
    assert "alias.sls" in files  # a link that stays inside the root is fine
    with caplog.at_level(logging.WARNING, logger="briny.master.fileserver"):
        for path in ("nginx/init.sls", "passwd"):
            assert set(fs.handle_hash(SESS, {"path": path, "saltenv": "base"})) == {"error"}
            assert set(fs.handle_chunk(SESS, {"path": path, "saltenv": "base", "offset": 0})) == {"error"}
    assert "symlink" in caplog.text and "web1" in caplog.text
    assert fs.handle_chunk(SESS, {"path": "alias.sls", "saltenv": "base", "offset": 0})["data"]


# -- wired into the master -----------------------------------------------------------------------


def test_register_puts_the_handlers_on_a_server(tree: Path) -> None:
    seen: dict[str, tuple[Any, bool]] = {}
    fake = SimpleNamespace(register_handler=lambda cmd, fn, blocking=True: seen.__setitem__(cmd, (fn, blocking)))
    server(tree).register(fake)
    assert {k: v[1] for k, v in seen.items()} == {
        "file_envs": False,
        "file_list": True,
        "file_hash": True,
        "file_chunk": True,
    }


def test_the_fileserver_runner(tree: Path) -> None:
    from briny.common.exceptions import SaltInvocationError
    from briny.master.runners import RunnerContext, get_runner

    ctx = RunnerContext({"file_roots": {"base": [str(tree / "r1"), str(tree / "r2")], "dev": [str(tree / "dev")]}})
    assert get_runner("fileserver.envs")(ctx) == ["base", "dev"]
    assert get_runner("fileserver.file_list")(ctx, prefix="web/") == ["web/files/index.html", "web/init.sls"]
    assert get_runner("fileserver.file_list")(ctx, "dev") == ["web.sls"]
    assert get_runner("fileserver.dir_list")(ctx) == ["db", "empty", "web", "web/files"]
    assert get_runner("fileserver.update")(ctx) is True
    assert get_runner("fileserver.update")(ctx, backend="roots") is True
    with pytest.raises(SaltInvocationError):
        get_runner("fileserver.file_list")(ctx, "prod")


@pytest.mark.parametrize(
    "backend, message",
    [
        ("hgfs", "cannot update the 'hgfs' fileserver backend: briny serves roots and gitfs only"),
        ("roots,svn", "cannot update the 'svnfs' fileserver backend: briny serves roots and gitfs only"),
        (["roots", "minionfs"], "cannot update the 'minionfs' fileserver backend"),
        (None, "cannot update the 'hgfs' fileserver backend (set in fileserver_backend)"),
    ],
)
def test_fileserver_update_refuses_a_backend_briny_does_not_have(tree: Path, backend: Any, message: str) -> None:
    """Salt's backends briny has no counterpart for: the update fails naming it, never True."""
    from briny.common.exceptions import CommandExecutionError
    from briny.master.runners import RunnerContext, get_runner

    ctx = RunnerContext({"file_roots": {"base": [str(tree / "r1")]}, "fileserver_backend": ["roots", "hgfs"]})
    with pytest.raises(CommandExecutionError) as info:
        get_runner("fileserver.update")(ctx, backend=backend)
    assert str(info.value).startswith(message)


def test_fileserver_update_refuses_a_backend_salt_does_not_have_either(tree: Path) -> None:
    from briny.common.exceptions import SaltInvocationError
    from briny.master.runners import RunnerContext, get_runner

    with pytest.raises(SaltInvocationError, match="no fileserver backend 'nosuch'"):
        get_runner("fileserver.update")(RunnerContext({"file_roots": {}}), backend="nosuch")


def test_briny_run_fileserver_update_gitfs_not_configured_fails_naming_it(master_dir: Path) -> None:
    import io

    from briny.master import runcli

    out, err = io.StringIO(), io.StringIO()
    assert runcli.run(["-c", str(master_dir), "fileserver.update", "backend=gitfs"], out=out, err=err) == 1
    assert out.getvalue() == ""
    assert err.getvalue() == (
        "briny-run: fileserver.update: cannot update the 'gitfs' fileserver backend: it is not in fileserver_backend\n"
    )
    out, err = io.StringIO(), io.StringIO()
    assert runcli.run(["-c", str(master_dir), "--out=json", "fileserver.update"], out=out, err=err) == 0
    assert out.getvalue() == "true\n"
