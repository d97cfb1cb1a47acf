"""event.send / event.wait: Salt's results, and the event on a real local bus."""

from __future__ import annotations

import tempfile
from typing import Any

from briny.common import loader
from briny.common.event import EventBus, EventListener, EventSender
from tests.waiting import join_listener


def _states(opts: dict[str, Any]) -> Any:
    return loader.states(opts, loader.minion_mods(opts))


def test_send_fires_on_the_bus() -> None:
    with tempfile.TemporaryDirectory(prefix="bes", dir="/tmp") as sock_dir:
        opts = {"test": False, "id": "t", "sock_dir": sock_dir, "file_client": "local"}
        bus = EventBus(opts).start_thread()
        try:
            with EventListener(opts, "my/*") as events:
                join_listener(events, EventSender(opts).fire, "my/probe")  # subscribed before the event
                ret = _states(opts)["event.send"](name="my/tag", data={"a": 1})
                tag, data = next(events.iter(timeout=5))
        finally:
            bus.stop()
    assert ret == {
        "name": "my/tag",
        "changes": {"tag": "my/tag", "data": {"a": 1}},
        "result": True,
        "comment": "Event fired",
    }
    assert tag == "my/tag" and data["a"] == 1


def test_test_mode_no_bus_and_wait(tmp_path) -> None:
    opts = {"test": True, "id": "t", "sock_dir": str(tmp_path), "file_client": "local"}
    ret = _states(opts)["event.send"](name="x/y", data=None, show_changed=False)
    assert ret == {"name": "x/y", "changes": {}, "result": None, "comment": "Event would have been fired"}
    opts["test"] = False
    st = _states(opts)
    ret = st["event.send"](name="x/y")
    assert (ret["result"], ret["comment"]) == (False, "Event fired")  # no bus listening, as Salt's salt-call --local
    assert st["event.wait"](name="x/y") == {"name": "x/y", "changes": {}, "result": True, "comment": ""}
    assert st["event.mod_watch"](name="x/y", sfun="wait", __reqs__={})["comment"] == "Event fired"
