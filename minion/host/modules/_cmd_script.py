"""``cmd.script`` and ``cmd.script_retcode``: part of the ``cmd`` execution module (its private file).

The script (``salt://``, ``http(s)://``, ``ftp://`` or a local path) is fetched through
``cp.cache_file``, rendered first with ``template=`` (``jinja``, ...: grains, pillar, ``salt``, the call's
other keyword arguments as variables and ``context`` over them, as Salt's), copied into a
fresh private folder (owned by ``runas`` when given), run as ``<script> <args>`` through
``cmd.run_all`` (``cwd``, ``stdin``, ``env``, ``shell``, ``runas``, ``umask``, ``timeout``,
``success_retcodes``... as ``cmd.run_all`` takes them) and removed. The answer is
``cmd.run_all``'s ``{"pid", "retcode", "stdout", "stderr"}``; a script that cannot be fetched
or rendered answers Salt's ``{"pid": 0, "retcode": 1, "stdout": "", "stderr": "",
"cache_error": True}`` (and the reason in the log). A missing ``cwd`` or an unknown ``runas``
user fails with ``cmd.run_all``'s error (Salt prints a traceback there).
"""

from __future__ import annotations

import logging
import os
import pwd
import shlex
import shutil
import stat
import tempfile
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import BrinyError, CommandExecutionError

from ._cmd_args import POSITIONAL

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__

log = logging.getLogger(__name__)

# what cmd.run_all takes of cmd.script's arguments (the rest are the script's own or the template's)
_RUN_ARGS = tuple(n for n in POSITIONAL if n not in ("template", "log_callback", "rstrip")) + (
    "success_retcodes",
    "success_stdout",
    "success_stderr",
    "prepend_path",
)


def _cache_error(why: str) -> dict[str, Any]:
    log.error("cmd.script: %s", why)
    return {"pid": 0, "retcode": 1, "stdout": "", "stderr": "", "cache_error": True}


def _fetch(source: str, saltenv: str, template: str | None, variables: dict[str, Any]) -> str | dict[str, Any]:
    """The script's text, or the cache_error answer."""
    try:
        cached = __salt__["cp.cache_file"](source, saltenv)
    except BrinyError as exc:
        return _cache_error(f"Unable to fetch {source}: {exc}")
    if not cached:
        return _cache_error(f"Unable to cache script {source} from saltenv '{saltenv}'")
    try:
        with open(str(cached), encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
    except OSError as exc:
        return _cache_error(f"Unable to read {cached}: {exc.strerror or exc}")
    if not template:
        return text
    # as Salt's (cp.get_template): the call's other keyword arguments are the template's variables
    # (`defaults` among them, as a variable of that name), `context` laid over them
    context = dict(variables)
    given = context.pop("context", None)
    if given is not None and not isinstance(given, dict):
        return _cache_error(f"Unable to render {source}: context must be a dict, not {given!r}")
    context.update(given or {})
    try:
        return str(__salt__["file.apply_template_on_contents"](text, template, context, None, saltenv))
    except BrinyError as exc:
        return _cache_error(f"Unable to render {source} with template {template}: {exc}")


def script(source: str, args: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Fetch the script ``source`` and run it with ``args``: ``{"pid", "retcode", "stdout", "stderr"}``."""
    kwargs = {k: v for k, v in kwargs.items() if not k.startswith("__")}
    for name in ("use_vt", "bg", "password"):
        if kwargs.pop(name, None):
            log.warning("cmd.script: %s is not supported by briny and was ignored", name)
    kwargs.pop("log_callback", None)
    saltenv = str(kwargs.pop("saltenv", None) or __opts__.get("saltenv") or "base")
    template = kwargs.pop("template", None)
    run_args = {k: kwargs.pop(k) for k in _RUN_ARGS if k in kwargs}
    text = _fetch(str(source), saltenv, template, kwargs)
    if isinstance(text, dict):
        return text
    if isinstance(args, (list, tuple)):
        arg_text = " ".join(shlex.quote(str(a)) for a in args)
    else:
        arg_text = "" if args is None else str(args)
    runas = run_args.get("runas")
    workdir = tempfile.mkdtemp(prefix="briny-script-")
    try:
        name = os.path.basename(str(source).split("?")[0]) or "script"
        path = os.path.join(workdir, name)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(text)
        os.chmod(path, stat.S_IRWXU)
        if runas:
            try:
                pw = pwd.getpwnam(str(runas))
            except KeyError:
                raise CommandExecutionError(f"User '{runas}' is not available") from None
            os.chown(workdir, pw.pw_uid, pw.pw_gid)
            os.chown(path, pw.pw_uid, pw.pw_gid)
        command = shlex.quote(path) + (f" {arg_text}" if arg_text else "")
        return dict(__salt__["cmd.run_all"](command, **run_args))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def script_retcode(source: str, args: Any = None, **kwargs: Any) -> int:
    """Run the script ``source`` as :func:`script` does and answer only its exit status."""
    return int(script(source, args, **kwargs)["retcode"])
