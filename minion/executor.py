"""The one place that runs an execution function for a job.

Used by ``briny-call`` (in its main thread), by the minion daemon's job
processes (:mod:`briny.minion.jobproc`, ``multiprocessing: True``) and its
job worker threads (``multiprocessing: False``, see :mod:`briny.minion.agent`). Everything here is
blocking worker code: it never touches the asyncio loop; what a job needs
from the loop (forwarding events, asking the master for pillar) reaches it
as plain callables in the job's :class:`~briny.common.jobcontext.JobContext`.

For each job :meth:`Executor.run`:

1. copies the opts, builds the job's context (``__job__``: file client,
   event sink, master channel, job registry, pillar hooks, the master's
   compile) and a fresh loader with the host's grains and pillar (from the
   daemon's source, :mod:`briny.minion.pillar`), so two jobs never share
   module globals;
2. turns the publish's ``arg``/``kwarg`` into Python arguments the way Salt's
   minion does (``{"__kwarg__": True, ...}`` maps and ``key=value`` strings
   become keyword arguments);
3. calls the function through :func:`briny.common.args.call_function` with
   the ``__pub_*`` keyword arguments (``__pub_jid``, ``__pub_fun``,
   ``__pub_tgt``, ``__pub_user``, ``__pub_pid``, ...);
4. reads ``__context__["retcode"]`` and decides ``success`` as Salt does
   (retcode 0, and a dict return without ``result: False``/``success: False``);
5. registers the job (with its proc record: jid, fun, arg, pid, tid, started,
   tgt, tgt_type, user) in the daemon's job registry while it runs, and keeps
   ``cachedir/proc/<jid>`` once it has run ``proc_file_delay`` seconds
   (:mod:`briny.minion.procfiles`), for ``saltutil.running``,
   ``saltutil.find_job`` and ``state.running``.

Errors become Salt's return strings (``ERROR: ...``, ``ERROR executing
'fun': ...``, ``The minion function caused an exception: ...``) with retcode
1; :class:`JobResult` also keeps the exception so ``briny-call`` can print its
own messages.
"""

from __future__ import annotations

import datetime
import logging
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from briny.common import loader
from briny.common.jobcontext import (
    BeaconsControl,
    FireEvent,
    JobContext,
    MasterRequest,
    RunningJob,
    ScheduleControl,
)
from briny.common.args import call_function, parse_input, publish_args, salt_arg
from briny.common.datacopy import copy_data
from briny.common.exceptions import (
    BrinyError,
    CommandExecutionError,
    CommandNotFoundError,
    FunctionNotFound,
    InvalidArguments,
    JobKilled,
    SaltInvocationError,
    WireError,
)
from briny.common.ids import valid_jid
from briny.common.statefuns import HIGHSTATE_FUNCS
from briny.minion.jobregistry import killed_message
from briny.minion.pillar import LocalPillar, PillarSource, StaticPillar
from briny.minion.procfiles import ProcFiles, proc_file_delay
from briny.minion.progress import ProgressEvents

log = logging.getLogger(__name__)

EX_OK = 0
EX_GENERIC = 1
THREAD_PREFIX = "job-"  # a job's worker thread is named job-<jid> while it runs (saltutil reads it)


# -- records -------------------------------------------------------------------------------


