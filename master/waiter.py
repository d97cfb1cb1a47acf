"""Waiting for the returns of jobs, as ``briny`` (and ``briny-cp``, the orchestrate runner) do.

A :class:`Waiter` tracks the (job, minion) pairs a caller expects, turns the
``salt/job/<jid>/ret/<id>`` events of the master bus into
:class:`~briny.master.opresults.MinionResult` records, and handles the minions that stay silent as Salt's ``LocalClient``
does: past the job's timeout it reads the job cache (a return whose event was
missed), then asks the rest with ``saltutil.find_job``; those still running
get another timeout, those that answer nothing within ``gather_job_timeout``
become :func:`~briny.master.opresults.no_return` results.

Cost (issue 13: a thousand and more minions per job): each return is O(log N)
(the deadlines are a heap with lazy removal, never a scan of every wait; a
``find_job`` answer finds its wait through the probe's own index), so a job of
N minions costs O(N log N) to gather, not O(N²).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from briny.common.exceptions import MasterError, MasterNotRunning
from briny.master.clientapi import MasterClient
from briny.master.opresults import MinionResult, no_return, result_from_event

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (jid, minion id)


# -- waiting for returns --------------------------------------------------------------


@dataclass
class _Wait:
    jid: str
    minion: str
    deadline: float
    probe_jid: str | None = None
    probe_deadline: float = 0.0

    @property
    def due(self) -> float:
        """When this wait needs attention: its probe's deadline while probed, else its own."""
        return self.probe_deadline if self.probe_jid else self.deadline


