"""The master-bus data built for what a minion did (``master/busshape.py``), in Salt's shape;
``tests/e2e/test_event_shapes.py`` compares every kind with the reference's golden."""

from __future__ import annotations

from briny.common.args import salt_arg
from briny.master.busshape import minion_event, return_event, run_args, run_new, run_ret, sent, start_events
from briny.master.publisher import job_events, missing_minions

JID = "20260101000000000001"


def test_a_minions_event_is_wrapped_with_its_id_beside_what_it_sent():
    body = minion_event("web1", "app/x", {"x": 1, "id": "forged"})
    assert body["id"] == "web1" and body["tag"] == "app/x" and body["cmd"] == "_minion_event"
    assert body["data"] == {"x": 1, "id": "forged"}  # what was sent, untouched: a reactor reads data['data']
    assert body["pretag"] is None and "jid" not in body and isinstance(body["ts"], int)
    assert sent(body) == {"x": 1, "id": "forged"}


def test_a_jobs_event_has_the_jid_beside_the_id_and_no_pretag():
    body = minion_event("web1", f"salt/state_result/{JID}/web1/motd", {"ret": {"result": True}}, JID)
    assert body["jid"] == JID and "pretag" not in body and body["data"]["ret"]["result"] is True
    assert "jid" not in minion_event("web1", "app/x", {}, "not-a-jid")


def test_beacons_and_the_dropped_notice_are_fired_as_their_data_with_the_senders_id():
    assert minion_event("web1", "salt/beacon/web1/load/", {"1m": 0.5, "id": "web2"}) == {"1m": 0.5, "id": "web1"}
    dropped = minion_event("web1", "salt/minion/web1/event/dropped", {"count": 3, "where": "relay"})
    assert dropped == {"count": 3, "where": "relay", "id": "web1"} and sent(dropped) == dropped


def test_start_events_are_salts_two():
    (t1, d1), (t2, d2) = start_events("web1")
    assert (t1, t2) == ("minion_start", "salt/minion/web1/start")
    assert d1["tag"] == t1 and d2["tag"] == t2 and d1["data"].startswith("Minion web1 started at ")
    assert set(d2) == {"id", "cmd", "pretag", "data", "tag", "ts"}


def test_a_return_event_has_salts_keys():
    data = return_event("web1", JID, {"fun": "test.ping", "fun_args": []}, {"return": True, "retcode": 0}, "alice")
    assert data["user"] == "alice" and isinstance(data["ts"], int) and data["cmd"] == "_return"
    assert {"jid", "id", "fun", "fun_args", "return", "retcode", "success"} <= set(data)


def test_a_jobs_publish_events_keep_salts_order_and_keys():
    load = {"jid": JID, "fun": "test.arg", "arg": [1], "kwarg": {"a": "b"}, "tgt": "m1,ghost", "tgt_type": "list"}
    (t0, bare), (t1, new), (t2, pub) = job_events({**load, "user": "root"}, ["m1"])
    assert (t0, t1, t2) == (JID, f"salt/job/{JID}/new", f"salt/job/{JID}/publish")
    assert bare == {"minions": ["m1"]}
    assert new["tgt"] == ["m1", "ghost"] and new["missing"] == ["ghost"]
    assert new["arg"] == [1, {"__kwarg__": True, "a": "b"}] and pub["ret"] == "" and "minions" not in pub


def test_missing_is_for_list_targets_only_and_kwargs_are_appended_once():
    assert missing_minions("web*", "glob", []) == []
    assert missing_minions(["a", "b"], "list", ["a"]) == ["b"]
    assert salt_arg([1, {"__kwarg__": True, "a": 1}], {"a": 1}) == [1, {"__kwarg__": True, "a": 1}]
    assert salt_arg([], {}) == []


def test_runner_events_carry_the_call_as_salt_run_shows_it():
    new = run_new("test.arg", run_args(["foo"], {"bar": "baz", "__pub_x": 1}), JID, None)
    assert new == {"fun": "runner.test.arg", "jid": JID, "user": "root", "fun_args": ["foo", {"bar": "baz"}]}
    assert run_ret(new, {"args": ["foo"]}, True) == {**new, "return": {"args": ["foo"]}, "success": True}
