"""The top file: which SLS each host applies, from which environment.

Runs wherever a highstate is compiled (the master for each minion, or the
host itself). Steps, as Salt's:

1. :func:`get_tops` renders ``state_top`` (``top.sls``) of each environment
   (or only ``saltenv`` / ``state_top_saltenv`` when set), following a top
   file's own ``include``;
2. :func:`merge_tops` merges them by ``top_file_merging_strategy``
   (``merge``: base is authoritative and another environment's top file
   counts only for its own section; ``same``; ``merge_all``);
3. :func:`verify_tops` reports malformed tops in Salt's words;
4. :func:`top_matches` keeps the targets that match this host (glob by
   default, or ``- match: grain|list|pcre|compound|pillar|...``).
"""

from __future__ import annotations

import fnmatch
import logging
from typing import Any

from ..exceptions import BrinyError, RenderError
from .highstate import HighStateBuilder
from .render import render_text

log = logging.getLogger(__name__)

Tops = dict[str, list[dict[str, Any]]]


def get_tops(builder: HighStateBuilder) -> Tops:
    opts = builder.opts
    client = builder.env.client
    top_name = opts.get("state_top") or "top.sls"
    if top_name.startswith("salt://"):
        top_name = top_name[len("salt://") :]
    tops: Tops = {}

    def _render(path: str, env: str) -> dict[str, Any]:
        text = client.get_text(path, env)
        if text is None:
            return {}
        data = render_text(text, env=builder.env, saltenv=env, relpath=path)
        return data if isinstance(data, dict) else {}

    if opts.get("saltenv"):
        envs = [str(opts["saltenv"])]
    elif opts.get("state_top_saltenv"):
        envs = [str(opts["state_top_saltenv"])]
    else:
        envs = builder.envs()
    for env in envs:
        tops.setdefault(env, []).append(_render(top_name, env))

    # a top file may include further top files, by SLS name
    for env, ctops in list(tops.items()):
        includes: list[str] = []
        for ctop in ctops:
            inc = ctop.pop("include", None)
            if isinstance(inc, list):
                includes.extend(str(i) for i in inc)
        done: set[str] = set()
        for pattern in includes:
            for sls in fnmatch.filter(builder.avail(env), pattern):
                if sls in done:
                    continue
                done.add(sls)
                found = _sls_path(builder, sls, env)
                if found:
                    ctops.append(_render(found, env))
    return tops


def _sls_path(builder: HighStateBuilder, sls: str, env: str) -> str | None:
    from ..fileclient import find_sls

    hit = find_sls(builder.env.client, sls, env)
    return hit[0] if hit else None


