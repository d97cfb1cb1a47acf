"""The ``stateconf`` renderer: ``#!stateconf [-Gosp] [DATA [args] . TEMPLATE [args]]``.

Runs wherever SLS is compiled. As Salt 3007 documents it, it renders the file itself with a
template renderer and a data renderer (default ``yaml . jinja``; so it comes first in a pipeline,
or after a data renderer with ``-p``), then rewrites the high data:

- IDs (and requisite references) that start with ``.`` are the file's own: ``.vim`` in
  ``some/file.sls`` becomes ``some.file::vim`` (``..x`` climbs a level, ``other::x`` keeps its
  file), and a state under such an ID without ``name`` gets the ID without its dot as ``name``;
  ``include``/``exclude`` entries that start with ``.`` are relative to the file.
- The arguments of every ``stateconf.set`` state (``stateconf_state_func``) are gathered; those
  above the end marker (``# --- end of state config ---``, ``stateconf_end_marker``) are
  rendered first and given to the template by ID (``sls_params.greeting``), with ``sls_dir``.
  An ``extend`` of another file's ``stateconf.set`` reaches that file's template when it renders
  later in the same build (Salt keeps them for its whole process).
- A ``goal`` state (``stateconf_goal_state``, ``.goal``) requires every state of the file
  unless ``-G``; ``-s`` adds a ``start`` state (``.start``) required in by the first one; ``-o``
  makes each state require the one before it (refusing requisites that point the other way, and
  ``names``); ``-p`` takes high data from the renderer before it (``#!pydsl|stateconf -ps``).

Errors are Salt's words (RenderError, or RenderCodeError where Salt reports a "render error").
The ``stateconf`` state module (states/stateconf.py) is the no-op these states run.
"""

from __future__ import annotations

import copy
import getopt
import logging
import os
import re
from collections.abc import Iterator
from typing import Any

from ..exceptions import RenderCodeError, RenderError
from .stages import RENDERERS, BuildContext, RenderEnv, run_stage

log = logging.getLogger(__name__)

DEFAULTS = {
    "stateconf_end_marker": r"#\s*-+\s*end of state config\s*-+",
    "stateconf_start_state": ".start",
    "stateconf_goal_state": ".goal",
    "stateconf_state_func": "stateconf.set",
}
REQUISITES = (
    "require",
    "require_in",
    "watch",
    "watch_in",
    "use",
    "use_in",
    "listen",
    "listen_in",
    "onchanges",
    "onchanges_in",
    "onfail",
    "onfail_in",
)
REQUIRE = ("require", "watch", "listen", "onchanges", "onfail")
REQUIRE_IN = ("require_in", "watch_in", "listen_in", "onchanges_in", "onfail_in")

# Salt's own usage text, which it gives as the error for a shebang it cannot split
USAGE = """Invalid use of stateconf.py renderer!
Usage: #!stateconf.py [-GoSp] [<data_renderer> [options] . <template_renderer> [options]]

where an example <data_renderer> would be yaml and a <template_renderer> might
be jinja. Each renderer can be passed its renderer specific options.

Options(for this renderer):

  -G   Do not generate the goal state that requires all other states in the sls.

  -o   Indirectly order the states by adding requires such that they will be
       executed in the order they are defined in the sls. Implies using yaml -o.

  -s   Generate the start state that gets inserted as the first state in
       the sls. This only makes sense if your high state data dict is ordered.

  -p   Assume high state input. This option allows you to pipe high state data
       through this renderer. With this option, the use of stateconf.set state
       in the sls will have no effect, but other features of the renderer still
       apply.

  """


def state_name(sname: str) -> str:
    """``pkg`` of ``pkg.installed`` (or of ``pkg``)."""
    return sname.split(".", 1)[0]


def _nvlist(items: Any, names: tuple[str, ...] | list[str] | None = None) -> Iterator[tuple[dict[str, Any], Any, Any]]:
    """(item, key, value) of each one-key dict of ``items`` whose key is in ``names``."""
    for item in items:
        if isinstance(item, dict):
            key, value = next(iter(item.items()))
            if names is None or key in names:
                yield item, key, value


