"""Renderers: turn an SLS, top or pillar file into data, as Salt's pipeline does.

Runs wherever SLS is compiled (``briny-call --local``, the master, a minion
that compiles for itself). A file's first line may name its pipeline
(``#!jinja|yaml``, ``#!yaml``, ``#!jinja|json``, ``#!json``, ``#!py``,
``#!pydsl``, ``#!stateconf yaml . jinja``); otherwise ``opts["renderer"]``
applies (``jinja|yaml``). Each stage takes the previous stage's output: text
renderers (jinja) return text, data renderers (yaml, json, py, pydsl,
stateconf) return data. ``pydsl`` (:mod:`render_pydsl`) and ``stateconf``
(:mod:`render_stateconf`) live in their own modules; what the renders of one
highstate build share (pydsl's ``include``, stateconf's gathered settings) is
a :class:`BuildContext`.

Templates get ``salt`` as a :class:`~briny.common.state.hostview.SaltFunctions`
(never the loader itself). When the master renders for a minion the
:class:`RenderEnv` carries a ``boundary``: ``#!py`` (Python) runs only where
it allows it, and Jinja's host-reading filters ask it first.

Errors are :class:`RenderError` whose message is the text Salt puts after
``Rendering SLS 'env:name' failed: ``.
"""

from __future__ import annotations

import json
import logging
import types
from typing import Any

import yaml

from .. import yamlloader
from ..exceptions import RenderError
from .render_pydsl import render_pydsl
from .render_stateconf import render_stateconf
from .stages import RENDERERS, BuildContext, RenderEnv, error_with_context, run_stage

log = logging.getLogger(__name__)

# -- the renderers ---------------------------------------------------------


def _render_yaml(data: Any, **_: Any) -> Any:
    if not isinstance(data, str):
        return data
    try:
        result = yamlloader.load(data)
    except yaml.scanner.ScannerError as exc:
        problem = exc.problem or "YAML scanner error"
        if "'\\t'" in problem or "\t" in problem:
            problem = "Illegal tab character"
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise RenderError(error_with_context(problem, line, data)) from None
    except yaml.YAMLError as exc:
        raise RenderError(str(exc)) from None
    _check_keys(result)
    return result if result else {}


def _check_keys(data: Any) -> None:
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(key, dict):
                    raise RenderError("Invalid YAML, possible double curly-brace")
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)


def _render_json(data: Any, **_: Any) -> Any:
    if not isinstance(data, str):
        return data
    if data.startswith("#!"):
        data = data.partition("\n")[2]
    if not data.strip():
        return {}
    try:
        return json.loads(data)
    except ValueError as exc:
        raise RenderError(f"Could not parse JSON: {exc}") from None


def _render_jinja(
    data: Any,
    *,
    env: RenderEnv,
    saltenv: str,
    sls: str | None,
    relpath: str | None,
    extra: dict[str, Any] | None = None,
    **_: Any,
) -> Any:
    from .jinja import render_jinja, template_vars  # the Jinja layer is loaded only when used

    context: dict[str, Any] = {
        "salt": env.salt,
        "grains": env.grains,
        "pillar": env.pillar,
        "opts": env.opts_for_templates(),
        "saltenv": saltenv,
        "env": saltenv,
    }
    context.update(template_vars(sls, relpath, saltenv))
    if extra:
        context.update(extra)
    return render_jinja(
        data, context, client=env.client, saltenv=saltenv, tmplpath=relpath, opts=env.opts, boundary=env.boundary
    )


def _render_py(data: Any, *, env: RenderEnv, saltenv: str, sls: str | None, relpath: str | None, **_: Any) -> Any:
    module = types.ModuleType(f"briny.sls.{sls or 'template'}")
    module.__dict__.update(
        {
            "__salt__": env.salt,
            "salt": env.salt,
            "__grains__": env.grains,
            "__pillar__": env.pillar,
            "__opts__": env.opts_for_templates(),
            "__env__": saltenv,
            "saltenv": saltenv,
            "__sls__": sls,
            "sls": sls,
            "__file__": relpath or "<py>",
        }
    )
    try:
        exec(compile(data, relpath or "<py renderer>", "exec"), module.__dict__)  # noqa: S102 - the #!py renderer runs the template: that is what it is
        run = module.__dict__.get("run")
        if not callable(run):
            raise RenderError("The #!py renderer needs a run() function returning the state data")
        return run()
    except RenderError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the #!py template raises is a render error
        raise RenderError(f"{type(exc).__name__}: {exc}") from None


