"""A real master storing its bus's events in the job cache (``event_return: job_cache``, issue 13; SQLite and PostgreSQL)
with a real minion: a job's return event, a ``fire_event`` state's ``salt/state_result/...`` event
and events fired on the master's bus land in the ``events`` table, and ``briny-run jobs.list_events``
reads them; the whitelist and the blacklist decide which tags are stored."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from briny.common.config import load_master_config
from briny.common.event import EventSender
from briny.master.jobcache import open_job_cache

from tests.dbfixtures import pg_server  # noqa: F401 - the throwaway PostgreSQL server

from .support import Fleet, jid_from

SLS = """\
announce:
  test.succeed_with_changes:
    - fire_event: True
"""


def stored_tags(fleet: Fleet) -> list[str]:
    """The tags in the master's events table, in the order stored (read as briny-run reads it)."""
    cache = open_job_cache(load_master_config(str(fleet.master_conf)), readonly=True)
    try:
        return [event.tag for event in cache.list_events()]
    finally:
        cache.close()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_master_stores_the_events_its_filter_keeps(
    make_fleet: Callable[..., Fleet], request: pytest.FixtureRequest, backend: str
) -> None:
    master_opts = {
        "id": "evmaster",
        "event_return": "job_cache",
        "event_return_whitelist": ["salt/job/*/ret/*", "salt/state_result/*", "app/*"],
        "event_return_blacklist": ["app/secret/*"],
    }
    if backend == "postgres":
        server = request.getfixturevalue("pg_server")
        server.psql('DROP DATABASE IF EXISTS "e2e_events" WITH (FORCE); CREATE DATABASE "e2e_events"')
        master_opts.update(
            {"job_cache": "postgres", "postgres.dsn": server.dsn.replace("dbname=postgres", "dbname=e2e_events")}
        )
    fleet = make_fleet(["ev1"], auto_accept=True, master_opts=master_opts)
    (fleet.root / "srv" / "salt" / "announce.sls").write_text(textwrap.dedent(SLS))
    fleet.start()
    res = fleet.briny("-v", "--out", "json", "ev1", "state.sls", "announce")
    assert res.returncode == 0, res.stdout + res.stderr
    jid = jid_from(res.stdout)
    # fired on the master's bus after the job, in this order: once app/ok is stored, app/secret/x
    # went through the filter
    sender = EventSender({"sock_dir": str(fleet.master_dir / "s"), "event_sender_hwm": 100}, name="master")
    try:
        for tag in ("app/secret/x", "app/ok"):
            sender.fire(tag, {"by": "test"})
    finally:
        sender.close()
    tags = fleet.wait(lambda: (t := stored_tags(fleet)) and "app/ok" in t and t, 20, "app/ok to be stored")
    assert f"salt/job/{jid}/ret/ev1" in tags
    assert f"salt/state_result/{jid}/ev1/announce" in tags
    assert "app/secret/x" not in tags  # blacklisted
    assert f"salt/job/{jid}/new" not in tags and "salt/auth" not in tags  # not whitelisted
    assert not [t for t in tags if t.startswith("salt/event/listener/")]
    listed = fleet.run("--out", "json", "jobs.list_events", f"tag=salt/state_result/{jid}/*")
    assert listed.returncode == 0, listed.stderr
    [event] = listed.json()
    assert event["data"]["data"]["ret"]["result"] is True and event["data"]["id"] == "ev1"
    assert event["master_id"] == "evmaster"
    ret = fleet.run("--out", "json", "jobs.list_events", f"tag=salt/job/{jid}/ret/*").json()
    assert ret[0]["data"]["id"] == "ev1" and ret[0]["data"]["fun"] == "state.sls"
