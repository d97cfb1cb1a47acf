"""The ``state`` execution module: compile and apply states on this host.

Runs on the host applying states (``briny-call``, the minion's job
workers). It is a thin shell: :mod:`briny.common.state.compiler` turns the tree
into chunks and :mod:`briny.common.state.engine` runs them. Functions:

- ``show_top``, ``show_highstate``, ``show_lowstate``, ``show_sls``,
  ``show_low_sls``: what would run, without running it;
- ``apply`` (highstate when no SLS is named), ``highstate``, ``sls``,
  ``single``, ``low``: run states; ``test=True`` for a dry run,
  ``saltenv=``, ``pillar={...}`` to override pillar, ``exclude=``;
- ``running``: state runs in progress on this host.

Compile errors come back as a list of strings and nothing runs; the call
then sets ``__context__["retcode"]`` to 1, a failed state to 2.
"""

from __future__ import annotations

import copy
import logging
from typing import TYPE_CHECKING, Any

from briny.common import fileclient, loader
from briny.common.args import split_input
from briny.common.state.compiler import StateCompiler, no_states_result
from briny.common.exceptions import InvalidArguments, SaltInvocationError
from briny.common.jid import gen_jid
from briny.common.pillar import EX_PILLAR_FAILURE, pillar_errors, with_override
from briny.common.state.stages import RenderEnv

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __grains__, __job__, __opts__, __pillar__, __salt__


log = logging.getLogger(__name__)

__func_alias__ = {"apply_": "apply"}

EX_STATE_COMPILER_ERROR = 1
EX_STATE_FAILURE = 2


# -- helpers -----------------------------------------------------------------


