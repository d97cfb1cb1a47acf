"""The minion's remote file client (minion/remotefiles.py) against the real master/server.py and
master/fileserver.py over transport.MemoryHub: fetch, cache hits without a download, changed files
fetched again, large files in chunks, jobs using salt:// (cp.*), and hostile replies."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from briny.common.exceptions import FileServerError
from briny.master.server import MasterServer
from briny.minion.agent import MinionAgent
from briny.minion.remotefiles import RemoteFileClient, check_rel

from ..pairsupport import real_pair, return_of
from .test_agent_support import run


@pytest.fixture
def srv(tmp_path: Path) -> Path:
    """The master's file roots: base (two roots) and dev."""
    base, extra, dev = tmp_path / "salt", tmp_path / "salt2", tmp_path / "saltdev"
    for d in (base / "web" / "files", extra / "db", dev):
        d.mkdir(parents=True)
    (base / "top.sls").write_text("base:\n  '*':\n    - web\n")
    (base / "web" / "init.sls").write_text("web:\n  test.succeed_without_changes\n")
    (base / "web" / "files" / "motd").write_text("hello from the master\n")
    (extra / "db" / "init.sls").write_text("db: {}\n")
    (dev / "web").mkdir()
    (dev / "web" / "init.sls").write_text("dev web\n")
    return tmp_path


class Counted:
    """Wraps a request callable and counts the commands it sends."""

    def __init__(self, request: Callable[..., Any]) -> None:
        self.request = request
        self.cmds: list[str] = []

    def __call__(self, payload: dict[str, Any], timeout: float | None = None) -> Any:
        self.cmds.append(payload["cmd"])
        return self.request(payload, timeout)


def with_master(tmp_path: Path, srv: Path, body: Callable[[MasterServer, MinionAgent, list], Awaitable[None]]) -> None:
    """A real master (auto_accept) and one remote-file minion over MemoryHub, then ``body``."""
    roots = {"base": [str(srv / "salt"), str(srv / "salt2")], "dev": [str(srv / "saltdev")]}

    async def main() -> None:
        async with real_pair(tmp_path, file_roots=roots, file_client="remote", auth_timeout=5) as pair:
            await body(pair.server, pair.agent, pair.events)

    run(main(), timeout=60)


async def in_thread(fn: Callable[[], Any]) -> Any:
    """Run blocking client code in a worker thread, as jobs do."""
    return await asyncio.get_running_loop().run_in_executor(None, fn)


def test_fetch_listings_and_saltenvs(tmp_path: Path, srv: Path) -> None:
    async def body(server: MasterServer, agent: MinionAgent, events: list) -> None:
        def work() -> None:
            client = RemoteFileClient(agent.opts, agent.request_sync)
            assert client.envs() == ["base", "dev"]
            assert client.list_files("base") == ["db/init.sls", "top.sls", "web/files/motd", "web/init.sls"]
            assert client.list_dirs("base") == ["db", "web", "web/files"]
            assert client.list_states("base") == ["db", "top", "web"]
            local = client.find("web/files/motd", "base")
            cache = Path(agent.opts["cachedir"]) / "files"
            assert local == cache / "base" / "web" / "files" / "motd"
            assert local.read_text() == "hello from the master\n"
            assert client.get_text("db/init.sls", "base") == "db: {}\n"  # second root
            assert client.get_text("web/init.sls", "dev") == "dev web\n"
            assert client.cache_file("salt://web/init.sls?saltenv=dev", "base") == str(
                cache / "dev" / "web" / "init.sls"
            )
            assert client.find("nope.sls", "base") is None
            assert client.find("web/files", "base") == cache / "base" / "web" / "files"
            assert client.cache_file("salt://web/files", "base") is None  # a folder
            with pytest.raises(FileServerError):
                client.find("../../etc/passwd", "base")
            with pytest.raises(FileServerError):
                client.find("top.sls", "../base")
            assert client.list_files("nope") == []  # refused by the master
            assert client.downloads == 3

        await in_thread(work)

    with_master(tmp_path, srv, body)


