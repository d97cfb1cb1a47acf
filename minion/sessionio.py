"""What travels on one open session with a master (loop): a sealed request and its reply, and a
publish opened (``docs/PROTOCOL.md``).

:class:`~briny.minion.agent.MinionAgent` owns the sessions (:class:`~briny.minion.auth.Session`,
one per master) and calls these on its loop; they change nothing but the session's ``dead`` flag
and its replay guard.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from briny.common import wire
from briny.common.exceptions import WireError
from briny.minion.auth import Session
from briny.minion.executor import Job

log = logging.getLogger(__name__)


async def request(
    session: Session | None, minion_id: str, cmd: str, payload: dict[str, Any], timeout: float
) -> dict[str, Any] | None:
    """One sealed request ``cmd`` on ``session``: the reply payload, or None when there is no
    session, no reply within ``timeout`` s or an ``err`` reply (those two also mark the session
    dead), or a reply that does not check out."""
    if session is None or session.dead.is_set():
        return None
    env = wire.sealed("req", minion_id, session.key, {**payload, "cmd": cmd})
    frame = await session.transport.request(env.encode(), timeout)
    if frame is None:
        log.warning("the master did not answer %r within %.1f s", cmd, timeout)
        session.dead.set()
        return None
    try:
        reply = wire.decode(frame)
        if reply.kind == "err":
            log.warning(
                "the master answered %r with an error: %s; authenticating again",
                cmd,
                wire.clear_payload(reply).get("error"),
            )
            session.dead.set()
            return None
        if reply.kind != "rep" or reply.id != minion_id:
            raise WireError(f"expected a rep for {minion_id}, got {reply.kind} for {reply.id!r}")
        data = wire.open_reply(reply, session.key, env.nonce)  # the answer to THIS request
        session.guard.check(reply)
    except WireError as exc:
        log.warning("dropped the reply to %r: %s", cmd, exc)
        return None
    if not isinstance(data, dict):
        log.warning("dropped the reply to %r: not a map", cmd)
        return None
    session.heard = time.monotonic()  # the master is there: the heartbeat may wait
    if data.get("error"):
        log.warning("the master refused %r: %s", cmd, data["error"])
    return data


def open_publish(session: Session, minion_id: str, own_topic: bytes, topic: bytes, frame: bytes) -> Job:
    """The job a publish frame on ``session`` carries; WireError when it is not this minion's
    (``own_topic``), not signed by the master's key, not sealed with the session key, stale or
    replayed."""
    if topic != own_topic:
        raise WireError(f"topic {topic[:40]!r} is not this minion's")
    env = wire.decode(frame)
    if env.kind != "pub" or env.id != minion_id:
        raise WireError(f"a {env.kind} frame for {env.id!r} on the publish channel")
    wire.verify(env, session.sign_pub)
    load = wire.open_sealed(env, session.key)
    session.guard.check(env)
    return Job.from_publish(load)
