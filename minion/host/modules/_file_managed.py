"""The ``file`` module's functions behind ``file.managed`` (briny's split of the state's work:
``managed_data`` finds and renders the content, ``check_managed_data`` / ``manage_data`` compare
and write it; the byte work is in :mod:`briny.minion.host.fileops.managed`), and Salt's
``source_list`` / ``get_source_sum`` / ``apply_template_on_contents``.

A private part of ``minion/host/modules/file.py`` (which imports these and so exposes them as
``file.<name>``)."""

from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING, Any

from briny.common import fileclient
from briny.common.exceptions import BrinyError, CommandExecutionError, FileServerError, HashError
from briny.common.state.jinja import render_jinja
from briny.minion.host.fileops import managed, perms, remote

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __job__, __opts__, __pillar__, __salt__

__all__ = [
    "apply_template_on_contents",
    "source_list",
    "get_source_sum",
    "managed_data",
    "check_managed_data",
    "manage_data",
    "check_cmd_data",
]


# -- file.managed (briny functions behind the state; the work is in fileops.managed) -------
def _cache(src: str, saltenv: str) -> str | bool:
    return __salt__["cp.cache_file"](src, saltenv)


def _render(
    text: str,
    template: str,
    context: Any,
    defaults: Any,
    saltenv: str,
    extra: dict[str, Any],
    tmplpath: str | None = None,
) -> str:
    if str(template).lower() != "jinja":
        raise CommandExecutionError(f"Specified template format {template} is not supported")
    # as Salt's template wrapper: the usual names, the caller's variables over them, then
    # ``defaults`` and ``context`` over those
    ctx: dict[str, Any] = {
        "salt": __salt__,
        "grains": __grains__,
        "pillar": __pillar__,
        "opts": __opts__,
        "saltenv": saltenv,
    }
    ctx.update(extra)
    ctx.update(defaults or {})
    ctx.update(context or {})
    client = fileclient.get_client(__opts__, __job__)
    return render_jinja(text, ctx, client=client, saltenv=saltenv, tmplpath=tmplpath, opts=__opts__)


def apply_template_on_contents(
    contents: str, template: str, context: Any, defaults: Any, saltenv: str = "base", **kwargs: Any
) -> str:
    """Render ``contents`` with ``template`` (jinja) and the usual context."""
    return _render(contents, template, context, defaults, saltenv, {})


def source_list(source: Any, source_hash: Any = "", saltenv: str = "base") -> list[str]:
    """[url, hash] of the first source that exists (CommandExecutionError if none)."""
    src, shash, _local, err = managed.resolve(source, source_hash, saltenv, _cache, remote.probe)
    if err:
        raise CommandExecutionError(err)
    return [src, shash or ""]


def get_source_sum(
    file_name: str = "",
    source: str = "",
    source_hash: Any = None,
    source_hash_name: str | None = None,
    saltenv: str = "base",
    **kwargs: Any,
) -> dict[str, str]:
    """``{"hash_type", "hsum"}`` for ``source_hash`` (a hash, ``type=hash`` or a hash file)."""
    try:
        return managed.source_sum(source_hash, source or file_name, saltenv, _cache, source_hash_name)
    except HashError as exc:
        raise CommandExecutionError(str(exc)) from None


