"""The ``jobs`` runner: read the master's job cache (``briny-run jobs.*``).

Runs on the master host, in ``briny-run``, reading the job cache
(:mod:`briny.master.jobcache.base`) read-only while the master writes it. The
shapes are Salt 3007's (checked with ``salt-run`` over Salt's own local job
cache):

- ``list_jobs``: ``{jid: {"Function", "Arguments", "Target", "Target-type",
  "User", "StartTime"}}`` (+ ``"Metadata"`` when the job has some), in jid
  order (Salt's order is the file system's);
- ``lookup_jid JID``: ``{minion_id: return}`` (``missing=True`` adds
  ``"Minion did not return"`` for the silent ones); when the returns name an
  outputter (``out``, e.g. ``highstate``) it is used unless ``--out`` is given;
- ``print_job JID``: ``{jid: {..., "Minions": [...], "Result": {minion_id:
  {"return", "retcode", "success", "out"}}, "StartTime"}}``; an unknown jid
  gives ``{jid: {"Error": "Cannot contact returner or no job with this
  jid", "Result": {}, "StartTime": ...}}``;
- ``StartTime`` is the jid's time as Salt formats it: ``2024, Jan 05
  12:34:56.123456``.

``list_events`` is briny's (Salt has no runner that reads stored events: its
``event_return`` returners keep them in their own databases): the events the
master stored (``event_return: job_cache``, docs/events.md), oldest first.
"""

from __future__ import annotations

import calendar
import datetime
import fnmatch
import logging
from typing import Any

from briny.common.args import split_input
from briny.common.exceptions import SaltInvocationError
from briny.common.ids import valid_jid
from briny.common.numbers import is_number
from briny.master.jobcache.base import SALT_PG_CACHES, JobCache, JobRecord, backend
from briny.master.runners import RunnerContext

log = logging.getLogger(__name__)

__all__ = [
    "active",
    "exit_success",
    "list_events",
    "list_job",
    "list_jobs",
    "list_jobs_filter",
    "lookup_jid",
    "print_job",
]
EVENTS_LIMIT = 100  # list_events: the newest events shown unless limit says otherwise

NO_JOB = "Cannot contact returner or no job with this jid"
TIME_FORMATS = (
    "%Y, %b %d %H:%M:%S.%f",
    "%Y, %b %d %H:%M:%S",
    "%Y, %b %d %H:%M",
    "%Y, %b %d",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d",
    "%d %b %Y %H:%M",
    "%b %d %Y %H:%M",
)


def jid_to_time(jid: Any) -> str:
    """Salt's StartTime text of a jid (``""`` when it is not one)."""
    jid = str(jid)
    if len(jid) != 20 and (len(jid) <= 21 or jid[20] != "_"):
        return ""
    try:
        month = calendar.month_abbr[int(jid[4:6])]
    except (ValueError, IndexError):
        return ""
    return f"{jid[:4]}, {month} {jid[6:8]} {jid[8:10]}:{jid[10:12]}:{jid[12:14]}.{jid[14:20]}"


def format_job(load: dict[str, Any]) -> dict[str, Any]:
    """Salt's job summary of a load (without StartTime)."""
    if not load:
        return {"Error": NO_JOB}
    arguments = list(load.get("arg", []) or [])
    kwarg = load.get("kwarg")
    if isinstance(kwarg, dict) and kwarg and not any(isinstance(a, dict) and a.get("__kwarg__") for a in arguments):
        arguments.append({"__kwarg__": True, **kwarg})  # how Salt's load carries keyword arguments
    out: dict[str, Any] = {
        "Function": load.get("fun", "unknown-function"),
        "Arguments": arguments,
        "Target": load.get("tgt", "unknown-target"),
        "Target-type": load.get("tgt_type", "list"),
        "User": load.get("user", "root"),
    }
    if "metadata" in load:
        out["Metadata"] = load.get("metadata", {})
    elif isinstance(load.get("kwargs"), dict) and "metadata" in load["kwargs"]:
        out["Metadata"] = load["kwargs"].get("metadata", {})
    else:
        for arg in out["Arguments"]:
            if isinstance(arg, dict) and arg.get("__kwarg__") is True and "metadata" in arg:
                out["Metadata"] = arg.get("metadata", {})
                break
    return out


def _jid(jid: Any) -> str:
    text = str(jid).strip()
    if not valid_jid(text):
        raise SaltInvocationError(f"'{jid}' is not a job id (20 digits, YYYYMMDDhhmmssffffff)")
    return text


def _globs(value: Any) -> list[str]:
    """The globs of a ``search_*`` filter: a list, or a comma-separated string."""
    return [glob for glob in split_input(value, str) if glob]