def merge_tops(tops: Tops, opts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    strategy = opts.get("top_file_merging_strategy") or "merge"
    if strategy == "same":
        return _merge_same(tops, opts)
    if strategy == "merge_all":
        return _merge_all(tops)
    if strategy != "merge":
        log.warning("Invalid top_file_merging_strategy '%s', falling back to 'merge'", strategy)
    return _merge_merge(tops)


def _sections(ctop: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(env, targets) for env, targets in ctop.items() if env != "include"]


def _copy_targets(top: dict[str, dict[str, Any]], env: str, targets: Any) -> None:
    if not isinstance(targets, dict):
        raise RenderError("Unable to render top file. No targets found.")
    section = top.setdefault(env, {})
    for tgt, val in targets.items():
        section[tgt] = val


def _merge_merge(tops: Tops) -> dict[str, dict[str, Any]]:
    top: dict[str, dict[str, Any]] = {}
    tops = dict(tops)
    for ctop in tops.pop("base", []):
        for env, targets in _sections(ctop):
            _copy_targets(top, env, targets)
    for cenv, ctops in tops.items():
        for ctop in ctops:
            for env, targets in _sections(ctop):
                if env != cenv or env in top:
                    continue
                _copy_targets(top, env, targets)
    return top


def _merge_same(tops: Tops, opts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    top: dict[str, dict[str, Any]] = {}
    for cenv, ctops in tops.items():
        source = ctops
        if all(not c for c in ctops):
            source = tops.get(opts.get("default_top") or "base", [])
        for ctop in source:
            for env, targets in _sections(ctop):
                if env == cenv:
                    _copy_targets(top, env, targets)
    return top


def _merge_all(tops: Tops) -> dict[str, dict[str, Any]]:
    top: dict[str, dict[str, Any]] = {}
    for ctops in tops.values():
        for ctop in ctops:
            for env, targets in _sections(ctop):
                if not isinstance(targets, dict):
                    raise RenderError("Unable to render top file. No targets found.")
                section = top.setdefault(env, {})
                for tgt, val in targets.items():
                    if tgt not in section:
                        section[tgt] = val
                        continue
                    old, new = _as_list(section[tgt]), _as_list(val)
                    mtype = next((x for x in new if isinstance(x, dict)), None) or next(
                        (x for x in old if isinstance(x, dict)), None
                    )
                    states = [x for x in old if isinstance(x, str)]
                    states += [x for x in new if isinstance(x, str) and x not in states]
                    section[tgt] = ([mtype] if mtype else []) + states
    return top


def _as_list(val: Any) -> list[Any]:
    return val if isinstance(val, list) else [val]


def verify_tops(top: Any) -> list[str]:
    errors: list[str] = []
    if not isinstance(top, dict):
        return ["Top data was not formed as a dict"]
    for env, matches in top.items():
        if env == "include":
            continue
        if not isinstance(env, str):
            errors.append(f"Environment {env} in top file is not formed as a string")
        if env == "":
            errors.append("Empty saltenv statement in top file")
        if not isinstance(matches, dict):
            errors.append(f"The top file matches for saltenv {env} are not formatted as a dict")
            continue
        for match, mods in matches.items():
            if not isinstance(mods, list):
                errors.append(
                    f"Malformed topfile: state declarations for matcher {match!r} in "
                    f"saltenv {env!r} are not formed as a list (got {type(mods).__name__})"
                )
                continue
            for mod in mods:
                if isinstance(mod, dict):
                    for val in mod.values():
                        if not val:
                            errors.append(f"Improperly formatted top file matcher in saltenv {mod}: {val} file")
                elif isinstance(mod, str) and not mod:
                    errors.append(f"Environment {env} contains an empty sls index")
    return errors


def confirm_top(
    match: str, data: list[Any], opts: dict[str, Any], grains: dict[str, Any], pillar: dict[str, Any]
) -> bool:
    """Does the top target ``match`` (with its ``- match: type`` option) name this host?"""
    from ..matchers import match as run_match

    tgt_type = "glob"
    for item in data:
        if isinstance(item, dict) and "match" in item:
            tgt_type = str(item["match"])
    # nodegroups are read only by targets that use them (the master compiling for a minion
    # counts each opts read: a minion whose nodegroups differ compiles such a top itself)
    groups = tgt_type == "nodegroup" or (tgt_type == "compound" and "N@" in str(match))
    try:
        return bool(
            run_match(
                str(match),
                tgt_type,
                str(opts.get("id")),
                grains,
                pillar,
                nodegroups=(opts.get("nodegroups") or {}) if groups else {},
            )
        )
    except BrinyError as exc:
        log.error("Top file target %r (%s) did not parse: %s", match, tgt_type, exc)
        return False


def top_matches(top: dict[str, dict[str, Any]], builder: HighStateBuilder) -> dict[str, list[str]]:
    """{saltenv: [sls, ...]} for this host, in top file order."""
    opts, grains, pillar = builder.opts, builder.env.grains, builder.env.pillar
    envs = set(builder.env.client.envs())
    matches: dict[str, list[str]] = {}
    only = opts.get("saltenv")

    def _add(saltenv: str, match: Any, data: Any) -> None:
        items = [data] if isinstance(data, str) else list(data or [])
        if not confirm_top(match, items, opts, grains, pillar):
            return
        matches.setdefault(saltenv, [])
        for item in items:
            if isinstance(item, dict) and "subfilter" in item:
                for sub_match, sub_data in (item.get("subfilter") or {}).items():
                    _add(saltenv, sub_match, sub_data)
                continue
            if isinstance(item, str):
                matches[saltenv].append(item)
            elif isinstance(item, dict) and item and "match" not in item:
                env_key, sls = next(iter(item.items()))
                if env_key in envs:
                    matches.setdefault(env_key, []).append(sls)

    for saltenv, body in top.items():
        if only and saltenv != only:
            continue
        if not isinstance(body, dict):
            continue
        for match, data in body.items():
            _add(saltenv, match, data)
    return matches
