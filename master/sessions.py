"""The master's session table: which minions are authenticated now, with which session key.

Threads: **the loop only**. Auth results, requests and key store changes all
reach the table on the loop; every method that changes it checks that with
:func:`briny.common.onloop.assert_on_loop`. Workers never read it (a
worker that needs to know who is connected gets a copy from the loop).

A session is made by an accepted auth (:meth:`SessionTable.open`), replaced
by the next one, and dropped (:meth:`SessionTable.drop`) when the minion's
key stops being accepted (:meth:`SessionTable.keep_only`, from the key
store, ``docs/PROTOCOL.md`` "Key changes") or an auth says its key is
rejected or pending. Once dropped, the session key opens nothing more: the
minion's next request is answered ``unauthenticated``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from briny.common.onloop import assert_on_loop

log = logging.getLogger(__name__)

WHAT = "the master's session table"


@dataclass
class Session:
    """One authenticated minion: its session key and where it last spoke from."""

    id: str
    key: bytes
    peer: bytes
    since: float  # monotonic time of the key store decision of the auth that made the key
    started: bool = False  # salt/minion/<id>/start fired for this session


class SessionTable:
    """Sessions by minion id, and when each minion was last heard from (loop only)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._sessions: dict[str, Session] = {}
        self.last_seen: dict[str, float] = {}

    # -- reads ------------------------------------------------------------------------------------
    def get(self, minion_id: str) -> Session | None:
        return self._sessions.get(minion_id)

    def __getitem__(self, minion_id: str) -> Session:
        return self._sessions[minion_id]

    def __contains__(self, minion_id: object) -> bool:
        return minion_id in self._sessions

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._sessions))

    def connected(self, window: float) -> list[str]:
        """Ids with a session that were heard from within ``window`` seconds (sorted)."""
        now = self.clock()
        return sorted(i for i, seen in self.last_seen.items() if i in self._sessions and now - seen <= window)

    # -- changes ----------------------------------------------------------------------------------
    def open(self, minion_id: str, key: bytes, peer: bytes, since: float) -> float | None:
        """A new session for an accepted auth whose key store decision was made at ``since``
        (monotonic). When it replaces one, when the minion was last heard from before (so jobs
        sent since can be handed to it again); else None."""
        assert_on_loop(WHAT)
        replaced = minion_id in self._sessions
        heard = self.last_seen.get(minion_id, 0.0)
        self._sessions[minion_id] = Session(minion_id, key, peer, since)
        self.last_seen[minion_id] = self.clock()
        return heard if replaced else None

    def heard(self, sess: Session, peer: bytes) -> None:
        """A request from ``sess`` that opened and passed the replay guard, from ``peer``."""
        assert_on_loop(WHAT)
        sess.peer = peer
        self.last_seen[sess.id] = self.clock()

    def drop(self, minion_id: str, why: str) -> bool:
        """Forget a minion's session key at once: it can open nothing more. True if it had one."""
        assert_on_loop(WHAT)
        if self._sessions.pop(minion_id, None) is None:
            return False
        log.info("dropped the session of %s: %s", minion_id, why)
        return True

    def keep_only(self, accepted: Iterable[str] | frozenset[str], read_at: float) -> list[str]:
        """Drop the sessions of minions not in ``accepted`` (the key store as read from monotonic
        time ``read_at``); a session whose key store decision came after ``read_at`` stays: that
        read may not have seen it. The ids dropped."""
        assert_on_loop(WHAT)
        allowed = accepted if isinstance(accepted, (set, frozenset)) else set(accepted)
        dropped = [i for i, sess in self._sessions.items() if i not in allowed and sess.since < read_at]
        for minion_id in dropped:
            self.drop(minion_id, "its key is no longer accepted")
        return dropped

    def forget(self, minion_id: str) -> None:
        """Forget when a minion whose key was deleted was last heard from."""
        assert_on_loop(WHAT)
        self.last_seen.pop(minion_id, None)
