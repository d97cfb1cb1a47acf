"""One renderer stage, by name: what every renderer and the pipeline share.

:class:`RenderEnv` (what a template may see of one host), :class:`BuildContext` (what the renders
of one highstate build share), Salt's error context around a failing line, and
:data:`RENDERERS`, the renderers by name, which :mod:`briny.common.state.render` fills when it is
imported, with :func:`run_stage`, the one way a renderer runs. A renderer that runs others
(``stateconf``'s template and data renderers) reaches them here, below :mod:`render`, so no
renderer imports the module that registers it.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..fileclient import FileClient
from .hostview import CODE_RENDERERS

CONTEXT_MARKER = "    <======================"


@dataclass
class RenderEnv:
    """Everything a template may see: one host's view of the world."""

    opts: dict[str, Any]
    client: FileClient
    salt: Any  # execution functions: a LazyLoader (a minion) or a guarded SaltFunctions (the master)
    grains: dict[str, Any] = field(default_factory=dict)
    pillar: dict[str, Any] = field(default_factory=dict)
    # what templates see as ``opts`` / ``__opts__`` when it is not ``opts`` itself (on the master:
    # the minion's view, an OptsView, apart from the opts the compiler itself uses)
    template_opts: Any = None
    # on the master: what this render may use of a host (common/state/hostview.py); None on a minion
    boundary: Any = None

    def opts_for_templates(self) -> Any:
        return self.opts if self.template_opts is None else self.template_opts


def error_context(text: str, line: int, num_lines: int = 5, marker: str = CONTEXT_MARKER) -> str:
    """The ``---`` block Salt prints around a failing line (1-based ``line``)."""
    lines = text.splitlines()
    if line > len(lines):
        return text
    start = max(0, line - num_lines - 1)
    end = min(len(lines), line + num_lines)
    shown = lines[start:end]
    at = line - start - 1
    if start > 0:
        shown.insert(0, "[...]")
        at += 1
    if end < len(lines):
        shown.append("[...]")
    if marker and 0 <= at < len(shown):
        shown[at] += marker
    return "---\n" + "\n".join(shown) + "\n---"


def error_with_context(message: str, line: int | None, text: str) -> str:
    if line and text:
        return f"{message}; line {line}\n\n{error_context(text, line)}"
    return message


@dataclass
class BuildContext:
    """What the renders of one highstate build share. ``render_sls(sls, saltenv, parent)``
    renders an SLS now, into the build, and returns its high data and errors (pydsl's
    ``include``; ``parent`` is the ``env:sls`` asking, counted as rendered). ``pydsl_modules``
    holds each pydsl SLS's module by ``env:sls``; ``stateconf`` the settings stateconf gathers
    across files (Salt keeps them for its whole process, briny for one build)."""

    render_sls: Callable[[str, str, str], tuple[dict[str, Any], list[str]]] | None = None
    pydsl_modules: dict[str, types.ModuleType] = field(default_factory=dict)
    stateconf: dict[str, dict[str, Any]] = field(default_factory=dict)


# name -> renderer; filled by briny.common.state.render (every renderer it has)
RENDERERS: dict[str, Callable[..., Any]] = {}


def run_stage(
    name: str,
    data: Any,
    *,
    env: RenderEnv,
    saltenv: str,
    sls: str | None = None,
    relpath: str | None = None,
    extra: dict[str, Any] | None = None,
    args: str = "",
    build: BuildContext | None = None,
) -> Any:
    """One renderer (``name``, known) run on ``data``: the one way a renderer runs, from a pipeline
    or from inside another renderer (stateconf's template and data renderers), so a code renderer
    (``#!py``, ``#!pydsl``) is always refused where the render's boundary says Python may not run
    (the master, unless allowed)."""
    if name in CODE_RENDERERS and env.boundary is not None:
        env.boundary.code(name)  # Python on the master: refused unless allowed
    return RENDERERS[name](
        data, env=env, saltenv=saltenv, sls=sls, relpath=relpath, extra=extra, args=args, build=build
    )
