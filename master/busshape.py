"""The data of the events the master fires for what a minion did, in Salt's shape.

Salt's master bus carries what a minion sent *wrapped*: ``{"id": <minion>,
"tag": <tag>, "data": <what the minion sent>, "cmd": "_minion_event", "ts":
<the minion's send time>}`` plus ``"pretag": None`` for an event of the
minion's bus (``event.send``, ``event.fire_master``) or ``"jid"`` for one a
job fired (a ``fire_event`` state result, a progress event); so a reactor
reads ``data['data'][...]`` and a state result is ``data['data']['ret']``.
Beacons' events are fired as their data (with the minion's ``id``), as Salt
fires the ``events`` list of a minion's load; so is briny's own
``salt/minion/<id>/event/dropped`` notice. ``tests/golden/events/`` holds
what the reference Salt fires, and ``tests/e2e/test_event_shapes.py``
compares. ``docs/events.md`` documents every shape.

Pure data in, data out: the handlers (``master/handlers.py``) fire what
these build; the readers that need what a minion sent use :func:`sent`.
"""

from __future__ import annotations

import time
from typing import Any

from briny.common.event import BEACON_PREFIX
from briny.common.ids import valid_jid

MINION_EVENT = "_minion_event"


def flat(tag: str, minion_id: str) -> bool:
    """Whether the master fires a minion's event ``tag`` as its data (beacons, briny's dropped
    notice) rather than wrapped."""
    return tag.startswith(BEACON_PREFIX) or tag == f"salt/minion/{minion_id}/event/dropped"


def minion_event(minion_id: str, tag: str, data: dict[str, Any], jid: Any = None) -> dict[str, Any]:
    """What the master fires for event ``tag`` of ``minion_id`` (see the module docstring); ``jid``:
    the job that fired it, if any."""
    if flat(tag, minion_id):
        return {**data, "id": minion_id}
    body: dict[str, Any] = {"id": minion_id, "tag": tag, "data": data, "cmd": MINION_EVENT}
    if isinstance(jid, str) and valid_jid(jid):
        body["jid"] = jid
    else:
        body["pretag"] = None
    body["ts"] = int(time.time())
    return body


def sent(data: Any) -> Any:
    """What the minion sent, from the data of a master-bus event: the inner ``data`` of a wrapped
    minion event, else the data itself."""
    if isinstance(data, dict) and data.get("cmd") == MINION_EVENT and "data" in data:
        return data["data"]
    return data


def start_events(minion_id: str) -> list[tuple[str, dict[str, Any]]]:
    """``minion_start`` and ``salt/minion/<id>/start``, Salt's two events of a minion's start."""
    said = f"Minion {minion_id} started at {time.ctime()}"
    out = []
    for tag in ("minion_start", f"salt/minion/{minion_id}/start"):
        data = {"id": minion_id, "cmd": MINION_EVENT, "pretag": None, "data": said, "tag": tag, "ts": int(time.time())}
        out.append((tag, data))
    return out


def return_event(
    minion_id: str, jid: str, payload: dict[str, Any], record: dict[str, Any], user: Any
) -> dict[str, Any]:
    """The data of ``salt/job/<jid>/ret/<id>``: Salt's keys (``user``: the job's publisher)."""
    data: dict[str, Any] = {"cmd": "_return", "id": minion_id, "success": True, "return": None, "retcode": 0}
    data.update(record)
    data.update(
        jid=jid,
        fun=payload.get("fun", ""),
        fun_args=payload.get("fun_args", []),
        user=str(user or payload.get("user") or "root"),
        ts=int(time.time()),
    )
    return data


def run_args(args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    """A runner call's arguments as Salt's ``salt/run`` events show them: the keyword arguments
    (the private ``__`` ones left out) as one last dict."""
    public = {k: v for k, v in kwargs.items() if not str(k).startswith("__")}
    return [*args, public] if public else list(args)


def run_new(fun: str, fun_args: list[Any], jid: str, user: Any) -> dict[str, Any]:
    """The data of ``salt/run/<jid>/new`` for runner ``fun`` (``runner.`` added when missing)."""
    full = fun if fun.startswith("runner.") else f"runner.{fun}"
    return {"fun": full, "jid": jid, "user": str(user or "root"), "fun_args": list(fun_args)}


def run_ret(new: dict[str, Any], result: Any, success: bool) -> dict[str, Any]:
    """The data of ``salt/run/<jid>/ret``: ``new``'s keys, the runner's answer and whether it
    succeeded."""
    return {**new, "return": result, "success": bool(success)}
