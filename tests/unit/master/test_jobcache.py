"""The job cache (master/jobcache/base.py, master/jobcache/sqlite.py)."""

from __future__ import annotations

import contextlib
import datetime
import multiprocessing
import os
import sqlite3
import stat
import threading
import time

import pytest

from briny.common.exceptions import ConfigError, JobCacheError, SaltInvocationError
from briny.master.jobcache import open_job_cache
from briny.master.jobcache.base import JobCache, keep_hours, return_record
from briny.master.jobcache.pg import PgJobCache
from briny.master.jobcache.sqlite import SqliteJobCache

from tests.waiting import wait_until


def jid_at(when: datetime.datetime, n: int = 0) -> str:
    return (when + datetime.timedelta(microseconds=n)).strftime("%Y%m%d%H%M%S%f")


def now_jid(n: int = 0) -> str:
    return jid_at(datetime.datetime.now(), n)


def load(jid: str, fun: str = "test.ping", **extra) -> dict:
    return {"jid": jid, "fun": fun, "arg": [], "tgt": "*", "tgt_type": "glob", "user": "root", **extra}


@pytest.fixture(params=["sqlite", "postgres"])
def cache(request, tmp_path):
    """A writable job cache of each backend: the interface's tests run against both."""
    if request.param == "sqlite":
        c: JobCache = SqliteJobCache(str(tmp_path / "cache" / "jobs.sqlite"))
    else:
        c = PgJobCache(request.getfixturevalue("pg_dsn"))
    yield c
    c.close()


@pytest.fixture
def sqlite_cache(tmp_path):
    c = SqliteJobCache(str(tmp_path / "cache" / "jobs.sqlite"))
    yield c
    c.close()


def test_interface_and_factory(master_opts):
    c = open_job_cache(master_opts)
    try:
        assert isinstance(c, JobCache)
        assert c.path == os.path.join(master_opts["cachedir"], "jobs.sqlite")
        assert stat.S_IMODE(os.stat(c.path).st_mode) == 0o600
    finally:
        c.close()
    with pytest.raises(ConfigError):
        open_job_cache({**master_opts, "job_cache": "mongo"})


@pytest.mark.parametrize(
    "salt_keys,kind,warned",
    [
        ({"job_cache": True}, "sqlite", ""),  # Salt's default written out: keep a job cache
        ({"job_cache": False}, "sqlite", "job_cache: False (Salt: keep no job cache) is not supported"),
        ({"master_job_cache": "local_cache"}, "sqlite", ""),  # Salt's default returner
        ({"master_job_cache": "pgjsonb"}, "postgres", "master_job_cache: pgjsonb is read as job_cache: postgres"),
        (
            {"job_cache": True, "master_job_cache": "postgres_local_cache"},
            "postgres",
            "master_job_cache: postgres_local_cache is read as job_cache: postgres",
        ),
        ({"master_job_cache": "redis"}, "sqlite", "master_job_cache: redis is not supported"),
        ({"job_cache": "postgres", "master_job_cache": "redis"}, "postgres", ""),  # briny's key wins
    ],
)
def test_salts_job_cache_keys_are_read(tmp_path, caplog, salt_keys, kind, warned):
    """A Salt master config's ``job_cache: True`` / ``master_job_cache`` loads (it was refused as
    'must be a string') and names briny's backend, with a warning where briny reads it differently."""
    from briny.common.config import load_master_config
    from briny.master.jobcache.base import backend

    import yaml

    (tmp_path / "master").write_text(yaml.safe_dump(salt_keys))
    opts = load_master_config(tmp_path)
    with caplog.at_level("WARNING", logger="briny.master.jobcache.base"):
        assert backend(opts, warn=True) == kind
    said = " ".join(r.getMessage() for r in caplog.records)
    assert (warned in said) if warned else not said, said
    assert backend(opts) == kind  # the same answer, quietly (briny-run)