@dataclass
class Job:
    """One function call to run: a publish's load, or a ``briny-call`` command line."""

    jid: str
    fun: str
    arg: list[Any] = field(default_factory=list)
    kwarg: dict[str, Any] = field(default_factory=dict)
    tgt: str = ""
    tgt_type: str = "glob"
    user: str = ""
    progress: bool = False  # the publish asks for progress events (``briny`` on a terminal)
    compiled: dict[str, Any] | None = None  # the master's compile of a state job (PROTOCOL.md)

    @classmethod
    def from_publish(cls, load: Any) -> "Job":
        """A job from a publish payload; WireError when it is not a usable one."""
        if not isinstance(load, dict):
            raise WireError("publish payload is not a map")
        jid, fun = load.get("jid"), load.get("fun")
        if not valid_jid(jid):
            raise WireError(f"publish has no valid jid ({str(jid)[:40]!r})")
        if not isinstance(fun, str) or not fun or len(fun) > 255:
            raise WireError("publish has no function name")
        arg = load.get("arg") if load.get("arg") is not None else []
        kwarg = load.get("kwarg") if load.get("kwarg") is not None else {}
        if not isinstance(arg, list) or not isinstance(kwarg, dict):
            raise WireError("publish 'arg' must be a list and 'kwarg' a map")
        return cls(
            jid=jid,
            fun=fun,
            arg=arg,
            kwarg={str(k): v for k, v in kwarg.items()},
            tgt=str(load.get("tgt") or ""),
            tgt_type=str(load.get("tgt_type") or "glob"),
            user=str(load.get("user") or ""),
            progress=load.get("progress") is True,
            compiled=_compiled(fun, load.get("compiled")),
        )

    @classmethod
    def from_cli(cls, jid: str, fun: str, argv: list[str], tgt: str = "salt-call") -> "Job":
        """A job from command-line words (``1 x=2``: YAML-typed, ``key=value`` as keywords)."""
        args, kwargs = parse_input(argv)
        return cls(jid=jid, fun=fun, arg=args, kwarg=kwargs, tgt=tgt)

    def call_args(self) -> tuple[list[Any], dict[str, Any]]:
        """Positional and keyword arguments as Salt's minion makes them from a load."""
        return publish_args(self.arg, self.kwarg)

    def fun_args(self) -> list[Any]:
        """The arguments as Salt reports them (``fun_args``): keywords last, in a ``__kwarg__`` map."""
        out = list(self.arg)
        if self.kwarg:
            out.append({**self.kwarg, "__kwarg__": True})
        return out

    def proc_record(self, pid: int, tid: int | None = None) -> dict[str, Any]:
        """The job's proc record (``cachedir/proc/<jid>``, ``saltutil.running``'s entries)."""
        return {
            "jid": self.jid,
            "fun": self.fun,
            "arg": self.fun_args(),
            "pid": pid,
            "tid": tid,
            "started": jid_started(self.jid),
            "tgt": self.tgt,
            "tgt_type": self.tgt_type,
            "user": self.user,
            "ret": "",
        }


@dataclass
class JobResult:
    """What a job returned, in the ``ret`` request's terms (:meth:`payload`)."""

    jid: str
    fun: str
    fun_args: list[Any]
    ret: Any
    retcode: int = EX_OK
    success: bool = True
    out: str | None = None
    error: str | None = None  # None, "not_found", "invocation", "execution", "exception", "killed"
    exception: BaseException | None = field(default=None, repr=False, compare=False)
    module: Any = field(default=None, repr=False, compare=False)  # the function's module object

    def payload(self) -> dict[str, Any]:
        body = {
            "jid": self.jid,
            "fun": self.fun,
            "fun_args": self.fun_args,
            "return": self.ret,
            "retcode": self.retcode,
            "success": self.success,
        }
        if self.out:
            body["out"] = self.out
        return body


# -- the executor --------------------------------------------------------------------------


def jid_started(jid: str) -> str:
    """Salt's human form of a jid's time (``2026, Nov 21 06:00:48.730098``)."""
    try:  # the digits by position: strptime costs tens of microseconds a job
        if len(jid) != 20 or not jid.isdigit():
            raise ValueError(jid)
        y, mo, d, h, mi, sec, us = (
            int(jid[a:b]) for a, b in ((0, 4), (4, 6), (6, 8), (8, 10), (10, 12), (12, 14), (14, 20))
        )
        when = datetime.datetime(y, mo, d, h, mi, sec, us)
    except (TypeError, ValueError):
        when = datetime.datetime.now()
    return when.strftime("%Y, %b %d %H:%M:%S.%f")


