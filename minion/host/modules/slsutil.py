"""Execution module ``slsutil``: helpers for SLS and map files (Salt 3007's).

Runs wherever ``__salt__`` does (minion, ``briny-call``, master-side
rendering). Salt 3007's merge functions, with its strategies and its
side effects (templates rely on them):

- ``update(dest, upd)`` merges ``upd`` into ``dest`` itself and returns it.
- ``merge(a, b, strategy)``: ``recurse`` merges ``b`` into a deep copy of
  ``a`` (nested dicts key by key; lists replaced, or extended with ``b``'s
  new items with ``merge_lists=True``); ``overwrite`` first replaces in
  ``a`` itself the top-level keys ``b`` also has, then merges as
  ``recurse``; ``list``: keys present in both become ``[a's, b's]``, keys
  only in ``b`` are dropped; ``aggregate``: without YAMLEX aggregation
  markers (briny has no ``yamlex`` renderer) the top-level keys of ``b``
  replace ``a``'s; ``smart``: ``aggregate`` when ``renderer`` is ``yamlex``,
  else ``recurse``; ``none`` and unknown names (with a warning): ``recurse``.
- ``serialize`` / ``deserialize``: :mod:`briny.common.serializers` (``yaml``,
  ``json``, ``msgpack``, ``plist``, ``python``, ``configparser``,
  ``keyvalue``; Salt 3007 has no ``toml`` without the ``toml`` package).
- ``renderer(path=None, string=None, default_renderer='jinja|yaml')``: the
  text of a ``salt://`` file (or, on a minion, a local file) or a string,
  through a renderer pipeline (a shebang line wins), with the caller's
  ``salt``, grains, pillar and opts; extra keyword arguments are template
  variables. The result is the last renderer's: data, or text for a
  pipeline ending in ``jinja``. On the master it runs behind the render's
  boundary: what the template calls is checked there, and a local file
  (the minion's host) is refused.
- ``banner``, ``boolstr``.

``file_exists`` / ``dir_exists`` / ``path_exists`` / ``findup`` ask the
file server through ``cp.list_master`` / ``cp.list_master_dirs``.
"""

from __future__ import annotations

import copy
import logging
import os
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common import fileclient, serializers
from briny.common.dictupdate import update_in_place
from briny.common.exceptions import CommandExecutionError, FileServerError, RenderError, SaltInvocationError

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __job__, __opts__, __pillar__, __salt__


log = logging.getLogger(__name__)


def update(
    dest: Mapping[Any, Any],
    upd: Mapping[Any, Any],
    recursive_update: bool = True,
    merge_lists: bool = False,
    **kwargs: Any,
) -> Any:
    """``upd`` merged into ``dest`` itself (recursively by default); returns ``dest``."""
    return update_in_place(dest, upd, recursive_update, merge_lists)


def _merge_list(obj_a: Mapping[Any, Any], obj_b: Mapping[Any, Any]) -> dict[Any, Any]:
    return {key: ([val, obj_b[key]] if key in obj_b else val) for key, val in obj_a.items()}


def _merge_recurse(obj_a: Any, obj_b: Any, merge_lists: bool = False) -> Any:
    return update_in_place(copy.deepcopy(obj_a), obj_b, merge_lists=merge_lists)


def _merge_aggregate(obj_a: Mapping[Any, Any], obj_b: Mapping[Any, Any]) -> dict[Any, Any]:
    merged = dict(obj_a)
    merged.update(obj_b)
    return merged


def merge(
    obj_a: Any,
    obj_b: Any,
    strategy: str = "smart",
    renderer: str = "yaml",
    merge_lists: bool = False,
    **kwargs: Any,
) -> Any:
    """``obj_b`` merged into ``obj_a`` with ``strategy`` (see the module docstring)."""
    if strategy == "smart":
        last = str(renderer).split("|")[-1]
        strategy = "aggregate" if last == "yamlex" or str(renderer).startswith("yamlex_") else "recurse"
    if strategy == "list":
        return _merge_list(obj_a, obj_b)
    if strategy == "aggregate":
        return _merge_aggregate(obj_a, obj_b)
    if strategy == "overwrite":
        for key in obj_b:
            if key in obj_a:
                obj_a[key] = obj_b[key]
        return _merge_recurse(obj_a, obj_b, merge_lists)
    if strategy == "recurse":
        return _merge_recurse(obj_a, obj_b, merge_lists)
    if strategy != "none":
        log.warning("Unknown merging strategy '%s', fallback to recurse", strategy)
    return _merge_recurse(obj_a, obj_b)


def merge_all(
    lst: Any,
    strategy: str = "smart",
    renderer: str = "yaml",
    merge_lists: bool = False,
    **kwargs: Any,
) -> Any:
    """Merge each dict of ``lst`` in turn into an empty dict."""
    ret: Any = {}
    for obj in lst:
        ret = merge(ret, obj, strategy, renderer, merge_lists)
    return ret


def serialize(serializer: str, obj: Any, **mod_kwargs: Any) -> Any:
    """``obj`` written by the serializer named ``serializer`` (options go to it)."""
    return serializers.serialize(serializer, obj, **mod_kwargs)


def deserialize(serializer: str, stream_or_string: Any, **mod_kwargs: Any) -> Any:
    """The data ``stream_or_string`` holds, read by the serializer named ``serializer``."""
    return serializers.deserialize(serializer, stream_or_string, **mod_kwargs)


def _boundary() -> Any:
    """The render's :class:`~briny.common.state.hostview.HostBoundary` on the master, None on a minion."""
    from briny.common.state.hostview import SaltFunctions

    salt = __salt__
    return salt.boundary if isinstance(salt, SaltFunctions) else None


