"""The PostgreSQL job cache (master/jobcache/pg.py): what only it has. The interface's own tests run
against both backends in test_jobcache.py."""

from __future__ import annotations

import asyncio
import datetime
import logging
import threading

import pytest

from briny.common.exceptions import ConfigError, JobCacheError
from briny.master.jobcache import open_job_cache
from briny.master.jobcache.base import JID_TRIES, store_new_job
from briny.master.jobcache.pg import PgJobCache, conninfo, glob_regex

from tests.unit.master.test_jobcache import jid_at, load, now_jid
from tests.waiting import wait_until


def pg_opts(master_opts: dict, dsn: str, **extra) -> dict:
    return {**master_opts, "job_cache": "postgres", "postgres.dsn": dsn, **extra}


def test_factory_opens_postgres_and_creates_the_schema_once(master_opts, pg_dsn, pg_server):
    first = open_job_cache(pg_opts(master_opts, pg_dsn))
    second = open_job_cache(pg_opts(master_opts, pg_dsn))  # a second master on the same database
    try:
        assert isinstance(first, PgJobCache) and isinstance(second, PgJobCache)
        jid = now_jid()
        first.save_load(jid, load(jid), ["m1"])
        first.save_return(jid, "m1", {"return": True})
        assert first.flush(10)
        assert second.get_returns(jid) == {"m1": {"return": True}}  # what one writes the other reads
    finally:
        first.close()
        second.close()
    db = pg_dsn.rsplit("dbname=", 1)[1]
    tables = pg_server.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1", db)
    assert [t[0] for t in tables] == ["events", "job_minions", "jobs", "local_jobs", "returns"]


def test_returns_are_written_in_batches(pg_dsn):
    cache = PgJobCache(pg_dsn)
    try:
        jid = now_jid()
        cache.save_load(jid, load(jid), [f"m{i}" for i in range(1000)])
        assert cache.flush(10)
        before = cache.batches
        release = threading.Event()
        cache._submit(lambda conn: release.wait(10))  # hold the writer while the returns arrive
        for i in range(1000):
            cache.save_return(jid, f"m{i}", {"return": i, "retcode": 0, "success": True})
        release.set()
        assert cache.flush(20)
        # the held batch, then 1,000 returns in two transactions of 500 (not one per return)
        assert cache.batches - before == 3
        assert len(cache.get_returns(jid)) == 1000 and cache.missing(jid) == []
    finally:
        cache.close()


def test_a_duplicate_in_one_batch_keeps_the_first(pg_dsn, caplog):
    cache = PgJobCache(pg_dsn)
    try:
        jid = now_jid()
        release = threading.Event()
        cache._submit(lambda conn: release.wait(10))
        cache.save_return(jid, "m1", {"return": "first"})
        cache.save_return(jid, "m1", {"return": "second"})
        with caplog.at_level(logging.WARNING):
            release.set()
            assert cache.flush(10)
        assert cache.get_returns(jid) == {"m1": {"return": "first"}}
        assert "a second return of m1" in caplog.text
    finally:
        cache.close()


def test_a_reader_sees_returns_while_the_job_runs(master_opts, pg_dsn):
    writer = open_job_cache(pg_opts(master_opts, pg_dsn))
    reader = open_job_cache(pg_opts(master_opts, pg_dsn), readonly=True)  # briny-run's
    try:
        jid = now_jid()
        writer.save_load(jid, load(jid), ["m1", "m2", "m3"])
        writer.save_return(jid, "m1", {"return": True})
        assert writer.flush(10)
        assert reader.returned_ids(jid) == ["m1"] and reader.missing(jid) == ["m2", "m3"]
        assert [r.jid for r in reader.list_jobs(functions=["test.p*ng"])] == [jid]
        writer.save_return(jid, "m3", {"return": True})
        assert writer.flush(10)
        assert reader.missing(jid) == ["m2"]
        with pytest.raises(JobCacheError):
            reader.save_return(jid, "m2", True)
    finally:
        writer.close()
        reader.close()


def test_a_readonly_look_before_the_master_made_the_tables(master_opts, pg_dsn):
    reader = open_job_cache(pg_opts(master_opts, pg_dsn), readonly=True)
    try:
        assert reader.list_jobs() == [] and reader.get_returns(now_jid()) == {}
    finally:
        reader.close()


