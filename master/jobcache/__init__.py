"""The master's job cache: jobs, returns and events kept for ``jobs.*`` and the waiters.

``base`` holds the interface (:class:`~briny.master.jobcache.base.JobCache`) and its records;
``sql`` the SQL implementation both backends share, ``writer`` its batching writer thread and
``rows`` the rows it writes; ``sqlite`` and ``pg`` are the two backends. The factory
:func:`open_job_cache` lives here, above them all, so that no backend imports it back.
"""

from __future__ import annotations

from typing import Any

from briny.common.exceptions import ConfigError
from briny.master.jobcache.base import JobCache, backend, cache_path
from briny.master.jobcache.pg import open_pg
from briny.master.jobcache.sqlite import SqliteJobCache


def open_job_cache(opts: dict[str, Any], *, readonly: bool = False) -> JobCache:
    """The job cache :func:`backend` names (``sqlite``, the default, or ``postgres``); the daemon
    (not ``readonly``) warns about the Salt keys it reads differently.

    ``readonly`` (``briny-run``) starts no writer and creates nothing: a
    missing cache reads as empty.
    """
    kind = backend(opts, warn=not readonly)
    if kind == "sqlite":
        return SqliteJobCache(cache_path(opts), readonly=readonly)
    if kind in ("postgres", "postgresql", "pgsql"):
        return open_pg(opts, readonly=readonly)
    raise ConfigError(f"job_cache: unknown backend {kind!r} (briny has 'sqlite' and 'postgres')")