RENDERERS.update(
    {
        "jinja": _render_jinja,
        "yaml": _render_yaml,
        "yamlex": _render_yaml,
        "json": _render_json,
        "py": _render_py,
        "pydsl": render_pydsl,
        "stateconf": render_stateconf,
    }
)


# Salt's old single-word names for pipelines (``#!yaml_jinja`` is ``#!jinja|yaml``)
OLD_STYLE = {"yaml_jinja": "jinja|yaml", "json_jinja": "jinja|json", "yamlex_jinja": "jinja|yamlex"}
TEXT_RENDERERS = frozenset({"jinja"})  # stages that take text (the others also take data)


def pipeline(pipe: str, opts: dict[str, Any]) -> list[tuple[str, str]]:
    """The renderers (name, argument line) a shebang or ``renderer`` names, as Salt reads them:
    ``|``-separated, Salt's old single-word names, ``renderer_whitelist`` / ``renderer_blacklist``
    (a renderer they rule out is skipped with a warning). A renderer briny does not have makes the
    whole pipeline empty, as in Salt: it logs ``The renderer "jinja|nosuch" is not available`` and
    the file renders to nothing (its states do not run; ``state.sls`` of it fails as Salt's does)."""
    parts = [p.strip() for p in pipe.split("|")]
    if len(parts) == 1 and pipe.strip() in OLD_STYLE:
        parts = OLD_STYLE[pipe.strip()].split("|")
    allowed, refused = opts.get("renderer_whitelist") or [], opts.get("renderer_blacklist") or []
    out: list[tuple[str, str]] = []
    for part in parts:
        name, _, args = part.partition(" ")
        if (allowed and name not in allowed) or (refused and name in refused):
            log.warning('The renderer "%s" is disallowed by configuration and will be skipped.', name)
            continue
        if name not in RENDERERS:
            log.error('The renderer "%s" is not available', pipe.strip())
            return []
        out.append((name, args.strip()))
    return out


def run_pipeline(
    text: str,
    *,
    env: RenderEnv,
    saltenv: str,
    sls: str | None = None,
    relpath: str | None = None,
    default: str | None = None,
    extra: dict[str, Any] | None = None,
    build: BuildContext | None = None,
) -> Any:
    """``text`` through the pipeline its shebang names (else ``default``, the ``renderer`` option,
    ``jinja|yaml``), as the last renderer leaves it: data, or text when that renderer gives text;
    ``{}`` when no renderer is left to run (an unknown one, or all disallowed), as in Salt."""
    # the shebang line stays in the text (a comment to YAML, Jinja and Python), so
    # line numbers in errors are the file's own
    pipe = default or env.opts.get("renderer") or "jinja|yaml"
    if text.startswith("#!"):
        pipe = text.partition("\n")[0][2:].strip()
    data: Any = text
    stages = pipeline(pipe, env.opts)
    if not stages:
        return {}
    for name, args in stages:
        if name in TEXT_RENDERERS and not isinstance(data, str):
            raise RenderError(f'The renderer "{name}" takes text, and the renderer before it in "{pipe}" gave data')
        data = run_stage(
            name, data, env=env, saltenv=saltenv, sls=sls, relpath=relpath, extra=extra, args=args, build=build
        )
    return data


def render_text(
    text: str,
    *,
    env: RenderEnv,
    saltenv: str,
    sls: str | None = None,
    relpath: str | None = None,
    default: str | None = None,
    extra: dict[str, Any] | None = None,
    build: BuildContext | None = None,
) -> Any:
    """Run ``text`` through its renderer pipeline and return the data.

    An empty or whitespace-only file renders to ``{}``.
    """
    if not text.strip():
        return {}
    data = run_pipeline(
        text, env=env, saltenv=saltenv, sls=sls, relpath=relpath, default=default, extra=extra, build=build
    )
    if isinstance(data, str):
        # a pipeline that ends in text (e.g. plain #!jinja) yields no state data
        data = _render_yaml(data)
    return data
