"""The ``fileserver`` runner: what the master's file server serves (``briny-run fileserver.*``).

Runs on the master host, in ``briny-run``, reading ``file_roots`` from the
master's config with the same code the daemon serves them with
(:class:`briny.master.fileserver.FileServer`), so what it lists is what
minions get:

- ``envs``: the saltenvs;
- ``file_list saltenv=base prefix=``: the files (Salt's ``fileserver.file_list``);
- ``dir_list saltenv=base prefix=``: the folders;
- ``update backend=``: Salt refreshes its backends here. briny has one backend, ``roots``
  (``file_roots``), whose changes its master notices by itself within
  ``fileserver_list_cache_time`` seconds (folder mtimes): asked for ``roots`` (or nothing, with
  no other backend in ``fileserver_backend``) it returns True. Asked for another of Salt's backends
  (``gitfs``, ``hgfs``, ...), named or configured, it fails naming it, since it cannot update what it
  does not serve (Salt logs an error and returns True); a backend Salt does not have either is
  refused as a bad argument.
"""

from __future__ import annotations

from typing import Any

from briny.common.exceptions import CommandExecutionError, FileServerError, SaltInvocationError
from briny.master.fileserver import FileServer
from briny.master.runners import RunnerContext

__all__ = ["dir_list", "envs", "file_list", "update"]


def envs(ctx: RunnerContext, **kwargs: Any) -> list[str]:
    return FileServer(ctx.opts).envs()


def _listing(ctx: RunnerContext, saltenv: Any, prefix: Any) -> dict[str, Any]:
    try:
        return FileServer(ctx.opts).file_list(saltenv or "base", prefix or "")
    except FileServerError as exc:
        raise SaltInvocationError(str(exc)) from None


def file_list(ctx: RunnerContext, saltenv: Any = "base", prefix: Any = "", **kwargs: Any) -> list[str]:
    return list(_listing(ctx, saltenv, prefix)["files"])


def dir_list(ctx: RunnerContext, saltenv: Any = "base", prefix: Any = "", **kwargs: Any) -> list[str]:
    return list(_listing(ctx, saltenv, prefix)["dirs"])


# Salt 3007's file server backends; briny serves ``roots`` only
SALT_BACKENDS = ("roots", "gitfs", "hgfs", "svnfs", "minionfs", "s3fs", "azurefs")


def _backends(backend: Any) -> list[str]:
    """The backend names of ``backend`` (Salt's forms: a comma-separated string or a list; a
    leading ``-`` or a ``fs`` suffix left off, ``git`` for ``gitfs``, as Salt reads them)."""
    names = backend.split(",") if isinstance(backend, str) else list(backend)
    out = []
    for name in names:
        name = str(name).strip().lstrip("-")
        if name and not name.endswith("fs") and f"{name}fs" in SALT_BACKENDS:
            name = f"{name}fs"
        if name:
            out.append(name)
    return out


def update(ctx: RunnerContext, backend: Any = None, **kwargs: Any) -> bool:
    configured = backend is None
    if configured:
        backend = ctx.opts.get("fileserver_backend") or ["roots"]
    for name in _backends(backend):
        if name == "roots":
            continue
        if name not in SALT_BACKENDS:
            raise SaltInvocationError(f"no fileserver backend '{name}' (Salt's are {', '.join(SALT_BACKENDS)})")
        where = " (set in fileserver_backend)" if configured else ""
        raise CommandExecutionError(
            f"cannot update the '{name}' fileserver backend{where}: briny serves file_roots only (the roots "
            "backend) and has no " + name + " yet (docs/not-yet.md)"
        )
    return True
