"""A raw master for the agent tests: the master's half of PROTOCOL.md, written from ``wire`` and
``crypto`` alone (no ``briny.master``), over ``transport.MemoryHub``. No tests here."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from briny.common import crypto, handshake, wire
from briny.common.jid import gen_jid
from briny.common.transport import MemoryHub, topic_for
from briny.minion.agent import MinionAgent

_KEYS: dict[str, Any] = {}


def rsa_key(name: str) -> crypto.RSAPrivate:
    """One RSA key per name for the whole test session (generating them is the slow part)."""
    if name not in _KEYS:
        _KEYS[name] = crypto.generate_rsa()
    return _KEYS[name]


def ed_key(name: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = f"ed:{name}"
    if key not in _KEYS:
        _KEYS[key] = ed25519.Ed25519PrivateKey.generate()
    return _KEYS[key]


class RawMaster:
    """Answers auth and requests, publishes, and records what the minion sent."""

    def __init__(self, hub: MemoryHub, *, status: str = "accepted", key: str = "master") -> None:
        self.hub = hub
        self.status = status
        self.priv = rsa_key(key)
        self.master_pub = crypto.public_pem(self.priv)
        self.sign_key = ed_key(key)
        self.sessions: dict[str, bytes] = {}
        self.challenges: dict[bytes, str] = {}
        self.hellos = 0  # challenges given out
        self.auths: list[tuple[float, str, str]] = []  # (monotonic time, id, status answered)
        self.requests: list[dict[str, Any]] = []
        self.answer_pings = True
        self.answer = True
        self.publish_port: int | None = None  # named in the signed auth reply
        self.challenge_port: int | None = None  # named in the challenge (default: publish_port)
        self.guard = wire.ReplayGuard()
        self._new = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> "RawMaster":
        self._task = asyncio.ensure_future(self._serve())
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _serve(self) -> None:
        while True:
            peer, corr, frame = await self.hub.server.recv()
            reply = self.handle(frame)
            if reply is not None:
                await self.hub.server.reply(peer, corr, reply)

    def handle(self, frame: bytes) -> bytes | None:
        env = wire.decode(frame)
        if env.kind == "auth":
            return self._auth(env)
        if env.kind != "req":
            return None
        key = self.sessions.get(env.id)
        if key is None:
            return wire.clear("err", env.id, {"error": "unauthenticated"}).encode()
        payload = wire.open_sealed(env, key)
        self.guard.check(env)
        self.requests.append(payload)
        self._new.set()
        if not self.answer or (payload.get("cmd") == "ping" and not self.answer_pings):
            return None
        reply: dict[str, Any] = {"ok": True}
        if payload.get("cmd") == "ping":
            reply["time"] = time.time()
        if payload.get("cmd") == "pillar":
            reply = {"error": "unknown request 'pillar'"}
        return wire.sealed_reply(env.id, key, env.nonce, reply).encode()

    def _auth(self, env: wire.Envelope) -> bytes:
        """A hello gets a challenge; a signed auth for one of them gets ``self.status``."""
        msg = handshake.read_auth(env)
        if isinstance(msg, handshake.Hello):
            nonce = os.urandom(handshake.CHALLENGE_BYTES)
            self.challenges[nonce] = env.id
            self.hellos += 1
            self._new.set()
            port = self.challenge_port or self.publish_port
            return handshake.challenge(env.id, msg.token, nonce, self.master_pub, port)
        if self.challenges.pop(msg.challenge, None) != env.id:
            return wire.clear("err", env.id, {"error": "unknown challenge"}).encode()
        minion_key = handshake.check_auth_signature(msg, crypto.fingerprint(self.master_pub))
        session_enc = sign_pub = b""
        if self.status == "accepted":
            key = crypto.new_session_key()
            self.sessions[env.id] = key
            session_enc = crypto.rsa_encrypt(minion_key, key)
            sign_pub = crypto.ed_public_bytes(self.sign_key)
        self.auths.append((time.monotonic(), env.id, self.status))
        self._new.set()
        return handshake.auth_reply(
            msg, self.status, self.priv, self.master_pub, session_enc, sign_pub, self.publish_port
        )

    # -- publishing ----------------------------------------------------------------------------
    def pub_frame(
        self,
        minion_id: str,
        load: dict[str, Any],
        *,
        key: bytes | None = None,
        sign_key: Any = None,
        ts: float | None = None,
    ) -> bytes:
        key = key if key is not None else self.sessions[minion_id]
        if ts is None:
            env = wire.sealed("pub", minion_id, key, load)
        else:
            proto = wire.Envelope("pub", minion_id, ts, crypto.new_nonce(), b"")
            env = wire.Envelope(
                "pub", minion_id, ts, proto.nonce, crypto.seal(key, proto.nonce, wire.pack(load), proto.header())
            )
        return wire.sign(env, sign_key or self.sign_key).encode()

    async def publish(
        self,
        minion_id: str,
        fun: str,
        arg: list[Any] | None = None,
        kwarg: dict[str, Any] | None = None,
        **frame_opts: Any,
    ) -> str:
        jid = gen_jid()
        load = {
            "jid": jid,
            "fun": fun,
            "arg": arg or [],
            "kwarg": kwarg or {},
            "tgt": minion_id,
            "tgt_type": "glob",
            "user": "root",
            "timeout": 5,
        }
        await self.raw_publish(minion_id, self.pub_frame(minion_id, load, **frame_opts))
        return jid

    async def raw_publish(self, minion_id: str, frame: bytes, topic: bytes | None = None) -> None:
        await self.hub.server.publish(topic if topic is not None else topic_for(minion_id), frame)

    # -- waiting -------------------------------------------------------------------------------------
    async def wait_for(self, pred: Any, timeout: float = 5.0) -> Any:
        """The first recorded request for which ``pred`` is true (waits for it)."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for item in self.requests[seen:]:
                if pred(item):
                    return item
            seen = len(self.requests)
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"no matching request within {timeout} s; got {[r.get('cmd') for r in self.requests]}"
                )
            self._new.clear()
            try:
                await asyncio.wait_for(self._new.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def wait_ret(self, jid: str, timeout: float = 5.0) -> dict[str, Any]:
        return await self.wait_for(lambda r: r.get("cmd") == "ret" and r.get("jid") == jid, timeout)

    async def wait_auths(self, count: int, timeout: float = 5.0) -> None:
        """Until ``count`` signed auths were answered."""
        await self._wait_count(lambda: len(self.auths), count, "signed auth", timeout)

    async def wait_hellos(self, count: int, timeout: float = 5.0) -> None:
        """Until ``count`` hellos got a challenge."""
        await self._wait_count(lambda: self.hellos, count, "hello", timeout)

    async def _wait_count(self, counter: Any, count: int, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while counter() < count:
            assert time.monotonic() < deadline, f"only {counter()} {what}(s) within {timeout} s"
            self._new.clear()
            try:
                await asyncio.wait_for(self._new.wait(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                pass

    async def idle(self, timeout: float = 5.0) -> None:
        """Until every frame sent to this master so far was handled (it handles each one right
        after taking it from the hub's queue, without yielding: an empty queue means done)."""
        deadline = time.monotonic() + timeout
        while not self.hub.requests.empty():
            assert time.monotonic() < deadline, f"{self.hub.requests.qsize()} frame(s) still unhandled"
            await asyncio.sleep(0.01)

    def rets(self, jid: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("cmd") == "ret" and r.get("jid") == jid]


def minion_opts(root: Path, minion_id: str = "m1", **extra: Any) -> dict[str, Any]:
    """Opts for a test minion under ``root``, with small intervals; its RSA key pre-made."""
    from briny.common.config import MINION_DEFAULTS, apply_config

    pki = root / "pki"
    pki.mkdir(parents=True, exist_ok=True)
    if extra.pop("premade_key", True):
        key = rsa_key("minion")
        crypto.write_private(pki / "minion.pem", crypto.private_pem(key))
        (pki / "minion.pub").write_text(crypto.public_pem(key))
    overrides = {
        "id": minion_id,
        "root_dir": str(root),
        "pki_dir": "pki",
        "cachedir": "cache",
        "sock_dir": "sock",
        "file_client": "local",
        "file_roots": {"base": [str(root / "srv")]},
        "pillar_roots": {"base": [str(root / "pillar")]},
        "ping_interval": 0.2,
        "auth_timeout": 0.5,
        "acceptance_wait_time": 0.1,
        "recon_default": 50,
        "recon_max": 200,
        "shutdown_grace": 2,
    }
    overrides.update(extra)
    (root / "srv").mkdir(exist_ok=True)
    (root / "pillar").mkdir(exist_ok=True)
    return apply_config(overrides, MINION_DEFAULTS, "test")


class Running:
    """An agent running on the test's loop (async context manager)."""

    def __init__(self, agent: MinionAgent) -> None:
        self.agent = agent
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> MinionAgent:
        self.task = asyncio.ensure_future(self.agent.run())
        return self.agent

    async def __aexit__(self, *exc: object) -> None:
        self.agent.stop()
        assert self.task is not None
        await asyncio.wait_for(self.task, 10)


def record_pauses(agent: MinionAgent, log: list[Any] | None = None, *, wait: bool = False) -> list[float]:
    """Note each pause ``agent`` asks for between connection attempts: in the list returned, and
    as ``("pause", seconds)`` in ``log``. With ``wait`` the pause is waited out (a stop ends it),
    else it is skipped, so a test sees the whole backoff sequence at once."""
    pauses: list[float] = []
    real = agent.pause

    async def pause(seconds: float) -> None:
        pauses.append(seconds)
        if log is not None:
            log.append(("pause", seconds))
        await (real(seconds) if wait else asyncio.sleep(0))

    agent.pause = pause
    return pauses


async def fire_until_heard(sender: Any, master: RawMaster) -> None:
    """Fire probe events on the minion's bus until one reaches ``master`` (the agent's bus
    subscriber has joined): an event fired after this one gets there."""
    loop = asyncio.get_running_loop()
    probes = 0
    while not [r for r in master.requests if r["cmd"] == "event"]:
        assert probes < 100, "no probe event reached the master"
        await loop.run_in_executor(None, sender.fire, "probe/join", {"n": probes})
        probes += 1
        await asyncio.sleep(0.05)


def held_job(flag: Path) -> list[str]:
    """``cmd.run`` arguments for a job that runs until ``flag`` exists (at most 20 s, then fails),
    printing ``done``: a job the test ends when it chooses."""
    return [f"for i in $(seq 2000); do [ -e {flag} ] && echo done && exit 0; sleep 0.01; done; exit 1"]


def run(coro: Any, timeout: float = 30.0) -> Any:
    """Run a test coroutine, bounded in time."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


@pytest.fixture
def short_root(tmp_path_factory):
    """A short root folder (IPC socket paths are limited to 107 bytes)."""
    path = Path(f"/tmp/bmt-{os.getpid()}-{time.monotonic_ns() % 10**9}")
    path.mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)
