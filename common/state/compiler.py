"""The state compiler: top file and SLS → high data → ordered low chunks.

Runs wherever SLS is compiled: ``briny-call --local``, the master (per
minion), or a minion compiling for itself. Pure data in, data out: a
:class:`RenderEnv` (file client, grains, pillar, execution functions for
templates) in, lists of chunks or Salt's error strings out. Nothing here runs
a state.

The pipelines mirror what Salt's ``state`` functions show:

=====================  ==================================================
``show_top``           top matches for this host
``show_highstate``     high data of the highstate (before extend)
``show_lowstate``      chunks of the highstate, extends and ``_in`` applied
``show_sls``           high data of some SLS (before extend)
``show_low_sls``       chunks of some SLS as written (no extend, no ``_in``)
``for_sls``            what ``state.sls`` runs: everything applied
``for_highstate``      what ``state.highstate`` runs (or the no-states answer)
=====================  ==================================================

Both ``for_*`` return a :class:`Compiled` (chunks, or Salt's error strings, or
``no_states``), through :meth:`StateCompiler.prepare`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..exceptions import RenderError
from ..gcpause import gc_paused_call
from .highdata import apply_exclude, reconcile_extend, requisite_in, verify_high
from .highstate import HighStateBuilder
from .stages import RenderEnv
from . import top as topfile

log = logging.getLogger(__name__)

Chunk = dict[str, Any]
NO_STATES_TAG = "no_|-states_|-states_|-None"


@dataclass
class Compiled:
    """What a run needs: chunks, or errors (and then nothing runs)."""

    chunks: list[Chunk]
    errors: list[str]
    high: dict[str, Any]
    no_states: str | None = None  # set when a highstate found nothing to do


def compile_high_data(high: dict[str, Any]) -> list[Chunk]:
    """High data → low chunks, one per (ID, state module, name), ordered."""
    chunks: list[Chunk] = []
    for name, body in high.items():
        if isinstance(name, str) and name.startswith("__"):
            continue
        dunders = [(k, body[k]) for k in ("__sls__", "__env__", "__sls_included_from__") if k in body]
        for state, run in body.items():
            if isinstance(state, str) and state.startswith("__"):
                continue
            chunk: Chunk = {"state": state, "name": name}
            chunk.update(dunders)
            chunk["__id__"] = name
            funcs: list[str] = []
            names: list[Any] = []
            for arg in run:
                if isinstance(arg, str):
                    if arg not in funcs:
                        funcs.append(arg)
                    continue
                if not isinstance(arg, dict):
                    continue
                for key, val in arg.items():
                    if key == "names":
                        for entry in val:
                            if entry not in names:
                                names.append(entry)
                    elif key == "state":
                        continue
                    elif key == "name" and not isinstance(val, str):
                        chunk[key] = name
                    else:
                        chunk[key] = val
            if names:
                for order, entry in enumerate(names, start=1):
                    live = dict(chunk)
                    if isinstance(entry, dict):
                        low_name = next(iter(entry))
                        live["name"] = low_name
                        for override in entry[low_name] or []:
                            if isinstance(override, dict):
                                live.update(override)
                    else:
                        live["name"] = entry
                    live["name_order"] = order
                    for fun in funcs:
                        chunks.append(dict(live, fun=fun))
            else:
                for fun in funcs:
                    chunks.append(dict(chunk, fun=fun))
    return order_chunks(chunks)


def order_chunks(chunks: list[Chunk]) -> list[Chunk]:
    """Resolve ``order`` (numbers, ``first``, ``last``, negatives) and sort, as Salt does."""
    cap = 1
    for chunk in chunks:
        val = chunk.get("order")
        if isinstance(val, int) and not isinstance(val, bool) and val > cap - 1 and val > 0:
            cap = val + 100
    for chunk in chunks:
        if "order" not in chunk:
            chunk["order"] = cap
            continue
        val = chunk["order"]
        if not isinstance(val, (int, float)) or isinstance(val, bool):
            if val == "last":
                chunk["order"] = cap + 1000000
            elif val == "first":
                chunk["order"] = 0
            else:
                chunk["order"] = cap
        if "name_order" in chunk:
            chunk["order"] = chunk["order"] + chunk.pop("name_order") / 10000.0
        if chunk["order"] < 0:
            chunk["order"] = cap + 1000000 + chunk["order"]
    chunks.sort(key=lambda c: (c["order"], f"{c['state']}{c['name']}{c['fun']}"))
    return chunks


class StateCompiler:
    """One host's compile: holds the builder so each SLS renders once."""

    def __init__(self, env: RenderEnv) -> None:
        self.env = env
        self.opts = env.opts
        self.builder = HighStateBuilder(env)

    # -- top file ---------------------------------------------------------
    def get_top(self) -> dict[str, dict[str, Any]]:
        try:
            return topfile.merge_tops(topfile.get_tops(self.builder), self.opts)
        except RenderError as exc:
            log.error("Unable to render top file: %s", exc)
            return {}

    @gc_paused_call
    def show_top(self) -> dict[str, list[str]] | list[str]:
        top = self.get_top()
        errors = topfile.verify_tops(top)
        if errors:
            return errors
        return topfile.top_matches(top, self.builder)

    def _highstate_high(self) -> tuple[dict[str, Any], list[str], dict[str, list[str]]]:
        top = self.get_top()
        errors = topfile.verify_tops(top)
        matches = topfile.top_matches(top, self.builder)
        high, render_errors = self.builder.render_highstate(matches)
        return high, errors + render_errors, matches

    @gc_paused_call
    def show_highstate(self) -> dict[str, Any] | list[str]:
        high, errors, _ = self._highstate_high()
        return errors or high

    @gc_paused_call
    def show_lowstate(self) -> list[Chunk] | list[str]:
        high, errors, _ = self._highstate_high()
        errors = list(errors)
        high, ext_errors = reconcile_extend(high)
        errors += ext_errors
        errors += verify_high(high)
        high, in_errors = requisite_in(high, self.opts.get("disabled_requisites"))
        errors += in_errors
        high = apply_exclude(high)
        if errors:
            return errors
        return compile_high_data(high)

    # -- SLS --------------------------------------------------------------
    def sls_high(self, mods: list[str], saltenv: str) -> tuple[dict[str, Any], list[str]]:
        return self.builder.render_highstate({saltenv: list(mods)})

    @gc_paused_call
    def show_sls(self, mods: list[str], saltenv: str) -> dict[str, Any] | list[str]:
        high, errors = self.sls_high(mods, saltenv)
        errors = errors + verify_high(high)
        return errors or high

    @gc_paused_call
    def show_low_sls(self, mods: list[str], saltenv: str) -> list[Chunk] | list[str]:
        high, errors = self.sls_high(mods, saltenv)
        errors = errors + verify_high(high)
        return errors or compile_high_data(high)

    # -- what a run executes ----------------------------------------------
    def prepare(self, high: dict[str, Any], exclude: list[Any] | None = None) -> Compiled:
        """Everything applied, ready for the engine: extend, verify, ``_in``, exclude."""
        if exclude:
            high.setdefault("__exclude__", []).extend(exclude)
        high, errors = reconcile_extend(high)
        errors = errors + verify_high(high)
        if errors:
            return Compiled([], errors, high)
        high, in_errors = requisite_in(high, self.opts.get("disabled_requisites"))
        high = apply_exclude(high)
        if in_errors:
            return Compiled([], in_errors, high)
        return Compiled(compile_high_data(high), [], high)

    @gc_paused_call
    def for_sls(self, mods: list[str], saltenv: str, exclude: list[Any] | None = None) -> Compiled:
        high, errors = self.sls_high(mods, saltenv)
        if errors:
            return Compiled([], errors, high)
        return self.prepare(high, exclude)

    @gc_paused_call
    def for_highstate(self, exclude: list[Any] | None = None) -> Compiled:
        try:
            top = topfile.merge_tops(topfile.get_tops(self.builder), self.opts)
        except RenderError as exc:
            return Compiled([], [], {}, no_states=f"Unable to render top file: {exc}")
        errors = topfile.verify_tops(top)
        matches = topfile.top_matches(top, self.builder)
        if not matches:
            return Compiled(
                [],
                [],
                {},
                no_states="No Top file or master_tops data matches found. Please see master log for details.",
            )
        high, render_errors = self.builder.render_highstate(matches)
        errors += render_errors
        if errors:
            return Compiled([], errors, high)
        if not high:
            return Compiled([], [], high, no_states="No states found for this minion")
        return self.prepare(high, exclude)


def no_states_result(comment: str) -> dict[str, Any]:
    return {NO_STATES_TAG: {"result": False, "comment": comment, "name": "No States", "changes": {}, "__run_num__": 0}}