def test_wrong_connection_settings_are_clear_errors(master_opts, pg_server):
    good = pg_server.dsn
    with pytest.raises(ConfigError, match=r"postgres\.dsn \(.*port=") as err:
        open_job_cache(pg_opts(master_opts, good.replace(f"password={pg_server.password}", "password=wrong")))
    assert "wrong" not in str(err.value)  # the password is never in the message
    with pytest.raises(ConfigError, match="postgres.dsn is not a valid connection string"):
        open_job_cache(pg_opts(master_opts, "host=127.0.0.1 port"))
    with pytest.raises(ConfigError, match=r"postgres\.dsn .*dbname=nosuch"):
        open_job_cache(pg_opts(master_opts, good.replace("dbname=postgres", "dbname=nosuch")))
    keys = {"job_cache": "postgres", "postgres.host": "127.0.0.1", "postgres.port": pg_server.port}
    with pytest.raises(ConfigError, match=r"postgres\.host/port/db/user/passwd"):
        open_job_cache({**master_opts, **keys, "postgres.user": "postgres", "postgres.passwd": "nope"})
    with pytest.raises(ConfigError, match="postgres.port must be a port number"):
        open_job_cache({**master_opts, **keys, "postgres.port": "five"})
    with pytest.raises(ConfigError, match="postgres.buffer_max"):
        open_job_cache(pg_opts(master_opts, good, **{"postgres.buffer_max": 0}))


def test_salt_returner_keys_make_the_connection(master_opts, pg_server):
    keys = {
        "postgres.host": "127.0.0.1",
        "postgres.port": pg_server.port,
        "postgres.db": "postgres",
        "postgres.user": "postgres",
        "postgres.passwd": pg_server.password,
    }
    dsn, key = conninfo(keys)
    assert key == "postgres.host/port/db/user/passwd" and f"port={pg_server.port}" in dsn
    assert conninfo({**keys, "postgres.passwd": None, "postgres.password": "pw"})[0].endswith("password=pw")
    cache = open_job_cache({**master_opts, "job_cache": "postgres", **keys}, readonly=True)
    cache.close()


def test_glob_regex():
    assert glob_regex("state.*") == r"^state\..*$"
    assert glob_regex("test.p?ng") == r"^test\.p.ng$"
    assert glob_regex("[!a]x[bc]") == "^[^a]x[bc]$"
    assert glob_regex("a[") == r"^a\[$"


def test_the_database_going_away_buffers_and_writes_when_back(pg_server_own, caplog):
    cache = PgJobCache(pg_server_own.dsn)
    try:
        jid = now_jid()
        cache.save_load(jid, load(jid), [f"m{i}" for i in range(50)])
        cache.save_return(jid, "m0", {"return": 0})
        assert cache.flush(10)
        pg_server_own.pause()
        with caplog.at_level(logging.WARNING, logger="briny.master.jobcache.writer"):
            for i in range(1, 50):
                cache.save_return(jid, f"m{i}", {"return": i})
            assert not cache.flush(0.5)  # held, not lost
            wait_until(lambda: "writes buffered" in caplog.text, 10, "the log to say the writes are buffered")
            with pytest.raises(JobCacheError, match="unreachable"):
                cache.get_returns(jid)
            pg_server_own.resume()
            assert cache.flush(30)
            # the writer logs it after the writes it held are committed (and flush has returned)
            wait_until(lambda: "the database is back" in caplog.text, 10, "the log to say the database is back")
        assert len(cache.get_returns(jid)) == 50  # the reader reconnects too
    finally:
        cache.close(10)


def test_the_buffer_is_bounded(pg_server_own, caplog):
    cache = PgJobCache(pg_server_own.dsn, buffer_max=20)
    try:
        jid = now_jid()
        cache.save_load(jid, load(jid))
        assert cache.flush(10)
        pg_server_own.pause()
        with caplog.at_level(logging.WARNING, logger="briny.master.jobcache.writer"):
            for i in range(100):
                cache.save_return(jid, f"m{i}", {"return": i})
            wait_until(lambda: "oldest writes dropped" in caplog.text, 10, "the log to say writes were dropped")
            pg_server_own.resume()
            assert cache.flush(30)
        kept = cache.returned_ids(jid)
        assert 0 < len(kept) <= 20 and "m99" in kept  # the newest are kept
    finally:
        cache.close(10)