def test_wal_mode(sqlite_cache):
    cache = sqlite_cache
    conn = sqlite3.connect(cache.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_write_and_read(cache):
    jid = now_jid()
    cache.save_load(jid, load(jid), minions=["m2", "m1"])
    cache.save_return(
        jid, "m1", {"jid": jid, "id": "m1", "fun": "test.ping", "return": True, "retcode": 0, "success": True}
    )
    cache.save_return(jid, "m2", False)  # a bare value
    assert cache.flush(5)
    got = cache.get_load(jid)
    assert got["fun"] == "test.ping" and got["Minions"] == ["m1", "m2"]
    assert cache.get_returns(jid) == {"m1": {"return": True, "retcode": 0, "success": True}, "m2": {"return": False}}
    assert cache.get_minions(jid) == ["m1", "m2"]
    assert cache.returned_ids(jid) == ["m1", "m2"]
    assert cache.missing(jid) == []
    assert cache.get_load("20000101000000000000") == {}
    assert cache.get_returns("20000101000000000000") == {}


def test_save_minions_merges(cache):
    jid = now_jid()
    cache.save_load(jid, load(jid))
    cache.save_minions(jid, ["b", "a"])
    cache.save_minions(jid, ["c", "a"])
    cache.flush()
    assert cache.get_minions(jid) == ["a", "b", "c"]
    assert cache.missing(jid) == ["a", "b", "c"]


def test_first_return_wins(cache):
    jid = now_jid()
    cache.save_load(jid, load(jid), ["m1"])
    cache.save_return(jid, "m1", {"return": "first"})
    cache.save_return(jid, "m1", {"return": "second"})
    cache.flush()
    assert cache.get_returns(jid)["m1"]["return"] == "first"


def test_odd_values_survive(cache):
    jid = now_jid()
    cache.save_load(jid, load(jid, arg=[{"__kwarg__": True, "big": 2**70}]))
    cache.save_return(
        jid,
        "m1",
        {
            "return": {"set": {1, 2}, "bytes": b"\x00\xff", "t": (1, 2), "when": datetime.date(2024, 1, 2)},
            "out": "nested",
        },
    )
    cache.flush()
    assert cache.get_load(jid)["arg"][0]["big"] == str(2**70)
    ret = cache.get_returns(jid)["m1"]
    assert ret["return"]["bytes"] == b"\x00\xff" and ret["out"] == "nested"
    assert ret["return"]["when"] == "2024-01-02"


def test_invalid_ids_refused(cache):
    with pytest.raises(SaltInvocationError):
        cache.save_load("../../etc", load("x"))
    with pytest.raises(SaltInvocationError):
        cache.save_return(now_jid(), "../m1", {"return": 1})
    with pytest.raises(SaltInvocationError):
        cache.get_returns("1; DROP TABLE jobs")


def test_return_record():
    assert return_record({"return": 1, "jid": "x", "id": "m", "retcode": 2, "fun": "f"}) == {"return": 1, "retcode": 2}
    assert return_record([1, 2]) == {"return": [1, 2]}


def test_list_jobs(cache):
    base = datetime.datetime.now() - datetime.timedelta(hours=1)
    jids = [jid_at(base, i) for i in range(5)]
    for i, jid in enumerate(jids):
        cache.save_load(jid, load(jid, fun="state.apply" if i % 2 else "test.ping"))
    cache.flush()
    assert [r.jid for r in cache.list_jobs()] == jids
    assert [r.jid for r in cache.list_jobs(functions=["state.*"])] == [jids[1], jids[3]]
    assert [r.jid for r in cache.list_jobs(limit=2)] == jids[3:]
    assert [r.jid for r in cache.list_jobs(limit=2, newest_first=True)] == [jids[4], jids[3]]
    assert cache.list_jobs(start_time=time.time() + 10) == []
    rec = cache.list_jobs()[0]
    assert (rec.fun, rec.tgt, rec.tgt_type, rec.user) == ("test.ping", "*", "glob", "root")
    assert rec.load["jid"] == jids[0]


def test_prune(cache):
    old = datetime.datetime.now() - datetime.timedelta(hours=30)
    old_jid, new_jid = jid_at(old), now_jid()
    for jid in (old_jid, new_jid):
        cache.save_load(jid, load(jid), ["m1"])
        cache.save_return(jid, "m1", {"return": True})
    cache.flush()
    assert cache.prune(0) == 0  # keep_jobs 0: keep everything, as Salt
    assert cache.prune(24) == 1
    assert cache.get_load(old_jid) == {} and cache.get_returns(old_jid) == {}
    assert cache.get_returns(new_jid) == {"m1": {"return": True}}
    assert cache.prune(24) == 0


def test_targeted_is_an_indexed_lookup_kept_in_step(sqlite_cache, tmp_path):
    cache = sqlite_cache
    jid, other = now_jid(), now_jid(1)
    cache.save_load(jid, load(jid), ["m1", "m2"])
    cache.save_minions(jid, ["m3"])
    cache.save_load(other, load(other))  # a job with no known targets
    cache.flush()
    assert [cache.targeted(jid, m) for m in ("m1", "m2", "m3", "m4")] == [True, True, True, False]
    assert cache.targeted(other, "m1") is False
    assert cache.targeted(now_jid(2), "m1") is None  # no such job
    with pytest.raises(SaltInvocationError):
        cache.targeted("../x", "m1")
    with contextlib.closing(sqlite3.connect(cache.path)) as conn:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT 1 FROM job_minions WHERE jid = ? AND minion_id = ?", (jid, "m1")
        ).fetchall()
    assert "USING PRIMARY KEY" in str(plan) or "USING COVERING INDEX" in str(plan)
    old = jid_at(datetime.datetime.now() - datetime.timedelta(hours=30))
    cache.save_load(old, load(old), ["m1"])
    cache.flush()
    assert cache.prune(24) == 1
    with contextlib.closing(sqlite3.connect(cache.path)) as conn:
        rows = conn.execute("SELECT jid FROM job_minions WHERE jid = ?", (old,)).fetchall()
    assert rows == [] and cache.targeted(old, "m1") is None