def test_cache_hit_changed_file_and_large_file_in_chunks(tmp_path: Path, srv: Path) -> None:
    blob = os.urandom(3 * 1024 * 1024 + 77)
    (srv / "salt" / "big.bin").write_bytes(blob)

    async def body(server: MasterServer, agent: MinionAgent, events: list) -> None:
        def job() -> tuple[RemoteFileClient, Counted]:
            counted = Counted(agent.request_sync)
            return RemoteFileClient(agent.opts, counted), counted

        def work() -> None:
            first, sent = job()
            assert first.find("web/files/motd", "base").read_text() == "hello from the master\n"
            big = first.find("big.bin", "base")
            assert big.read_bytes() == blob
            assert sent.cmds.count("file_chunk") == 1 + 4  # 1 MiB chunks
            assert first.downloads == 2
            first.find("big.bin", "base")  # the same job asks only once
            assert sent.cmds.count("file_hash") == 2

            second, sent = job()  # the next job: cache hits
            assert second.find("big.bin", "base") == big
            assert second.get_text("web/files/motd", "base") == "hello from the master\n"
            assert second.downloads == 0
            assert "file_chunk" not in sent.cmds and sent.cmds.count("file_hash") == 2

            (srv / "salt" / "web" / "files" / "motd").write_text("changed on the master\n")
            third, sent = job()
            assert third.get_text("web/files/motd", "base") == "changed on the master\n"
            assert third.find("big.bin", "base") == big
            assert third.downloads == 1 and sent.cmds.count("file_chunk") == 1

            small, sent = job()
            small.chunk_size = 1000
            (srv / "salt" / "big.bin").write_bytes(blob[:4500])
            assert small.find("big.bin", "base").read_bytes() == blob[:4500]
            assert sent.cmds.count("file_chunk") == 5

        await in_thread(work)

    with_master(tmp_path, srv, body)


def test_jobs_use_the_master_files_through_cp(tmp_path: Path, srv: Path) -> None:
    dest = tmp_path / "out"
    dest.mkdir()

    async def body(server: MasterServer, agent: MinionAgent, events: list) -> None:
        async def job(fun: str, *arg: Any) -> Any:
            jid = (await server.publisher.publish("m1", "glob", fun, list(arg)))["jid"]
            return await return_of(events, jid, "m1")

        assert await job("cp.list_master") == ["db/init.sls", "top.sls", "web/files/motd", "web/init.sls"]
        assert await job("cp.list_master", "dev") == ["web/init.sls"]
        assert await job("cp.list_master_dirs") == ["db", "web", "web/files"]
        assert await job("cp.list_states") == ["db", "top", "web"]
        got = await job("cp.get_file", "salt://web/files/motd", str(dest / "motd"))
        assert got == str(dest / "motd") and (dest / "motd").read_text() == "hello from the master\n"
        assert await job("cp.get_file", "salt://nope", str(dest / "nope")) == ""
        assert await job("cp.get_file", "salt://web/files/motd", str(dest / "a" / "b")) == ""
        made = await job("cp.get_file", "salt://web/files/motd", str(dest / "a") + "/", "makedirs=True")
        assert made == str(dest / "a" / "motd")
        assert await job("cp.get_dir", "salt://web", str(dest / "copy")) == [
            str(dest / "copy" / "web" / "files" / "motd"),
            str(dest / "copy" / "web" / "init.sls"),
        ]
        cached = await job("cp.cache_file", "salt://db/init.sls")
        assert cached == str(Path(agent.opts["cachedir"]) / "files" / "base" / "db" / "init.sls")
        assert await job("cp.cache_file", "salt://../../etc/shadow") is False
        assert await job("cp.get_file_str", "salt://web/init.sls?saltenv=dev") == "dev web\n"
        hsum = hashlib.sha256(b"hello from the master\n").hexdigest()
        assert await job("cp.hash_file", "salt://web/files/motd") == {"hash_type": "sha256", "hsum": hsum}
        (srv / "salt" / "web" / "files" / "motd").chmod(0o751)  # the master's mode, not the cached copy's
        assert await job("cp.stat_file", "salt://web/files/motd") == "0751"
        assert await job("cp.stat_file", "salt://web/files/motd", "octal=False") == 0o751
        assert await job("cp.stat_file", "salt://nope") is None
        ret = await job("state.apply")
        assert [r["result"] for r in ret.values()] == [True]

    with_master(tmp_path, srv, body)


