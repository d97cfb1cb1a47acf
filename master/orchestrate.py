"""Orchestration: an SLS of ``salt.*`` steps run on the master (``briny-run state.orchestrate``).

Runs in ``briny-run`` on the master host, as the operator, as Salt's
``state.orchestrate`` runner runs in ``salt-run``. The SLS comes from the
master's own ``file_roots`` (``saltenv``, ``pillar=`` overrides the pillar
compiled from ``pillar_roots`` for the master's id) and is compiled by
:class:`briny.common.state.compiler.StateCompiler` and run by the one requisite
engine (:func:`briny.common.state.engine.run_low_chunks`), so requisites order the
steps and a failed step stops what requires it.

The steps are the ``salt`` state module (``states/saltmod.py``); what they
need of the master comes through their ``__salt__``, which here holds the
execution modules plus :class:`MasterCalls`:

- ``saltutil.cmd``: a job published through the running master's operator
  IPC (:class:`briny.master.clientapi.MasterClient`: the job cache, the
  ``salt/job`` events and the returns as for any job) and its returns
  gathered as ``briny`` gathers them (:class:`briny.master.waiter.Waiter`:
  events, then the job cache, then ``saltutil.find_job`` for slow minions);
- ``saltutil.runner`` / ``saltutil.wheel``: a runner of
  :mod:`briny.master.runners` or a wheel function of :mod:`briny.master.wheel`,
  called in this process, answering as Salt's (``saltutil.runner``: the
  runner's return, in a template too; ``full_return=True``, as the
  ``salt.runner`` states ask: Salt's wrapped answer);
- ``event.listen``: the master's events by tag glob (``salt.wait_for_event``),
  through :func:`listen`, the one place that knows how to listen.

The answer is Salt's: ``{"data": {<master id>: <state results or render
errors>}, "outputter": "highstate", "retcode": 0|1}``; the orchestration
fires ``salt/run/<jid>/new`` and ``salt/run/<jid>/ret`` on the master bus, and
its steps' ``fire_event`` events too, and is a runner job in the master's job
cache (``fun`` ``runner.state.orchestrate``, the master's id returning that
answer), as Salt stores it, under a jid claimed when the run starts
(:func:`open_job`). :func:`orchestrate_high` (high data given whole),
:func:`orchestrate_single` (one state function) run the same way and answer
``{<master id>: <state results>}``; :func:`orchestrate_show_sls` renders only.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from briny.common import config, loader
from briny.common.state import runcontext
from briny.common.args import call_function, split_input
from briny.common.state.compiler import StateCompiler
from briny.common.event import EventListener, EventSender
from briny.common.exceptions import BrinyError, FunctionNotFound, MasterError, SaltInvocationError
from briny.common.fileclient import LocalFileClient
from briny.common.jid import gen_jid
from briny.common.jobcontext import JobContext
from briny.common.pillar import compile_local_pillar
from briny.common.state.stages import RenderEnv
from briny.master.busshape import run_new, run_ret
from briny.master.clientapi import MasterClient

if TYPE_CHECKING:
    from briny.master.jobcache.base import JobCache

log = logging.getLogger(__name__)

RET_TAGS = "salt/job/*/ret/*"


def listen(opts: dict[str, Any], tag_glob: str, timeout: float) -> Iterator[tuple[str, dict[str, Any]]]:
    """The master's events whose tag matches ``tag_glob``, as they come, for ``timeout`` seconds
    (the one place orchestration listens to the bus; the subscription is live before the first
    event is awaited, so nothing fired after the call is missed)."""
    deadline = time.monotonic() + max(0.0, timeout)
    with EventListener(opts, str(tag_glob), name="master") as events:
        events.wait_ready(timeout=min(5.0, max(0.1, timeout)))
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            got = events.get_event(min(left, 1.0))
            if got is not None:
                yield got


class MasterCalls:
    """What the ``salt`` state module asks of the master, for one orchestration."""

    def __init__(self, opts: dict[str, Any], user: str | None = None) -> None:
        self.opts = opts
        self.user = user
        self._stack = ExitStack()
        self._client: MasterClient | None = None
        self._returns: EventListener | None = None

    def functions(self) -> dict[str, Callable[..., Any]]:
        """The functions this gives ``__salt__``, by name."""
        return {
            "saltutil.cmd": self.cmd,
            "saltutil.runner": self.runner,
            "saltutil.wheel": self.wheel,
            "event.listen": lambda tag, timeout=300.0: listen(self.opts, tag, float(timeout)),
        }

    def _connected(self) -> tuple[MasterClient, EventListener]:
        if self._client is None or self._returns is None:
            client = self._stack.enter_context(MasterClient(self.opts))
            client.check_running()  # a clear error, not a wait, when no master runs
            self._returns = self._stack.enter_context(EventListener(self.opts, RET_TAGS, name="master"))
            self._returns.wait_ready()  # subscribed before anything can return (the job cache covers a miss)
            self._client = client
        return self._client, self._returns

    def cmd(
        self,
        tgt: Any,
        fun: str,
        arg: list[Any] | None = None,
        kwarg: dict[str, Any] | None = None,
        tgt_type: str = "glob",
        timeout: Any = None,
        expect_minions: bool = False,
        **_: Any,
    ) -> dict[str, dict[str, Any]]:
        """Publish ``fun`` to ``tgt`` through the master and wait for every targeted minion:
        ``{minion: {"ret", "retcode", "jid", "out"}}`` in minion id order; a minion that did not
        return (or, for a ``list`` target, has no accepted key) is ``{"failed": True}`` when
        ``expect_minions``, else left out. MasterError when the master refuses the job."""
        from briny.master.waiter import Waiter

        client, returns = self._connected()
        wait = float(timeout) if timeout else config.number(self.opts, "timeout")
        pub = client.publish(tgt, fun, list(arg or []), dict(kwarg or {}), tgt_type, wait, user=self.user)
        minions = list(pub.get("minions") or [])
        jid = str(pub.get("jid") or "")
        out: dict[str, dict[str, Any]] = {}
        if minions:
            waiter = Waiter(client, returns, self.opts, wait, config.number(self.opts, "gather_job_timeout"))
            waiter.add_job(jid, fun, minions)
            while waiter.active:
                for res in waiter.poll(1.0):
                    if res.returned:
                        out[res.id] = {"ret": res.ret, "retcode": res.retcode, "jid": jid, "out": res.out}
                        if res.out is None:
                            del out[res.id]["out"]
                    elif expect_minions:
                        out[res.id] = {"failed": True}
        if expect_minions and str(tgt_type or "glob").lower() == "list":
            for missing in split_input(tgt, str):
                if missing and missing not in minions:
                    out[missing] = {"failed": True}
        return dict(sorted(out.items()))

    def runner(self, name: str, *args: Any, full_return: bool = False, **kwargs: Any) -> Any:
        """A runner of :mod:`briny.master.runners`, here, as Salt's ``saltutil.runner``: the
        runner's answer as it is (what a template calling ``salt.saltutil.runner(...)`` gets);
        with ``full_return`` (the ``salt.runner`` states) ``{"fun", "jid", "user", "fun_args",
        "return", "success"}``. ``arg`` (a list) and ``kwarg`` (a dict) join the positional and
        keyword arguments. A runner that is not there raises FunctionNotFound (a template fails
        to render, as Salt's) but answers its error (``success`` False) with ``full_return``; a
        runner that fails answers its error as the return."""
        from briny.master.runners import RunnerContext, get_runner

        kwargs = {k: v for k, v in kwargs.items() if not k.startswith("__")}
        arg = kwargs.pop("arg", None)
        positional = [*args, *(arg if isinstance(arg, list) else [] if arg is None else [arg])]
        kwargs.update(kwargs.pop("kwarg", None) or {})
        value: Any
        try:
            func = get_runner(name)
        except FunctionNotFound as exc:
            if not full_return:
                raise  # as Salt's: a template asking for a runner that is not there fails to render
            value, success = str(exc), False
        else:
            ctx = RunnerContext(self.opts)
            try:
                value = call_function(func, name, [ctx, *positional], kwargs)
                success = not ctx.context.get("retcode", 0)
                if isinstance(value, dict) and "outputter" in value and "data" in value:
                    success = success and value.get("retcode", 0) in (0, None)
            except (BrinyError, OSError) as exc:
                value, success = f"{name}: {exc}", False
            finally:
                ctx.close()
        if not full_return:
            return value
        fun_args = [*positional, {**kwargs, "__pub_user": self.user}] if kwargs else list(positional)
        return {
            "fun": f"runner.{name}",
            "jid": gen_jid(),
            "user": self.user,
            "fun_args": fun_args,
            "return": value,
            "success": success,
        }

    def wheel(self, name: str, **kwargs: Any) -> dict[str, Any]:
        """A wheel function of :mod:`briny.master.wheel`: ``{"return", "success"}``."""
        from briny.master import wheel

        kwargs = {k: v for k, v in kwargs.items() if not k.startswith("__")}
        try:
            return {"return": wheel.call(self.opts, name, **kwargs), "success": True}
        except (BrinyError, OSError) as exc:
            return {"return": str(exc), "success": False}

    def close(self) -> None:
        self._stack.close()
        self._client = self._returns = None


class OrchestrationFunctions(loader.LazyLoader):
    """``__salt__`` of an orchestration: the execution modules, with :class:`MasterCalls`' functions
    answering first."""

    def __init__(self, base: loader.LazyLoader, extra: Mapping[str, Callable[..., Any]]) -> None:
        super().__init__("modules", base.pack, [d for d in base.dirs if d != loader.BUILTIN_DIRS["modules"]])
        self.pack["__salt__"] = self
        self.extra = dict(extra)

    def __getitem__(self, key: str) -> Callable[..., Any]:
        if key in self.extra:
            return self.extra[key]
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        return key in self.extra or super().__contains__(key)

    def sibling(self, salt: runcontext.Loader | None = None) -> OrchestrationFunctions:
        """A parallel state's own (:meth:`LazyLoader.sibling`), with the same master functions."""
        return OrchestrationFunctions(super().sibling(salt), self.extra)


def check_result(running: Any) -> bool:
    """Salt's ``state.check_result`` of the orchestration's data: every state result not False."""
    if not isinstance(running, dict) or not running:
        return False
    for value in running.values():
        if not isinstance(value, dict):
            return False
        if "result" in value:
            if value["result"] is False:
                return False
        elif not check_result(value):
            return False
    return True


@dataclass
class Session:
    """One orchestration's view of the master: its opts, render env, ``__salt__`` and event sender."""

    opts: dict[str, Any]
    env: RenderEnv
    salt: OrchestrationFunctions
    jid: str
    fire: Callable[[str, dict[str, Any]], None]

    def run(self, chunks: list[Any]) -> Any:
        """Run compiled chunks through the one requisite engine: the state results."""
        from briny.common.state.engine import run_low_chunks

        states = loader.states(self.opts, self.salt, extra_dirs=[])
        return run_low_chunks(
            chunks, runcontext.RunContext.from_opts(self.opts, self.salt, states, jid=self.jid, fire_event=self.fire)
        )

    def compiler(self) -> StateCompiler:
        return StateCompiler(self.env)


Body = Callable[[Session], Any]


def _check_pillar(pillar: Any) -> None:
    if pillar is not None and not isinstance(pillar, dict):
        raise SaltInvocationError("Pillar data must be formatted as a dictionary")


def _run_opts(opts: dict[str, Any], saltenv: str | None, test: Any, pillarenv: str | None) -> dict[str, Any]:
    run_opts = dict(opts)
    run_opts.update(file_client="local", __role="master")
    if test is not None:
        run_opts["test"] = bool(test)
    run_opts["saltenv"] = saltenv or str(opts.get("saltenv") or "base")
    if pillarenv or opts.get("pillarenv"):
        run_opts["pillarenv"] = pillarenv or opts.get("pillarenv")
    return run_opts


def _in_session(
    run_opts: dict[str, Any], jid: str, pillar: Any, user: str | None, sender: EventSender, body: Body
) -> Any:
    """``body`` run with the master's functions, pillar and render env (the state results or
    errors); a master that cannot be reached is an error of the run, in Salt's list form."""
    master_id = str(run_opts.get("id") or "master")
    grains = {"id": master_id}
    files = LocalFileClient(run_opts.get("file_roots") or {}, bool(run_opts.get("fileserver_followsymlinks", True)))
    calls = MasterCalls(run_opts, user)
    job = JobContext(jid=jid, file_client=files, fire_event=sender.fire)
    try:
        base = loader.minion_mods(run_opts, grains, {}, extra_dirs=[], job=job)
        compiled_pillar = compile_local_pillar(run_opts, grains, base, pillar)
        base = loader.minion_mods(run_opts, grains, compiled_pillar, extra_dirs=[], job=job)
        salt = OrchestrationFunctions(base, calls.functions())
        env = RenderEnv(opts=run_opts, client=files, salt=salt, grains=grains, pillar=compiled_pillar)
        return body(Session(run_opts, env, salt, jid, sender.fire))
    except MasterError as exc:
        return [f"The orchestration could not reach the master: {exc}"]
    finally:
        calls.close()


def run_orchestration(
    opts: dict[str, Any],
    fun: str,
    fun_args: list[Any],
    body: Body,
    *,
    saltenv: str | None = "base",
    test: Any = None,
    pillar: Any = None,
    pillarenv: str | None = None,
    jid: str | None = None,
    user: str | None = None,
    on_job: Callable[[str], None] | None = None,
) -> tuple[str, Any, int]:
    """Run one orchestration (``body`` on a :class:`Session`) as a runner job: ``salt/run/<jid>/new``
    and ``/ret`` on the master's bus, and the job with its return in the master's job cache (as
    Salt stores a runner job: ``fun`` ``runner.<fun>``, the master's id as the minion). ``jid``
    (``orchestration_jid``) is the one asked for; the job's is another when a master sharing the
    job cache holds it (:func:`open_job`); ``on_job`` (the master's schedule) is told that jid once
    claimed, before the run's events. (jid, the state results or errors, retcode)."""
    _check_pillar(pillar)
    run_opts = _run_opts(opts, saltenv, test, pillarenv)
    master_id = str(opts.get("id") or "master")
    full_fun = f"runner.{fun}"
    # from the command line, a jid reads as a number
    cache, jid = open_job(opts, str(jid) if jid else gen_jid(), full_fun, fun_args, user)
    if on_job is not None:
        on_job(jid)
    sender = EventSender(run_opts, name="master")
    new = run_new(full_fun, [*fun_args, {"orchestration_jid": jid}], jid, user)  # as salt-run calls it
    sender.fire(f"salt/run/{jid}/new", new)
    try:
        running = _in_session(run_opts, jid, pillar, user, sender, body)
        retcode = 0 if check_result(running) else 1
        answer = {"data": {master_id: running}, "outputter": "highstate", "retcode": retcode}
        if cache is not None:
            cache.save_return(jid, master_id, {"return": answer, "success": retcode == 0, "retcode": retcode})
        sender.fire(f"salt/run/{jid}/ret", run_ret(new, answer, retcode == 0))
    finally:
        sender.close()
        if cache is not None:
            cache.close(10.0)
    return jid, running, retcode


def open_job(
    opts: dict[str, Any], jid: str, fun: str, fun_args: list[Any], user: str | None
) -> tuple[JobCache | None, str]:
    """The runner job's row in the master's job cache (``briny-run jobs.lookup_jid <jid>`` finds it
    from the start of the run), under ``jid`` or, when a master sharing the job cache holds that
    one, a new one (:func:`~briny.master.jobcache.base.store_new_job_sync`): (the open cache, where
    the return goes, and the job's jid). A cache that cannot be written is logged, and the run
    goes on unrecorded: (None, ``jid``)."""
    from briny.master.jobcache import open_job_cache
    from briny.master.jobcache.base import store_new_job_sync

    master_id = str(opts.get("id") or "master")
    load = {"jid": jid, "fun": fun, "fun_args": fun_args, "arg": fun_args, "tgt": master_id, "user": user or "root"}
    try:
        cache = open_job_cache(opts)
    except (BrinyError, OSError) as exc:
        log.error("Could not store job cache info for %s (%s): job details for this run may be unavailable", jid, exc)
        return None, jid
    try:
        return cache, store_new_job_sync(cache, load, [master_id])
    except (BrinyError, OSError) as exc:
        log.error("Could not store job cache info for %s (%s): job details for this run may be unavailable", jid, exc)
        cache.close(10.0)
        return None, jid


def orchestrate(
    opts: dict[str, Any],
    mods: Any,
    saltenv: str | None = "base",
    test: Any = None,
    exclude: Any = None,
    pillar: Any = None,
    pillarenv: str | None = None,
    orchestration_jid: str | None = None,
    user: str | None = None,
    *,
    on_job: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the orchestration SLS ``mods`` (a name, a comma list or a list); Salt's runner answer
    (see the module docstring). ``on_job`` is told the run's jid once claimed (:func:`run_orchestration`).
    SaltInvocationError for a ``pillar`` that is not a dict."""
    names = split_input(mods, str)
    env_name = saltenv or str(opts.get("saltenv") or "base")

    def body(session: Session) -> Any:
        compiled = session.compiler().for_sls(names, env_name, split_input(exclude) or None)
        if compiled.errors:
            return [str(e) for e in compiled.errors]
        return session.run(compiled.chunks)

    _, running, retcode = run_orchestration(
        opts,
        "state.orchestrate",
        [mods],
        body,
        saltenv=saltenv,
        test=test,
        pillar=pillar,
        pillarenv=pillarenv,
        jid=orchestration_jid,
        user=user,
        on_job=on_job,
    )
    return {"data": {str(opts.get("id") or "master"): running}, "outputter": "highstate", "retcode": retcode}


def orchestrate_high(
    opts: dict[str, Any], data: Any, test: Any = None, pillar: Any = None, user: str | None = None
) -> dict[str, Any]:
    """Run the high data ``data`` (IDs to ``salt.*`` steps, requisites and all) as an orchestration:
    ``{master id: state results}``, as Salt's ``state.orchestrate_high``."""
    if not isinstance(data, dict):
        raise SaltInvocationError("Data must be a dictionary of state IDs (high data)")

    def body(session: Session) -> Any:
        high = {rid: _as_high(step, session.opts) for rid, step in data.items()}
        compiled = session.compiler().prepare(high)
        if compiled.errors:
            return [str(e) for e in compiled.errors]
        return session.run(compiled.chunks)

    _, running, _ = run_orchestration(opts, "state.orchestrate_high", [data], body, test=test, pillar=pillar, user=user)
    return {str(opts.get("id") or "master"): running}


def _as_high(step: Any, opts: dict[str, Any]) -> Any:
    if isinstance(step, dict):
        return {"__sls__": None, "__env__": opts.get("saltenv") or "base", **step}
    return step


def orchestrate_single(
    opts: dict[str, Any],
    fun: str,
    name: str,
    test: Any = None,
    pillar: Any = None,
    user: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run one state function (``salt.function``, ``salt.wheel``, ...) named ``name`` as an
    orchestration: ``{master id: state result}``, as Salt's ``state.orchestrate_single``."""
    comps = str(fun).split(".")

    def body(session: Session) -> Any:
        if len(comps) < 2:
            return "Invalid function passed"
        low = {k: v for k, v in kwargs.items() if not str(k).startswith("__")}
        low.update(
            state=comps[0],
            fun=comps[1],
            __id__=name,
            name=name,
            __sls__=None,
            __env__=session.opts.get("saltenv") or "base",
            order=10000,
        )
        return session.run([low])

    _, running, _ = run_orchestration(
        opts, "state.orchestrate_single", [fun, name], body, test=test, pillar=pillar, user=user
    )
    return {str(opts.get("id") or "master"): running}


def orchestrate_show_sls(
    opts: dict[str, Any],
    mods: Any,
    saltenv: str | None = "base",
    test: Any = None,
    pillar: Any = None,
    pillarenv: str | None = None,
) -> dict[str, Any]:
    """The high data of the orchestration SLS ``mods`` as the master renders it (nothing runs, no
    job): ``{master id: high data or render errors}``, as Salt's ``state.orchestrate_show_sls``."""
    _check_pillar(pillar)
    run_opts = _run_opts(opts, saltenv, test, pillarenv)
    names = split_input(mods, str)
    sender = EventSender(run_opts, name="master")
    try:
        shown = _in_session(
            run_opts,
            gen_jid(),
            pillar,
            None,
            sender,
            lambda session: session.compiler().show_sls(names, str(run_opts["saltenv"])),
        )
    finally:
        sender.close()
    if isinstance(shown, dict):  # rendered high data is ordered (Salt's outputters keep its order)
        shown = OrderedDict((rid, OrderedDict(b) if isinstance(b, dict) else b) for rid, b in shown.items())
    return {str(opts.get("id") or "master"): shown}