def _count(value: Any, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SaltInvocationError(f"{name} must be a number, not {value!r}") from None


def _parse_time(value: Any, name: str) -> float:
    if is_number(value):
        return float(value)
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    text = str(value).strip()
    try:
        return datetime.datetime.fromisoformat(text).timestamp()
    except ValueError:
        pass
    for fmt in TIME_FORMATS:
        try:
            return datetime.datetime.strptime(text, fmt).timestamp()
        except ValueError:
            continue
    raise SaltInvocationError(
        f"{name}: cannot read the time {value!r} (use e.g. '2015, Mar 16 19:00' or '2015-03-16 19:00')"
    )


def _cache(ctx: RunnerContext, ext_source: Any) -> JobCache:
    """The master's job cache; Salt's ``ext_source`` (read the jobs from another returner) is
    refused unless it names that cache (``local_cache``, the ``master_job_cache``, or a
    PostgreSQL returner name when the cache is briny's PostgreSQL one): never another
    source's answer given silently from this one."""
    if ext_source not in (None, "", "local_cache", ctx.opts.get("master_job_cache")):
        if not (ext_source in SALT_PG_CACHES and backend(ctx.opts) == "postgres"):
            raise SaltInvocationError(
                f"ext_source {ext_source!r}: briny reads only its own job cache ({backend(ctx.opts)}); "
                "returners are not supported (docs/not-yet.md)"
            )
    return ctx.job_cache()


def _summary(record: JobRecord) -> dict[str, Any]:
    out = format_job(record.load)
    out["StartTime"] = jid_to_time(record.jid)
    return out


def list_jobs(
    ctx: RunnerContext,
    ext_source: Any = None,
    outputter: str | None = None,
    search_metadata: Any = None,
    search_function: Any = None,
    search_target: Any = None,
    start_time: Any = None,
    end_time: Any = None,
    display_progress: bool = False,
) -> Any:
    """Every job in the job cache, optionally filtered (all filters must match).

    ``search_function`` / ``search_target``: globs (a list or a comma
    separated string); ``search_metadata``: a dict, any pair matching;
    ``start_time`` / ``end_time``: jobs started after / before that time.
    """
    cache = _cache(ctx, ext_source)
    records = cache.list_jobs(
        start_time=_parse_time(start_time, "start_time") if start_time else None,
        end_time=_parse_time(end_time, "end_time") if end_time else None,
        functions=_globs(search_function) or None,
    )
    targets = _globs(search_target)
    out: dict[str, Any] = {}
    for record in records:
        summary = _summary(record)
        if search_metadata:
            meta = summary.get("Metadata")
            if not isinstance(search_metadata, dict):
                log.info("search_metadata must be a dictionary; ignoring it")
            elif not isinstance(meta, dict) or not any(k in meta and meta[k] == v for k, v in search_metadata.items()):
                continue
        if targets:
            tgt = summary.get("Target")
            names = [str(t) for t in tgt] if isinstance(tgt, (list, tuple)) else [str(tgt)]
            if not any(fnmatch.fnmatch(n, g) for n in names for g in targets):
                continue
        out[record.jid] = summary
    return {"outputter": outputter, "data": out} if outputter else out


def list_events(
    ctx: RunnerContext, tag: Any = "*", since: Any = None, limit: Any = EVENTS_LIMIT
) -> list[dict[str, Any]]:
    """The events the master stored (``event_return: job_cache``), oldest first: ``tag`` a glob,
    ``since`` a time (as ``list_jobs``'s ``start_time``, or epoch seconds), ``limit`` the newest
    ones kept (100; 0 for all). Each: ``{"id", "tag", "data", "stamp", "master_id"}``, ``stamp``
    the ISO time (UTC) the master's bus carried it. briny's runner (Salt has none)."""
    count = _count(limit, "limit")
    if count < 0:
        raise SaltInvocationError(f"limit must be 0 (all) or more, not {count}")
    records = ctx.job_cache().list_events(
        tag=str(tag) if tag not in (None, "") else None,
        since=_parse_time(since, "since") if since not in (None, "") else None,
        limit=count or None,
    )
    return [
        {
            "id": r.id,
            "tag": r.tag,
            "data": r.data,
            "stamp": datetime.datetime.fromtimestamp(r.stamp, datetime.timezone.utc).replace(tzinfo=None).isoformat(),
            "master_id": r.master_id,
        }
        for r in records
    ]


def list_jobs_filter(
    ctx: RunnerContext,
    count: Any,
    filter_find_job: bool = True,
    ext_source: Any = None,
    outputter: str | None = None,
    display_progress: bool = False,
) -> Any:
    """The newest ``count`` jobs as a list, oldest first, each with its ``JID``."""
    limit = _count(count, "count")
    records = [
        r
        for r in _cache(ctx, ext_source).list_jobs(newest_first=True)
        if not (filter_find_job and r.fun == "saltutil.find_job")
    ][: max(limit, 0)]
    out = []
    for record in reversed(records):
        item = format_job(record.load)
        item.update({"JID": record.jid, "StartTime": jid_to_time(record.jid)})
        out.append(item)
    return {"outputter": outputter, "data": out} if outputter else out


def list_job(ctx: RunnerContext, jid: Any, ext_source: Any = None, display_progress: bool = False) -> dict[str, Any]:
    """One job: ``{"jid", ...summary, "Minions", "StartTime", "Result": {id: return record}}``."""
    jid = _jid(jid)
    cache = _cache(ctx, ext_source)
    load = cache.get_load(jid)
    out: dict[str, Any] = {"jid": jid}
    out.update(format_job(load))
    if load.get("Minions"):
        out["Minions"] = load["Minions"]
    out["StartTime"] = jid_to_time(jid)
    out["Result"] = cache.get_returns(jid)
    return out


def lookup_jid(
    ctx: RunnerContext,
    jid: Any,
    ext_source: Any = None,
    returned: bool = True,
    missing: bool = False,
    display_progress: bool = False,
) -> Any:
    """``{minion_id: return}`` of a job; ``missing=True`` lists the minions that did not return."""
    jid = _jid(jid)
    cache = _cache(ctx, ext_source)
    returns = cache.get_returns(jid)
    out: dict[str, Any] = {}
    if returned:
        for minion_id, record in returns.items():
            out[minion_id] = record.get("return")
    if missing:
        for minion_id in cache.get_minions(jid):
            if minion_id not in returns:
                out[minion_id] = "Minion did not return"
    outputter = None
    if returns:
        first = next(iter(returns.values()))
        outputter = first.get("out") if isinstance(first, dict) else None
    return {"outputter": outputter, "data": out} if outputter else out


def print_job(ctx: RunnerContext, jid: Any, ext_source: Any = None) -> dict[str, Any]:
    """Salt's detail of one job, with every minion's return record under ``Result``."""
    jid = _jid(jid)
    cache = _cache(ctx, ext_source)
    load = cache.get_load(jid)
    detail = format_job(load)
    if load.get("Minions"):
        detail["Minions"] = load["Minions"]
    detail["StartTime"] = jid_to_time(jid)
    detail["Result"] = cache.get_returns(jid)
    return {jid: detail}


def exit_success(ctx: RunnerContext, jid: Any, ext_source: Any = None) -> dict[str, bool]:
    """``{minion_id: True|False}``: did each targeted minion return with retcode 0?"""
    jid = _jid(jid)
    cache = _cache(ctx, ext_source)
    returns = cache.get_returns(jid)
    out = {m: False for m in cache.get_minions(jid)}
    for minion_id, record in returns.items():
        retcode = record.get("retcode", 0) if isinstance(record, dict) else 0
        out[minion_id] = retcode in (0, None) and (
            not isinstance(record, dict) or record.get("success", True) is not False
        )
    return out


def active(ctx: RunnerContext, display_progress: bool = False, timeout: Any = None) -> dict[str, Any]:
    """The jobs running now, asked of every minion (``saltutil.running`` through the master, as Salt
    does): ``{jid: {...summary, "StartTime", "Running": [{minion_id: pid}], "Returned": [minion_id,
    ...]}}``, the pid being the job's own process on that minion (``multiprocessing: True``; the
    minion daemon's with ``multiprocessing: False``). ``Returned`` lists the minions whose return
    is already in the job cache. Minions that do not answer within ``timeout`` seconds (the
    master's ``timeout``) are left out, as in Salt."""
    if display_progress:
        log.warning("jobs.active: display_progress is not supported by briny; ignored")
    try:
        wait = float(timeout) if timeout is not None else None
    except (TypeError, ValueError):
        raise SaltInvocationError(f"timeout must be a number of seconds, not {timeout!r}") from None
    _, returns = ctx.cmd("*", "saltutil.running", timeout=wait)
    out: dict[str, Any] = {}
    for minion in sorted(returns):
        jobs = returns[minion].get("return")
        if not isinstance(jobs, list):
            continue
        for job in jobs:
            if not isinstance(job, dict) or not valid_jid(str(job.get("jid", ""))):
                continue
            jid = str(job["jid"])
            if jid not in out:
                summary = format_job(job)
                summary["StartTime"] = jid_to_time(jid)
                summary.update({"Running": [], "Returned": []})
                out[jid] = summary
            out[jid]["Running"].append({minion: job.get("pid")})
    if out:
        cache = ctx.job_cache()
        for jid, summary in out.items():
            summary["Returned"] = cache.returned_ids(jid)
    return out
