"""Reactions: one compiled reactor chunk read in Salt 3007's forms (pure: chunk in, :class:`Reaction` out).

Shared by the master's reactor (:mod:`briny.master.reactions` runs ``local``, ``runner`` and
``wheel``) and a masterless minion's (:mod:`briny.minion.reactor` runs ``caller``): each gives a
:class:`ReactionRunner` that says which functions exist and runs a reaction.

Arguments, as Salt 3007 reads them: ``args`` is the current form: for ``local``, ``runner`` and
``wheel`` a list of one-key mappings (or a mapping) of keyword arguments; for ``caller`` a plain
list is positional. Without ``args``, the legacy ``arg`` (positional list) and ``kwarg``
(mapping) apply, and a ``runner``/``wheel`` reaction also takes its other keys as keyword
arguments of the function. ``arg``/``kwarg`` next to ``args`` are ignored with a warning, as
Salt does. Keys of a ``local`` reaction briny does not support (``ret``, ``batch``, ...) are
named in a warning and ignored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from briny.common.exceptions import ReactionError

log = logging.getLogger(__name__)

KINDS = ("local", "runner", "wheel", "caller")
ALIASES = {"cmd": "local"}
# keys of a compiled chunk that are the compiler's, never a function's argument
INTERNAL = frozenset({"__id__", "__sls__", "__env__", "name", "order", "fun", "state"})
LOCAL_KEYS = frozenset({"tgt", "tgt_type", "expr_form", "arg", "kwarg", "args", "timeout"})


class ReactionRunner(Protocol):
    """What runs reactions where the reactor runs (the master, a masterless minion)."""

    def check(self, kind: str, fun: str, rid: str) -> None:
        """ReactionError for a reaction this host cannot run (before anything runs)."""

    def accepted(self, kind: str, fun: str, extra: dict[str, Any]) -> dict[str, Any]:
        """The legacy form's extra keys the function takes as keyword arguments."""

    def run(self, reaction: "Reaction") -> dict[str, Any]:
        """The outcome of one reaction: ``result`` and ``return`` or ``error``."""


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


def parse_reaction(chunk: dict[str, Any], known: "ReactionRunner") -> Reaction:
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