# -- jids across masters sharing one job cache ---------------------------------------------------


def test_two_masters_racing_one_jid_store_two_jobs(pg_dsn):
    """Two masters (two caches on one database) store a new job under the same jid at once, over
    and over: each time one keeps the jid and the other's job gets a fresh one; no row merges
    two jobs."""
    first, second = PgJobCache(pg_dsn), PgJobCache(pg_dsn)
    base = datetime.datetime(2026, 1, 1)
    minted = iter(jid_at(base, 10_000 + n) for n in range(1000))  # never one of the raced jids

    async def race(jid: str) -> tuple[str, str]:
        a, b = load(jid, "test.one"), load(jid, "test.two")
        got = await asyncio.gather(
            store_new_job(first, a, ["m1"], lambda: next(minted)),
            store_new_job(second, b, ["m2"], lambda: next(minted)),
        )
        return got[0], got[1]

    try:
        for n in range(20):
            jid = jid_at(base, n)
            one, two = asyncio.run(race(jid))
            assert jid in (one, two) and one != two
            assert first.get_load(one)["fun"] == "test.one" and second.get_load(two)["fun"] == "test.two"
            assert first.get_load(one)["jid"] == one and second.get_load(two)["jid"] == two
            assert first.get_minions(one) == ["m1"] and second.get_minions(two) == ["m2"]
    finally:
        first.close()
        second.close()


def test_a_job_finds_no_free_jid_after_the_tries(pg_dsn, caplog):
    cache = PgJobCache(pg_dsn)
    try:
        jid = now_jid()
        asyncio.run(store_new_job(cache, load(jid, "test.first"), ["m1"]))
        with pytest.raises(JobCacheError, match=f"no free jid after {JID_TRIES} tries"):
            asyncio.run(store_new_job(cache, load(jid, "test.again"), ["m2"], lambda: jid))
        assert cache.get_load(jid)["fun"] == "test.first" and cache.get_minions(jid) == ["m1"]
        assert (
            caplog.text.count(f"job cache: job {jid} (test.again) not stored: another job holds that jid") == JID_TRIES
        )
        # stored again as the same job (not new), the load is updated as before
        cache.save_load(jid, load(jid, "test.first", arg=[1]), ["m3"])
        assert cache.flush(10)
        assert cache.get_load(jid)["arg"] == [1] and cache.get_minions(jid) == ["m1", "m3"]
    finally:
        cache.close()


def test_a_role_without_create_uses_the_tables_made_before(pg_dsn, pg_server, pg_rw_dsn):
    """The role needs CREATE only while a table is missing (docs/scaling.md, "Schema"): once the
    tables exist, a master whose role may only read and write them starts; a table added by a
    newer briny (here ``local_jobs``) is a clear error for that role until a role with CREATE made it."""
    db = pg_dsn.rsplit("dbname=", 1)[1]
    PgJobCache(pg_dsn).close()  # the first start, with CREATE, makes the tables
    dsn = pg_rw_dsn()
    cache = PgJobCache(dsn)
    try:
        jid = now_jid()
        assert asyncio.run(store_new_job(cache, load(jid), ["m1"])) == jid
        assert cache.get_minions(jid) == ["m1"]
    finally:
        cache.close()
    pg_server.psql("DROP TABLE local_jobs", db)
    with pytest.raises(ConfigError, match=r"cannot create the tables .*permission denied"):
        PgJobCache(dsn)
    PgJobCache(pg_dsn).close()  # the owner's master makes it again
    pg_rw_dsn()
    PgJobCache(dsn).close()


INSERT_RETURN = (
    "INSERT INTO returns (jid, minion_id, received, success, retcode, ret) "
    "VALUES (%s, %s, 0, 1, 0, %s) ON CONFLICT DO NOTHING"
)
EMPTY_RETURN = b"\x81\xa6return\xc0"  # msgpack of {"return": None}