def _run_opts(test: Any = None, saltenv: Any = None, kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    opts = dict(__opts__)
    if test is not None:
        opts["test"] = bool(test)
    elif kwargs and "test" in kwargs:
        opts["test"] = bool(kwargs["test"])
    if saltenv:
        opts["saltenv"] = str(saltenv)
    if kwargs and kwargs.get("pillarenv"):
        opts["pillarenv"] = kwargs["pillarenv"]
    return opts


def _pillar(opts: dict[str, Any], override: Any) -> dict[str, Any]:
    if override is None:
        return __pillar__
    if not isinstance(override, dict):
        raise SaltInvocationError("Pillar data must be formatted as a dictionary, unless pillar_enc is specified.")
    compile_pillar = __job__.compile_pillar
    if callable(compile_pillar):
        return compile_pillar(override)
    return with_override(__pillar__, override)


def _compiler(opts: dict[str, Any], pillar: dict[str, Any]) -> tuple[StateCompiler, Any]:
    salt = loader.minion_mods(opts, __grains__, pillar, job=__job__)
    env = RenderEnv(
        opts=opts, client=fileclient.get_client(__opts__, __job__), salt=salt, grains=__grains__, pillar=pillar
    )
    return StateCompiler(env), salt


def _compile_errors(errors: list[Any]) -> list[Any]:
    __context__["retcode"] = EX_STATE_COMPILER_ERROR
    return errors


def _pillar_errors(pillar: dict[str, Any], kwargs: dict[str, Any]) -> list[str] | None:
    errors = pillar_errors(pillar, bool(kwargs.get("force")))
    if errors is not None:
        __context__["retcode"] = EX_PILLAR_FAILURE
    return errors


def _execute(
    chunks: list[dict[str, Any]], opts: dict[str, Any], salt: loader.LazyLoader, kwargs: dict[str, Any]
) -> dict[str, Any]:
    from briny.common.state.engine import run_low_chunks
    from briny.common.state.runcontext import RunContext

    jid = kwargs.get("__pub_jid") or gen_jid()
    states = loader.states(opts, salt)
    fire = __job__.fire_event
    sink = None
    progress = None
    run_opts = opts
    if fire is None:
        sink = fire = _LazyEventSender(opts)
    elif __job__.progress is not None and not opts.get("state_events"):
        # a job started by `briny` on a terminal: light, rate-limited progress events (the daemon's)
        progress = fire = __job__.progress(fire)
        run_opts = {**opts, "state_events": True}
    try:
        ret = run_low_chunks(chunks, RunContext.from_opts(run_opts, salt, states, jid=jid, fire_event=fire))
    finally:
        if progress is not None:
            progress.flush()
        if sink is not None:
            sink.close()
    # Salt's check_result: no result at all (an SLS that renders to nothing) is a failure too
    if not ret or any(isinstance(r, dict) and r.get("result") is False for r in ret.values()):
        __context__["retcode"] = EX_STATE_FAILURE
    return ret


class _LazyEventSender:
    """Sends ``fire_event`` events to this host's event bus; connects on first use."""

    def __init__(self, opts: dict[str, Any]) -> None:
        self.opts = opts
        self.sender: Any = None

    def __call__(self, tag: str, data: dict[str, Any]) -> None:
        if self.sender is None:
            from briny.common.event import EventSender

            self.sender = EventSender(self.opts)
        self.sender.fire(tag, data)

    def close(self) -> None:
        if self.sender is not None:
            self.sender.close()


def _prepared(test: Any, kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    opts = _run_opts(test, kwargs.get("saltenv"), kwargs)
    return opts, _pillar(opts, kwargs.get("pillar"))


# -- what would run ----------------------------------------------------------


def _no_pillar(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``show_top`` and ``show_lowstate`` ignore a command-line ``pillar=``, as Salt's do."""
    return {k: v for k, v in kwargs.items() if k != "pillar"}


def show_top(**kwargs: Any) -> Any:
    """The top file matches for this host: ``{saltenv: [sls, ...]}``."""
    conflict = _conflict(kwargs)
    if conflict:
        return conflict
    opts, pillar = _prepared(None, _no_pillar(kwargs))
    result = _compiler(opts, pillar)[0].show_top()
    return _compile_errors(result) if isinstance(result, list) else result


def show_highstate(**kwargs: Any) -> Any:
    """The high data of this host's highstate, before extends are applied."""
    conflict = _conflict(kwargs)
    if conflict:
        return conflict
    opts, pillar = _prepared(None, kwargs)
    errs = _pillar_errors(pillar, kwargs)
    if errs:
        return errs
    result = _compiler(opts, pillar)[0].show_highstate()
    return _compile_errors(result) if isinstance(result, list) else result


def show_lowstate(**kwargs: Any) -> Any:
    """The low chunks this host's highstate would run, in order.

    As in Salt, an error list comes back without a failing exit status.
    """
    conflict = _conflict(kwargs)
    if conflict:
        return conflict
    opts, pillar = _prepared(None, _no_pillar(kwargs))
    errs = _pillar_errors(pillar, kwargs)
    if errs:
        return errs
    return _compiler(opts, pillar)[0].show_lowstate()


def show_sls(mods: Any, test: Any = None, **kwargs: Any) -> Any:
    """The high data of the named SLS (comma list), before extends are applied."""
    conflict = _conflict(kwargs)
    if conflict:
        return conflict
    opts, pillar = _prepared(test, kwargs)
    saltenv = opts.get("saltenv") or "base"
    result = _compiler(opts, pillar)[0].show_sls(split_input(mods, str), saltenv)
    return _compile_errors(result) if isinstance(result, list) else result


def show_low_sls(mods: Any, test: Any = None, **kwargs: Any) -> Any:
    """The low chunks of the named SLS as written (no extend, no ``_in``)."""
    conflict = _conflict(kwargs)
    if conflict:
        return conflict
    opts, pillar = _prepared(test, kwargs)
    saltenv = opts.get("saltenv") or "base"
    result = _compiler(opts, pillar)[0].show_low_sls(split_input(mods, str), saltenv)
    if result and all(isinstance(r, str) for r in result):
        return _compile_errors(result)
    return result


def sls_exists(mods: Any, test: Any = None, **kwargs: Any) -> bool:
    """True when every named SLS renders."""
    return isinstance(show_sls(mods, test, **kwargs), dict)


# -- running -----------------------------------------------------------------


def _begin(
    test: Any, kwargs: dict[str, Any], highstate: bool, sync_mods: Any = None
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """What ``sls`` and ``highstate`` do first: (their answer when it is already known, opts,
    pillar). The answer is a refused argument, another state run's refusal, the run of the
    master's compile, or the pillar's errors; None when the run compiles here. ``sync_mods`` are
    synced before anything is compiled or loaded."""
    refused = _refused_arguments(kwargs)
    if refused:
        __context__["retcode"] = EX_STATE_COMPILER_ERROR
        return refused, {}, {}
    conflict = _conflict(kwargs)
    if conflict:
        return conflict, {}, {}
    opts, pillar = _prepared(test, kwargs)
    _sync_mods(sync_mods, opts)
    pre = _take_compiled()
    if pre is not None:
        return _run_compiled(pre, opts, pillar, kwargs, highstate=highstate), opts, pillar
    return _pillar_errors(pillar, kwargs), opts, pillar


def sls(mods: Any, test: Any = None, exclude: Any = None, *, sync_mods: Any = None, **kwargs: Any) -> Any:
    """Apply the named SLS (a comma list) from ``saltenv`` (default base); ``queue=True`` waits
    for a state run in progress instead of refusing to start. Custom modules are those synced
    already; ``sync_mods`` (``states,modules``, ``all``) syncs those kinds first, as Salt's."""
    answer, opts, pillar = _begin(test, kwargs, highstate=False, sync_mods=sync_mods)
    if answer is not None:
        return answer
    compiler, salt = _compiler(opts, pillar)
    compiled = compiler.for_sls(split_input(mods, str), opts.get("saltenv") or "base", split_input(exclude) or None)
    if compiled.errors:
        return _compile_errors(compiled.errors)
    return _execute(compiled.chunks, opts, salt, kwargs)


def sls_id(id_: Any, mods: Any, test: Any = None, queue: Any = None, **kwargs: Any) -> Any:
    """Run the states of one ID (``id_``) of the named SLS (a comma list), and what they require,
    watch, ... (their requisites, pulled as a run of the whole SLS would pull them); nothing else
    of the SLS runs. An ID the SLS do not hold is refused with Salt's words."""
    if queue is not None:
        kwargs["queue"] = queue
    answer, opts, pillar = _begin(test, kwargs, highstate=False)
    if answer is not None:
        return answer
    compiler, salt = _compiler(opts, pillar)
    saltenv = opts.get("saltenv") or "base"
    names = split_input(mods, str)
    compiled = compiler.for_sls(names, saltenv, None)
    if compiled.errors:
        return _compile_errors(compiled.errors)
    chunks = compiled.chunks
    wanted = {i for i, low in enumerate(chunks) if str(low.get("__id__")) == str(id_)}
    if not wanted:
        raise InvalidArguments(f"No matches for ID '{id_}' found in SLS '{','.join(names)}' within saltenv '{saltenv}'")
    return _execute([chunks[i] for i in sorted(_with_requisites(chunks, wanted))], opts, salt, kwargs)


def _with_requisites(chunks: list[dict[str, Any]], wanted: set[int]) -> set[int]:
    """``wanted`` and every chunk they reach through their requisites, transitively."""
    from briny.common.state.requisites import DependencyGraph

    graph = DependencyGraph(chunks)
    found, todo = set(wanted), list(wanted)
    while todo:
        for targets in graph.deps[todo.pop()].by_kind.values():
            for target in targets:
                if target not in found:
                    found.add(target)
                    todo.append(target)
    return found


def highstate(test: Any = None, exclude: Any = None, **kwargs: Any) -> Any:
    """Apply everything the top file gives this host."""
    answer, opts, pillar = _begin(test, kwargs, highstate=True)
    if answer is not None:
        return answer
    _sync_custom(opts)
    compiler, salt = _compiler(opts, pillar)
    compiled = compiler.for_highstate(split_input(exclude) or None)
    if compiled.no_states:
        __context__["retcode"] = EX_STATE_COMPILER_ERROR
        return no_states_result(compiled.no_states)
    if compiled.errors:
        return _compile_errors(compiled.errors)
    return _execute(compiled.chunks, opts, salt, kwargs)


def _take_compiled() -> dict[str, Any] | None:
    """The master's compile of this job (``__job__.compiled``, set by the executor from the
    publish), taken once: a nested state run (``module.run: state.sls``) compiles for itself."""
    return __job__.take_compiled()


def _sync_custom(opts: dict[str, Any]) -> None:
    """Before a highstate: ``saltutil.sync_all`` from the file roots (the master's, or this
    host's masterless; Salt's ``autoload_dynamic_modules``), so custom
    ``_modules``/``_states``/``_grains`` are here. A ``state.sls`` syncs only with ``sync_mods``."""
    if (
        not opts.get("extension_modules")
        or not opts.get("autoload_dynamic_modules", True)
        or (opts.get("file_client") != "local" and __job__.master is None)
    ):
        return
    try:
        synced = __salt__["saltutil.sync_all"](saltenv=opts.get("saltenv") or None, refresh=False)
        if isinstance(synced, dict) and synced.get("grains"):
            __salt__["saltutil.refresh_grains"]()
    except Exception as exc:  # noqa: BLE001 - a failed sync must not stop the run: the modules already here serve
        log.warning("syncing custom modules before the highstate failed: %s", exc)


def _sync_mods(sync_mods: Any, opts: dict[str, Any]) -> None:
    """``sync_mods=`` of ``state.sls`` / ``state.apply`` with SLS (Salt's): ``saltutil.sync_<kind>``
    of each kind named (a comma list; ``all`` or True: ``sync_all``) before the run, from the
    run's saltenv; an unknown kind is named in a warning (Salt's words) and skipped."""
    if sync_mods is None or sync_mods is False:
        return
    kinds = ["all"] if sync_mods is True else [str(k) for k in split_input(sync_mods)]
    if "all" in kinds:
        kinds = ["all"]
    for kind in kinds:
        fun = f"saltutil.sync_{kind}"
        if fun not in __salt__:
            log.warning("Invalid custom module type '%s', ignoring", kind)
            continue
        __salt__[fun](saltenv=opts.get("saltenv") or "base")  # grains synced: refreshed by the sync


def _run_compiled(
    pre: dict[str, Any], opts: dict[str, Any], pillar: dict[str, Any], kwargs: dict[str, Any], highstate: bool
) -> Any:
    """Run what the master compiled for this job: its chunks, or its errors as the result."""
    if pre.get("errors") is not None:
        __context__["retcode"] = int(pre.get("retcode") or EX_STATE_COMPILER_ERROR)
        return list(pre["errors"])
    if pre.get("no_states") is not None:
        __context__["retcode"] = EX_STATE_COMPILER_ERROR
        return no_states_result(str(pre["no_states"]))
    if highstate:
        _sync_custom(opts)
    salt = loader.minion_mods(opts, __grains__, pillar, job=__job__)
    return _execute(list(pre.get("chunks") or []), opts, salt, kwargs)


def apply_(mods: Any = None, **kwargs: Any) -> Any:
    """``state.sls`` when SLS are named, else ``state.highstate``."""
    if mods:
        return sls(mods, **kwargs)
    return highstate(**kwargs)


def single(fun: str, name: str, test: Any = None, **kwargs: Any) -> Any:
    """Run one state function: ``state.single file.managed /etc/x contents=hi``."""
    conflict = _conflict(kwargs)
    if conflict:
        return conflict
    comps = str(fun).split(".")
    if len(comps) < 2:
        __context__["retcode"] = EX_STATE_COMPILER_ERROR
        return "Invalid function passed"
    opts, pillar = _prepared(test, kwargs)
    compiler, salt = _compiler(opts, pillar)
    low = {k: v for k, v in kwargs.items() if not k.startswith("__") and k not in ("saltenv", "pillar", "test")}
    low.update(
        {
            "state": comps[0],
            "fun": comps[1],
            "__id__": name,
            "name": name,
            "__sls__": None,
            "__env__": opts.get("saltenv") or "base",
            "order": 10000,
        }
    )
    return _execute([low], opts, salt, kwargs)


def low(data: dict[str, Any], test: Any = None, **kwargs: Any) -> Any:
    """Run one low chunk given as a dict."""
    conflict = _conflict(kwargs)
    if conflict:
        return conflict
    if not isinstance(data, dict) or not {"state", "fun"} <= set(data):
        __context__["retcode"] = EX_STATE_COMPILER_ERROR
        return ["Low data needs at least 'state', 'fun' and 'name'"]
    chunk = copy.deepcopy(data)
    chunk.setdefault("name", chunk.get("__id__"))
    chunk.setdefault("__id__", chunk["name"])
    chunk.setdefault("order", 10000)
    opts, pillar = _prepared(test, kwargs)
    salt = _compiler(opts, pillar)[1]
    return _execute([chunk], opts, salt, kwargs)


def _jid_time(jid: Any) -> str:
    """Salt's human form of a jid's time (``2026, Nov 21 06:00:48.730098``); "" for another form."""
    text = str(jid)
    if len(text) != 20 or not text.isdigit():
        return ""
    import calendar

    month = int(text[4:6])
    name = calendar.month_abbr[month] if 1 <= month <= 12 else text[4:6]
    return f"{text[:4]}, {name} {text[6:8]} {text[8:10]}:{text[10:12]}:{text[12:14]}.{text[14:20]}"


QUEUE_POLL = 0.2  # seconds between looks at the running state jobs while queued (Salt: 1 s)


def _active(concurrent: bool = False) -> list[dict[str, Any]]:
    """The other state jobs in progress on this host (their proc records), as :func:`running`
    counts them."""
    if concurrent:
        return []
    me = __job__.jid or None
    registry = __job__.jobs
    jobs = registry.snapshot() if registry is not None else {}
    mine = jobs.get(me) if me else None
    found: list[dict[str, Any]] = [dict(d) for d in __salt__["saltutil.is_running"]("state.*")]
    seen = {str(d.get("jid")) for d in found}
    for jid, job in sorted(jobs.items()):
        if jid not in seen and jid != me and str(job.fun).startswith("state."):
            found.append({"jid": jid, "fun": job.fun, "pid": job.pid})
    result = []
    for data in found:
        jid = str(data.get("jid"))
        if jid == me:
            continue
        other = jobs.get(jid)
        if mine is not None and other is not None and (other.started, other.jid) > (mine.started, mine.jid):
            continue  # it started after this job: it will see this one and stand down
        result.append(data)
    return result


def running(concurrent: bool = False) -> list[str]:
    """Other state runs in progress on this host, as Salt words them; ``[]`` with ``concurrent``.

    Jobs come from ``saltutil.is_running("state.*")`` (the proc folder, checked
    against the minion's job registry) plus the registry's own ``state.*`` jobs
    whose proc file is not written yet. Of two jobs of this minion daemon that
    started together, the later one defers to the earlier one (so exactly one
    of them runs); a job the daemon did not start (``briny-call --local``)
    always counts.
    """
    return [
        f'The function "{d.get("fun")}" is running as PID {d.get("pid")} and was started at '
        f"{_jid_time(d.get('jid'))} with jid {d.get('jid')}"
        for d in _active(concurrent)
    ]


# Salt's state.sls / state.highstate arguments briny cannot honour: ignoring them would run the
# states for real (mock), with the wrong pillar (pillar_enc) or the wrong config (localconfig)
REFUSED_ARGUMENTS = {
    "mock": "mock runs; test=True shows what would change",
    "pillar_enc": "encrypted pillar overrides",
    "localconfig": "a config file of its own for one run",
}


def _refused_arguments(kwargs: dict[str, Any]) -> list[str] | None:
    """Salt's compile-error answer (a list of strings) naming each argument of
    :data:`REFUSED_ARGUMENTS` given; None when there is none. Nothing runs."""
    given = [key for key in REFUSED_ARGUMENTS if kwargs.get(key)]
    if not given:
        return None
    return [f"'{key}' is not supported by briny yet ({REFUSED_ARGUMENTS[key]}); no state was run" for key in given]


def _conflict(kwargs: dict[str, Any]) -> list[str] | None:
    """Salt's refusal of a second state run: the ``running`` list, retcode 1; None to go on.

    ``queue=True`` (or the ``state_queue`` option) waits instead until the state runs in
    progress and those queued before this one have ended, then goes on; ``queue=N`` waits only
    when fewer than N runs are ahead of this one, and is refused otherwise.
    """
    queue = kwargs.get("queue")
    if queue is None:
        queue = __opts__.get("state_queue", False)
    if queue is True or (isinstance(queue, int) and not isinstance(queue, bool)):
        if _wait(0 if queue is True else int(queue)):
            return None
    found = running(concurrent=bool(kwargs.get("concurrent", False)))
    if found:
        __context__["retcode"] = EX_STATE_COMPILER_ERROR
        return found
    return None


def _queue_dir() -> Any:
    from pathlib import Path

    return Path(str(__opts__.get("cachedir") or "")) / "state_queue"


def _ahead(me: str | None, queue_dir: Any) -> list[dict[str, Any]]:
    """The state jobs this one waits for: every one in progress, except those queued after it
    (a queued job has a marker ``state_queue/<jid>`` while it waits). Markers of jobs no longer
    running are removed."""
    active = _active()
    jids = {str(d.get("jid")) for d in active}
    if queue_dir.is_dir():
        for marker in queue_dir.iterdir():
            if not marker.name.startswith(".") and marker.name not in jids and marker.name != me:
                marker.unlink(missing_ok=True)  # left by a job killed while it waited
    return [
        d
        for d in active
        if not ((queue_dir / str(d.get("jid"))).exists() and me is not None and str(d.get("jid")) > me)
    ]


def _wait(max_queue: int) -> bool:
    """Wait until no state run is ahead of this job (True), or False at once when ``max_queue`` runs
    or more are ahead (Salt's ``queue=N``). Salt waits without a time limit; so does this."""
    import fcntl
    import time

    me = __job__.jid or None
    queue_dir = _queue_dir()
    queue_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    marker = queue_dir / me if me else None
    with open(queue_dir / ".lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            ahead = _ahead(me, queue_dir)
            if not ahead:
                return True
            if max_queue and len(ahead) >= max_queue:
                return False
            if marker is not None:
                marker.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
        log.info("state run %s queued behind %s", me, ", ".join(str(d.get("jid")) for d in ahead))
        try:
            while True:
                time.sleep(QUEUE_POLL)
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    if not _ahead(me, queue_dir):
                        if marker is not None:
                            marker.unlink(missing_ok=True)  # now it runs: later jobs wait for it
                        return True
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
        finally:
            if marker is not None:
                marker.unlink(missing_ok=True)
