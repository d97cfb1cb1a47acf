"""Calling one state function for the requisite engine, as Salt 3007 does.

Owns everything that happens to a single chunk once its requisites allow it
to run: the ``unless`` / ``onlyif`` / ``creates`` checks (or the module's
``mod_run_check``; the checks themselves are in the private sibling
:mod:`briny.common.state._state_checks`), ``__low__`` / ``__env__`` injection, argument binding,
test mode, exceptions turned into failed results, ``check_cmd`` (or
``mod_run_check_cmd``), ``retry``, ``reload_*``, run numbers and timing.
Plain code, no sockets; used by :mod:`briny.common.state.engine`.

Each call is logged as Salt logs it, at ``info``: ``Running state [NAME] at
time T``, ``Executing state MOD.FUN for [NAME]``, the outcome (the changes,
else the comment; at ``error`` when the state failed) and ``Completed state
[NAME] at time T (duration_in_ms=D)``. Nothing is formatted when ``info`` is
off, but for a failed state's outcome: it is logged at ``error`` whatever the
level, as Salt's ``format_log`` does (so the traceback of a state that raised,
which its comment carries, reaches the log at the default level).

``onlyif``/``unless`` commands and ``check_cmd`` run through ``cmd.retcode``
(never a shell of our own), with the options Salt passes: the state's
``cwd``, ``runas``, ``env``, ... for ``onlyif``/``unless`` (less
``cmd_opts_exclude``), none for ``check_cmd``.
"""

from __future__ import annotations

import datetime
import inspect
import logging
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import InvalidArguments, SaltInvocationError
from ._state_checks import run_check_cmd, run_checks
from .requisites import INTERNAL_KEYS, LowChunk, gen_tag
from .runcontext import Loader, RunContext
from ..badargs import invalid_keywords_message

log = logging.getLogger(__name__)

RETRY_DEFAULTS = {"until": True, "attempts": 2, "splay": 0, "interval": 30}
_RETRY_TYPES = {"until": bool, "attempts": int, "interval": int, "splay": int}


def now_local() -> datetime.datetime:
    return datetime.datetime.now(tz=datetime.UTC).astimezone()


def duration_ms(start: datetime.datetime, end: datetime.datetime) -> float:
    delta = end - start
    return (delta.days * 86400 * 1_000_000 + delta.seconds * 1_000_000 + delta.microseconds) / 1000.0


def fake_timing() -> dict[str, Any]:
    """``start_time``/``duration`` for results of states that did not run."""
    start = now_local()
    return {"start_time": start.time().isoformat(), "duration": duration_ms(start, now_local())}


def verify_retry(data: Any) -> dict[str, Any]:
    """Salt's retry validation: defaults 2 attempts / until True / 30 s / no splay."""
    if isinstance(data, dict):
        out = {}
        for key, typ in _RETRY_TYPES.items():
            val = data.get(key, RETRY_DEFAULTS[key])
            if not isinstance(val, typ) or (typ is int and isinstance(val, bool)):
                log.warning("Invalid retry %s %r, using %r", key, val, RETRY_DEFAULTS[key])
                val = RETRY_DEFAULTS[key]
            out[key] = val
        return out
    if data is False:
        return {"until": True, "attempts": 0, "splay": 0, "interval": 30}
    return dict(RETRY_DEFAULTS)