def test_a_deadlock_with_another_writer_is_applied_again_at_once(pg_dsn, pg_server, caplog):
    """Two masters' writers deadlock on one job's return rows (a real deadlock: ours holds m1's row
    and waits for m2's, the other holds m2's and waits for m1's). PostgreSQL makes ours the victim
    (it closed the cycle; the other checks only after 60 s): the batch is rolled back and applied
    again at once on the same connection, logged as a deadlock, never as the database unreachable."""
    import psycopg

    db = pg_dsn.rsplit("dbname=", 1)[1]
    pg_server.psql(f"ALTER DATABASE \"{db}\" SET deadlock_timeout = '100ms'")  # the writer's sessions
    cache = PgJobCache(pg_dsn)
    connections = []
    opened = cache._write_connection
    cache._write_connection = lambda: connections.append(1) or opened()  # count the writer's connections
    other = psycopg.connect(pg_dsn, autocommit=True)  # the other master's writer
    try:
        jid = now_jid()
        cache.save_load(jid, load(jid), ["m1", "m2"])
        assert cache.flush(10)
        other.execute("SET deadlock_timeout = '60s'")
        other.execute("BEGIN")
        other.execute(INSERT_RETURN, (jid, "m2", EMPTY_RETURN))
        entered, release, holding, go = (threading.Event() for _ in range(4))
        cache._submit(lambda conn: entered.set() or release.wait(10))  # so the next two are one batch
        assert entered.wait(10)

        def first(conn):  # ours takes m1's row, then its returns statement waits for m2's
            conn.execute(INSERT_RETURN, (jid, "m1", EMPTY_RETURN))
            holding.set()
            go.wait(10)

        done = cache._submit(first)
        cache.save_return(jid, "m2", {"return": "ours"})
        other_done: list[str] = []

        def other_writer() -> None:  # blocks on our m1 until ours is rolled back, then lets go
            other.execute(INSERT_RETURN, (jid, "m1", EMPTY_RETURN))
            other_done.append("inserted")
            other.execute("ROLLBACK")

        with caplog.at_level(logging.WARNING, logger="briny.master.jobcache.writer"):
            release.set()
            assert holding.wait(10)
            thread = threading.Thread(target=other_writer)
            thread.start()
            waiting = "SELECT count(*) FROM pg_locks WHERE NOT granted AND pid = %s"
            with psycopg.connect(pg_dsn, autocommit=True) as watch:
                pid = other.info.backend_pid
                wait_until(lambda: watch.execute(waiting, (pid,)).fetchone()[0] == 1, 10, "the other to wait for m1")
            go.set()  # ours asks for m2's row: the cycle
            assert cache.flush(10)
            thread.join(10)
        assert other_done == ["inserted"]  # the other was not the victim
        assert done.result(1) is None and cache.get_returns(jid) == {"m1": {"return": None}, "m2": {"return": "ours"}}
        assert "a deadlock with another writer of the database" in caplog.text
        assert "is applied again (1 of 5)" in caplog.text
        assert "unreachable" not in caplog.text
        assert len(connections) == 1  # the same connection: no reconnection, no back-off
    finally:
        other.close()
        cache.close(10)


def test_a_conflict_past_the_retries_is_held_not_lost(pg_dsn, caplog):
    """A batch that keeps losing (a serialization failure raised at the writer's seam, seven times
    in a row) is applied again at once CONFLICT_RETRIES times, then held and retried with the
    back-off, the log naming the conflict; its writes are committed once it goes through."""
    import psycopg

    from briny.master.jobcache.writer import CONFLICT_RETRIES

    cache = PgJobCache(pg_dsn)
    tries: list[int] = []

    def conflicting(conn):
        tries.append(1)
        if len(tries) <= CONFLICT_RETRIES + 2:
            raise psycopg.errors.SerializationFailure("could not serialize access")
        return "written"

    try:
        jid = now_jid()
        with caplog.at_level(logging.WARNING, logger="briny.master.jobcache.writer"):
            done = cache._submit(conflicting)
            cache.save_load(jid, load(jid), ["m1"])
            assert done.result(20) == "written" and cache.flush(10)
            wait_until(lambda: "the held writes are written" in caplog.text, 10, "the log to say the writes went in")
        assert len(tries) == CONFLICT_RETRIES + 3 and cache.get_minions(jid) == ["m1"]
        assert caplog.text.count("a serialization failure with another writer of the database") == CONFLICT_RETRIES
        assert f"a serialization failure with another writer, {CONFLICT_RETRIES + 1} times in a row" in caplog.text
        assert "unreachable" not in caplog.text
    finally:
        cache.close(10)
