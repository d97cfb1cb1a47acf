"""A job's runtime: what a running job reaches besides its configuration (issue 9).

``opts`` (``__opts__``) is configuration only. Everything a job needs at
run time that is not configuration travels in one :class:`JobContext`,
built for each job by :class:`briny.minion.executor.Executor` and handed
to the loader, which injects it into every module it loads as ``__job__``
(next to Salt's ``__opts__``, ``__salt__``, ...). State modules share the
``__job__`` of the execution loader they were built from.

A loader built without one (the master's template rendering, tests) gets
an empty context: no master, no event sink, no job registry; the file
client is then the one :func:`briny.common.fileclient.get_client` makes
from ``file_roots`` and keeps in this context.

The context has two implementations of its channels, with the same
interface (docs/DEVELOPING.md, "Where code runs"):

- **thread jobs** (``multiprocessing: False``, ``briny-call --local``):
  plain callables into the daemon's objects;
- **process jobs** (``multiprocessing: True``, the default):
  :mod:`briny.minion.jobproc` gives callables that send each request over
  the job's socket to the minion daemon, which relays it (to the master,
  its pillar, its job registry) and answers.

Nothing here imports the rest of briny but the file client's type.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .fileclient import FileClient

FireEvent = Callable[[str, dict[str, Any]], None]
# one request to the master: (payload with "cmd", timeout in s or None) -> reply payload or None
MasterRequest = Callable[[dict[str, Any], "float | None"], "dict[str, Any] | None"]
# one ``schedule.*`` call on the daemon's schedule: (action, arguments) -> the daemon's answer
ScheduleControl = Callable[[str, dict[str, Any]], Any]
# one ``beacons.*`` call on the daemon's beacons: (action, arguments) -> the daemon's answer
BeaconsControl = Callable[[str, dict[str, Any]], Any]


class ProgressSink(Protocol):
    """A state run's ``fire_event`` that sends light progress events; :meth:`flush` at the run's end."""

    def __call__(self, tag: str, data: dict[str, Any]) -> None:
        """Send (or hold back) one event of the run."""

    def flush(self) -> None:
        """Send the event held back last, if any."""


# wraps a state run's ``fire_event`` into a progress sink (the daemon's, when the publish asks for
# progress: briny.minion.progress.ProgressEvents); host code never imports the daemon for it
ProgressWrap = Callable[[FireEvent], ProgressSink]


@dataclass
class RunningJob:
    """A job the minion daemon is running (its job registry's entry)."""

    jid: str
    fun: str
    started: float
    pid: int  # the job's process (the daemon's own pid for a thread job)
    thread_id: int | None = None  # a thread job's thread (``multiprocessing: False``)
    signalled: int | None = None  # the signal ``saltutil`` sent it, once sent
    record: dict[str, Any] = field(default_factory=dict)  # its proc record (``saltutil.running``'s fields)


class JobControl(Protocol):
    """The daemon's job registry as a job sees it (``__job__.jobs``)."""

    def snapshot(self) -> dict[str, RunningJob]:
        """Every job the daemon runs now, by jid."""

    def signal(self, jid: str, sig: int) -> str | None:
        """Deliver ``sig`` to job ``jid``: Salt's answer string, or None when it is not running."""


@dataclass
class JobContext:
    """The runtime of one job (``__job__`` in modules).

    ``file_client`` serves ``salt://`` (the master's file server through the
    minion's cache, or the local roots); ``fire_event`` sends an event to the
    master (or None: the host's event bus); ``master`` asks the master one
    request; ``jobs`` is the daemon's job registry; ``refresh_pillar`` and
    ``refresh_grains`` ask the daemon to renew them; ``schedule`` manages
    the daemon's schedule and ``beacons`` its beacons; ``compile_pillar``
    renders this job's pillar with a ``pillar=`` override; ``fresh_pillar``
    compiles a pillar now, from the master or the ``pillar_roots``, without
    keeping it (``pillar.items``); ``compiled`` is
    the master's compile of a state job (taken once, see
    :meth:`take_compiled`); ``progress``, when the publish asks for progress events, wraps
    a state run's ``fire_event`` into the daemon's progress sink.
    """

    jid: str = ""
    file_client: FileClient | None = None
    fire_event: FireEvent | None = None
    master: MasterRequest | None = None
    # on the master only (a compile for a minion): that minion's ``mine`` requests, answered from
    # the master's own mine store (``mine.get`` in templates rendered there)
    mine: MasterRequest | None = None
    jobs: JobControl | None = None
    refresh_pillar: Callable[[], bool] | None = None
    refresh_grains: Callable[[], bool] | None = None
    # the custom module folders changed (a sync, refresh_modules): tells the minion daemon, whose
    # kept folder listings would be stale, when the job runs in a process of its own; None where
    # the job shares the daemon's process (its listings are the daemon's) or there is no daemon
    modules_changed: Callable[[], None] | None = None
    schedule: ScheduleControl | None = None  # the daemon's schedule (``schedule.*``); None without one
    beacons: BeaconsControl | None = None  # the daemon's beacons (``beacons.*``); None without one
    compile_pillar: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # (override, pillarenv) -> a pillar compiled now, never kept; None: read ``__pillar__`` (the
    # master's renders, whose pillar was just compiled)
    fresh_pillar: Callable[[dict[str, Any] | None, str | None], dict[str, Any]] | None = None
    compiled: dict[str, Any] | None = field(default=None, repr=False)
    progress: ProgressWrap | None = None
    # the file client get_client made from file_roots when the job was given none (kept per job)
    local_files: FileClient | None = field(default=None, repr=False, compare=False)
    # the loaders made for this job, when its runner empties them at its end (LazyLoader.release);
    # None: not kept (briny-call, the master's renders, a job process that exits anyway)
    loaders: list[Any] | None = field(default=None, repr=False, compare=False)

    def release(self) -> None:
        """The job is over: empty every loader made for it (:attr:`loaders`) and drop what
        refers back to them, so the job's modules, grains, pillar and opts are freed at once by
        reference counting instead of waiting, in reference cycles, for a full collection."""
        loaders, self.loaders = self.loaders or [], None
        for made in loaders:
            made.release()
        self.compile_pillar = None
        self.fresh_pillar = None

    def take_compiled(self) -> dict[str, Any] | None:
        """The master's compile of this job, once: a nested state run (``module.run:
        state.sls``) compiles for itself."""
        compiled, self.compiled = self.compiled, None
        return compiled if isinstance(compiled, dict) else None
