"""End-to-end acceptance of the reactor (issue 12) with a real ``briny-master`` and two minions.

The master's ``reactor:`` maps a failed state's custom-tagged
``salt/state_result/*/*/custom/tag/*`` event to a reactor SLS that runs
``state.apply fix`` on the other minion: asserted are the reaction's outcome
event (``salt/reactor/ret`` with the follow-up job's jid), the follow-up
job's return in the job cache, and the file the fix wrote. Broken reactor
SLS (a YAML error, an unknown runner and wheel function, a reaction kind that
does not exist, a target no minion matches, a local reaction without a
target) each fire one ``salt/reactor/error`` with a clear message, and the
master keeps serving (``test.ping`` answers after them).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .support import Fleet, events_until

pytestmark = pytest.mark.slow

TREE = {
    "broken.sls": """\
        broken:
          test.fail_without_changes:
            - fire_event: custom/tag/broken
        """,
    "fix.sls": """\
        fixed:
          file.managed:
            - name: {{ grains['out'] }}/fixed.txt
            - contents: fixed after {{ pillar.get('why', 'a failure') }}
        """,
    "reactor/fix.sls": """\
        {% if data['data']['ret']['result'] == False %}
        fix_the_other:
          local.state.apply:
            - tgt: m2
            - args:
              - mods: fix
        {% endif %}
        """,
    "reactor/bad_yaml.sls": """\
        oops:
          local.test.ping:
            - tgt: m2
           - bad: indentation
        """,
    "reactor/bad_fun.sls": """\
        no_such_runner:
          runner.nosuch.thing: []
        no_such_wheel:
          wheel.key.nosuch:
            - args:
              - match: m9
        """,
    "reactor/bad_kind.sls": """\
        not_a_kind:
          nosuch.test.ping:
            - tgt: m2
        """,
    "reactor/bad_target.sls": """\
        nobody:
          local.test.ping:
            - tgt: no-such-minion-*
        no_target:
          local.test.ping: []
        """,
}

REACTOR = [
    {"salt/state_result/*/*/custom/tag/*": ["salt://reactor/fix.sls"]},
    {"test/bad/yaml": "salt://reactor/bad_yaml.sls"},
    {"test/bad/fun": "salt://reactor/bad_fun.sls"},
    {"test/bad/kind": "salt://reactor/bad_kind.sls"},
    {"test/bad/target": "salt://reactor/bad_target.sls"},
    {"test/bad/missing": "salt://reactor/not_there.sls"},
]


@pytest.fixture(scope="module")
def reacting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    root = tmp_path_factory.mktemp("reactor")
    fleet = Fleet(
        root,
        ["m1", "m2"],
        grains={"m1": {"out": str(root / "out1")}, "m2": {"out": str(root / "out2")}},
        master_opts={"reactor": REACTOR, "reactor_worker_threads": 2},
    )
    for rel, text in TREE.items():
        path = fleet.root / "srv" / "salt" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for out in ("out1", "out2"):
        (root / out).mkdir()
    try:
        fleet.start()
        yield fleet
    finally:
        fleet.close()


def _reactor_events(got: list[tuple[str, dict[str, Any]]], tag: str) -> list[dict[str, Any]]:
    return [data for t, data in got if t == tag]


def test_a_failed_state_on_one_minion_runs_the_fix_on_another(reacting: Fleet) -> None:
    with reacting.listening("salt/*", "salt/test/probe") as events:
        jid = reacting.publish("m1", "state.apply", "broken")
        got = events_until(events, lambda got: bool(_reactor_events(got, "salt/reactor/ret")))
    failed = [d for t, d in got if t == f"salt/state_result/{jid}/m1/custom/tag/broken"]
    assert failed and failed[0]["data"]["ret"]["result"] is False
    outcome = _reactor_events(got, "salt/reactor/ret")[0]
    assert outcome["reaction"] == "local.state.apply" and outcome["id"] == "fix_the_other"
    assert outcome["result"] is True and outcome["minions"] == ["m2"]
    assert outcome["tag"] == f"salt/state_result/{jid}/m1/custom/tag/broken"
    follow_up = outcome["jid"]
    assert follow_up != jid
    returns = reacting.wait_returns(follow_up, ["m2"])
    (state,) = returns["m2"].values()
    assert state["result"] is True and state["__id__"] == "fixed", returns
    fixed = Path(reacting.grains["m2"]["out"]) / "fixed.txt"
    assert fixed.read_text().startswith("fixed after a failure")
    assert not (Path(reacting.grains["m1"]["out"]) / "fixed.txt").exists()


@pytest.mark.parametrize(
    ("tag", "errors"),
    [
        ("test/bad/yaml", ["Rendering SLS 'salt://reactor/bad_yaml.sls' failed"]),
        ("test/bad/fun", ["runner 'nosuch.thing' is not available", "wheel 'key.nosuch' is not available"]),
        ("test/bad/kind", ["'nosuch.test.ping' is not a reaction: the kinds are local, runner, wheel, caller"]),
        (
            "test/bad/target",
            [
                "local.test.ping needs a 'tgt'",
                "local.test.ping on 'no-such-minion-*' (glob): No minions matched the target",
            ],
        ),
        ("test/bad/missing", ["Can not render SLS salt://reactor/not_there.sls. File missing or not found."]),
    ],
)
def test_a_broken_reactor_sls_is_reported_and_the_master_keeps_serving(
    reacting: Fleet, tag: str, errors: list[str]
) -> None:
    with reacting.listening("salt/reactor/*", "salt/reactor/probe") as events:
        events.fire(tag, {"n": 1})
        got = events_until(events, lambda got: len(_reactor_events(got, "salt/reactor/error")) >= len(errors))
    reported = sorted(d["error"] for d in _reactor_events(got, "salt/reactor/error"))
    assert all(d["tag"] == tag for d in _reactor_events(got, "salt/reactor/error"))
    for expected, message in zip(sorted(errors), reported):
        assert expected in message, reported
    ping = reacting.briny("--static", "*", "test.ping", "--out", "json", "-t", "10")
    assert ping.returncode == 0 and ping.json() == {"m1": True, "m2": True}, ping.stderr
