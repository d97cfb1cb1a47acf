"""Storing the master's events (event_return: master/eventreturn.py, the ``events`` table of
master/jobcache/sql.py and its writer master/jobcache/writer.py, both backends, the bus's sink in
common/event.py, jobs.list_events)."""

from __future__ import annotations

import json
import logging
import time

import pytest

from briny.common.config import load_master_config
from briny.common.event import EventBus, EventSender
from briny.common.exceptions import ConfigError, SaltInvocationError
from briny.master.eventreturn import EventFilter, EventReturn, event_returner, read_config
from briny.master.jobcache import open_job_cache
from briny.master.jobcache.pg import PgJobCache, jsonb_text
from briny.master.jobcache.sqlite import SqliteJobCache
from briny.master.runners import RunnerContext
from briny.master.runners import jobs

from tests.unit.master.test_jobcache import cache  # noqa: F401 - the fixture: a writable job cache of each backend
from tests.unit.master.test_jobcache import load, now_jid
from tests.waiting import wait_until


# ----- the store -----------------------------------------------------------------------------


def test_events_are_stored_and_read_by_tag_since_and_limit(cache):  # noqa: F811 - the imported fixture
    before = time.time()
    assert cache.save_event("salt/job/1/new", {"jid": "1", "_stamp": "x"}, "m_master")
    assert cache.save_event("salt/job/1/ret/m1", {"return": True, "id": "m1"}, "m_master")
    assert cache.save_event("custom/thing", {"n": 1}, "m_master")
    assert cache.flush(10)
    everything = cache.list_events()
    assert [e.tag for e in everything] == ["salt/job/1/new", "salt/job/1/ret/m1", "custom/thing"]
    assert everything[1].data == {"return": True, "id": "m1"}
    assert everything[0].master_id == "m_master"
    assert everything[0].id < everything[1].id < everything[2].id
    assert all(before <= e.stamp <= time.time() for e in everything)
    assert [e.tag for e in cache.list_events(tag="salt/job/*")] == ["salt/job/1/new", "salt/job/1/ret/m1"]
    assert [e.tag for e in cache.list_events(tag="salt/job/?/ret/*")] == ["salt/job/1/ret/m1"]
    assert [e.tag for e in cache.list_events(limit=2)] == ["salt/job/1/ret/m1", "custom/thing"]  # the newest
    assert cache.list_events(since=time.time() + 60) == []
    assert len(cache.list_events(since=before)) == 3


def test_odd_event_data_is_stored_as_json(cache):  # noqa: F811 - the imported fixture
    data = {
        "raw": b"\xffbin",
        "nul": "a\x00b",
        "esc": "\\u0000 literal",
        "nan": float("nan"),
        1: "int key",
        "t": (1, 2),
    }
    assert cache.save_event("odd/\x00tag" if isinstance(cache, SqliteJobCache) else "odd/tag", data, "m")
    assert cache.flush(10)
    [event] = cache.list_events()
    stored = event.data
    assert stored["raw"] == "\ufffdbin"
    assert stored["nul"] in ("a\x00b", "a\ufffdb")  # PostgreSQL's jsonb cannot hold NUL: U+FFFD
    assert stored["esc"] == "\\u0000 literal"  # an escaped backslash is not a NUL
    assert stored["nan"] == "nan" and stored["1"] == "int key" and stored["t"] == [1, 2]


def test_jsonb_text_replaces_only_real_nul_escapes():
    assert jsonb_text(json.dumps({"a": "x\x00y"})) == '{"a": "x\\ufffdy"}'
    literal = json.dumps({"a": "\\u0000"})
    assert jsonb_text(literal) == literal
    assert json.loads(jsonb_text(json.dumps({"a": "\\\x00"}))) == {"a": "\\\ufffd"}


def test_events_are_pruned_with_the_jobs(cache):  # noqa: F811 - the imported fixture
    cache.save_event("old/one", {}, "m")
    assert cache.flush(10)
    wait_until(lambda: time.time() - cache.list_events()[0].stamp > 0.01, 5, "the event to be older than 10 ms")
    cache.prune(0.01 / 3600)  # keep 10 ms
    assert cache.list_events() == []
    cache.save_event("new/one", {}, "m")
    assert cache.flush(10)
    cache.prune(1)
    assert [e.tag for e in cache.list_events()] == ["new/one"]


