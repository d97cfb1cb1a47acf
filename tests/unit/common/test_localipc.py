"""The owner-only local IPC shared by the master's operator API and the minion's local API."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile

import pytest
import zmq
import zmq.asyncio

from briny.common.exceptions import BrinyError
from briny.common.localipc import IpcServer, denied_message, pack, peer_uid, probe, unpack
from tests.asuser import NOBODY, run_as


class Echo(IpcServer):
    async def handle(self, request):
        if isinstance(request, dict) and request.get("boom"):
            raise RuntimeError("boom")
        return {"got": request}


def test_serves_owner_only_echoes_corr_and_survives_garbage(tmp_path):
    path = str(tmp_path / "s" / "x.ipc")

    async def main():
        ctx = zmq.asyncio.Context()
        server = Echo(path, ctx)
        server.bind()  # serve() binds too; bound here, the socket is there before anything below
        task = asyncio.ensure_future(server.serve())
        assert probe(path) is None
        assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        client = ctx.socket(zmq.DEALER)
        client.setsockopt(zmq.LINGER, 0)
        client.connect(f"ipc://{path}")
        try:
            await client.send_multipart([b"one", b"too many"])  # wrong part count: dropped
            await client.send(b"\xc1 not msgpack")  # garbage: answered, not fatal
            assert unpack(await client.recv()) == {"got": None}
            await client.send(pack({"boom": True, "corr": 7}))  # a handler that raises
            assert unpack(await client.recv()) == {
                "error": "exception",
                "message": "the daemon failed on this request: boom",
                "corr": 7,
            }
            await client.send(pack({"x": 1, "corr": "c"}))
            assert unpack(await client.recv()) == {"got": {"x": 1, "corr": "c"}, "corr": "c"}
        finally:
            client.close()
            task.cancel()
            server.close()
            ctx.term()
        assert not os.path.exists(path)

    asyncio.run(asyncio.wait_for(main(), 20))


def test_probe_says_why_nothing_answers(tmp_path):
    assert probe(str(tmp_path / "none.ipc")) == ("missing", str(tmp_path / "none.ipc"))
    stale = tmp_path / "stale.ipc"
    import socket

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(stale))  # a socket file nobody listens on (a daemon that died)
    s.close()
    assert probe(str(stale))[0] == "refused"


def test_path_too_long_is_a_clear_error(tmp_path):
    with pytest.raises(BrinyError, match="too long for an IPC socket"):
        Echo(str(tmp_path / ("x" * 120)))


class _Frame:
    def __init__(self, address):
        self.address = address

    def get(self, name):
        assert name == "Peer-Address"
        if self.address is None:
            raise zmq.ZMQError(22)
        return self.address


def test_peer_uid_reads_the_kernels_credentials():
    assert peer_uid(_Frame("localhost:1000:1000:4242")) == 1000
    assert peer_uid(_Frame(":0:0:1")) == 0
    for address in (None, "", "127.0.0.1", "localhost:x:1:2", "1:2"):
        assert peer_uid(_Frame(address)) is None


as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another user")


def ask(path: str) -> object:
    """One request over a fresh DEALER (in a child process, as whichever user it runs as)."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.connect(f"ipc://{path}")
        sock.send(pack({"x": 1, "corr": 9}))
        return unpack(sock.recv()) if sock.poll(10000) else "no reply"
    finally:
        sock.close()
        ctx.term()


@as_root
def test_only_the_daemons_user_and_root_are_answered():
    """Even with the modes loosened (a shared sock_dir, a umask), another uid gets a refusal."""
    base = tempfile.mkdtemp(prefix="ipc", dir="/tmp")  # pytest's tmp_path is not open to others
    path = os.path.join(base, "s", "x.ipc")
    handled = []

    class Recorder(Echo):
        async def handle(self, request):
            handled.append(request)
            return await super().handle(request)

    async def main():
        ctx = zmq.asyncio.Context()
        server = Recorder(path, ctx)
        server.bind()
        task = asyncio.ensure_future(server.serve())
        for p, mode in ((base, 0o755), (os.path.dirname(path), 0o755), (path, 0o666)):
            os.chmod(p, mode)
        loop = asyncio.get_running_loop()
        try:
            refused = await loop.run_in_executor(None, run_as, NOBODY, ask, path)
            assert refused == repr(
                {
                    "error": "denied",
                    "message": f"permission denied: uid {NOBODY} may not use local IPC on "
                    f"{path} (only uid 0 and root may)",
                    "corr": 9,
                }
            )
            assert handled == []
            served = await loop.run_in_executor(None, ask, path)
            assert served == {"got": {"x": 1, "corr": 9}, "corr": 9}
            assert handled == [{"x": 1, "corr": 9}]
        finally:
            task.cancel()
            server.close()
            ctx.term()

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def probe_and_say(path: str) -> tuple[object, str]:
    return probe(path), denied_message(path, "the master")


@as_root
def test_a_user_who_cannot_reach_the_socket_is_told_so(tmp_path):
    base = tempfile.mkdtemp(prefix="ipc", dir="/tmp")
    try:
        os.chmod(base, 0o755)
        folder = os.path.join(base, "s")
        os.mkdir(folder, 0o700)
        path = os.path.join(folder, "x.ipc")  # whether or not a daemon listens, nobody cannot tell
        found, message = eval(run_as(NOBODY, probe_and_say, path))  # noqa: S307 (our own repr)
        assert found == ("denied", path)
        assert message == (
            f"permission denied: user nobody (uid {NOBODY}) may not use the master's socket "
            f"{path}; run this command as root (the user the master runs as)"
        )
        assert probe(path) == ("missing", path)  # root can tell: nothing is there
    finally:
        shutil.rmtree(base, ignore_errors=True)