def _nvlist2(items: Any, names: tuple[str, ...]) -> Iterator[tuple[dict[str, Any], Any, Any]]:
    """The requisite references under the ``names`` arguments of ``items``."""
    for _, _, value in _nvlist(items, names):
        yield from _nvlist(value)


def _statelist(
    data: dict[str, Any], skip: tuple[str, ...] = ("include", "exclude")
) -> Iterator[tuple[str, Any, str, Any]]:
    for sid, states in data.items():
        if sid.startswith("__") or sid in skip:
            continue
        for sname, args in states.items():
            if not sname.startswith("__"):
                yield sid, states, sname, args


def _relative_to_abs_sls(relative: str, sls: str) -> str:
    match = re.match(r"^(\.+)(.*)$", relative)
    levels, suffix = match.groups() if match else ("", relative)
    comps = sls.split(".")
    if len(levels) > len(comps):
        raise RenderError("Attempted relative include goes beyond top level package")
    return ".".join(comps[: -len(levels)] + [suffix])


def _local_to_abs_sid(sid: str, sls: str) -> str:
    if "::" in sid:
        return _relative_to_abs_sls(sid, sls)
    return "::".join(_relative_to_abs_sls(sid, sls + ".").rsplit(".", 1))


class _Stateconf:
    """One render: the options of the shebang line, the build's gathered settings."""

    def __init__(
        self, env: RenderEnv, saltenv: str, sls: str, flags: set[str], shared: dict[str, dict[str, Any]]
    ) -> None:
        opts = env.opts
        self.saltenv = saltenv
        self.sls = sls
        self.flags = flags
        self.start_sid = str(opts.get("stateconf_start_state", DEFAULTS["stateconf_start_state"]))
        self.goal_sid = str(opts.get("stateconf_goal_state", DEFAULTS["stateconf_goal_state"]))
        self.state_func = str(opts.get("stateconf_state_func", DEFAULTS["stateconf_state_func"]))
        self.state_name = self.state_func.split(".", 1)[0]
        self.end_marker = str(opts.get("stateconf_end_marker", DEFAULTS["stateconf_end_marker"]))
        self.conf = shared.setdefault("conf", {})  # stateconf.set arguments by ID
        self.conf_ext = shared.setdefault("conf_ext", {})  # ... under extend
        self.ext_require = shared.setdefault("ext_require", {})
        self.ext_require_in = shared.setdefault("ext_require_in", {})

    # -- the high data --------------------------------------------------------
    def process(self, high: Any, extract: bool) -> dict[str, Any]:
        from .highdata import verify_high

        data: dict[str, Any] = copy.deepcopy(high)
        try:
            for sid, states in data.items():  # `id: pkg.installed` is `id: {pkg.installed: []}`
                if isinstance(states, str):
                    data[sid] = {states: []}
            self._rewrite_includes(data)
            if not extract and "-o" in self.flags:
                for sid, _, _, args in _statelist(data):
                    if sid != "extend" and next(_nvlist(args, ["names"]), None):
                        raise RenderError(
                            f"'names' declaration(found in state id: {sid}) is not supported with implicitly "
                            "ordered states! You should generate the states in a template for-loop instead."
                        )
                self._implicit_requires(data)
            if "-s" in self.flags:
                self._start_state(data)
            if not extract and "-G" not in self.flags:
                self._goal_state(data)
            self._rename(data)
            self._extract(data)
        except RenderError:
            raise
        except Exception as exc:
            log.exception("Error found while pre-processing the salt file %s:\n%s", self.sls, exc)
            # Salt checks the data here without the file's name and crashes on it (KeyError
            # '__sls__'); briny names the file
            if isinstance(high, dict):
                high = {k: {"__sls__": self.sls, **v} if isinstance(v, dict) else v for k, v in high.items()}
            errors = verify_high(high)
            raise RenderError("\n".join(errors) if errors else "sls preprocessing/rendering failed!") from None
        return data

    def _rewrite_includes(self, data: dict[str, Any]) -> None:
        for i, each in enumerate(data.get("include") or []):
            env, incl = next(iter(each.items())) if isinstance(each, dict) and each else (self.saltenv, each)
            if isinstance(incl, str) and incl.startswith("."):
                data["include"][i] = {env: _relative_to_abs_sls(incl, self.sls)}
        for item in data.get("exclude") or []:
            if isinstance(item, dict) and str(item.get("sls", "")).startswith("."):
                item["sls"] = _relative_to_abs_sls(item["sls"], self.sls)

    def _implicit_requires(self, data: dict[str, Any]) -> None:
        def tag(sid: str, state: str) -> str:
            return f"{sid}:{state_name(state)}"

        before: set[str] = set()
        after = {tag(sid, state) for sid in data for state in data[sid]}
        prev: tuple[str, str] | None = None
        for sid, states, sname, args in _statelist(data):
            if sid == "extend":
                for esid, _, _, eargs in _statelist(states):
                    for _, rstate, rsid in _nvlist2(eargs, REQUIRE):
                        self.ext_require.setdefault(tag(esid, rstate), []).append((None, rstate, rsid))
                    for _, rstate, rsid in _nvlist2(eargs, REQUIRE_IN):
                        self.ext_require_in.setdefault(tag(esid, rstate), []).append((None, rstate, rsid))
                continue
            me = tag(sid, sname)
            after.remove(me)
            for _, rstate, rsid in [*_nvlist2(args, REQUIRE), *self.ext_require.get(me, [])]:
                if tag(rsid, rstate) in after:
                    raise RenderError(
                        f"State({me}) can't require/watch/listen/onchanges/onfail a state({tag(rsid, rstate)})"
                        " defined after it!"
                    )
            for _, rstate, rsid in [*_nvlist2(args, REQUIRE_IN), *self.ext_require_in.get(me, [])]:
                if tag(rsid, rstate) in before:
                    raise RenderError(
                        f"State({me}) can't require_in/watch_in/listen_in/onchanges_in/onfail_in a "
                        f"state({tag(rsid, rstate)}) defined before it!"
                    )
            if prev is not None:
                require = next(_nvlist(args, ["require"]), None)
                if require is not None:
                    require[2].insert(0, {prev[0]: prev[1]})
                else:
                    args.append({"require": [{prev[0]: prev[1]}]})
            before.add(me)
            prev = (state_name(sname), sid)

    def _start_state(self, data: dict[str, Any]) -> None:
        if self.start_sid in data:
            raise RenderError(f"Can't generate start state({self.start_sid})! The same state id already exists!")
        if not data:
            return
        for sid, states in data.items():
            if sid in ("include", "exclude", "extend") or sid.startswith("__"):
                continue
            if "__sls__" not in states or states["__sls__"] == self.sls:
                break
        else:
            raise RenderError("Can't determine the first state in the sls file!")
        first = {state_name(next(iter(data[sid]))): sid}
        data[self.start_sid] = {self.state_func: [{"require_in": [first]}]}

    def _goal_state(self, data: dict[str, Any]) -> None:
        if self.goal_sid in data:
            raise RenderError(f"Can't generate goal state({self.goal_sid})! The same state id already exists!")
        reqs = [
            {state_name(state): sid}
            for sid, states, state, _ in _statelist(data, ("include", "exclude", "extend"))
            if "__sls__" not in states  # included by pydsl: not this file's
        ]
        data[self.goal_sid] = {self.state_func: [{"require": reqs}]}

    def _rename(self, data: dict[str, Any], is_extend: bool = False) -> None:
        if "extend" in data and not is_extend:
            self._rename(data["extend"], True)
        for _, _, _, args in _statelist(data):
            for req, sname, rsid in _nvlist2(args, REQUISITES):
                if rsid.startswith("."):
                    req[sname] = _local_to_abs_sid(rsid, self.sls)
        for sid in list(data):
            if not sid.startswith("."):
                continue
            new = _local_to_abs_sid(sid, self.sls)
            if new in data:
                raise RenderError(f"Can't rename state id({sid}) into {new} because the later already exists!")
            for sname, args in data[sid].items():
                if state_name(sname) == self.state_name:
                    continue
                if not next(_nvlist(args, ["name"]), None):
                    args.insert(0, {"name": sid[1:]})
            data[new] = data.pop(sid)

    def _extract(self, data: dict[str, Any], is_extend: bool = False) -> None:
        for sid, states in data.items():
            if sid == "extend" and not is_extend:
                self._extract(states, True)
                continue
            key = (
                self.state_name if self.state_name in states else self.state_func if self.state_func in states else None
            )
            if key is None:
                continue
            into = self.conf_ext if is_extend else self.conf
            conf = into.setdefault(sid, {})
            for item in states[key]:
                if isinstance(item, dict):
                    name, value = next(iter(item.items()))
                    conf[name] = value
            if not is_extend and sid in self.conf_ext:
                ext = self.conf_ext[sid]
                for req in REQUIRE:
                    if req in ext:
                        ext[req] += conf.get(req, [])
                conf.update(ext)

    def context(self) -> dict[str, Any]:
        """The gathered settings as the template sees them (this file's without its prefix)."""
        prefix = f"{self.sls}::"
        return {k[len(prefix) :] if k.startswith(prefix) else k: v for k, v in self.conf.items()}