def test_events_waiting_are_bounded_by_buffer_max(tmp_path, caplog):
    c = SqliteJobCache(str(tmp_path / "jobs.sqlite"))
    c.buffer_max = 5
    try:
        c._queue.put(((lambda conn: time.sleep(0.3)), None))  # the writer busy: events wait behind it
        with caplog.at_level(logging.WARNING, logger="briny.master.jobcache.writer"):
            taken = [c.save_event(f"t/{i}", {"i": i}, "m") for i in range(20)]
        assert taken == [True] * 5 + [False] * 15
        assert c.events_dropped == 15
        assert "events dropped" in caplog.text and "postgres.buffer_max" in caplog.text
        assert c.flush(10)
        assert [e.tag for e in c.list_events()] == [f"t/{i}" for i in range(5)]
        assert c.save_event("t/after", {}, "m")  # room again once written
    finally:
        c.close()
    assert not c.save_event("t/closed", {}, "m")  # a closed cache takes none, and never raises


def test_a_readonly_cache_takes_no_events_and_reads_them(master_opts):
    writer = open_job_cache(master_opts)
    try:
        writer.save_event("a/b", {"x": 1}, "m")
        assert writer.flush(10)
        reader = open_job_cache(master_opts, readonly=True)
        assert not reader.save_event("c/d", {}, "m")
        assert [e.data for e in reader.list_events()] == [{"x": 1}]
        reader.close()
    finally:
        writer.close()


def test_postgres_writes_a_batch_of_events_in_one_statement_as_jsonb(pg_dsn, pg_server):
    c = PgJobCache(pg_dsn)
    try:
        c._queue.put(((lambda conn: time.sleep(0.3)), None))  # the events queue up behind it: one batch
        for i in range(200):
            c.save_event(f"batch/{i}", {"i": i, "nested": {"ok": True}}, "pg_master")
        assert c.flush(10)
        assert c.batches <= 3
        db = pg_dsn.split("dbname=")[1].split()[0]
        assert pg_server.value("SELECT count(*) FROM events WHERE (data->'nested'->>'ok')::boolean", db) == "200"
        assert pg_server.value("SELECT data->>'i' FROM events WHERE tag = 'batch/7'", db) == "7"
        assert pg_server.value("SELECT pg_typeof(data) FROM events LIMIT 1", db) == "jsonb"
        assert [e.data["i"] for e in c.list_events(tag="batch/1?")] == list(range(10, 20))
    finally:
        c.close()


def test_postgres_away_holds_the_events_and_writes_them_when_back(pg_server_own, caplog):
    c = PgJobCache(pg_server_own.dsn, buffer_max=50)
    try:
        assert c.flush(10)
        pg_server_own.pause()
        with caplog.at_level(logging.WARNING, logger="briny.master.jobcache.writer"):
            for i in range(80):
                c.save_event(f"away/{i}", {"i": i}, "m")
            wait_until(lambda: c.degraded, 10, "the cache to be degraded")
            pg_server_own.resume()
            assert c.flush(30)
        assert [e.data["i"] for e in c.list_events(tag="away/*")] == list(range(50))  # the first ones, in order
        assert c.events_dropped == 30
        assert "events dropped" in caplog.text and "writes buffered" in caplog.text
    finally:
        c.close(10)


def test_an_event_postgres_refuses_costs_only_the_events_of_its_batch(pg_dsn, caplog):
    c = PgJobCache(pg_dsn)
    try:
        jid = now_jid()
        c._queue.put(((lambda conn: time.sleep(0.3)), None))  # the writes below go in one batch
        c.save_load(jid, load(jid), ["m1"])
        c.save_event("bad/one", {"lone": "\ud800"}, "m")  # jsonb refuses a lone surrogate
        done = c.save_return(jid, "m1", {"return": "kept"})
        with caplog.at_level(logging.ERROR, logger="briny.master.jobcache.writer"):
            assert c.flush(10)
        done.result(5)
        assert c.get_returns(jid) == {"m1": {"return": "kept"}}
        assert c.list_events() == [] and c.events_dropped == 1
        assert "1 events not stored (the database refused them)" in caplog.text
        assert c.save_event("good/one", {}, "m") and c.flush(10)
        assert [e.tag for e in c.list_events()] == ["good/one"]
    finally:
        c.close()


