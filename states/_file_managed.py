"""``file.managed``: a file with the given contents (a source, a template, text, pillar or
grains), owner and mode.

Runs on the host applying states; a private file of ``states/file.py`` (which
exposes ``managed`` as its own; ``file.recurse`` and ``file.serialize`` call
it too), loaded with its dunders (see :mod:`briny.common.loader`).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import BrinyError

from ._file_accumulated import _template_context
from ._file_common import _env, _fail, _salt, _start
from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

log = logging.getLogger(__name__)

_NOT_FOUND = object()  # contents_pillar / contents_grains: no such key

# Arguments of Salt's file.managed that briny's does not name: Salt binds them, so they never
# reach its template as extra keyword arguments
_SALT_ONLY_ARGS = frozenset(
    [
        "keep_source",
        "tmp_ext",
        "encoding",
        "encoding_errors",
        "allow_empty",
        "selinux",
        "win_owner",
        "win_perms",
        "win_deny_perms",
        "win_inheritance",
        "win_perms_reset",
        "verify_ssl",
        "use_etag",
        "signature",
        "source_hash_sig",
        "signed_by_any",
        "signed_by_all",
        "keyring",
        "gnupghome",
    ]
)


def _as_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "\n".join(str(v) for v in value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _matches_source_hash(name: str, source: Any, source_hash: Any, source_hash_name: Any, env: str) -> bool:
    """Whether the file at ``name`` already has the ``source_hash`` of a remote source (Salt then
    leaves the content alone and never downloads it). A hash that cannot be had is logged."""
    items = source if isinstance(source, list) else [source]
    urls = [str(k) for i in items for k in (i if isinstance(i, dict) else [i])]
    if all(u.startswith(("salt://", "file://", "/")) for u in urls):
        return False
    try:
        src, shash = __salt__["file.source_list"](source, source_hash, env)
        if not src or not shash or str(src).startswith(("salt://", "file://")) or os.path.isabs(str(src)):
            return False
        sums = __salt__["file.get_source_sum"](name, src, shash, source_hash_name, env)
        return bool(sums["hsum"] == __salt__["file.get_hash"](name, sums["hash_type"]))
    except (BrinyError, OSError) as exc:
        log.error("Failed checking existing file's hash against specified source_hash: %s", exc)
        return False


def _keeps_mode(source: str) -> bool:
    """``mode: keep`` reads the mode of ``salt://``, ``file://`` and local sources (not of http ones)."""
    return source.startswith(("salt://", "file://", "/"))


