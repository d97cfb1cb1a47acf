"""The SQL job cache's writer: one thread that owns the only writing connection and applies the
queued writes in batches (:class:`SqlWriter`, under :class:`briny.master.jobcache.sql.SqlJobCache`).

Runs on the master host, in the master daemon. The writer takes what is queued (up to
:data:`BATCH_MAX` writes) and applies it in one transaction, the returns of the batch in one call
to the backend's :meth:`SqlWriter._insert_returns` and its events in one call to
:meth:`SqlWriter._insert_events` (PostgreSQL: one statement for each). Events (``event_return:
job_cache``) come from the bus's thread and must never wait: at most ``buffer_max`` of them are
queued or held at once, those beyond are dropped, counted and logged (once a minute).
When the backend says a failure is transient (:meth:`SqlWriter._transient`: the
database went away), the writer keeps the batch, logs, reconnects with a back-off and
applies it again; writes queued meanwhile wait behind it, up to ``buffer_max`` of
them (beyond that the oldest are dropped, and the log says how many). A batch that lost a
conflict with another writer's transaction (:meth:`SqlWriter._conflict`: PostgreSQL's deadlock or
serialization failure, two masters writing one job's rows) is rolled back and applied again at
once, on the same connection, up to :data:`CONFLICT_RETRIES` times in a row, each logged as what it
is; past that it is held and retried with the back-off as above (never called an outage).

A queued write is ``(op, future)``: ``op`` a function of the connection (its result resolves the
future once the batch is committed), a :class:`~briny.master.jobcache.rows.ReturnRow`, an
:class:`~briny.master.jobcache.rows.EventRow` (no future) or None (a flush: resolves once what was
queued before it is committed).
"""

from __future__ import annotations

import abc
import concurrent.futures
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from briny.common.exceptions import JobCacheError
from briny.master.jobcache.rows import EventRow, ReturnRow, event_json

log = logging.getLogger(__name__)

BATCH_MAX = 500
BUFFER_MAX = 100_000  # writes held while the database is away
RETRY_MAX = 5.0  # seconds between reconnection attempts, at most
OUTAGE_LOG_EVERY = 60.0  # seconds between the writer's "the database is unreachable" warnings
CONFLICT_RETRIES = 5  # a batch that lost a deadlock / serialization conflict: applied again at once, this many times
UNREACHABLE = "the database is unreachable"
_STOP = object()

Op = Callable[[Any], Any]  # a write: a function of the writing connection