@dataclass
class RunState:
    """What one run's calls share: its context (:class:`~briny.common.state.runcontext.RunContext`: the
    loaders, the test flag, the job), its chunks, the results so far, the run numbers."""

    ctx: RunContext
    chunks: list[LowChunk]
    running: dict[str, dict[str, Any]] = field(default_factory=dict)
    run_num: int = 0
    mod_init: set[str] = field(default_factory=set)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)  # between retries (tests record it)
    randint: Callable[[int, int], int] = field(default=random.randint, repr=False)  # a retry's splay
    _sig_cache: dict[Any, inspect.Signature | None] = field(default_factory=dict)

    def for_thread(self) -> "RunState":
        """What a ``parallel`` state's thread calls through: a context of its own (its own loaders:
        its modules' dunders, a prereq check's test mode and a module reload cannot cross between
        it and the main thread), the results so far as they are now (its ``__running__``); run
        numbers are the caller's to give."""
        return RunState(ctx=self.ctx.for_thread(), chunks=self.chunks, running=dict(self.running))

    def next_run_num(self) -> int:
        n = self.run_num
        self.run_num += 1
        return n

    @property
    def salt(self) -> Loader:
        return self.ctx.salt

    @property
    def states(self) -> Loader:
        return self.ctx.states

    @property
    def test(self) -> bool:
        return self.ctx.test

    # -- helpers -----------------------------------------------------------
    def retcode(self, cmd: str, **opts: Any) -> int:
        """``cmd.retcode`` through ``__salt__`` (a shell command, its exit status not logged as an
        error), as Salt runs ``onlyif``/``unless``/``check_cmd`` commands: with ``runas``,
        ``env``, ``cwd``... honoured by ``cmd`` itself."""
        rc = int(self.ctx.salt["cmd.retcode"](cmd, ignore_retcode=True, python_shell=True, **opts))
        log.debug("Last command return code: %s", rc)
        return rc

    def inject(self, state: str, dunders: dict[str, Any]) -> None:
        """Set a call's dunders (``__low__``, ``__env__``, ...) on the state module ``state`` and the
        private files it imported (:meth:`briny.common.loader.LazyLoader.inject`)."""
        self.ctx.states.inject(state, dunders)

    def forget_modules(self) -> None:
        self._sig_cache.clear()

    def signature(self, func: Callable[..., Any]) -> inspect.Signature | None:
        if func not in self._sig_cache:
            try:
                self._sig_cache[func] = inspect.signature(func)
            except (TypeError, ValueError):
                self._sig_cache[func] = None
        return self._sig_cache[func]


# --------------------------------------------------------------------------
# calling
# --------------------------------------------------------------------------


def bind_args(
    run: RunState, func: Callable[..., Any], low: LowChunk, full: str = ""
) -> tuple[list[Any], dict[str, Any]]:
    """Salt's ``format_call``: positional from the chunk, defaults kept, the rest to ``**kwargs``.

    A function without ``**kwargs`` given a keyword it does not take raises
    :class:`SaltInvocationError` in Salt's words (Salt aborts the whole run with it;
    :func:`_invoke` fails that one state). Keys the state system itself sets
    (requisites, ``onlyif``, ``__sls__`` ...: :data:`INTERNAL_KEYS`) are never extra.
    """
    sig = run.signature(func)
    if sig is None:
        return [], {k: v for k, v in low.items() if k not in INTERNAL_KEYS}
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    used: set[str] = set()
    missing: list[str] = []
    has_var_kw = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            has_var_kw = True
            continue
        if p.kind is p.VAR_POSITIONAL:
            continue
        if p.name in low:
            used.add(p.name)
            if p.default is p.empty and p.kind is not p.KEYWORD_ONLY:
                args.append(low[p.name])
            else:
                kwargs[p.name] = low[p.name]
        elif p.default is p.empty:
            missing.append(p.name)
    if missing:
        given = len(args)
        total = given + len(missing)
        raise SaltInvocationError(
            f"{getattr(func, '__name__', 'state')} takes at least {total} argument"
            f"{'s' if total > 1 else ''} ({given} given)"
        )
    extra = [k for k in low if k not in used and k not in INTERNAL_KEYS]
    if has_var_kw:
        kwargs.update((k, low[k]) for k in extra)
    elif extra:
        raise InvalidArguments(invalid_keywords_message(full or getattr(func, "__name__", "state"), extra))
    return args, kwargs


def _inject(run: RunState, low: LowChunk) -> None:
    env = low.get("saltenv") or low.get("__env__") or "base"
    run.inject(
        low["state"], {"__low__": low, "__env__": str(env), "__running__": run.running, "__lowstate__": run.chunks}
    )


def _exception_ret(low: LowChunk) -> dict[str, Any]:
    trb = traceback.format_exc()
    return {
        "result": False,
        "name": low.get("name", low.get("__id__")),
        "changes": {},
        "comment": f"An exception occurred in this state: {trb}",
    }


