"""The owner-only local IPC shared by the master's operator API and the minion's local API."""

from __future__ import annotations

import asyncio
import os
import stat

import pytest
import zmq
import zmq.asyncio

from briny.common.exceptions import BrinyError
from briny.common.localipc import IpcServer, pack, probe, unpack


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
        task = asyncio.ensure_future(server.serve())
        await asyncio.sleep(0.05)
        assert probe(path) is None
        assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        client = ctx.socket(zmq.DEALER)
        client.setsockopt(zmq.LINGER, 0)
        client.connect(f"ipc://{path}")
        try:
            await client.send_multipart([b"one", b"too many"])    # wrong part count: dropped
            await client.send(b"\xc1 not msgpack")                 # garbage: answered, not fatal
            assert unpack(await client.recv()) == {"got": None}
            await client.send(pack({"boom": True, "corr": 7}))     # a handler that raises
            assert unpack(await client.recv()) == {
                "error": "the daemon failed on this request: boom", "corr": 7}
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
    s.bind(str(stale))   # a socket file nobody listens on (a daemon that died)
    s.close()
    assert probe(str(stale))[0] == "refused"


def test_path_too_long_is_a_clear_error(tmp_path):
    with pytest.raises(BrinyError, match="too long for an IPC socket"):
        Echo(str(tmp_path / ("x" * 120)))