def test_postgres_away_drops_events_before_returns(pg_server_own, caplog):
    c = PgJobCache(pg_server_own.dsn, buffer_max=50)
    try:
        jid = now_jid()
        c.save_load(jid, load(jid))
        assert c.flush(10)
        pg_server_own.pause()
        with caplog.at_level(logging.ERROR, logger="briny.master.jobcache.writer"):
            for i in range(10):
                c.save_return(jid, f"m{i}", {"return": i})
            for i in range(60):
                c.save_event(f"away/{i}", {"i": i}, "m")
            wait_until(lambda: "oldest events dropped" in caplog.text, 10, "the log to say events were dropped")
            pg_server_own.resume()
            assert c.flush(30)
        assert len(c.returned_ids(jid)) == 10  # every return kept
        stored = [e.data["i"] for e in c.list_events()]
        assert stored and len(stored) <= 40 and stored == sorted(stored) and stored[-1] == 49
        assert c.events_dropped == 60 - len(stored)
    finally:
        c.close(10)


# ----- the config and the filter ----------------------------------------------------------


def test_off_by_default_and_job_cache_turns_it_on(master_opts):
    assert master_opts["event_return"] == ""
    assert read_config(master_opts) is None
    assert read_config({**master_opts, "event_return": "job_cache"}) == EventFilter()
    assert read_config({**master_opts, "event_return": ["job_cache"]}) == EventFilter()


def test_salt_sql_returners_are_read_as_the_job_cache_with_one_warning(master_opts, caplog):
    opts = {**master_opts, "event_return": ["pgjsonb", "postgres"], "event_return_whitelist": ["salt/job/*"]}
    with caplog.at_level(logging.WARNING, logger="briny.master.eventreturn"):
        assert read_config(opts) == EventFilter(("salt/job/*",), ())
    records = [r for r in caplog.records if r.name == "briny.master.eventreturn"]
    assert len(records) == 1
    assert "pgjsonb, postgres" in records[0].getMessage() and "job cache" in records[0].getMessage()


def test_other_returners_are_named_as_not_supported(master_opts, caplog):
    with caplog.at_level(logging.WARNING, logger="briny.master.eventreturn"):
        assert read_config({**master_opts, "event_return": ["splunk", "rawfile_json"]}) is None
        assert "rawfile_json, splunk: not supported" in caplog.text
        caplog.clear()
        assert read_config({**master_opts, "event_return": ["job_cache", "splunk"]}) is not None
        assert "splunk: not supported" in caplog.text


def test_event_return_queue_is_named_in_a_warning(master_opts, caplog):
    with caplog.at_level(logging.WARNING, logger="briny.master.eventreturn"):
        read_config({**master_opts, "event_return": "job_cache", "event_return_queue": 100})
    assert "event_return_queue: ignored" in caplog.text


@pytest.mark.parametrize(
    ("key", "value"),
    [("event_return", 5), ("event_return", ["job_cache", 3]), ("event_return_blacklist", [{"a": 1}])],
)
def test_bad_values_are_clear_errors(master_opts, key, value):
    with pytest.raises(ConfigError, match=key):
        read_config({**master_opts, "event_return": "job_cache", key: value})


def test_a_config_file_with_bad_types_is_refused(master_dir):
    with open(master_dir / "master", "a") as fh:
        fh.write("event_return_whitelist: salt/*\n")
    with pytest.raises(ConfigError, match="event_return_whitelist"):
        load_master_config(master_dir)


