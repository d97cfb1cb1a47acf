"""Reactions: one compiled reactor chunk read in Salt 3007's forms, and how each kind runs.

Runs in the reactor's worker threads (:mod:`briny.master.reactor`). Pure
reading (:func:`parse_reaction`: chunk in, :class:`Reaction` out) and thin
running (:class:`Reactions`), each kind through what exists already:

- ``local.<fun>`` (alias ``cmd.<fun>``): a job through the operator IPC
  (:class:`briny.master.clientapi.MasterClient`), as ``briny`` starts one:
  ``tgt`` (required), ``tgt_type`` (default ``glob``; Salt's old
  ``expr_form`` is read with a warning), arguments as below, ``timeout``. The
  outcome is the job's ``jid`` and ``minions``; its returns go to the job
  cache like any job's. A target no minion matches is an error.
- ``runner.<fun>``: the runner of that name (:func:`briny.master.runners.get_runner`;
  ``runner.state.orchestrate`` is whatever runner exists by that name).
- ``wheel.<fun>``: the wheel function of that name (:mod:`briny.master.wheel`:
  ``key.accept`` / ``key.reject`` / ``key.delete`` with ``match`` and
  ``include_rejected`` / ``include_accepted`` / ``include_denied``,
  ``key.list``, ``key.list_all``, ``key.finger``) on the master's key store.
- ``caller.<fun>``: refused on the master (Salt runs it on a masterless minion's reactor).

Arguments, as Salt 3007 reads them: ``args`` is the current form: for
``local``, ``runner`` and ``wheel`` a list of one-key mappings (or a mapping)
of keyword arguments; for ``caller`` a plain list is positional. Without
``args``, the legacy ``arg`` (positional list) and ``kwarg`` (mapping) apply,
and a ``runner``/``wheel`` reaction also takes its other keys as keyword
arguments of the function. ``arg``/``kwarg`` next to ``args`` are ignored
with a warning, as Salt does. Keys of a ``local`` reaction briny does not
support (``ret``, ``batch``, ...) are named in a warning and ignored.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from briny.common.args import call_function
from briny.common.exceptions import BrinyError, FunctionNotFound, ReactionError

log = logging.getLogger(__name__)

KINDS = ("local", "runner", "wheel", "caller")
ALIASES = {"cmd": "local"}
# keys of a compiled chunk that are the compiler's, never a function's argument
INTERNAL = frozenset({"__id__", "__sls__", "__env__", "name", "order", "fun", "state"})
LOCAL_KEYS = frozenset({"tgt", "tgt_type", "expr_form", "arg", "kwarg", "args", "timeout"})
NO_MINIONS = "No minions matched the target. No command was sent, no jid was assigned."
REACTOR_USER = "Reactor"


@dataclass
class Reaction:
    """One reaction of a reactor SLS, read (see the module docstring for the forms)."""

    id: str
    sls: str
    kind: str  # local, runner, wheel, caller
    fun: str
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    tgt: Any = None
    tgt_type: str = "glob"
    timeout: Any = None


def _dictlist(value: Any, rid: str, kind: str, fun: str) -> dict[str, Any]:
    """Salt's ``args`` of keyword arguments: a mapping, or a list of mappings merged in order."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        out: dict[str, Any] = {}
        for item in value:
            out.update(item)
        return out
    raise ReactionError(
        f"Reactor '{rid}' failed to execute {kind} '{fun}': Incorrect argument format, check the Reactor "
        "System documentation for the correct format ('args' is a list of 'name: value' items)"
    )


def parse_reaction(chunk: dict[str, Any], known: "Reactions") -> Reaction:
    """A compiled chunk as a :class:`Reaction`; ReactionError naming the problem."""
    rid, sls = str(chunk.get("__id__")), str(chunk.get("__sls__"))
    kind = ALIASES.get(chunk["state"], chunk["state"])
    fun = str(chunk.get("fun"))
    if kind not in KINDS:
        raise ReactionError(
            f"Reactor '{rid}': '{chunk['state']}.{fun}' is not a reaction: the kinds are local, runner, wheel, caller"
        )
    known.check(kind, fun, rid)
    reaction = Reaction(rid, sls, kind, fun)
    if "args" in chunk:
        for old in ("arg", "kwarg"):
            if old in chunk:
                log.warning(
                    "Reactor '%s' is ignoring '%s' param %r due to presence of 'args' param", rid, old, chunk[old]
                )
        args = chunk["args"]
        if kind == "caller" and isinstance(args, list) and not all(isinstance(a, dict) for a in args):
            reaction.args = list(args)
        else:
            reaction.kwargs = _dictlist(args, rid, kind, fun)
    else:
        arg, kwarg = chunk.get("arg", []), chunk.get("kwarg", {})
        if not isinstance(arg, list):
            arg = [arg]
        if not isinstance(kwarg, dict):
            raise ReactionError(f"Reactor '{rid}': 'kwarg' must be a mapping, not {type(kwarg).__name__}")
        reaction.args, reaction.kwargs = list(arg), dict(kwarg)
        if kind in ("runner", "wheel") and "arg" not in chunk and "kwarg" not in chunk:
            rest = {k: v for k, v in chunk.items() if k not in INTERNAL and k not in ("arg", "kwarg")}
            reaction.kwargs.update(known.accepted(kind, fun, rest))
    if kind == "local":
        _read_local(chunk, reaction)
    return reaction


