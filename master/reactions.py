"""Reactions: one compiled reactor chunk read in Salt 3007's forms, and how each kind runs.

Runs in the reactor's worker threads (:mod:`briny.master.reactor`). The reading of a chunk
is :mod:`briny.common.reactions` (shared with a masterless minion's reactor); this is the
master's running of each kind (:class:`Reactions`), each through what exists already:

- ``local.<fun>`` (alias ``cmd.<fun>``): a job through the operator IPC
  (:class:`briny.master.clientapi.MasterClient`), as ``briny`` starts one:
  ``tgt`` (required), ``tgt_type`` (default ``glob``; Salt's old
  ``expr_form`` is read with a warning), arguments (as
  :mod:`briny.common.reactions` reads them), ``timeout``. The
  outcome is the job's ``jid`` and ``minions``; its returns go to the job
  cache like any job's. A target no minion matches is an error.
- ``runner.<fun>``: the runner of that name (:func:`briny.master.runners.get_runner`;
  ``runner.state.orchestrate`` is whatever runner exists by that name), with Salt's
  ``salt/run/<jid>/new`` and ``/ret`` (user ``Reactor``) around it.
- ``wheel.<fun>``: the wheel function of that name (:mod:`briny.master.wheel`:
  ``key.accept`` / ``key.reject`` / ``key.delete`` with ``match`` and
  ``include_rejected`` / ``include_accepted`` / ``include_denied``,
  ``key.list``, ``key.list_all``, ``key.finger``) on the master's key store.
- ``caller.<fun>``: refused on the master (a masterless minion's reactor runs it:
  :mod:`briny.minion.reactor`).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from briny.common.args import call_function
from briny.common.exceptions import BrinyError, FunctionNotFound, ReactionError
from briny.common.reactions import Reaction, parse_reaction

log = logging.getLogger(__name__)

__all__ = ["REACTOR_USER", "Reaction", "Reactions", "parse_reaction"]

REACTOR_USER = "Reactor"
NO_MINIONS = "No minions matched the target. No command was sent, no jid was assigned."


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
        from briny.master.runners import RunEvents, RunnerContext

        func = self.function("runner", reaction.fun)
        ctx = RunnerContext(self.opts)
        kwargs = dict(reaction.kwargs)
        events = RunEvents(self.opts, reaction.fun, list(reaction.args), kwargs, user=REACTOR_USER)
        try:
            ret = call_function(func, reaction.fun, [ctx, *reaction.args], kwargs)
        except BrinyError as exc:
            events.ret(f"{type(exc).__name__}: {exc}", False)
            return {"result": False, "error": f"runner '{reaction.fun}': {exc}"}
        finally:
            ctx.close()
        if isinstance(ret, dict) and set(ret) == {"outputter", "data"}:
            ret = ret["data"]
        retcode = ctx.context.get("retcode", 0)
        events.ret(ret, not retcode)
        return {"result": not retcode, "return": ret}

    def wheel(self, reaction: Reaction) -> dict[str, Any]:
        from briny.master import wheel
        from briny.master.keys.store import KeyStore

        if self._keys is None:
            self._keys = KeyStore(self.opts)
        self.function("wheel", reaction.fun)  # ReactionError for a name the wheel does not have
        try:
            ret = wheel.run(self._keys, reaction.fun, reaction.args, reaction.kwargs)
        except BrinyError as exc:
            return {"result": False, "error": f"wheel '{reaction.fun}': {exc}"}
        return {"result": True, "return": ret}