class Deadlines:
    """The due times of the waits, earliest first: a heap with lazy removal.

    :meth:`push` records a wait's (new) due time; an entry whose wait is gone or
    has moved to another due time is skipped when it reaches the top, so a
    change costs one push (O(log N)) and no search.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Key]] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def push(self, key: Key, due: float) -> None:
        heapq.heappush(self._heap, (due, next(self._seq), key))

    def _clean(self, waits: dict[Key, _Wait]) -> None:
        heap = self._heap
        while heap:
            due, _, key = heap[0]
            w = waits.get(key)
            if w is not None and w.due == due:
                return
            heapq.heappop(heap)

    def earliest(self, waits: dict[Key, _Wait]) -> float | None:
        """The earliest due time of a live wait in ``waits``, or None."""
        self._clean(waits)
        return self._heap[0][0] if self._heap else None

    def pop_due(self, waits: dict[Key, _Wait], now: float) -> list[Key]:
        """The keys of the live waits due at ``now``, earliest first; their entries leave."""
        keys: dict[Key, None] = {}  # a wait pushed twice with one due time comes out once
        while True:
            self._clean(waits)
            if not self._heap or self._heap[0][0] > now:
                return list(keys)
            keys[heapq.heappop(self._heap)[2]] = None


@dataclass
class Waiter:
    """Tracks expected returns of one or more jobs and turns events into results."""

    client: MasterClient
    listener: Any  # EventListener on salt/job/*/ret/*
    opts: dict[str, Any]
    timeout: float
    gather_timeout: float
    funs: dict[str, str] = field(default_factory=dict)  # jid -> fun
    waits: dict[Key, _Wait] = field(default_factory=dict)
    probes: dict[str, dict[str, str]] = field(default_factory=dict)  # find_job jid -> {minion asked: its job's jid}
    on_progress: Any = None  # called (jid, minion, data) for a waited job's progress event
    deadlines: Deadlines = field(default_factory=Deadlines)

    def add_job(self, jid: str, fun: str, minions: Sequence[str]) -> None:
        self.funs[jid] = fun
        deadline = time.monotonic() + self.timeout
        for m in minions:
            w = _Wait(jid, m, deadline)
            self.waits[(jid, m)] = w
            self.deadlines.push((jid, m), w.due)

    @property
    def active(self) -> bool:
        return bool(self.waits)

    def poll(self, max_wait: float = 1.0) -> list[MinionResult]:
        """Results that became known within ``max_wait`` seconds (returns and give-ups)."""
        now = time.monotonic()
        earliest = self.deadlines.earliest(self.waits)
        wake = max_wait if earliest is None else min(max_wait, max(0.0, earliest - now))
        event = self.listener.get_event(timeout=max(0.01, wake))
        done: list[MinionResult] = []
        if event is not None:
            done.extend(self._on_event(*event))
        done.extend(self._on_deadlines())
        return done

    def _on_event(self, tag: str, data: dict[str, Any]) -> list[MinionResult]:
        parts = tag.split("/")
        if len(parts) == 6 and parts[3] == "prog":
            if self.on_progress is not None and (parts[2], parts[4]) in self.waits:
                self.on_progress(parts[2], parts[4], data)
            return []
        if len(parts) != 5 or parts[3] != "ret":
            return []
        jid, minion = parts[2], parts[4]
        wait = self.waits.pop((jid, minion), None)
        if wait is not None:
            return [result_from_event(self.funs.get(jid, ""), {**data, "id": minion, "jid": jid})]
        asked = self.probes.get(jid)
        job_jid = asked.pop(minion, None) if asked is not None else None
        if job_jid is not None:
            if not asked:
                del self.probes[jid]
            w = self.waits.get((job_jid, minion))
            if w is not None and w.probe_jid == jid:
                if data.get("return"):  # still running: give it another timeout
                    log.debug("%s still runs %s", minion, w.jid)
                    w.probe_jid, w.deadline = None, time.monotonic() + self.timeout
                else:  # not running it: whatever it had to say is in the cache, or lost
                    w.probe_deadline = time.monotonic()
                self.deadlines.push((job_jid, minion), w.due)
        return []

    def _from_cache(self, jid: str, minions: list[str]) -> dict[str, dict[str, Any]]:
        """Returns already in the job cache (an event missed); {} when the cache is unreadable."""
        try:
            from briny.master.jobcache import open_job_cache

            cache = open_job_cache(self.opts, readonly=True)
            try:
                found = cache.get_returns(jid)
            finally:
                cache.close()
        except Exception as exc:  # noqa: BLE001 - a job cache error, sqlite3's own: the cache is only a fallback
            log.debug("job cache not readable: %s", exc)
            return {}
        return {m: found[m] for m in minions if m in found}

    def _on_deadlines(self) -> list[MinionResult]:
        now = time.monotonic()
        done: list[MinionResult] = []
        late: dict[str, list[str]] = {}
        probed: dict[str, list[str]] = {}
        for key in self.deadlines.pop_due(self.waits, now):
            w = self.waits[key]
            if w.probe_jid:
                probed.setdefault(w.jid, []).append(w.minion)
            else:
                late.setdefault(w.jid, []).append(w.minion)
        for jid, minions in probed.items():  # asked, and no sign of life within gather_job_timeout
            cached = self._from_cache(jid, minions)
            for m in minions:
                del self.waits[(jid, m)]
                if m in cached:
                    done.append(result_from_event(self.funs.get(jid, ""), {**cached[m], "id": m, "jid": jid}))
                else:
                    done.append(no_return(m, jid))
        for jid, minions in late.items():
            for m, data in self._from_cache(jid, minions).items():
                del self.waits[(jid, m)]
                done.append(result_from_event(self.funs.get(jid, ""), {**data, "id": m, "jid": jid}))
            minions = [m for m in minions if (jid, m) in self.waits]
            if not minions:
                continue
            try:
                probe = self.client.find_job(jid, minions)
            except (MasterError, MasterNotRunning) as exc:
                log.warning("cannot ask the minions about job %s: %s", jid, exc)
                probe = {"jid": "", "minions": []}
            asked = set(probe.get("minions") or [])
            index = self.probes.setdefault(probe["jid"], {}) if probe.get("jid") else {}
            for m in minions:
                w = self.waits[(jid, m)]
                if m in asked:
                    w.probe_jid, w.probe_deadline = probe["jid"], now + self.gather_timeout
                    index[m] = jid
                    self.deadlines.push((jid, m), w.due)
                else:
                    del self.waits[(jid, m)]
                    done.append(no_return(m, jid))
        return done
