"""From SLS names to high data: render files, follow includes, gather extends.

Runs wherever SLS is compiled. Pure given its :class:`RenderEnv` (the file
client, the host's grains and pillar, the execution functions templates may
call): no sockets.

:class:`HighStateBuilder` renders each SLS once per build, in Salt's order:

1. render the file through its pipeline (:mod:`render`), with the build's
   :class:`~briny.common.state.stages.BuildContext` (a ``#!pydsl`` file's
   ``include()`` renders other SLS into this build at once);
2. pull out ``include``, ``extend`` and ``exclude``;
3. normalise state declarations (``pkg.installed: [...]`` becomes
   ``pkg: [..., "installed"]``, a bare ``id: pkg.installed`` string is
   padded) and stamp ``__sls__`` / ``__env__``;
4. render the includes (absolute, relative ``.sub`` / ``..sub``, globs,
   ``{env: sls}``), mark their IDs ``__sls_included_from__`` and merge them,
   refusing an ID defined differently in two files;
5. with ``state_auto_order`` give each state declaration without an
   ``order`` the next number from 10000, so included files come first.

Errors are collected as Salt's strings, never raised.
"""

from __future__ import annotations

import fnmatch
import logging
import re
from typing import Any

from ..exceptions import BrinyError, FileServerError, RenderCodeError, RenderError
from ..logsetup import timed
from ..fileclient import find_sls
from .render import render_text
from .highdata import dedupe_extends, merge_included
from .stages import BuildContext, RenderEnv

log = logging.getLogger(__name__)

HighData = dict[str, Any]
Matches = dict[str, list[str]]
_RELATIVE_RE = re.compile(r"^(\.+)(.*)$")