def test_a_cache_from_before_the_target_index_is_indexed_when_opened(tmp_path):
    path = tmp_path / "jobs.sqlite"
    c = SqliteJobCache(str(path))
    jid = now_jid()
    c.save_load(jid, load(jid), ["m1", "m2"])
    c.close()
    conn = sqlite3.connect(str(path))
    conn.execute("DROP TABLE job_minions")  # as the cache was before the index
    conn.commit()
    conn.close()
    c = SqliteJobCache(str(path))
    try:
        assert c.targeted(jid, "m2") is True and c.targeted(jid, "m3") is False
    finally:
        c.close()


def test_keep_hours():
    assert keep_hours({}) == 24
    assert keep_hours({"keep_jobs": 2}) == 2
    assert keep_hours({"keep_jobs": 2, "keep_jobs_seconds": 1800}) == 0.5


def test_flush_before_close_writes_everything(tmp_path):
    path = str(tmp_path / "jobs.sqlite")
    c = SqliteJobCache(path)
    jid = now_jid()
    c.save_load(jid, load(jid), [f"m{i}" for i in range(500)])
    for i in range(500):
        c.save_return(jid, f"m{i}", {"return": i})
    c.close()  # must not lose the queued returns
    reader = SqliteJobCache(path, readonly=True)
    try:
        assert len(reader.get_returns(jid)) == 500
        assert reader.missing(jid) == []
    finally:
        reader.close()
    with pytest.raises(JobCacheError):
        c.save_return(jid, "m1", {"return": 1})


def test_readonly_cache_creates_nothing(tmp_path):
    path = tmp_path / "nowhere" / "jobs.sqlite"
    c = SqliteJobCache(str(path), readonly=True)
    assert c.list_jobs() == [] and c.get_load(now_jid()) == {}
    assert not path.parent.exists()
    with pytest.raises(JobCacheError):
        c.save_load(now_jid(), load("x"))
    c.close()


def test_read_in_thread_while_writing(cache):
    jid = now_jid()
    cache.save_load(jid, load(jid))
    cache.flush()
    stop = threading.Event()
    seen: list[int] = []
    errors: list[BaseException] = []

    def reader():
        try:
            while not stop.is_set():
                seen.append(len(cache.get_returns(jid)))
        except BaseException as exc:  # noqa: BLE001 - report in the main thread
            errors.append(exc)

    t = threading.Thread(target=reader)
    t.start()
    for i in range(300):
        cache.save_return(jid, f"m{i}", {"return": "x" * 100})
        if i % 50 == 0:
            cache.flush()
    cache.flush()
    wait_until(lambda: errors or (seen and seen[-1] == 300), 10, "the reader to see every return")
    stop.set()
    t.join(10)
    assert not t.is_alive() and not errors
    assert seen == sorted(seen) and seen[-1] == 300  # never goes back, ends complete


def _read_in_process(path: str, jid: str, queue) -> None:
    c = SqliteJobCache(path, readonly=True)
    counts = [len(c.get_returns(jid))]
    queue.put("reading")
    deadline = time.time() + 20
    while time.time() < deadline:
        n = len(c.get_returns(jid))
        counts.append(n)
        if n >= 200:
            break
        time.sleep(0.001)
    c.close()
    queue.put(counts)


def test_read_in_other_process_while_writing(sqlite_cache):
    cache = sqlite_cache
    jid = now_jid()
    cache.save_load(jid, load(jid))
    cache.flush()
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_read_in_process, args=(cache.path, jid, queue))
    proc.start()
    assert queue.get(timeout=30) == "reading"  # the writes below overlap the reads
    for i in range(200):
        cache.save_return(jid, f"m{i}", {"return": i})
        if i % 20 == 0:
            cache.flush()
            time.sleep(0.005)
    cache.flush()
    counts = queue.get(timeout=30)
    proc.join(10)
    assert proc.exitcode == 0
    assert counts[-1] == 200 and counts == sorted(counts)


def test_a_new_job_never_takes_over_another_jobs_jid(cache):
    jid = now_jid()
    assert cache.save_load(jid, load(jid, "test.first"), ["m1"], new=True).result(10) == jid
    assert cache.save_load(jid, load(jid, "test.second"), ["m2"], new=True).result(10) is False
    assert cache.get_load(jid)["fun"] == "test.first" and cache.get_minions(jid) == ["m1"]