def test_filter_is_salts_whitelist_then_blacklist():
    everything = EventFilter()
    assert everything.stored("salt/job/1/new", {}) and everything.stored("x", {})
    assert not everything.stored("salt/event/listener/abc", {})  # the bus's markers
    assert not everything.stored("salt/job/1/new", {"__peer_id": "other"})
    white = EventFilter(whitelist=("salt/job/*", "salt/event/listener/*"))
    assert white.stored("salt/job/1/ret/m", {}) and not white.stored("salt/auth", {})
    assert white.stored("salt/event/listener/abc", {})  # whitelisted explicitly
    both = EventFilter(whitelist=("salt/*",), blacklist=("salt/auth", "salt/job/*/new"))
    assert both.stored("salt/job/1/ret/m", {})
    assert not both.stored("salt/auth", {}) and not both.stored("salt/job/1/new", {})
    assert not EventFilter(whitelist=("Salt/*",)).stored("salt/x", {})  # case-sensitive


# ----- the bus's sink, end to end in one process -------------------------------------------


def test_the_bus_stores_what_it_carries_through_the_sink(master_opts):
    opts = {**master_opts, "event_return": "job_cache", "event_return_blacklist": ["noisy/*"]}
    jc = open_job_cache(opts)
    sink = event_returner(opts, jc)
    assert isinstance(sink, EventReturn)
    bus = EventBus(opts, name="master", sink=sink).start_thread()
    sender = EventSender(opts, name="master")
    try:
        sender.fire("noisy/x", {"n": 0})
        sender.fire("salt/event/listener/feedbeef", {})
        for i in range(3):
            sender.fire(f"app/done/{i}", {"n": i})
        wait_until(lambda: [e.tag for e in jc.list_events(limit=1)] == ["app/done/2"], 10, "the last event stored")
        stored = jc.list_events()
        assert [e.tag for e in stored] == ["app/done/0", "app/done/1", "app/done/2"]
        assert stored[0].data["n"] == 0 and "_stamp" in stored[0].data
        assert stored[0].master_id == opts["id"]
    finally:
        sender.close()
        bus.stop()
        jc.close()


def test_a_failing_sink_is_logged_and_the_bus_goes_on(master_opts, caplog):
    seen: list[str] = []

    def sink(tag: str, data: dict) -> None:
        seen.append(tag)
        if tag == "boom":
            raise RuntimeError("sink broke")

    bus = EventBus(master_opts, name="master", sink=sink).start_thread()
    sender = EventSender(master_opts, name="master")
    try:
        with caplog.at_level(logging.ERROR, logger="briny.common.event"):
            sender.fire("boom", {})
            sender.fire("after", {})
            wait_until(lambda: seen == ["boom", "after"], 10, "both events at the sink")
        assert "sink failed on boom: sink broke" in caplog.text
        bus.sink = None  # may be unset while the bus runs
        sender.fire("unseen", {})
        wait_until(lambda: bus.seq >= 3, 10, "the bus to carry the third event")
        assert seen == ["boom", "after"]
    finally:
        sender.close()
        bus.stop()


def test_event_returner_is_none_when_off(master_opts):
    jc = open_job_cache(master_opts)
    try:
        assert event_returner(master_opts, jc) is None
    finally:
        jc.close()


# ----- jobs.list_events --------------------------------------------------------------------


def test_the_runner_lists_stored_events(master_opts):
    jc = open_job_cache(master_opts)
    try:
        for i in range(5):
            jc.save_event(f"salt/job/{i}/new", {"i": i}, "mm")
        jc.save_event("other", {}, "mm")
        assert jc.flush(10)
    finally:
        jc.close()
    ctx = RunnerContext(master_opts)
    try:
        out = jobs.list_events(ctx, tag="salt/job/*", limit=2)
        assert [e["data"]["i"] for e in out] == [3, 4]
        assert set(out[0]) == {"id", "tag", "data", "stamp", "master_id"} and out[0]["master_id"] == "mm"
        assert len(jobs.list_events(ctx, limit=0)) == 6
        assert jobs.list_events(ctx, since="2999-01-01") == []
        with pytest.raises(SaltInvocationError, match="limit"):
            jobs.list_events(ctx, limit="many")
        with pytest.raises(SaltInvocationError, match="since"):
            jobs.list_events(ctx, since="yesterday-ish")
    finally:
        ctx.close()
