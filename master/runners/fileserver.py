"""The ``fileserver`` runner: what the master's file server serves (``briny-run fileserver.*``).

Runs on the master host, in ``briny-run``, reading the master's config with the same code the
daemon serves with (:class:`briny.master.fileserver.FileServer` and its backends,
``fileserver_backend``), so what it lists is what minions get. Every function takes
``backend=`` (a name or a comma-separated list, as Salt's) to look at some backends only.

- ``envs``: the saltenvs;
- ``file_list saltenv=base prefix=``, ``dir_list``, ``symlink_list``: files, folders, symlinks;
- ``update backend=``: fetch every gitfs remote now (into the master's cache, shared with the
  running daemon, which serves the new trees within a second) and answer per backend and per
  remote; a remote that failed is named with why, and the runner's retcode is 1. Salt answers
  a bare True: briny's answer says what was done (``docs/GITFS.md``). With no gitfs among the
  backends it answers True, as Salt: ``roots`` (``file_roots``) needs no update, its master
  notices changes by itself within ``fileserver_list_cache_time`` seconds. Asked for another
  of Salt's backends (``hgfs``, ``svnfs``, ...), named or configured, it fails naming it, since
  it cannot update what it does not serve (Salt logs an error and returns True); a backend
  Salt does not have either is refused as a bad argument;
- ``clear_cache``: remove gitfs's cache (the next update fetches anew).
"""

from __future__ import annotations

from typing import Any

from briny.common.exceptions import CommandExecutionError, FileServerError, SaltInvocationError
from briny.master import fsbackend
from briny.master.fileserver import FileServer, symlinks
from briny.master.runners import RunnerContext

__all__ = ["clear_cache", "dir_list", "envs", "file_list", "symlink_list", "update"]


def _server(ctx: RunnerContext, backend: Any) -> FileServer:
    if backend in (None, "", []):
        return FileServer(ctx.opts)
    wanted = backend if isinstance(backend, list) else str(backend).split(",")
    names = fsbackend.names(ctx.opts)
    chosen = [b for b in names if b in fsbackend.names({"fileserver_backend": wanted})]
    if not chosen:
        raise SaltInvocationError(f"backend {backend} is not among fileserver_backend ({', '.join(names)})")
    return FileServer({**ctx.opts, "fileserver_backend": chosen})


def envs(ctx: RunnerContext, backend: Any = None, **kwargs: Any) -> list[str]:
    return _server(ctx, backend).envs()


def _listing(ctx: RunnerContext, saltenv: Any, prefix: Any, backend: Any) -> dict[str, Any]:
    try:
        return _server(ctx, backend).file_list(saltenv or "base", prefix or "")
    except FileServerError as exc:
        raise SaltInvocationError(str(exc)) from None


def file_list(
    ctx: RunnerContext, saltenv: Any = "base", prefix: Any = "", backend: Any = None, **kwargs: Any
) -> list[str]:
    return list(_listing(ctx, saltenv, prefix, backend)["files"])


def dir_list(
    ctx: RunnerContext, saltenv: Any = "base", prefix: Any = "", backend: Any = None, **kwargs: Any
) -> list[str]:
    return list(_listing(ctx, saltenv, prefix, backend)["dirs"])


def symlink_list(
    ctx: RunnerContext, saltenv: Any = "base", prefix: Any = "", backend: Any = None, **kwargs: Any
) -> dict[str, str]:
    try:
        return symlinks(_server(ctx, backend), saltenv or "base", prefix or "")
    except FileServerError as exc:
        raise SaltInvocationError(str(exc)) from None


# Salt 3007's file server backends; briny serves roots and gitfs
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


def update(ctx: RunnerContext, backend: Any = None, **kwargs: Any) -> bool | dict[str, Any]:
    configured = backend is None
    names = _backends(ctx.opts.get("fileserver_backend") or ["roots"] if configured else backend)
    for name in names:
        if name in ("roots", "gitfs"):
            continue
        if name not in SALT_BACKENDS:
            raise SaltInvocationError(f"no fileserver backend '{name}' (Salt's are {', '.join(SALT_BACKENDS)})")
        where = " (set in fileserver_backend)" if configured else ""
        raise CommandExecutionError(
            f"cannot update the '{name}' fileserver backend{where}: briny serves roots and gitfs only (docs/not-yet.md)"
        )
    if "gitfs" not in names:
        return True
    if "gitfs" not in fsbackend.names(ctx.opts):
        raise CommandExecutionError("cannot update the 'gitfs' fileserver backend: it is not in fileserver_backend")
    report = _server(ctx, None if configured else backend).update_backends()
    git = report.get("gitfs")
    if isinstance(git, dict) and git.get("errors"):
        ctx.context["retcode"] = 1
    if isinstance(git, dict) and ctx.opts.get("fileserver_events"):
        _fire(ctx.opts, {"changed": bool(git.get("changed")), "backend": "gitfs"})
    return report


def _fire(opts: dict[str, Any], data: dict[str, Any]) -> None:
    """``salt/fileserver/gitfs/update`` on the master's bus, as Salt's runner fires it (nothing
    when no master's bus runs on this host)."""
    import os

    from briny.common.event import EventBus, EventSender

    if not os.path.exists(EventBus(opts, name="master").pull_path):
        return
    sender = EventSender(opts, name="master")
    try:
        sender.fire("salt/fileserver/gitfs/update", data)
    finally:
        sender.close()


def clear_cache(ctx: RunnerContext, backend: Any = None, **kwargs: Any) -> dict[str, Any]:
    git = fsbackend.gitfs_of(_server(ctx, backend).backends)
    if git is None:
        return {}
    return {"gitfs": git.clear_cache()}
