"""The ``fileserver`` runner: what the master's file server serves (``briny-run fileserver.*``).

Runs on the master host, in ``briny-run``, reading ``file_roots`` from the
master's config with the same code the daemon serves them with
(:class:`briny.master.fileserver.FileServer`), so what it lists is what
minions get:

- ``envs``: the saltenvs;
- ``file_list saltenv=base prefix=``: the files (Salt's ``fileserver.file_list``);
- ``dir_list saltenv=base prefix=``: the folders;
- ``update``: Salt refreshes its backends here; briny's master notices
  changes under ``file_roots`` by itself within ``fileserver_list_cache_time``
  seconds (folder mtimes), so this only says so and returns True.
"""

from __future__ import annotations

from typing import Any

from briny.common.exceptions import FileServerError, SaltInvocationError
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


def update(ctx: RunnerContext, backend: Any = None, **kwargs: Any) -> bool:
    return True