def managed(
    name: str,
    source: Any = None,
    source_hash: Any = "",
    source_hash_name: str | None = None,
    user: Any = None,
    group: Any = None,
    mode: Any = None,
    template: str | None = None,
    makedirs: bool = False,
    dir_mode: Any = None,
    context: Any = None,
    replace: bool = True,
    defaults: Any = None,
    backup: str = "",
    show_changes: bool = True,
    create: bool = True,
    contents: Any = None,
    tmp_dir: str = "",
    contents_pillar: str | None = None,
    contents_grains: str | None = None,
    contents_newline: bool = True,
    contents_delimiter: str = ":",
    follow_symlinks: bool = True,
    check_cmd: str | None = None,
    skip_verify: bool = False,
    saltenv: str | None = None,
    attrs: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Make ``name`` a file with the given contents (source, template, text), owner and mode."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    given = [x for x in (contents, contents_pillar, contents_grains) if x is not None]
    if source and given:
        return _fail(
            ret, "'source' cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'"
        )
    keep_mode = isinstance(mode, str) and mode.lower() == "keep"
    if keep_mode:
        mode = None  # the source's mode, read below when the file is written
        if given:
            return _fail(
                ret,
                "Mode preservation cannot be used in combination with 'contents', "
                "'contents_pillar', or 'contents_grains'",
            )
    if len(given) > 1:
        return _fail(ret, "Only one of 'contents', 'contents_pillar', and 'contents_grains' is permitted")
    if template and str(template).lower() != "jinja":
        return _fail(ret, f"Specified template format {template} is not supported")
    try:
        mode = _salt("normalize_mode")(mode)
        dir_mode = _salt("normalize_mode")(dir_mode)
    except BrinyError as exc:
        return _fail(ret, str(exc))
    if contents_pillar is not None or contents_grains is not None:
        key = contents_pillar if contents_pillar is not None else contents_grains
        lookup = __salt__["pillar.get" if contents_pillar is not None else "grains.get"]
        value = lookup(str(key), _NOT_FOUND, delimiter=contents_delimiter)
        if value is _NOT_FOUND:
            return _fail(ret, f"{'Pillar' if contents_pillar is not None else 'Grain'} {key} does not exist")
        contents = _as_text(value)
    if contents is not None:
        contents = _as_text(contents)
        if contents_newline and not contents.endswith("\n"):
            contents += "\n"

    real = os.path.realpath(name) if follow_symlinks else name
    if os.path.isdir(real) and not os.path.islink(name if not follow_symlinks else real):
        return _fail(ret, f"Specified target {name} is a directory")
    present = os.path.lexists(real)
    if not present and not create:
        ret.update(result=True, comment=f"File {name} is not present and is not set for creation")
        return ret
    if present and not os.path.isfile(real) and not (not follow_symlinks and os.path.islink(name)):
        return _fail(ret, f"Specified target {name} exists and is not a regular file")

    env = _env(saltenv, kwargs)
    context = _template_context(name, context)  # file.accumulated's texts for this file
    # the template's variables, as Salt's file.get_managed gives them: the state's own
    # arguments below and every extra keyword argument of the state (`- context:` followed by
    # sibling keys in public formulas), `defaults` and `context` laid over them
    extra = {k: v for k, v in kwargs.items() if k not in _SALT_ONLY_ARGS}
    extra.update(name=name, source=source, user=user, group=group, mode=mode, attrs=attrs, saltenv=env)
    if contents is None and not template and source and not skip_verify and present and replace:
        replace = not _matches_source_hash(name, source, source_hash, source_hash_name, env)
    if not replace and present:  # as Salt: only the owner and mode are looked at, the source is not read
        plan: dict[str, Any] = {"comment": "", "raw": False, "data": None, "source": None, "from_source": False}
        plan["sums"] = None
    else:
        plan = _salt("managed_data")(
            name,
            source=source,
            source_hash=source_hash,
            source_hash_name=source_hash_name,
            template=template,
            context=context,
            defaults=defaults,
            contents=contents,
            saltenv=env,
            skip_verify=skip_verify,
            extra=extra,
        )
    if plan["comment"]:
        if plan["raw"] and _testing():
            return _fail(ret, plan["comment"])
        return _fail(ret, "Unable to manage file: " + plan["comment"])
    data = plan["data"]
    if _testing():  # as Salt: `mode: keep` checks no mode in test mode (the source is not fetched)
        result, changes, comment = _salt("check_managed_data")(
            name, data, user, group, mode, show_changes, follow_symlinks, replace
        )
        ret.update(result=result, changes=changes, comment=comment)
        return ret
    if check_cmd and data is not None:
        cret = _salt("check_cmd_data")(check_cmd, data, tmp_dir or None)
        if cret.get("retcode"):
            ret["skip_watch"] = True
            return _fail(ret, "check_cmd execution failed")
    if keep_mode and plan["source"] and _keeps_mode(plan["source"]):
        mode = __salt__["cp.stat_file"](plan["source"], saltenv=env, octal=True)
    out = _salt("manage_data")(
        name,
        data,
        user,
        group,
        mode,
        plan["from_source"],
        plan["sums"],
        backup,
        makedirs,
        dir_mode,
        show_changes,
        follow_symlinks,
        replace,
        tmp_dir or None,
    )
    ret.update(out)
    if ret["result"] is False:
        ret["changes"] = {} if "diff" not in ret["changes"] else ret["changes"]
    return ret
