"""``briny-run manage.up / manage.down / manage.status``: which minions answer.

Runs in ``briny-run`` on the master host; needs the running master. Pings
every accepted minion (``test.ping`` through the master) and sorts them by
whether they returned within ``timeout`` seconds (the master's ``timeout``
by default), as Salt's ``manage`` runner does.
"""

from __future__ import annotations

import time
from typing import Any

from briny.common import config
from briny.common.event import EventListener
from briny.master.clientapi import MasterClient
from briny.master.keys import KeyStore
from briny.master.runners import RunnerContext

__all__ = ["status", "up", "down"]


def status(ctx: RunnerContext, timeout: float | None = None, **kwargs: Any) -> dict[str, list[str]]:
    """``{"up": [...], "down": [...]}`` over the accepted minions."""
    accepted = sorted(KeyStore(ctx.opts).accepted_ids())
    wait = float(timeout) if timeout is not None else config.number(ctx.opts, "timeout")
    answered: set[str] = set()
    if accepted:
        with EventListener(ctx.opts, "salt/job/*/ret/*", name="master") as events, MasterClient(ctx.opts) as client:
            job = client.publish(accepted, "test.ping", tgt_type="list")
            expected = set(job.get("minions") or [])
            deadline = time.monotonic() + wait
            while expected - answered and time.monotonic() < deadline:
                got = events.get_event(max(0.05, deadline - time.monotonic()))
                if got is None:
                    break
                tag, _ = got
                parts = tag.split("/")
                if len(parts) == 5 and parts[2] == job.get("jid"):
                    answered.add(parts[4])
    return {"up": sorted(answered), "down": [m for m in accepted if m not in answered]}


def up(ctx: RunnerContext, timeout: float | None = None, **kwargs: Any) -> list[str]:
    """The accepted minions that answer a ping."""
    return status(ctx, timeout)["up"]


def down(ctx: RunnerContext, timeout: float | None = None, **kwargs: Any) -> list[str]:
    """The accepted minions that do not answer a ping."""
    return status(ctx, timeout)["down"]