def managed_data(
    name: str,
    source: Any = None,
    source_hash: Any = "",
    source_hash_name: str | None = None,
    template: str | None = None,
    context: Any = None,
    defaults: Any = None,
    contents: str | None = None,
    saltenv: str = "base",
    skip_verify: bool = False,
    extra: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """What ``file.managed`` should write (briny): ``{"data", "sums", "from_source", "comment", "raw", "source"}``.

    ``extra`` are the template's variables besides ``defaults`` and ``context`` (laid over
    them); a ``source`` among them is replaced by the source used (the one of a list that
    exists), as Salt's ``file.get_managed`` gives it. A ``contents`` template sees only
    ``defaults`` and ``context``, as Salt's ``file.apply_template_on_contents``.

    ``data`` is the bytes (None: leave the content alone), ``sums`` the
    expected hash of a non-``salt://`` source, ``source`` the one of a list that was used,
    ``comment`` Salt's reason when
    there is nothing to write (``raw``: Salt shows it without its
    "Unable to manage file: " prefix in test mode).
    """
    out: dict[str, Any] = {
        "data": None,
        "sums": None,
        "from_source": False,
        "comment": "",
        "raw": False,
        "source": None,
    }
    ctx_extra = dict(extra or {})
    try:
        if contents is not None:
            text = _render(contents, template, context, defaults, saltenv, {}) if template else contents
            out["data"] = text.encode("utf-8") if isinstance(text, str) else text
            return out
        if not source:
            return out
        src, shash, local, err = managed.resolve(source, source_hash, saltenv, _cache, remote.probe)
        if err:
            out["comment"] = err
            out["raw"] = len(managed.source_items(source)) == 1
            return out
        if not local and not shash and not skip_verify:  # a remote source, as Salt: a hash or skip_verify
            out["comment"] = (
                f"Unable to verify upstream hash of source file {remote.redact(src)}, "
                "please set source_hash or set skip_verify to True"
            )
            out["raw"] = True
            return out
        if shash and not skip_verify and not src.startswith("salt://"):
            out["sums"] = managed.source_sum(shash, src, saltenv, _cache, source_hash_name)
        if not local and skip_verify:  # as Salt: an earlier download is used as it is
            local = __salt__["cp.is_cached"](src, saltenv)
        if not local:
            try:
                local = __salt__["cp.cache_file"](src, saltenv, source_hash=(out["sums"] or {}).get("hsum"))
            except FileServerError as exc:
                out["comment"] = f"Failed to cache {remote.redact(src)}: {exc}"
                out["raw"] = True
                return out
            if not local:
                out["comment"] = f"Source file '{remote.redact(src)}' not found"
                out["raw"] = True
                return out
        with open(local, "rb") as fh:
            data = fh.read()
        if template:
            if "source" in ctx_extra:
                ctx_extra["source"] = src
            data = _render(data.decode("utf-8"), template, context, defaults, saltenv, ctx_extra).encode("utf-8")
        out.update(data=data, from_source=True, source=src)
    except HashError as exc:
        out["comment"] = str(exc)
    except (BrinyError, OSError, UnicodeDecodeError) as exc:
        out["comment"] = str(getattr(exc, "strerror", None) or exc)
    return out


def check_managed_data(
    name: str,
    data: bytes | None,
    user: Any = None,
    group: Any = None,
    mode: Any = None,
    show_changes: bool = True,
    follow_symlinks: bool = True,
    replace: bool = True,
) -> tuple[Any, dict[str, Any], str]:
    """Test mode of ``file.managed`` (briny): (result, changes, comment)."""
    return managed.check_changes(
        os.path.expanduser(name), data, user, group, perms.normalize_mode(mode), show_changes, follow_symlinks, replace
    )


def manage_data(
    name: str,
    data: bytes | None,
    user: Any = None,
    group: Any = None,
    mode: Any = None,
    from_source: bool = False,
    sums: dict[str, str] | None = None,
    backup: str = "",
    makedirs: bool = False,
    dir_mode: Any = None,
    show_changes: bool = True,
    follow_symlinks: bool = True,
    replace: bool = True,
    tmp_dir: str | None = None,
) -> dict[str, Any]:
    """Live ``file.managed`` (briny): write ``data`` and set owner/mode; ``{"result", "changes", "comment"}``."""
    return managed.manage(
        os.path.expanduser(name),
        data,
        user,
        group,
        perms.normalize_mode(mode),
        from_source,
        sums,
        backup,
        str(__opts__.get("cachedir") or ""),
        makedirs,
        perms.normalize_mode(dir_mode),
        show_changes,
        follow_symlinks,
        replace,
        tmp_dir,
    )


def check_cmd_data(cmd: str, data: bytes, tmp_dir: str | None = None, tmp_ext: str = "") -> dict[str, Any]:
    """Run ``cmd TMPFILE`` on ``data`` written to a private temporary file (in ``tmp_dir``,
    ending in ``tmp_ext``) (briny)."""
    fd, tmp = tempfile.mkstemp(prefix="briny-check.", suffix=tmp_ext or "", dir=tmp_dir or None)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return __salt__["cmd.run_all"](f"{cmd} {tmp}", python_shell=True)
    finally:
        os.unlink(tmp)