def _renderer_source(path: str, saltenv: str) -> tuple[str | None, str | None]:
    """(text or None when missing, path relative to the roots) of a ``salt://`` or local ``path``."""
    if path.startswith("salt://"):
        rel, env = fileclient.split_url(path, saltenv)
        client = fileclient.get_client(__opts__, __job__)
        try:
            rel = fileclient.clean_path(rel)
            text = client.get_text(rel, env)
        except FileServerError as exc:
            log.error("slsutil.renderer: %s", exc)
            text = None
        if text is None:
            log.error("Template was specified incorrectly: False")
        return text, rel
    boundary = _boundary()
    if boundary is not None:  # on the master: the file is on the minion's host
        raise boundary.refusal(f"slsutil.renderer of the local file {path!r}", "slsutil.renderer")
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read(), None
    except OSError:
        log.error("Template does not exist: %s", path)
        return None, None


def renderer(
    path: str | None = None, string: str | None = None, default_renderer: str = "jinja|yaml", **kwargs: Any
) -> Any:
    """``path`` (``salt://`` or local) or ``string`` through ``default_renderer`` (a shebang wins).

    As Salt: a missing file, an empty one or an unknown renderer logs an error and gives ``{}``."""
    from briny.common.state.hostview import template_salt
    from briny.common.state.render import run_pipeline
    from briny.common.state.stages import RenderEnv

    if not path and not string:
        raise SaltInvocationError("Must pass either path or string")
    if path and string:
        raise SaltInvocationError("Must not pass both path and string")
    variables = {k: v for k, v in kwargs.items() if not str(k).startswith("__")}
    variables.pop("env", None)
    saltenv = str(variables.pop("saltenv", None) or "base")
    if path:
        text, relpath = _renderer_source(str(path), saltenv)
        if text is None or not text.strip():
            return {}
    else:
        text, relpath = str(string), None
    salt = template_salt(__salt__)
    env = RenderEnv(
        opts=__opts__,
        client=fileclient.get_client(__opts__, __job__),
        salt=salt,
        grains=__grains__,
        pillar=__pillar__,
        boundary=_boundary(),
    )
    try:
        return run_pipeline(
            text, env=env, saltenv=saltenv, relpath=relpath, default=default_renderer or "jinja|yaml", extra=variables
        )
    except RenderError as exc:
        if "is not available" not in str(exc):
            raise
        log.error("%s", exc)  # as Salt: an unknown renderer is logged and renders nothing
        return {}


def banner(
    width: int = 72,
    commentchar: str = "#",
    borderchar: str = "#",
    blockstart: str | None = None,
    blockend: str | None = None,
    title: str | None = None,
    text: str | None = None,
    newline: bool = False,
    **kwargs: Any,
) -> str:
    """A boxed comment block (\"THIS FILE IS MANAGED BY SALT - DO NOT EDIT\" by default)."""
    if title is None:
        title = "THIS FILE IS MANAGED BY SALT - DO NOT EDIT"
    if text is None:
        text = (
            "The contents of this file are managed by Salt. Any changes to this file may be "
            "overwritten automatically and without warning."
        )
    left, right = commentchar.rstrip(), commentchar.strip()
    inner = width - len(left) - 1 - len(right) - 1
    if inner <= 0:
        raise CommandExecutionError("Width is too small to render banner")
    border = commentchar + borderchar[:1] * (width - len(left) - len(right)) + right
    spacer = commentchar + " " * (width - 2 * len(commentchar)) + commentchar
    lines = [] if blockstart is None else [blockstart]
    lines += [border, spacer]
    lines += [f"{left} {part.center(inner)} {right}" for part in textwrap.wrap(title, inner)]
    lines.append(spacer)
    lines += [f"{left} {part.ljust(inner)} {right}" for part in textwrap.wrap(text, inner)]
    lines.append(border)
    if blockend is not None:
        lines.append(blockend)
    out = os.linesep.join(lines)
    return out + os.linesep if newline else out


def boolstr(value: Any, true: Any = "true", false: Any = "false", **kwargs: Any) -> Any:
    """``true`` when ``value`` is truthy, else ``false`` (for writing config files)."""
    return true if value else false


def _list_master(saltenv: str, dirs: bool) -> list[str]:
    fun = "cp.list_master_dirs" if dirs else "cp.list_master"
    try:
        lister = __salt__[fun]
    except KeyError as exc:
        raise CommandExecutionError(f"{fun} is not available, cannot check the file server") from exc
    return list(lister(saltenv=saltenv))


def _norm(path: str) -> str:
    path = path.removeprefix("salt://")
    return os.path.normpath(path).lstrip("/")


def file_exists(path: str, saltenv: str = "base", **kwargs: Any) -> bool:
    """True when ``path`` is a file on the file server."""
    return _norm(path) in _list_master(saltenv, dirs=False)


def dir_exists(path: str, saltenv: str = "base", **kwargs: Any) -> bool:
    """True when ``path`` is a directory on the file server."""
    return _norm(path) in _list_master(saltenv, dirs=True)


def path_exists(path: str, saltenv: str = "base", **kwargs: Any) -> bool:
    """True when ``path`` is a file or a directory on the file server."""
    return file_exists(path, saltenv) or dir_exists(path, saltenv)


def findup(startpath: str, filenames: str | list[str], saltenv: str = "base", **kwargs: Any) -> str | None:
    """The first of ``filenames`` found in ``startpath`` or a parent folder on the file server."""
    names = [filenames] if isinstance(filenames, str) else list(filenames)
    files = set(_list_master(saltenv, dirs=False))
    start = _norm(startpath) if startpath else ""
    if start in files:
        start = os.path.dirname(start)
    while True:
        for name in names:
            candidate = os.path.join(start, name) if start else name
            if candidate in files:
                return candidate
        if not start:
            return None
        start = os.path.dirname(start)
