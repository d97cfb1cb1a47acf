"""The jids a minion daemon has taken, kept across its restarts.

A master hands a publish again to a minion that authenticates anew (a
reconnect, a restart: :meth:`briny.master.jobbook.JobBook.requeue`), and
the minion runs each jid once. Kept only in memory, that rule breaks when
the daemon is killed while a job runs: the restarted daemon would take the
job again. So each jid taken is appended to ``cachedir/jids_taken`` (one
line, one ``write``; no fsync: a killed process loses nothing, a power cut
may lose the last lines) and read back at start. The file keeps the last
:data:`KEEP` jids: it is rewritten (atomically) when it has twice that many
lines, so it never grows past ``2 * KEEP`` lines.

Threads: the minion's loop only (:class:`briny.minion.jobrunner.JobRunner`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from briny.common.atomicfile import write_atomic

log = logging.getLogger(__name__)

KEEP = 1000  # jids remembered (a master hands a job again only within its pending deadline)
FILENAME = "jids_taken"


class TakenJids:
    """The last :data:`KEEP` jids taken; ``path`` None keeps them in memory only."""

    def __init__(self, path: Path | None, keep: int = KEEP) -> None:
        self.path = path
        self.keep = keep
        self._jids: dict[str, None] = {}  # ordered: the oldest first
        self._lines = 0  # lines in the file
        if path is not None:
            for jid in self._read(path):
                self._remember(jid)
            self._compact()

    def __contains__(self, jid: object) -> bool:
        return jid in self._jids

    def __len__(self) -> int:
        return len(self._jids)

    def add(self, jid: str) -> None:
        """Remember ``jid`` (and write it down) before the job starts."""
        self._remember(jid)
        if self.path is None:
            return
        if self._lines >= 2 * self.keep:
            self._compact()
            return
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, f"{jid}\n".encode())
            finally:
                os.close(fd)
            self._lines += 1
        except OSError as exc:
            log.warning("cannot record job %s in %s (a restart may run it again): %s", jid, self.path, exc)

    def _remember(self, jid: str) -> None:
        self._jids.pop(jid, None)
        self._jids[jid] = None
        while len(self._jids) > self.keep:
            del self._jids[next(iter(self._jids))]

    @staticmethod
    def _read(path: Path) -> list[str]:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.warning("cannot read the jobs taken before this start from %s: %s", path, exc)
            return []
        return [line for line in text.split("\n") if line.strip() and line.isprintable()]

    def _compact(self) -> None:
        """Rewrite the file with the jids kept (atomically: a temp file, then rename)."""
        assert self.path is not None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(self.path, "".join(f"{jid}\n" for jid in self._jids), 0o600)
            self._lines = len(self._jids)
        except OSError as exc:
            log.warning("cannot rewrite %s: %s", self.path, exc)
