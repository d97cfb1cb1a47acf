"""Storing the master's events in its job cache: Salt's ``event_return``, briny's way.

Runs in the master daemon. Salt starts an ``EventReturn`` process that listens on the master's
bus and hands the events, ``event_return_queue`` at a time, to the ``event_return`` function
of the returners ``event_return`` names (pgjsonb keeps them in a ``salt_events`` table). briny
keeps them in its own job cache (``job_cache``: SQLite or PostgreSQL, table ``events``): the
bus (:class:`briny.common.event.EventBus`) calls :class:`EventReturn` on its own thread for
every event it carries, and :meth:`briny.master.jobcache.base.JobCache.save_event` queues the event
for the job cache's writer, which writes them in batches (one statement a batch on PostgreSQL);
nothing here waits. ``briny-run jobs.list_events`` reads them back.

Config (master, off by default as in Salt; ``docs/events.md``):

- ``event_return``: a name or a list. ``job_cache`` is briny's; the names of Salt's SQL
  returners that store events (:data:`SALT_SQL_RETURNERS`: ``pgjsonb``, ``postgres``, ...) are
  read as ``job_cache``, said once in a warning at start; any other returner is not supported
  and named in a warning (no events are stored for it);
- ``event_return_whitelist`` / ``event_return_blacklist``: tag globs (case-sensitive, as
  Salt's ``fnmatch`` on POSIX): with a whitelist only the tags it matches are stored; a tag the
  blacklist matches is not, whatever the whitelist says;
- ``event_return_queue`` / ``event_return_queue_max_seconds``: how many events, or how long,
  Salt waits before it flushes; briny's writer writes what came since its last write, so a
  value other than 0 is named in a warning and has no effect.

Never stored unless a whitelist glob names them: the bus's own markers (``salt/event/listener/...``,
which listeners fire to learn that they are subscribed). Never stored, as in Salt: an event
carrying ``__peer_id`` (another master's, in a cluster).
"""

from __future__ import annotations

import fnmatch
import logging
from dataclasses import dataclass
from typing import Any

from briny.common.event import READY_PREFIX
from briny.common.exceptions import ConfigError
from briny.master.jobcache.base import JobCache

log = logging.getLogger(__name__)

JOB_CACHE = "job_cache"
# Salt's returners that keep events in a SQL database (their ``event_return``): briny's job cache instead
SALT_SQL_RETURNERS = frozenset({"pgjsonb", "postgres", "postgres_local_cache", "mysql"})


@dataclass(frozen=True)
class EventFilter:
    """Which tags are stored: Salt's whitelist, then blacklist; the bus's markers only when whitelisted."""

    whitelist: tuple[str, ...] = ()
    blacklist: tuple[str, ...] = ()

    def stored(self, tag: str, data: dict[str, Any]) -> bool:
        if "__peer_id" in data:
            return False
        allowed = any(fnmatch.fnmatchcase(tag, glob) for glob in self.whitelist)
        if tag.startswith(READY_PREFIX) and not allowed:
            return False
        if self.whitelist and not allowed:
            return False
        return not any(fnmatch.fnmatchcase(tag, glob) for glob in self.blacklist)


def _names(opts: dict[str, Any], key: str) -> list[str]:
    """A setting that is a string or a list of strings, as a list (an empty string: none)."""
    value = opts.get(key)
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [v for v in value if v]
    raise ConfigError(f"{key} must be a string or a list of strings, not {value!r}")


def read_config(opts: dict[str, Any]) -> EventFilter | None:
    """The filter of the events to store, or None when ``event_return`` stores none; logs, once,
    what of the config briny reads otherwise than Salt. :class:`ConfigError` for a bad value."""
    names = _names(opts, "event_return")
    whitelist = tuple(_names(opts, "event_return_whitelist"))
    blacklist = tuple(_names(opts, "event_return_blacklist"))
    salt_sql = sorted({n for n in names if n in SALT_SQL_RETURNERS})
    other = sorted({n for n in names if n != JOB_CACHE and n not in SALT_SQL_RETURNERS})
    if other:
        log.warning(
            "event_return: %s: not supported by briny (it stores events in its job cache: event_return: %s); "
            "no events go there",
            ", ".join(other),
            JOB_CACHE,
        )
    if JOB_CACHE not in names and not salt_sql:
        return None
    if salt_sql:
        log.warning(
            "event_return: %s: briny stores the events in its job cache (job_cache: %s, table events), "
            "as with event_return: %s",
            ", ".join(salt_sql),
            opts.get("job_cache"),
            JOB_CACHE,
        )
    for key in ("event_return_queue", "event_return_queue_max_seconds"):
        if opts.get(key):
            log.warning(
                "%s: ignored; briny's job cache writes the events that came since its last write, in batches",
                key,
            )
    return EventFilter(whitelist, blacklist)


class EventReturn:
    """The bus's sink: each event the filter keeps is queued for the job cache's writer."""

    def __init__(self, cache: JobCache, master_id: str, event_filter: EventFilter) -> None:
        self.cache, self.master_id, self.filter = cache, master_id, event_filter

    def __call__(self, tag: str, data: dict[str, Any]) -> None:
        if self.filter.stored(tag, data):
            self.cache.save_event(tag, data, self.master_id)


def event_returner(opts: dict[str, Any], cache: JobCache) -> EventReturn | None:
    """What the master's bus calls for each event (:class:`EventReturn`), None when off."""
    event_filter = read_config(opts)
    if event_filter is None:
        return None
    log.info("storing the master's events in the job cache (event_return)")
    return EventReturn(cache, str(opts.get("id") or ""), event_filter)
