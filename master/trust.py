"""What the master takes from an authenticated minion, beyond proof that it sent it.

A request that opens with a minion's session key proves who sent it (the
session table, :mod:`briny.master.sessions`); these checks decide what that
minion may make the master store or fire (``docs/PROTOCOL.md``, "Returns"
and "Event tags"):

- **a return only for a job sent to it**: the job book when the job is
  recent (:mod:`briny.master.jobbook`), else the job cache's index of
  targets (one indexed lookup: after a master restart, or once the job left
  the book); a cache that cannot answer refuses;
- **events under its own identity**: the tag rules are
  :func:`briny.master.tags.minion_tag`'s (a malformed or master-only tag is a
  ``WireError``); the id in a bound tag is the sender's, and so is the ``id``
  of every event fired for it (:func:`briny.master.busshape.minion_event`),
  whatever the minion wrote; a
  ``salt/job/<jid>/ret/...`` event only for a job sent to it, as a return.

Threads: **the loop** (the ``ret`` and ``event`` handlers do not block); it
reads the job book (loop-owned) and the job cache (its reads are safe from
any thread).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from briny.common.exceptions import WireError
from briny.common.ids import valid_jid
from briny.master.jobbook import JobBook
from briny.master.jobcache.base import JobCache
from briny.master.tags import minion_tag

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EventVerdict:
    """An event a minion forwarded, once checked: what to fire, or why not."""

    tag: str
    data: dict[str, Any]
    refused: str | None = None  # the error to answer instead of firing


class MinionTrust:
    """The checks of the module docstring over the master's job book and job cache (loop)."""

    def __init__(self, book: JobBook, jobcache: JobCache) -> None:
        self.book = book
        self.jobcache = jobcache

    def not_sent(self, jid: str, minion_id: str) -> str | None:
        """Why ``minion_id`` may not return for ``jid``, or None when it may."""
        job = self.book.get(jid)
        if job is not None:
            return None if minion_id in job.minions else f"job {jid} was not sent to {minion_id}"
        if not valid_jid(jid):
            return f"{jid[:40]!r} is not a job id"
        try:
            targeted = self.jobcache.targeted(jid, minion_id)
        except Exception as exc:  # a cache that cannot answer: refuse rather than store blindly
            log.exception("the job cache could not say whether job %s targets %s", jid, minion_id)
            return f"the master could not check job {jid}: {exc}"
        if targeted is None:
            return f"job {jid} is not a job of this master"
        return None if targeted else f"job {jid} was not sent to {minion_id}"

    def event(self, minion_id: str, payload: dict[str, Any]) -> EventVerdict:
        """The event ``minion_id`` asks the master to fire, bound to it; WireError when the event is
        malformed or its tag is one a minion may not fire."""
        data = payload.get("data", {})
        if not isinstance(data, dict):
            raise WireError("event 'data' must be a map")
        checked = minion_tag(payload.get("tag"), minion_id)
        if checked.ret_jid is not None:
            refused = self.not_sent(checked.ret_jid, minion_id) if checked.ret_jid else "not a job id"
            if refused is not None:
                return EventVerdict(checked.tag, data, f"a return event for a job not sent to {minion_id}: {refused}")
        return EventVerdict(checked.tag, data)
