"""The master's operator IPC and the minion's local IPC answer errors in one shape:
``{"error": kind, "message": text}`` (``common/localipc.py`` error_reply / reply_error)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from briny.common.exceptions import MasterError
from briny.common.localipc import error_reply, reply_error
from briny.master.clientapi import ClientAPIServer, MasterClient
from briny.minion.localapi import LocalAPIServer


class RefusingPublisher:
    async def publish(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {"error": "Invalid compound target: and"}


class RefusingMaster:
    publisher = RefusingPublisher()

    async def minions(self) -> dict[str, Any]:
        return {"accepted": ["m1"], "connected": []}


def _shape(reply: Any) -> tuple[str, str]:
    assert isinstance(reply, dict) and set(reply) == {"error", "message"}, reply
    assert isinstance(reply["error"], str) and isinstance(reply["message"], str) and reply["message"]
    return reply["error"], reply["message"]


@pytest.fixture
def opts(tmp_path):
    return {"sock_dir": str(tmp_path / "sock"), "file_client": "remote"}


def test_the_master_answers_errors_in_the_one_shape(opts):
    capi = ClientAPIServer(opts, RefusingMaster())
    ask = lambda request: asyncio.run(capi.handle(request))
    assert _shape(ask("not a map")) == ("usage", "a request is a msgpack map with a 'cmd'")
    kind, message = _shape(ask({"cmd": "reboot"}))
    assert kind == "usage" and message.startswith("unknown command 'reboot'")
    assert _shape(ask({"cmd": "publish", "tgt": "and", "fun": "test.ping"})) == (
        "refused",
        "Invalid compound target: and",
    )
    assert ask({"cmd": "minions"}) == {"accepted": ["m1"], "connected": []}  # answers pass as they are


def test_the_minion_answers_errors_in_the_one_shape(opts):
    api = LocalAPIServer(opts, agent=None)
    ask = lambda request: asyncio.run(api.handle(request))
    assert _shape(ask({"cmd": "publish"})) == ("usage", "a request is a msgpack map with 'cmd': 'call' or 'control'")
    kind, message = _shape(ask({"cmd": "call", "fun": ""}))
    assert kind == "usage" and "function" in message
    for bad in ({"kind": "mine"}, {"action": 3}, {"args": ["name"]}):
        kind, message = _shape(ask({"cmd": "control", "kind": "schedule", "action": "list", "args": {}, **bad}))
        assert kind == "usage" and "'kind': 'schedule'|'beacons'" in message


def test_the_client_reads_the_one_shape(opts):
    assert reply_error(error_reply("refused", "no such target")) == "no such target"
    assert reply_error({"jid": "1", "error": None, "message": None}) is None
    assert reply_error("x") is None

    client = MasterClient(opts)

    class OneReply:
        def __init__(self, reply: dict[str, Any]) -> None:
            self.reply = reply

        def send(self, data: bytes) -> None:
            from briny.common.localipc import unpack

            self.reply["corr"] = unpack(data)["corr"]

        def poll(self, timeout: int) -> int:
            return 1

        def recv(self) -> bytes:
            from briny.common.localipc import pack

            return pack(self.reply)

    client._socket = lambda: OneReply(error_reply("refused", "the job could not be stored"))  # type: ignore[method-assign]
    with pytest.raises(MasterError, match="^the job could not be stored$"):
        client.request({"cmd": "publish"})