class HighStateBuilder:
    """Renders SLS files into one high data dict, remembering what it rendered."""

    def __init__(self, env: RenderEnv) -> None:
        self.env = env
        self.opts = env.opts
        self.iorder = 10000
        self._avail: dict[str, list[str]] = {}
        # what the renders of this build share (pydsl's include renders into this build)
        self.build = BuildContext(render_sls=self._render_now)
        self._rendering: tuple[set[str], Matches | None] = (set(), None)
        self._in_progress: list[str] = []  # the env:sls whose render is under way, outermost first

    # -- what exists ------------------------------------------------------
    def avail(self, saltenv: str) -> list[str]:
        if saltenv not in self._avail:
            self._avail[saltenv] = self.env.client.list_states(saltenv)
        return self._avail[saltenv]

    def envs(self) -> list[str]:
        envs = list(self.env.client.envs())
        order = self.opts.get("env_order") or []
        if order:
            return [e for e in order if e in envs] + [e for e in envs if e not in order]
        if "base" in envs:
            envs.remove("base")
            envs.insert(0, "base")
        return envs

    # -- one file ---------------------------------------------------------
    def render_file(self, sls: str, saltenv: str, relpath: str, kind: str = "SLS") -> Any:
        """The data the SLS file at ``relpath`` renders to (timed, as Salt logs it); RenderError,
        FileServerError (or another BrinyError of a renderer) when it does not render. ``kind``
        names it in the log ("SLS", "pillar SLS")."""
        with timed(
            log,
            "Rendering %s '%s:%s' (%s)",
            "Time (in seconds) to render %s '%s:%s' (%s): %.6f",
            kind,
            saltenv,
            sls,
            relpath,
        ):
            text = self.env.client.get_text(relpath, saltenv) or ""
            return render_text(text, env=self.env, saltenv=saltenv, sls=sls, relpath=relpath, build=self.build)

    def _render_now(self, sls: str, saltenv: str, parent: str) -> tuple[HighData, list[str]]:
        """Render ``sls`` in the middle of rendering ``parent`` (pydsl's ``include``), as part of the
        build under way; nothing when it was rendered already. ``parent`` is not rendered yet (as
        in Salt: an SLS including it back renders it again, which pydsl refuses); an ``sls`` still
        rendering is a cycle of pydsl includes, refused (Salt recurses until it fails)."""
        mods, matches = self._rendering
        if f"{saltenv}:{sls}" in mods:
            return {}, []
        if f"{saltenv}:{sls}" in self._in_progress:
            return {}, [
                f"it includes {sls}, which is still rendering: pydsl files that include each other make a cycle"
            ]
        return self.render_state(sls, saltenv, mods, matches)

    def render_state(
        self,
        sls: str,
        saltenv: str,
        mods: set[str],
        matches: Matches | None,
    ) -> tuple[HighData, list[str]]:
        errors: list[str] = []
        found = find_sls(self.env.client, sls, saltenv) if isinstance(sls, str) else None
        if found is None:
            errors.append(
                f"Specified SLS {sls} in saltenv {saltenv} is not available on the "
                "salt master or through a configured fileserver"
            )
            return {}, errors
        relpath, _ = found
        state: Any = None
        self._rendering = (mods, matches)
        self._in_progress.append(f"{saltenv}:{sls}")
        try:
            state = self.render_file(sls, saltenv, relpath)
        except RenderCodeError as exc:
            msg = f"Rendering SLS {sls} failed, render error: {exc}"
            log.critical(msg)
            errors.append(msg)
        except (RenderError, FileServerError) as exc:
            msg = f"Rendering SLS '{saltenv}:{sls}' failed: {exc}"
            log.critical(msg)
            errors.append(msg)
        except BrinyError as exc:
            msg = f"Rendering SLS {sls} failed, render error: {exc}"
            log.critical(msg)
            errors.append(msg)
        finally:
            self._in_progress.pop()
        mods.add(f"{saltenv}:{sls}")
        if not state:
            return {}, errors
        if not isinstance(state, dict):
            errors.append(f"SLS {sls} does not render to a dictionary")
            return {}, errors

        include: list[Any] = []
        if "include" in state:
            if not isinstance(state["include"], list):
                errors.append(f"Include Declaration in SLS {sls} is not formed as a list")
            else:
                include = state.pop("include")
        self._handle_extend(state, sls, saltenv, errors)
        self._handle_exclude(state, sls, saltenv, errors)
        self._handle_state_decls(state, sls, saltenv, errors)
        for inc in include:
            self._include(state, inc, sls, saltenv, relpath, mods, matches, errors)
        self._handle_iorder(state)
        return state, errors

    def _include(
        self,
        state: HighData,
        inc: Any,
        sls: str,
        saltenv: str,
        relpath: str,
        mods: set[str],
        matches: Matches | None,
        errors: list[str],
    ) -> None:
        if isinstance(inc, dict) and inc:
            env_key, inc_sls = next(iter(inc.items()))
        else:
            env_key, inc_sls = saltenv, inc
        inc_sls = str(inc_sls)
        if env_key != "_xenv" and env_key not in self.env.client.envs():
            msg = f"Nonexistent saltenv '{env_key}' found in include of '{inc_sls}' within SLS '{saltenv}:{sls}'"
            log.error(msg)
            errors.append(msg)
            return
        if inc_sls.startswith("."):
            m = _RELATIVE_RE.match(inc_sls)
            levels, rest = m.groups() if m else ("", inc_sls)
            comps = sls.split(".")
            if relpath.endswith("/init.sls") or relpath == "init.sls":
                comps.append("init")
            if len(levels) > len(comps):
                msg = (
                    f"Attempted relative include of '{inc_sls}' within SLS "
                    f"'{saltenv}:{sls}' goes beyond top level package "
                )
                log.error(msg)
                errors.append(msg)
                return
            inc_sls = ".".join(comps[: -len(levels)] + [rest])
        matches = matches or {}
        if env_key != "_xenv":
            resolved = [env_key] if env_key in matches or fnmatch.filter(self.avail(env_key), inc_sls) else []
        else:
            resolved = [e for e in matches if fnmatch.filter(self.avail(e), inc_sls)]
        if not (len(resolved) == 1 or saltenv in resolved):
            if not resolved:
                where = ", ".join(matches) if env_key == "_xenv" else env_key
                msg = (
                    f"Unknown include: Specified SLS {env_key}: {inc_sls} is not available on "
                    f"the salt master in saltenv(s): {where} "
                )
            else:
                msg = (
                    f"Ambiguous include: Specified SLS {env_key}: {inc_sls} is available on the "
                    f"salt master in multiple available saltenvs: {', '.join(resolved)}"
                )
            log.critical(msg)
            errors.append(msg)
            return
        r_env = resolved[0] if len(resolved) == 1 else saltenv
        for target in fnmatch.filter(self.avail(saltenv), inc_sls) or [inc_sls]:
            if f"{r_env}:{target}" in mods:
                continue
            nstate, err = self.render_state(target, r_env, mods, matches)
            if nstate:
                for item, body in nstate.items():
                    if isinstance(item, str) and item.startswith("__"):
                        continue
                    if isinstance(body, dict):
                        body.setdefault("__sls_included_from__", []).append(sls)
                merge_included(state, nstate, errors)
            errors.extend(err)

    # -- declarations -----------------------------------------------------
    @staticmethod
    def _handle_extend(state: HighData, sls: str, saltenv: str, errors: list[str]) -> None:
        if "extend" not in state:
            return
        ext = state.pop("extend")
        if not isinstance(ext, dict):
            errors.append(f"Extension value in SLS '{sls}' is not a dictionary")
            return
        for name, body in ext.items():
            if not isinstance(body, dict):
                errors.append(f"Extension name '{name}' in SLS '{sls}' is not a dictionary")
                continue
            body.setdefault("__sls__", sls)
            body.setdefault("__env__", saltenv)
            for key in list(body):
                if not isinstance(key, str) or key.startswith("_") or not isinstance(body[key], list):
                    continue
                if "." in key:
                    mod, fun = key.split(".", 1)
                    body[mod] = body.pop(key)
                    body[mod].append(fun)
        state.setdefault("__extend__", []).append(ext)

    @staticmethod
    def _handle_exclude(state: HighData, sls: str, saltenv: str, errors: list[str]) -> None:
        if "exclude" not in state:
            return
        exc = state.pop("exclude")
        if not isinstance(exc, list):
            errors.append(f"Exclude Declaration in SLS {sls} is not formed as a list")
            exc = [exc]
        state.setdefault("__exclude__", []).extend(exc)

    @staticmethod
    def _handle_state_decls(state: HighData, sls: str, saltenv: str, errors: list[str]) -> None:
        for name in list(state):
            body = state[name]
            if name in ("__extend__", "__exclude__"):
                continue
            if not isinstance(body, dict):
                if isinstance(body, str) and "." in body:
                    mod, fun = body.split(".", 1)[0], body.split(".")[1]
                    state[name] = {"__sls__": sls, "__env__": saltenv, mod: [fun]}
                    continue
                errors.append(f"ID {name} in SLS {sls} is not a dictionary")
                continue
            seen: set[str] = set()
            for key in list(body):
                if not isinstance(key, str) or key.startswith("_") or not isinstance(body[key], list):
                    continue
                if "." in key:
                    mod, fun = key.split(".")[0], key.split(".")[1]
                    if mod in seen:
                        errors.append(
                            f"ID '{name}' in SLS '{sls}' contains multiple state declarations of the same type"
                        )
                        continue
                    body[mod] = body.pop(key)
                    body[mod].append(fun)
                    seen.add(mod)
                    continue
                seen.add(key)
            body.setdefault("__sls__", sls)
            body.setdefault("__env__", saltenv)

    def _handle_iorder(self, state: HighData) -> None:
        if not self.opts.get("state_auto_order", True):
            return
        for body in state.values():
            if not isinstance(body, dict):
                continue
            for dec, args in body.items():
                if not isinstance(dec, str) or dec.startswith("_") or not isinstance(args, list):
                    continue
                if any(isinstance(a, dict) and a and next(iter(a)) == "order" for a in args):
                    continue
                args.append({"order": self.iorder})
                self.iorder += 1

    # -- many files -------------------------------------------------------
    def render_highstate(self, matches: Matches) -> tuple[HighData, list[str]]:
        """Render every SLS the matches name into one high data dict."""
        high: HighData = {}
        all_errors: list[str] = []
        mods: set[str] = set()
        for saltenv, names in matches.items():
            for sls_match in names:
                if saltenv in self.env.client.envs():
                    files = fnmatch.filter(self.avail(saltenv), str(sls_match))
                else:
                    all_errors.append(f"No matching salt environment for environment '{saltenv}' found")
                    files = []
                for sls in files or [sls_match]:
                    if f"{saltenv}:{sls}" in mods:
                        continue
                    state, errors = self.render_state(sls, saltenv, mods, matches)
                    if state:
                        merge_included(high, state, errors)
                    wanted = f"SLS {sls_match} in saltenv"
                    errors = [
                        f"No matching sls found for '{sls_match}' in env '{saltenv}'"
                        if "is not available" in e and wanted in e
                        else e
                        for e in errors
                    ]
                    all_errors.extend(errors)
        dedupe_extends(high)
        return high, all_errors
