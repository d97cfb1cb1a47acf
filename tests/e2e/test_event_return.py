"""A real master storing its bus's events in the job cache (``event_return: job_cache``, issue 13)
with a real minion: a job's return event, a ``fire_event`` state's ``salt/state_result/...`` event
and events fired on the master's bus land in the ``events`` table, and ``briny-run jobs.list_events``
reads them; the whitelist and the blacklist decide which tags are stored."""

from __future__ import annotations

import sqlite3
import textwrap
from collections.abc import Callable

import pytest

from briny.common.event import EventSender

from .support import Fleet, jid_from

SLS = """\
announce:
  test.succeed_with_changes:
    - fire_event: True
"""


def stored_tags(fleet: Fleet) -> list[str]:
    with sqlite3.connect(fleet.master_dir / "cache" / "jobs.sqlite") as db:
        return [tag for (tag,) in db.execute("SELECT tag FROM events ORDER BY id")]


@pytest.mark.slow
def test_the_master_stores_the_events_its_filter_keeps(make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet(
        ["ev1"],
        auto_accept=True,
        master_opts={
            "id": "evmaster",
            "event_return": "job_cache",
            "event_return_whitelist": ["salt/job/*/ret/*", "salt/state_result/*", "app/*"],
            "event_return_blacklist": ["app/secret/*"],
        },
    )
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
    assert event["data"]["ret"]["result"] is True and event["data"]["id"] == "ev1"
    assert event["master_id"] == "evmaster"
    ret = fleet.run("--out", "json", "jobs.list_events", f"tag=salt/job/{jid}/ret/*").json()
    assert ret[0]["data"]["id"] == "ev1" and ret[0]["data"]["fun"] == "state.sls"