class Executor:
    """Runs jobs for one host; safe to call from several threads at once.

    ``grains`` is a callable giving the host's current grains (each job gets a
    deep copy); ``pillar`` a :class:`PillarSource`; ``registry`` the job
    registry of the daemon (``__job__.jobs``); ``master`` the daemon's channel
    to the master (a remote file client is made from it for each job);
    ``refresh_pillar``, ``refresh_grains`` and ``modules_changed`` the daemon's hooks
    (``saltutil.refresh_*``); ``schedule`` the daemon's schedule (``schedule.*``);
    ``beacons`` the daemon's beacons (``beacons.*``). With ``release`` (a daemon running jobs
    in its own threads), the loaders a job made are emptied when it ends
    (:meth:`~briny.common.jobcontext.JobContext.release`), so what it allocated is freed at
    once and not left, in reference cycles, to the garbage collector; its
    :attr:`JobResult.module` is then an empty module.
    """

    def __init__(
        self,
        opts: dict[str, Any],
        grains: Callable[[], dict[str, Any]],
        pillar: PillarSource | None = None,
        registry: Any = None,
        *,
        master: MasterRequest | None = None,
        refresh_pillar: Callable[[], bool] | None = None,
        refresh_grains: Callable[[], bool] | None = None,
        modules_changed: Callable[[], None] | None = None,
        schedule: ScheduleControl | None = None,
        beacons: BeaconsControl | None = None,
        release: bool = False,
    ) -> None:
        self.opts = opts
        self.release = release  # empty each job's loaders when it ends (a daemon's thread jobs)
        self.grains = grains
        self.pillar = pillar or (LocalPillar() if opts.get("file_client") == "local" else StaticPillar())
        self.registry = registry
        self.master = master
        self.refresh_pillar = refresh_pillar
        self.refresh_grains = refresh_grains
        self.modules_changed = modules_changed
        self.schedule = schedule
        self.beacons = beacons
        self.proc_dir = Path(str(opts.get("cachedir") or "")) / "proc"
        self.proc_files = ProcFiles(self.proc_dir, proc_file_delay(opts))

    # -- per-job set-up ---------------------------------------------------------------------
    def job_context(self, job: Job | None = None, fire_event: FireEvent | None = None) -> JobContext:
        """The runtime of one job (``__job__``). A masterless job gets its own file client, so
        files added to the roots are seen by the next job; a job with a master gets a remote
        file client over the daemon's channel (the loader finds custom modules in
        ``extension_modules`` and, masterless, in the roots by itself)."""
        ctx = JobContext(
            jid=job.jid if job is not None else "",
            fire_event=fire_event,
            master=self.master,
            jobs=self.registry,
            refresh_pillar=self.refresh_pillar,
            refresh_grains=self.refresh_grains,
            modules_changed=self.modules_changed,
            schedule=self.schedule,
            beacons=self.beacons,
        )
        if self.opts.get("file_client") == "local":
            from briny.common.fileclient import LocalFileClient

            ctx.file_client = LocalFileClient(
                self.opts.get("file_roots") or {}, bool(self.opts.get("fileserver_followsymlinks", True))
            )
        elif self.master is not None:
            from briny.minion.remotefiles import RemoteFileClient  # salt:// from the master

            ctx.file_client = RemoteFileClient(self.opts, self.master)
        if job is not None:
            ctx.progress = ProgressEvents if job.progress else None
            if job.compiled is not None and self.opts.get("file_client") != "local":
                ctx.compiled = job.compiled  # state.apply/highstate/sls run it without compiling
        return ctx

    def loaders(self, opts: dict[str, Any], ctx: JobContext) -> Any:
        """(grains, pillar, ``__salt__``) for one job; renders pillar when the source does."""
        grains = copy_data(self.grains())
        opts["grains"] = grains
        salt = loader.minion_mods(opts, grains, {}, job=ctx)
        pillar = self.pillar.get(opts, grains, salt)
        salt = loader.minion_mods(opts, grains, pillar, job=ctx)
        opts["pillar"] = pillar
        source = self.pillar

        def compile_pillar(override: dict[str, Any]) -> dict[str, Any]:
            compiled = source.compile_with(opts, grains, salt, override)
            if compiled is not None:
                return compiled
            from briny.common.pillar import with_override  # Jinja and the compiler: only now

            return with_override(pillar, override)

        def fresh(override: dict[str, Any] | None, pillarenv: str | None) -> dict[str, Any]:
            return source.fresh({**opts, "pillarenv": pillarenv} if pillarenv else opts, grains, salt, override)

        ctx.compile_pillar = compile_pillar
        ctx.fresh_pillar = fresh
        return grains, pillar, salt

    # -- running --------------------------------------------------------------------------------
    def run(self, job: Job, fire_event: FireEvent | None = None) -> JobResult:
        """Run one job in the calling thread and return its result; never raises for the
        function's own failures, nor when ``saltutil.kill_job`` stops it."""
        thread = threading.current_thread()
        old_name = thread.name
        thread.name = THREAD_PREFIX + job.jid
        record = job.proc_record(os.getpid(), threading.get_ident())
        running = RunningJob(job.jid, job.fun, time.time(), os.getpid(), threading.get_ident(), record=record)
        if self.registry is not None:  # before the proc file: a proc file is never unregistered
            self.registry.add(running)
        try:
            try:
                self.proc_files.begin(job.jid, job.fun, record)
                result = self._run(job, fire_event)
            except JobKilled:
                result = self._killed(job, running)
        except JobKilled:  # arrived while the first handler ran
            result = self._killed(job, running)
        finally:
            for _ in range(3):  # a stop signal may still land while cleaning up: finish anyway
                try:
                    self._cleanup(job, thread, old_name)
                    break
                except JobKilled:
                    continue
        return result

    def _killed(self, job: Job, running: RunningJob) -> JobResult:
        sig = running.signalled or signal.SIGKILL
        log.warning("job %s (%s) was stopped by signal %s", job.jid, job.fun, sig)
        return self._error(job, "killed", killed_message(job.jid, sig), None)

    def _cleanup(self, job: Job, thread: threading.Thread, old_name: str) -> None:
        self.proc_files.end(job.jid)  # before the registry: a proc file is never unregistered
        if self.registry is not None:
            self.registry.remove(job.jid)
        thread.name = old_name

    def _error(self, job: Job, kind: str, message: str, exc: BaseException | None, module: Any = None) -> JobResult:
        return JobResult(job.jid, job.fun, job.fun_args(), message, EX_GENERIC, False, "nested", kind, exc, module)

    def _run(self, job: Job, fire_event: FireEvent | None) -> JobResult:
        ctx = self.job_context(job, fire_event)
        ctx.loaders = [] if self.release else None  # the loaders it makes, emptied at its end
        try:
            return self._call(job, ctx)
        finally:
            ctx.release()

    def _call(self, job: Job, ctx: JobContext) -> JobResult:
        opts = dict(self.opts)
        try:
            _, _, salt = self.loaders(opts, ctx)
        except BrinyError as exc:
            log.error("job %s: pillar or modules could not be set up: %s", job.jid, exc)
            return self._error(job, "execution", f"ERROR: {exc}", exc)
        except Exception as exc:  # a broken pillar tree or grains must not take the minion down
            log.warning("job %s: pillar or modules could not be set up", job.jid, exc_info=True)
            return self._error(job, "exception", f"ERROR: pillar or modules could not be set up: {exc}", exc)
        try:
            func = salt[job.fun]
        except FunctionNotFound as exc:
            return self._error(job, "not_found", str(exc), exc)
        module = salt.module(job.fun.split(".", 1)[0])
        args, kwargs = job.call_args()
        pub: dict[str, Any] = {"__pub_fun": job.fun, "__pub_jid": job.jid, "__pub_tgt": job.tgt}
        if job.user:
            pub["__pub_user"] = job.user
        if job.tgt_type and job.tgt != "salt-call":  # a publish: the load's keys, as Salt's minion
            pub["__pub_arg"] = salt_arg(job.arg, job.kwarg)
            pub["__pub_tgt_type"] = job.tgt_type
            pub["__pub_ret"] = ""
        else:  # a local call: salt-call's keys
            pub["__pub_pid"] = os.getpid()
        try:
            ret = call_function(func, job.fun, args, kwargs, pub)
        except CommandNotFoundError as exc:  # Salt's words for a missing command
            msg = f"Command required for '{job.fun}' not found"
            log.debug("%s", msg, exc_info=True)
            return self._error(job, "execution", f"{msg}: {exc}", exc, module)
        except CommandExecutionError as exc:
            log.error("A command in '%s' had a problem: %s", job.fun, exc)
            return self._error(job, "execution", f"ERROR: {exc}", exc, module)
        except InvalidArguments as exc:  # Salt's words for arguments the function does not take
            msg = f"Passed invalid arguments to {job.fun}: {exc}\n{func.__doc__ or ''}"
            log.info("Passed invalid arguments to %s: %s", job.fun, exc)
            return self._error(job, "invocation", msg, exc, module)
        except SaltInvocationError as exc:
            log.error("Problem executing '%s': %s", job.fun, exc)
            return self._error(job, "invocation", f"ERROR executing '{job.fun}': {exc}", exc, module)
        except BrinyError as exc:
            log.error("'%s' failed: %s", job.fun, exc)
            return self._error(job, "execution", f"ERROR: {exc}", exc, module)
        except TypeError as exc:
            msg = f"Passed invalid arguments to {job.fun}: {exc}\n{func.__doc__ or ''}"
            log.warning(msg)
            return self._error(job, "invocation", msg, exc, module)
        except Exception as exc:  # a module's bug must become a return, never kill the minion
            log.warning("The minion function caused an exception", exc_info=True)
            return self._error(
                job, "exception", f"The minion function caused an exception: {traceback.format_exc()}", exc, module
            )
        retcode = salt.pack["__context__"].get("retcode", EX_OK)
        try:
            retcode = int(retcode or 0)
        except (TypeError, ValueError):
            retcode = EX_GENERIC
        if retcode == EX_OK and isinstance(ret, dict):
            if ret.get("result", True) is False or ret.get("success", True) is False:
                retcode = EX_GENERIC
        return JobResult(
            job.jid,
            job.fun,
            job.fun_args(),
            ret,
            retcode,
            retcode == EX_OK,
            default_outputter(job.fun, module),
            None,
            None,
            module,
        )


COMPILED_FUNS = frozenset({"state.apply", "state.highstate", "state.sls"})


def _compiled(fun: str, value: Any) -> dict[str, Any] | None:
    """A publish's ``compiled`` field when it is usable for ``fun``; None (the minion compiles
    itself) otherwise."""
    if value is None:
        return None
    if (
        isinstance(value, dict)
        and fun in COMPILED_FUNS
        and (
            (isinstance(value.get("chunks"), list) and all(isinstance(c, dict) for c in value["chunks"]))
            or (isinstance(value.get("errors"), list) and all(isinstance(e, str) for e in value["errors"]))
            or isinstance(value.get("no_states"), str)
        )
    ):
        return value
    log.warning("a %s publish carried an unusable 'compiled' field; compiling here", fun)
    return None


def default_outputter(fun: str, module: Any) -> str | None:
    if fun in HIGHSTATE_FUNCS:
        return "highstate"
    table = getattr(module, "__outputter__", None) if module is not None else None
    if isinstance(table, dict):
        out = table.get(fun.split(".", 1)[1])
        return out if isinstance(out, str) else None
    if isinstance(table, str):
        return table
    return None