# -- a hostile or broken master ------------------------------------------------------------------


class FakeMaster:
    """Answers like a master would, with the lies a test asks for."""

    def __init__(self, files: dict[str, bytes], **lies: Any) -> None:
        self.files = files
        self.lies = lies

    def __call__(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
        cmd = payload["cmd"]
        if cmd in self.lies:
            return self.lies[cmd](payload)
        if cmd == "file_envs":
            return {"envs": ["base"]}
        if cmd == "file_list":
            return {"files": sorted(self.files), "dirs": []}
        data = self.files.get(payload["path"])
        if data is None:
            return {"error": "no such file", "missing": True}
        if cmd == "file_hash":
            return {"hash_type": "sha256", "hsum": hashlib.sha256(data).hexdigest(), "size": len(data)}
        off, size = payload["offset"], payload["size"]
        return {"data": data[off : off + size], "eof": off + size >= len(data), "size": len(data)}


def hostile_client(tmp_path: Path, master: FakeMaster) -> RemoteFileClient:
    return RemoteFileClient({"cachedir": str(tmp_path / "cache")}, master)


def test_hostile_listing_names_are_dropped(tmp_path: Path) -> None:
    master = FakeMaster(
        {"ok.sls": b"ok"},
        file_list=lambda p: {
            "files": ["ok.sls", "../../evil", "/etc/cron.d/x", "a\\..\\..\\b", "%2e%2e/x", "a\x00b", 7, ""],
            "dirs": ["../up"],
        },
    )
    client = hostile_client(tmp_path, master)
    assert client.list_files("base") == ["ok.sls"] and client.list_dirs("base") == []
    assert client.get_text("ok.sls", "base") == "ok"


def test_a_wrong_hash_or_size_is_never_cached(tmp_path: Path) -> None:
    master = FakeMaster(
        {"f": b"real"},
        file_hash=lambda p: {"hash_type": "sha256", "size": 4, "hsum": hashlib.sha256(b"fake").hexdigest()},
    )
    client = hostile_client(tmp_path, master)
    with pytest.raises(FileServerError, match="kept changing"):
        client.find("f", "base")
    assert not (tmp_path / "cache" / "files" / "base" / "f").exists()
    assert not any(p.name.endswith(".part") for p in (tmp_path / "cache").rglob("*"))

    endless = FakeMaster({"f": b"real"}, file_chunk=lambda p: {"data": b"x" * 100, "eof": False})
    with pytest.raises(FileServerError):
        hostile_client(tmp_path, endless).find("f", "base")
    assert not (tmp_path / "cache" / "files" / "base" / "f").exists()

    for bad in (
        {"hash_type": "md5", "hsum": "0" * 32, "size": 1},
        {"hash_type": "sha256", "hsum": "x", "size": 1},
        {"hash_type": "sha256", "hsum": "0" * 64, "size": -1},
        {"error": "no"},
    ):
        with pytest.raises(FileServerError):
            hostile_client(tmp_path, FakeMaster({"f": b"real"}, file_hash=lambda p, b=bad: b)).find("f", "base")


def test_no_answer_and_bad_envs(tmp_path: Path) -> None:
    silent = FakeMaster({"f": b"x"}, file_hash=lambda p: None)
    with pytest.raises(FileServerError, match="did not answer"):
        hostile_client(tmp_path, silent).find("f", "base")
    envs = FakeMaster({}, file_envs=lambda p: {"envs": ["base", "../x", "a/b", 3]})
    assert hostile_client(tmp_path, envs).envs() == ["base"]


def test_a_symlink_planted_in_the_cache_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "cache" / "files" / "base").mkdir(parents=True)
    os.symlink(outside, tmp_path / "cache" / "files" / "base" / "web")
    client = hostile_client(tmp_path, FakeMaster({"web/x": b"data"}))
    with pytest.raises(FileServerError, match="leaves"):
        client.find("web/x", "base")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("path", ["../etc/passwd", "a/../../x", "%2e%2e/x", "/etc/passwd", "a\x00b", "..\\x", ""])
def test_check_rel_refuses_traversal(path: str) -> None:
    with pytest.raises(FileServerError):
        check_rel(path)