class SqlWriter(abc.ABC):
    """The writer thread and its queue; a backend supplies the writing connection and the
    statements that insert a batch's returns and events."""

    #: the driver's exception base class (what a failed statement raises)
    db_error: type[Exception] = Exception

    def __init__(self, *, buffer_max: int = BUFFER_MAX) -> None:
        self.buffer_max = buffer_max
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()  # put is C: no Condition per write
        self._thread: threading.Thread | None = None
        self._outage_logged = float("-inf")  # when the writer last said the database is away
        self._degraded = False  # the writer is holding writes the database did not take
        self.batches = 0  # transactions the writer committed (the tests count them)
        self._events_lock = threading.Lock()
        self._events_waiting = 0  # events queued or held, not written yet (at most buffer_max)
        self.events_dropped = 0  # events not stored: more than buffer_max were waiting
        self._events_logged = float("-inf")  # when the last "events dropped" warning was logged

    def _start_writer(self) -> None:
        self._thread = threading.Thread(target=self._writer, name="briny-jobcache-writer", daemon=True)
        self._thread.start()

    def _enqueue(self, op: Op | ReturnRow | None) -> concurrent.futures.Future[Any]:
        """Queue a write; its future is resolved once the batch that holds it is committed."""
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((op, fut))
        return fut

    def _enqueue_event(self, tag: str, data: dict[str, Any], master_id: str) -> bool:
        """Queue an event unless ``buffer_max`` of them wait already (then it is dropped and
        counted, and the log says so once a minute); whether it was queued. Never blocks."""
        with self._events_lock:
            full = self._events_waiting >= self.buffer_max
            if full:
                self.events_dropped += 1
            else:
                self._events_waiting += 1
        if full:
            now = time.monotonic()
            if now - self._events_logged >= OUTAGE_LOG_EVERY:
                self._events_logged = now
                log.warning(
                    "job cache: %d events wait to be written already (postgres.buffer_max): events dropped "
                    "(%d so far), the first %s",
                    self.buffer_max,
                    self.events_dropped,
                    tag,
                )
            return False
        self._queue.put((EventRow(tag, data, time.time(), master_id), None))
        return True

    def _stop_writer(self, timeout: float | None) -> None:
        """Have the writer stop once what is queued is written; wait ``timeout`` for it."""
        self._queue.put(_STOP)
        if self._thread is not None:
            self._thread.join(timeout)

    # ----- what a backend supplies -----------------------------------------------------------
    @abc.abstractmethod
    def _write_connection(self) -> Any:
        """A new connection for the writer (autocommit off or explicit BEGIN in :meth:`_begin`)."""

    @abc.abstractmethod
    def _begin(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def _commit(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def _rollback(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def _insert_returns(self, conn: Any, rows: list[ReturnRow]) -> set[tuple[str, str]]:
        """Insert the rows that are not there yet; the (jid, minion_id) of those inserted."""

    @abc.abstractmethod
    def _insert_events(self, conn: Any, rows: list[tuple[str, str, float, str]]) -> None:
        """Insert events, each ``(tag, data as JSON text, stamp, master_id)``, in this order."""

    def _transient(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the batch must be applied again: the database is away for now, or
        (:meth:`_conflict`) another writer's transaction won. The writer keeps the batch."""
        return False

    def _conflict(self, exc: BaseException) -> str | None:
        """What ``exc`` is, for the log, when another writer's transaction made the batch fail
        (a deadlock, a serialization failure: applied again at once); None for anything else."""
        return None

    def _savepoint(self, conn: Any) -> contextlib.AbstractContextManager[Any]:
        """Where one write of a batch runs, so its failure leaves the others (default: nothing)."""
        return contextlib.nullcontext()

    # ----- the writer ------------------------------------------------------------------------
    def _writer(self) -> None:
        conn: Any = None
        pending: list[Any] = []
        delay = 0.1
        conflicts = 0  # conflicts in a row of the pending batch
        why = UNREACHABLE  # why the writes are held, while they are
        try:
            while True:
                if not pending:
                    pending.append(self._queue.get())
                while len(pending) < BATCH_MAX:
                    try:
                        pending.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                try:
                    if conn is None:
                        conn = self._write_connection()
                    stop = self._apply(conn, pending)
                except Exception as exc:
                    conflict = self._conflict(exc)
                    if conflict is None and not self._transient(exc):
                        raise
                    if conflict is not None:
                        self._rollback(conn)
                        conflicts += 1
                        if conflicts <= CONFLICT_RETRIES:
                            log.warning(
                                "job cache: %s with another writer of the database (%s); the batch of %d writes "
                                "is applied again (%d of %d)",
                                conflict,
                                (str(exc).strip() or type(exc).__name__).splitlines()[0],
                                len(pending),
                                conflicts,
                                CONFLICT_RETRIES,
                            )
                            continue
                        why = f"{conflict} with another writer, {conflicts} times in a row"
                    else:  # only an outage is "degraded": a publish does not wait for the commit then
                        why = UNREACHABLE
                        self._drop(conn)
                        conn = None
                        self._degraded = True
                    self._hold(pending, exc, why)
                    time.sleep(delay)  # the back-off between attempts
                    delay = min(delay * 2, RETRY_MAX)
                    continue
                self._degraded = False
                if delay > 0.1:
                    self._outage_logged = float("-inf")
                    if why == UNREACHABLE:
                        log.warning("job cache: the database is back; the buffered writes are written")
                    else:
                        log.warning("job cache: the held writes are written (they were held: %s)", why)
                delay = 0.1
                conflicts = 0
                pending = []
                if stop:
                    return
        finally:
            self._drop(conn)

    def _drop(self, conn: Any) -> None:
        if conn is not None:
            try:
                conn.close()
            except self.db_error as exc:
                log.debug("job cache: closing a connection: %s", exc)
        return None

    def _hold(self, pending: list[Any], exc: BaseException, why: str) -> None:
        """Keep the writes of a failed batch and those queued since, within ``buffer_max``: the oldest
        events go first, then the oldest other writes. ``why``: what the log says of the failure."""
        while True:
            try:
                pending.append(self._queue.get_nowait())
            except queue.Empty:
                break
        excess = len(pending) - self.buffer_max
        if excess > 0:
            kept = []
            for item in pending:
                if excess > 0 and item is not _STOP and isinstance(item[0], EventRow):
                    excess -= 1
                    self._events_lost(1)
                    self._events_written(1)
                    continue
                kept.append(item)
            if len(kept) < len(pending):
                log.error(
                    "job cache: %s and the buffer is full (%d writes): %d oldest events dropped",
                    why,
                    self.buffer_max,
                    len(pending) - len(kept),
                )
            pending[:] = kept
        dropped = 0
        while len(pending) > self.buffer_max:
            item = pending.pop(0)
            if item is _STOP:
                pending.append(item)
                continue
            dropped += 1
            if item[1] is not None:
                item[1].set_exception(JobCacheError("dropped: the job cache buffer was full"))
        if dropped:
            log.error(
                "job cache: %s and the buffer is full (%d writes): %d oldest writes dropped",
                why,
                self.buffer_max,
                dropped,
            )
        now = time.monotonic()
        if now - self._outage_logged >= OUTAGE_LOG_EVERY:  # the first failure, then once a minute
            self._outage_logged = now
            log.warning("job cache: %s (%s); %d writes buffered, retrying", why, str(exc).strip(), len(pending))

    def _apply(self, conn: Any, batch: list[Any]) -> bool:
        """Run a batch in one transaction; resolve the futures after the commit.

        Raises what :meth:`_transient` calls transient (the caller keeps the batch); other
        failures fail the writes concerned and are logged.
        """
        stop = False
        done: list[tuple[concurrent.futures.Future[Any] | None, Any, BaseException | None]] = []
        rows: list[ReturnRow] = []
        events: list[tuple[str, str, float, str]] = []
        self._begin(conn)
        for item in batch:
            if item is _STOP:
                stop = True
                continue
            op, fut = item
            if isinstance(op, ReturnRow):
                rows.append(op)
                done.append((fut, None, None))
                continue
            if isinstance(op, EventRow):
                events.append((op.tag, event_json(op.data), op.stamp, op.master_id))
                continue
            try:
                with self._savepoint(conn):
                    result = op(conn) if op is not None else None
            except (self.db_error, ValueError, TypeError) as exc:
                if self._transient(exc):
                    raise
                log.error("job cache write failed: %s", exc)
                done.append((fut, None, exc))
            else:
                done.append((fut, result, None))
        try:
            if rows:
                inserted = self._insert_returns(conn, rows)
                for row in rows:
                    if (row.jid, row.minion_id) not in inserted:
                        log.warning(
                            "job cache: a second return of %s for job %s was dropped (the first one is kept)",
                            row.minion_id,
                            row.jid,
                        )
                    else:
                        inserted.discard((row.jid, row.minion_id))  # a duplicate in the same batch
            if events:
                self._store_events(conn, events)
            self._commit(conn)
        except self.db_error as exc:
            if self._transient(exc):
                raise
            log.error("job cache: commit failed, %d writes lost: %s", len(batch), exc)
            self._rollback(conn)
            self._events_written(len(events))
            for fut, _, _ in done:
                if fut is not None and not fut.done():
                    fut.set_exception(exc)
            return stop
        self.batches += 1
        self._events_written(len(events))
        for fut, result, error in done:
            if fut is None:
                continue
            if error is not None:
                fut.set_exception(error)
            else:
                fut.set_result(result)
        return stop

    def _store_events(self, conn: Any, events: list[tuple[str, str, float, str]]) -> None:
        """Insert the events of a batch; one the database refuses costs the batch's events, never
        its jobs and returns (they are in the same transaction)."""
        try:
            with self._savepoint(conn):
                self._insert_events(conn, events)
        except self.db_error as exc:
            if self._transient(exc):
                raise
            self._events_lost(len(events))
            log.error("job cache: %d events not stored (the database refused them): %s", len(events), exc)

    def _events_lost(self, count: int) -> None:
        with self._events_lock:
            self.events_dropped += count

    def _events_written(self, count: int) -> None:
        if count:
            with self._events_lock:
                self._events_waiting -= count
