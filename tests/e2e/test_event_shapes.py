"""End-to-end: the master's bus carries Salt's event data, kind for kind (issue 20, "Event data on
the master's bus is Salt's").

``tests/golden/events/expected/NAME.json`` holds what the reference Salt's master bus carried for
each action of ``tests/golden/events/actions.yaml`` (``dev/record_events_golden.py``); a briny
master and minion ``m1`` with the same tree, pillar, reactor and beacon run the same actions
(``briny``, ``briny-run``, ``briny-key`` for ``salt``, ``salt-run``, ``salt-key``), and every event
Salt fired must have a briny event of the same tag (jids masked) and the same shape: the same keys
at every level, the same types (``goldenlib.event_shape``; briny's own ``_seq`` aside). The Salt
reactors of the tree read ``data['data']['x']`` (an ``event.send`` of the minion) and
``data['data']['ret']`` (a ``fire_event`` state result), as Salt's docs write them: their runner's
events prove they rendered and ran.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from .support import Fleet, FleetError

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
sys.path.insert(0, str(GOLDEN))
import goldenlib  # noqa: E402

CASE = GOLDEN / "events"
BRINY_KEYS = {"_seq"}  # briny's own keys, beside Salt's
COMMANDS = {"salt": "briny", "salt-run": "run", "salt-key": "key"}


def _shape(data: Any) -> Any:
    shape = goldenlib.event_shape(goldenlib.event_mask(data))
    return {k: v for k, v in shape.items() if k not in BRINY_KEYS} if isinstance(shape, dict) else shape


def _masked_tag(tag: str) -> str:
    return str(goldenlib.event_mask(tag))


def _collect(listener: Any, want: Counter[str], keep_beacons: bool, timeout: float = 60.0) -> list[dict[str, Any]]:
    """Events until every tag of ``want`` came as many times (beacons left out unless asked)."""
    got: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while want - Counter(e["tag"] for e in got):
        left = deadline - time.monotonic()
        event = listener.get_event(left) if left > 0 else None
        if event is None:
            missing = sorted(want - Counter(e["tag"] for e in got))
            raise FleetError(f"no {missing} within {timeout:g} s; got {[e['tag'] for e in got]}")
        tag, data = event
        if tag.startswith("salt/beacon/") and not keep_beacons:
            continue
        got.append({"tag": _masked_tag(tag), "data": data})
    return got


def _run_call(data: dict[str, Any]) -> tuple[Any, ...]:
    """What a ``salt/run/<jid>/new`` says was called, by whom (masked): the reactors' runners were
    given what they read from the event (``data['data']['x']``, ``data['data']['ret']``)."""
    masked = goldenlib.event_mask(data)
    return masked["fun"], json.dumps(masked["fun_args"], sort_keys=True), masked["user"]


def _differences(name: str, golden: list[dict[str, Any]], got: list[dict[str, Any]]) -> list[str]:
    """Each Salt event with no briny event of its tag and shape, said with the nearest one; each
    runner Salt called (a reactor's too) that briny did not call with the same arguments."""
    out = []
    for want in golden:
        same_tag = [e for e in got if e["tag"] == want["tag"]]
        shape = goldenlib.event_shape(want["data"])
        if not any(_shape(e["data"]) == shape for e in same_tag):
            near = json.dumps(_shape(same_tag[0]["data"]), sort_keys=True) if same_tag else "nothing"
            out.append(f"{name}: {want['tag']}\n  Salt:  {json.dumps(shape, sort_keys=True)}\n  briny: {near}")
        elif want["tag"] == "salt/run/@JID@/new" and _run_call(want["data"]) not in [
            _run_call(e["data"]) for e in same_tag
        ]:
            calls = [_run_call(e["data"]) for e in same_tag]
            out.append(f"{name}: Salt ran {_run_call(want['data'])}, briny {calls}")
    return out


@pytest.fixture()
def shapes_fleet(make_fleet: Callable[..., Fleet]) -> Fleet:
    fl = make_fleet(["m1"], minion_opts={"beacons": {"diskusage": [{"/": "0%"}, {"interval": 1}]}})
    tree = fl.root / "srv" / "salt"
    shutil.copytree(CASE / "tree", tree, dirs_exist_ok=True)
    (fl.root / "srv" / "pillar" / "top.sls").write_text("base:\n  '*':\n    - p\n")
    (fl.root / "srv" / "pillar" / "p.sls").write_text("color: blue\n")
    fl.master_opts["reactor"] = [
        {"golden/react": [str(tree / "reactor" / "react.sls")]},
        {"salt/state_result/*/m1/golden/custom": [str(tree / "reactor" / "state.sls")]},
    ]
    fl.write_master()
    return fl


def test_every_event_kind_has_salts_shape(shapes_fleet: Fleet) -> None:
    fleet = shapes_fleet
    actions = yaml.safe_load((CASE / "actions.yaml").read_text())
    problems: list[str] = []
    fleet.start_master()
    with fleet.listening("*", "briny/test/probe") as listener:
        fleet.start_minion("m1")
        for name, spec in actions.items():
            golden = json.loads((CASE / "expected" / f"{name}.json").read_text())["events"]
            if name == "start":
                fleet.wait_keys("minions_pre", ["m1"])
                res = fleet.key("-a", "m1", "-y")
                assert res.returncode == 0, res.stderr
            elif spec.get("argv"):
                cmd, *args = spec["argv"]
                res = getattr(fleet, COMMANDS[cmd])(*args)
                assert res.returncode in spec.get("rc", (0,)), f"{name}: {res.stdout}{res.stderr}"
            want = Counter(e["tag"] for e in golden)
            want["salt/auth"] = min(want["salt/auth"], 1)  # how often a pending minion asks again varies
            got = _collect(listener, want, bool(spec.get("beacons")))
            problems += _differences(name, golden, got)
    assert not problems, "\n".join(problems)
