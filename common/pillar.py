"""Pillar: per-host data rendered from ``pillar_roots`` with its own top file.

Runs where pillar is compiled: the master for each minion
(:mod:`briny.master.pillar`), or a masterless minion from its local
``pillar_roots`` (:mod:`briny.minion.pillar`). Pure given a :class:`RenderEnv`
whose file client serves the pillar roots. Render problems never raise: they
are collected under the ``_errors`` key, and state runs refuse to start on
them, as Salt's do (:func:`pillar_errors`, the same words on both sides).

Both sides also share :func:`render_opts` (the opts a pillar render sees:
the top file and SLS come from ``pillarenv`` when one is asked for) and
:func:`with_override` (a ``pillar=`` override merged over a pillar that was
not rendered with it).
"""

from __future__ import annotations

import copy
import fnmatch
import logging
from typing import Any

from .dictupdate import merge
from .exceptions import BrinyError
from .fileclient import LocalFileClient, find_sls
from .state.highstate import HighStateBuilder
from .state.stages import RenderEnv
from .state import top as topfile

log = logging.getLogger(__name__)


class PillarCompiler:
    def __init__(self, env: RenderEnv, override: dict[str, Any] | None = None) -> None:
        self.env = env
        self.opts = env.opts
        self.override = override or {}
        self.builder = HighStateBuilder(env)
        self.strategy = self.opts.get("pillar_source_merging_strategy", "smart")
        self.merge_lists = bool(self.opts.get("pillar_merge_lists", False))

    def _merge(self, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        return merge(a, b, self.strategy, "yaml", self.merge_lists)

    def render_pstate(self, sls: str, saltenv: str, mods: dict[str, Any], errors: list[str]) -> Any:
        found = find_sls(self.env.client, sls, saltenv)
        if found is None:
            if self.opts.get("pillar_roots", {}).get(saltenv):
                msg = f"Specified SLS '{sls}' in environment '{saltenv}' is not available on the salt master"
                log.error(msg)
                errors.append(msg)
            return None
        relpath, _ = found
        state: Any = None
        try:
            state = self.builder.render_file(sls, saltenv, relpath, "pillar SLS")
        except BrinyError as exc:
            log.critical("Rendering SLS '%s' failed, render error:\n%s", sls, exc)
            if self.opts.get("pillar_safe_render_error", True):
                errors.append(f"Rendering SLS '{sls}' failed. Please see master log for details.")
            else:
                errors.append(f"Rendering SLS '{sls}' failed, render error:\n{exc}")
        mods[sls] = state
        if not state:
            return state
        if not isinstance(state, dict):
            errors.append(f"SLS '{sls}' does not render to a dictionary")
            return None
        if "include" not in state:
            return state
        includes = state.pop("include")
        if not isinstance(includes, list):
            errors.append(f"Include Declaration in SLS '{sls}' is not formed as a list")
            return state
        parts: list[dict[str, Any]] = []
        for sub in includes:
            key = None
            if isinstance(sub, dict) and sub:
                sub, opts = next(iter(sub.items()))
                key = (opts or {}).get("key") if isinstance(opts, dict) else None
            sub = str(sub)
            if sub.startswith("."):
                base = sls.split(".") if relpath.endswith("init.sls") else sls.split(".")[:-1]
                sub = ".".join(base + [sub[1:]])
            for target in fnmatch.filter(self.builder.avail(saltenv), sub) or [sub]:
                nstate = mods[target] if target in mods else self.render_pstate(target, saltenv, mods, errors)
                if isinstance(nstate, dict) and nstate:
                    if key:
                        for frag in reversed(str(key).split(":")):
                            nstate = {frag: nstate}
                    parts.append(nstate)
        result: dict[str, Any] = {}
        for part in parts + [state]:
            result = self._merge(result, part)
        return result

    def compile(self) -> dict[str, Any]:
        errors: list[str] = []
        try:
            top = topfile.merge_tops(topfile.get_tops(self.builder), self.opts)
        except BrinyError as exc:
            top = {}
            errors.append(f"Pillar top file failed to render: {exc}")
        errors += topfile.verify_tops(top)
        matches = topfile.top_matches(top, self.builder)
        pillar = dict(self.override)
        for saltenv, names in matches.items():
            mods: dict[str, Any] = {}
            files: list[str] = []
            for pattern in names:
                files.extend(fnmatch.filter(self.builder.avail(saltenv), pattern) or [pattern])
            for sls in files:
                pstate = self.render_pstate(sls, saltenv, mods, errors)
                if isinstance(pstate, dict):
                    pillar = self._merge(pillar, pstate)
        pillar = self._merge(pillar, self.override)
        if errors:
            pillar["_errors"] = errors
        return pillar


PILLAR_FAILURE_HEADER = "Pillar failed to render with the following messages:"
EX_PILLAR_FAILURE = 5  # the retcode of a state run refused for pillar errors


def pillar_errors(pillar: Any, force: bool = False) -> list[str] | None:
    """Salt's result for a state run over a pillar with render errors (the header, then each
    error), or None when the run may go on (no errors, or ``force``)."""
    errors = pillar.get("_errors") if isinstance(pillar, dict) else None
    if not errors or force:
        return None
    return [PILLAR_FAILURE_HEADER, *map(str, errors)]


def with_override(pillar: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``pillar`` with a ``pillar=`` override merged over it (Salt's merge)."""
    return merge(copy.deepcopy(pillar), override)


def render_opts(opts: dict[str, Any], pillarenv: str | None) -> dict[str, Any]:
    """A copy of ``opts`` for rendering pillar: the top file and SLS come from ``pillarenv`` only
    when one is asked for (the top file reads ``saltenv``), ``state_top`` defaults to top.sls."""
    popts = dict(opts)
    popts["pillarenv"] = pillarenv
    popts["saltenv"] = pillarenv
    popts["state_top"] = opts.get("state_top") or "top.sls"
    return popts


def compile_local_pillar(
    opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Pillar for this host from its own ``pillar_roots`` (masterless)."""
    roots = opts.get("pillar_roots") or {}
    client = LocalFileClient(roots, bool(opts.get("fileserver_followsymlinks", True)))
    popts = render_opts(opts, opts.get("pillarenv"))
    env = RenderEnv(opts=popts, client=client, salt=salt, grains=grains, pillar=dict(override or {}))
    return PillarCompiler(env, override).compile()