def _read_local(chunk: dict[str, Any], reaction: Reaction) -> None:
    rid = reaction.id
    if "tgt" not in chunk or chunk["tgt"] in (None, "", []):
        raise ReactionError(f"Reactor '{rid}': local.{reaction.fun} needs a 'tgt' (the minions to run it on)")
    reaction.tgt = chunk["tgt"]
    tgt_type = chunk.get("tgt_type")
    if tgt_type is None and "expr_form" in chunk:
        log.warning("Reactor '%s': 'expr_form' is Salt's old name of 'tgt_type'; read as tgt_type", rid)
        tgt_type = chunk["expr_form"]
    reaction.tgt_type = str(tgt_type or "glob")
    reaction.timeout = chunk.get("timeout")
    ignored = sorted(k for k in chunk if k not in INTERNAL and k not in LOCAL_KEYS)
    if ignored:
        log.warning("Reactor '%s': local reactions in briny do not take %s; ignored", rid, ", ".join(ignored))


class Reactions:
    """Runs each kind of reaction on this master (see the module docstring)."""

    def __init__(self, opts: dict[str, Any]) -> None:
        self.opts = opts
        self._keys: Any = None

    # -- what exists ---------------------------------------------------------------------------
    def function(self, kind: str, fun: str) -> Callable[..., Any]:
        """The runner or wheel function; ReactionError when there is none."""
        if kind == "runner":
            from briny.master.runners import get_runner

            try:
                return get_runner(fun)
            except FunctionNotFound:
                raise ReactionError(f"runner '{fun}' is not available") from None
        from briny.master import wheel

        try:
            return wheel.function(fun)
        except FunctionNotFound:
            raise ReactionError(
                f"wheel '{fun}' is not available (briny's wheel: {', '.join(sorted(wheel.FUNCTIONS))})"
            ) from None

    def check(self, kind: str, fun: str, rid: str) -> None:
        """ReactionError for a function this master does not have (before anything runs)."""
        if kind == "caller":
            raise ReactionError(
                f"Reactor '{rid}': caller.{fun} runs on a masterless minion's reactor, not on the master "
                "(use local.<fun> with a tgt)"
            )
        if kind in ("runner", "wheel"):
            self.function(kind, fun)

    def accepted(self, kind: str, fun: str, extra: dict[str, Any]) -> dict[str, Any]:
        """The legacy form's keys a runner/wheel function takes as keyword arguments (Salt's
        format_call: the function's own parameters; all of them when it takes ``**kwargs``)."""
        params = inspect.signature(self.function(kind, fun)).parameters
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            return extra
        return {k: v for k, v in extra.items() if k in params}

    # -- running --------------------------------------------------------------------------------
    def run(self, reaction: Reaction) -> dict[str, Any]:
        """The outcome of one reaction: ``result`` and ``return`` (``jid``/``minions`` for local)."""
        if reaction.kind == "local":
            return self.local(reaction)
        if reaction.kind == "runner":
            return self.runner(reaction)
        if reaction.kind == "wheel":
            return self.wheel(reaction)
        raise ReactionError(f"{reaction.kind}.{reaction.fun} cannot run on the master")

    def local(self, reaction: Reaction) -> dict[str, Any]:
        from briny.common.exceptions import MasterError, MasterNotRunning
        from briny.master.clientapi import MasterClient

        try:
            with MasterClient(self.opts) as client:
                pub = client.publish(
                    reaction.tgt,
                    reaction.fun,
                    reaction.args,
                    reaction.kwargs,
                    tgt_type=reaction.tgt_type,
                    timeout=reaction.timeout,
                    user=REACTOR_USER,
                )
        except MasterError as exc:
            raise ReactionError(f"local.{reaction.fun} on {reaction.tgt!r} ({reaction.tgt_type}): {exc}") from None
        except MasterNotRunning as exc:
            return {"result": False, "error": str(exc)}
        if not pub.get("jid") or not pub.get("minions"):
            raise ReactionError(f"local.{reaction.fun} on {reaction.tgt!r} ({reaction.tgt_type}): {NO_MINIONS}")
        return {"result": True, "jid": pub["jid"], "minions": list(pub["minions"])}

    def runner(self, reaction: Reaction) -> dict[str, Any]:
        from briny.master.runners import RunnerContext

        func = self.function("runner", reaction.fun)
        ctx = RunnerContext(self.opts)
        try:
            ret = call_function(func, reaction.fun, [ctx, *reaction.args], reaction.kwargs)
        except BrinyError as exc:
            return {"result": False, "error": f"runner '{reaction.fun}': {exc}"}
        finally:
            ctx.close()
        if isinstance(ret, dict) and set(ret) == {"outputter", "data"}:
            ret = ret["data"]
        retcode = ctx.context.get("retcode", 0)
        return {"result": not retcode, "return": ret}

    def wheel(self, reaction: Reaction) -> dict[str, Any]:
        from briny.master import wheel
        from briny.master.keys import KeyStore

        if self._keys is None:
            self._keys = KeyStore(self.opts)
        self.function("wheel", reaction.fun)  # ReactionError for a name the wheel does not have
        try:
            ret = wheel.run(self._keys, reaction.fun, reaction.args, reaction.kwargs)
        except BrinyError as exc:
            return {"result": False, "error": f"wheel '{reaction.fun}': {exc}"}
        return {"result": True, "return": ret}