def render_stateconf(
    data: Any,
    *,
    env: RenderEnv,
    saltenv: str,
    sls: str | None,
    relpath: str | None,
    args: str = "",
    extra: dict[str, Any] | None = None,
    build: BuildContext | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Render an SLS (text; or high data with ``-p``) the stateconf way and return its high data."""
    try:
        found, rest = getopt.getopt(args.split(), "Gosp")
    except getopt.GetoptError as exc:
        raise RenderCodeError(str(exc)) from None
    name = sls or ""
    run = _Stateconf(env, saltenv, name, {flag for flag, _ in found}, build.stateconf if build else {})
    if "-p" in run.flags:
        if not isinstance(data, dict):
            raise RenderError("High data is not a dictionary and is invalid")
        return run.process(data, extract=False)

    argline = " ".join(rest) if rest else "yaml . jinja"
    parts = [part.strip().replace("\\.", ".") for part in re.split(r"\s+(?<!\\)\.\s+", argline, maxsplit=1)]
    data_name, _sep, data_args = f"{parts[0]} ".partition(" ")
    if data_name not in RENDERERS:
        raise RenderError(f"Renderer: '{data_name}' is not available!")
    if "-o" in run.flags and data_name != "yaml":
        raise RenderError("Implicit ordering is only supported if the yaml renderer is used!")
    if len(parts) < 2:
        raise RenderError(USAGE)
    tmpl_name, _sep, tmpl_args = f"{parts[1]} ".partition(" ")
    if tmpl_name not in RENDERERS:
        raise RenderError(f"Renderer: '{tmpl_name}' is not available!")
    if not isinstance(data, str):
        raise RenderError("The stateconf renderer takes text here; with -p it takes the high data before it")

    sls_dir = os.path.dirname(name.replace(".", "/")) if "." in name else name

    allowed, refused = env.opts.get("renderer_whitelist") or [], env.opts.get("renderer_blacklist") or []
    for inner in (data_name, tmpl_name):  # the lists rule inner renderers too: a pipeline would skip them
        if (allowed and inner not in allowed) or (refused and inner in refused):
            raise RenderError(f'The renderer "{inner}" is disallowed by configuration')

    def process(text: str, context: dict[str, Any], extract: bool) -> dict[str, Any]:
        ctx = {**(extra or {}), "sls_dir": sls_dir or ".", **context}
        kwargs: dict[str, Any] = {"env": env, "saltenv": saltenv, "sls": sls, "relpath": relpath, "build": build}
        out = run_stage(tmpl_name, text, extra=ctx, args=tmpl_args.strip(), **kwargs)
        high = run_stage(data_name, out, extra=extra, args=data_args.strip(), **kwargs)
        return run.process(high, extract)

    marker = re.search(run.end_marker, data)
    if marker:
        process(data[: marker.start()], {}, extract=True)
    return process(data, run.context(), extract=False)