def _call_function(run: RunState, low: LowChunk, full: str) -> dict[str, Any]:
    """The state function itself. Keywords it does not take fail this state in Salt's words
    (Salt aborts the whole run with them)."""
    func = run.states[full]
    try:
        args, kwargs = bind_args(run, func, low, full)
    except InvalidArguments as exc:
        log.error("State %s: %s", full, exc)
        return {"result": False, "name": low["name"], "changes": {}, "comment": str(exc)}
    _inject(run, low)
    return unify_return(func(*args, **kwargs), low)


def _shape_error(ret: Any) -> str | None:
    """What Salt's state return check (``content_check``) says of ``ret``, or None when it is fine."""
    if not isinstance(ret, dict):
        return "Malformed state return. Data must be a dictionary type."
    if not isinstance(ret.get("changes"), dict):
        return "'Changes' should be a dictionary."
    missing = [key for key in ("name", "result", "changes", "comment") if key not in ret]
    if missing:
        return f"The following keys were not present in the state return: {', '.join(missing)}."
    return None


def unify_return(ret: Any, low: LowChunk, need_name: bool = True) -> dict[str, Any]:
    """A state function's return as Salt's state system checks and evens it out: a return that is
    not a dict with ``name``, ``result``, ``changes`` (a dict) and ``comment`` fails the state
    (``An exception occurred in this state: The following keys were not present in the state
    return: comment.``), a comment given as a list is joined with newlines, a result other than
    None becomes a bool. ``need_name`` False: a ``sub_state_run`` entry, named by its ``low``."""
    probe = ret if need_name or not isinstance(ret, dict) else {"name": None, **ret}
    err = _shape_error(probe)
    if err is not None:
        log.error("State %s.%s returned malformed data: %s", low.get("state"), low.get("fun"), err)
        out: dict[str, Any] = {
            "result": False,
            "name": low.get("name"),
            "changes": {},
            "comment": f"An exception occurred in this state: {err}",
        }
        if isinstance(ret, dict) and "sub_state_run" in ret:
            out["sub_state_run"] = ret["sub_state_run"]
        return out
    checked: dict[str, Any] = ret  # a dict with Salt's four keys (_shape_error)
    if isinstance(checked.get("comment"), list):
        checked["comment"] = "\n".join(str(c) for c in checked["comment"])
    if checked.get("result") is not None:
        checked["result"] = bool(checked["result"])
    return checked


def sub_state_results(run: RunState, low: LowChunk, ret: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The ``sub_state_run`` entries of a state's return (taken out of it) as results of their own,
    as Salt shows them: keyed by their ``low`` (``state``, ``__id__``, ``name``, ``fun``), with
    their ``changes``, ``result``, ``comment`` (and ``duration``/``start_time`` when given), the
    parent's ``name``, ``__sls__`` and ``__id__``, and the next run numbers.

    Salt 3007 requires a ``name`` at the top of each entry (the documented form has none, and
    Salt then fails with a KeyError); briny takes it from the entry's ``low``. Salt also numbers
    the entries from one past the next free run number, so the state after them shares a number
    with the last one; briny numbers them in order. An entry without a usable ``low`` cannot be
    shown as a state: the parent fails, naming it.
    """
    entries = ret.pop("sub_state_run", None)
    if not entries:
        return []
    out: list[tuple[str, dict[str, Any]]] = []
    bad: list[str] = []
    if not isinstance(entries, (list, tuple)):
        entries, bad = [], ["sub_state_run is not a list"]
    for num, entry in enumerate(entries):
        sub_low = entry.get("low") if isinstance(entry, dict) else None
        if not isinstance(sub_low, dict) or any(k not in sub_low for k in ("state", "__id__", "name", "fun")):
            bad.append(f"sub_state_run entry {num} has no low data with state, __id__, name and fun")
            continue
        entry = unify_return(entry, sub_low, need_name=False)
        timing = fake_timing()
        sub: dict[str, Any] = {
            "name": sub_low["name"],
            "changes": entry["changes"],
            "result": entry["result"],
            "duration": entry.get("duration", timing["duration"]),
            "start_time": entry.get("start_time", timing["start_time"]),
            "comment": entry.get("comment", ""),
            "__state_ran__": True,
            "__run_num__": run.next_run_num(),
        }
        for key in ("__sls__", "__id__", "name"):
            sub[key] = low.get(key)
        out.append((gen_tag(sub_low), sub))
    if bad:
        log.error("State %s.%s returned malformed sub_state_run data: %s", low["state"], low["fun"], "; ".join(bad))
        ret["result"] = False
        ret["comment"] = "\n".join([str(ret.get("comment") or ""), *bad]).strip("\n")
    return out


def _invoke(run: RunState, low: LowChunk, prereq: bool) -> dict[str, Any]:
    """One attempt: checks, the function, check_cmd — without numbering. A prereq check runs in
    the run's context made test (:meth:`RunContext.for_prereq`): its modules see it."""
    if not prereq:
        return _attempt(run, low)
    with run.ctx.for_prereq().modules_view():
        return _attempt(run, low)


def _attempt(run: RunState, low: LowChunk) -> dict[str, Any]:
    full = f"{low['state']}.{low['fun']}"
    ret: dict[str, Any] = {"result": False, "name": low["name"], "changes": {}}
    try:
        if any(k in low for k in ("unless", "onlyif", "creates")) and f"{low['state']}.mod_run_check" not in run.states:
            ret.update(run_checks(run, low))
        if ret.get("result") is False:
            ret = _call_function(run, low, full)
        if "check_cmd" in low:
            func = run.states[full]
            sig = run.signature(func)
            if (
                f"{low['state']}.mod_run_check_cmd" not in run.states
                or sig is None
                or "check_cmd" not in sig.parameters
            ):
                ret.update(run_check_cmd(run, low))
    except Exception as exc:  # a state's own failure becomes its result, as in Salt
        log.debug("An exception occurred in this state: %s", exc, exc_info=True)
        ret = _exception_ret(low)
    ret.setdefault("changes", {})
    ret.setdefault("comment", "")
    ret.setdefault("name", low["name"])
    return ret


def _refresh(run: RunState, low: LowChunk, ret: dict[str, Any]) -> None:
    """``reload_modules`` / ``reload_grains`` / ``reload_pillar`` and Salt's automatic refreshes."""
    forced = bool(low.get("reload_grains") or low.get("reload_pillar"))
    changed = bool(ret.get("changes"))
    auto = changed and (
        low["state"] in ("pkg", "ports", "pip")
        or (
            low["state"] == "file"
            and (
                (low["fun"] == "managed" and str(low["name"]).endswith((".py", ".pyx", ".pyo", ".pyc", ".so")))
                or low["fun"] == "recurse"
                or (low["fun"] == "symlink" and "bin" in str(low["name"]))
            )
        )
    )
    if (changed and (low.get("reload_modules") or forced)) or auto or (not changed and low.get("force_reload_modules")):
        log.debug("Refreshing modules after %s", low["__id__"])
        run.salt.reload()
        run.states.reload()
        run.forget_modules()


def verify_data(run: RunState, low: LowChunk) -> list[str]:
    """Salt's ``verify_data`` before a call: the name is a string, the function exists, and
    every parameter without a default is given (``Missing parameter link for state
    alternatives.install``). Any error fails the state unrun, each on a line of its comment."""
    errors: list[str] = []
    name = low.get("name")
    if name and not isinstance(name, str):
        where = f"in SLS '{low['__sls__']}' " if "__sls__" in low else ""
        errors.append(f"ID '{name}' {where}is not formed as a string, but is a {type(name).__name__}")
        return errors
    full = f"{low['state']}.{low['fun']}"
    if full not in run.states:
        if "__sls__" not in low:
            return [f"Specified state '{full}' was not found"]
        errors.append(f"State '{full}' was not found in SLS '{low.get('__sls__')}'")
        reason = run.states.missing_message(full)
        if reason:
            errors.append(f"Reason: {reason}")
        return errors
    sig = run.signature(run.states[full])
    if sig is not None:
        for p in sig.parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty and p.name not in low:
                errors.append(f"Missing parameter {p.name} for state {full}")
    return errors


def call_state(run: RunState, low: LowChunk, *, prereq: bool = False) -> dict[str, Any]:
    """Run one chunk's function the way Salt's ``State.call`` does, retries included.

    With ``prereq`` the call is a test run for a ``prereq`` check: no run
    number, no timing, no retry.
    """
    errors = verify_data(run, low)
    if errors:
        bad = {"result": False, "name": low["name"], "changes": {}, "comment": "".join(f"{e}\n" for e in errors)}
        if not prereq:  # Salt returns this one without __sls__, __id__ or timing
            bad["__run_num__"] = run.next_run_num()
        return bad
    attempts: list[tuple[dict[str, Any], float]] = []
    retry = verify_retry(low["retry"]) if "retry" in low and not prereq else None
    logging_on = not prereq and log.isEnabledFor(logging.INFO)
    while True:
        start = now_local()
        if logging_on:
            log.info("Running state [%s] at time %s", low["name"], start.time().isoformat())
            log.info("Executing state %s.%s for [%s]", low["state"], low["fun"], low["name"])
        ret = _invoke(run, low, prereq)
        if prereq:
            return ret
        ret["__sls__"] = low.get("__sls__")
        ret["__run_num__"] = run.next_run_num()
        _refresh(run, low, ret)
        end = now_local()
        ret["start_time"] = start.time().isoformat()
        ret["duration"] = duration_ms(start, end)
        ret["__id__"] = low["__id__"]
        if logging_on or ret["result"] is False:
            log_outcome(ret)  # a failure at error whatever the level, as Salt: its traceback too
        if logging_on:
            log.info(
                "Completed state [%s] at time %s (duration_in_ms=%s)",
                low["name"],
                end.time().isoformat(),
                round(ret["duration"], 3),
            )
        interval: float = 0
        if retry and not run.test and retry["until"] != ret["result"] and retry["attempts"] > len(attempts) + 1:
            interval = retry["interval"] + (run.randint(0, retry["splay"]) if retry["splay"] else 0)
            attempts.append((ret, interval))
            log.info("State result does not match retry until value, state will be re-run in %s seconds", interval)
            run.sleep(interval)
            continue
        break
    if retry and run.test:
        ret["comment"] = "  ".join(
            [
                str(ret["comment"]) if ret["comment"] else "",
                "The state would be retried every {interval} seconds (with a splay of up to {splay} seconds) "
                "a maximum of {attempts} times or until a result of {until} is returned".format(**retry),
            ]
        )
    elif attempts:
        comment = ret["comment"] if ret["comment"] else ""
        total = ret["duration"]
        for num in range(len(attempts), 0, -1):
            prev, interval = attempts[num - 1]
            comment = "\n".join(
                [
                    f'Attempt {num}: Returned a result of "{prev["result"]}", '
                    f'with the following comment: "{prev["comment"]}"',
                    comment,
                ]
            )
            total += prev["duration"] + interval * 1000
        ret["comment"] = comment
        ret["duration"] = total
        ret["start_time"] = attempts[0][0]["start_time"]
    return ret


def log_outcome(ret: dict[str, Any]) -> None:
    """Salt's line about what a state did: a file diff, each ``old``/``new`` change, the other
    changes as they are, or the comment; at ``error`` when the state failed."""
    changes = ret.get("changes")
    if isinstance(changes, dict) and changes:
        if "diff" in changes:
            msg = f"File changed:\n{changes['diff']}"
        else:
            lines = [
                f"'{key}' changed from '{val['old']}' to '{val['new']}'"
                for key, val in changes.items()
                if isinstance(val, dict) and "old" in val and "new" in val
            ]
            msg = "Made the following changes:\n" + "\n".join(lines) + "\n" if lines else str(changes)
    else:
        msg = str(ret.get("comment", ""))
    log.log(logging.ERROR if ret.get("result") is False else logging.INFO, "%s", msg)


def mod_init(run: RunState, low: LowChunk) -> None:
    """Call ``<module>.mod_init(low)`` once per module per run (until it returns True)."""
    state = low["state"]
    if state in run.mod_init:
        return
    key = f"{state}.mod_init"
    if key not in run.states:
        run.mod_init.add(state)  # nothing to call, ever
        return
    try:
        if run.states[key](low):
            run.mod_init.add(state)
    except Exception:  # a broken mod_init must not stop the run
        log.exception("mod_init of %s failed", state)
