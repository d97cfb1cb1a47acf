"""The reactor's core without daemons: the map, rendering with tag and data, Salt 3007's reaction
forms, reporting a broken SLS once, the wheel's key changes, and the worker pool off the bus."""

from __future__ import annotations

import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from briny.common.event import EventBus, EventListener
from briny.common.exceptions import ReactionError
from briny.master.keys.store import KeyStore
from briny.master.reactions import Reaction, Reactions, parse_reaction
from briny.master.reactor import Reactor, ReactorMap, ReactorService, master_reactor
from tests.waiting import join_listener, wait_until


class Recording(Reactions):
    """Reactions whose ``local`` records the job instead of publishing it."""

    def __init__(self, opts: dict[str, Any]) -> None:
        super().__init__(opts)
        self.published: list[Reaction] = []
        self.gate: threading.Event | None = None
        self.entered = threading.Event()  # a reaction reached local (and waits on the gate)

    def local(self, reaction: Reaction) -> dict[str, Any]:
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(10)
        self.published.append(reaction)
        return {"result": True, "jid": f"j{len(self.published)}", "minions": [str(reaction.tgt)]}


@pytest.fixture
def opts(tmp_path: Path) -> dict[str, Any]:
    roots = tmp_path / "salt"
    (roots / "reactor").mkdir(parents=True)
    return {
        "file_roots": {"base": [str(roots)]},
        "cachedir": str(tmp_path / "cache"),
        "pki_dir": str(tmp_path / "pki"),
        "sock_dir": str(tmp_path / "sock"),
        "id": "master",
        "__role": "master",
    }


def write(opts: dict[str, Any], rel: str, text: str) -> str:
    path = Path(opts["file_roots"]["base"][0]) / rel
    path.write_text(textwrap.dedent(text))
    return f"salt://{rel}"


def make(opts: dict[str, Any], reactor_map: list[Any]) -> tuple[Reactor, list[tuple[str, dict[str, Any]]], Recording]:
    fired: list[tuple[str, dict[str, Any]]] = []
    reactions = Recording(opts)
    reactor = master_reactor({**opts, "reactor": reactor_map}, lambda tag, data: fired.append((tag, data)), reactions)
    return reactor, fired, reactions


def test_the_map_matches_globs_in_order_and_names_what_it_cannot_use(caplog) -> None:
    rmap = ReactorMap.from_opts(
        {
            "reactor": [
                {"salt/minion/*/start": "salt://a.sls"},
                {"salt/minion/*": ["/srv/reactor/b.sls", "relative.sls"]},
                "not-a-mapping",
                {"two": "x", "keys": "y"},
            ]
        }
    )
    assert rmap.refs_for("salt/minion/m1/start") == ["salt://a.sls", "/srv/reactor/b.sls"]
    assert rmap.refs_for("salt/key") == []
    assert rmap.refs_for("salt/reactor/ret") == []  # the reactor's own events never react
    text = caplog.text
    assert "'relative.sls'" in text and "'not-a-mapping'" in text and "one-key mapping" in text


def test_a_reaction_sees_tag_and_data_and_publishes_with_the_current_args_form(opts) -> None:
    ref = write(
        opts,
        "reactor/start.sls",
        """\
        {% if data['id'] != 'skip' %}
        highstate_{{ data['id'] }}:
          local.state.apply:
            - tgt: {{ data['id'] }}
            - tgt_type: list
            - args:
              - mods: fix
              - test: True
        {% endif %}
        tell:
          cmd.event.send:
            - tgt: {{ data['id'] }}
            - arg:
              - {{ tag }}
        """,
    )
    reactor, fired, reactions = make(opts, [{"salt/minion/*/start": ref}])
    outcomes = reactor.react("salt/minion/m1/start", {"id": "m1"})
    assert [o["reaction"] for o in outcomes] == ["local.event.send", "local.state.apply"]  # Salt's order
    send, apply = reactions.published
    assert (send.fun, send.tgt, send.args, send.kwargs) == ("event.send", "m1", ["salt/minion/m1/start"], {})
    assert (apply.fun, apply.tgt, apply.tgt_type, apply.args, apply.kwargs) == (
        "state.apply",
        "m1",
        "list",
        [],
        {"mods": "fix", "test": True},
    )
    assert [t for t, _ in fired] == ["salt/reactor/ret", "salt/reactor/ret"]
    assert fired[1][1] == {
        "id": "highstate_m1",
        "sls": ref,
        "tag": "salt/minion/m1/start",
        "reaction": "local.state.apply",
        "result": True,
        "jid": "j2",
        "minions": ["m1"],
    }
    assert [o["reaction"] for o in reactor.react("salt/minion/skip/start", {"id": "skip"})] == ["local.event.send"]


def test_a_broken_sls_is_reported_once_and_later_events_still_react(opts) -> None:
    bad = write(opts, "reactor/bad.sls", "a:\n  local.test.ping:\n    - tgt: x\n   - oops: 1\n")
    good = write(opts, "reactor/good.sls", "ping:\n  local.test.ping:\n    - tgt: m1\n")
    reactor, fired, reactions = make(opts, [{"ev/*": [bad, good]}])
    for _ in range(3):
        reactor.react("ev/1", {})
    errors = [d for t, d in fired if t == "salt/reactor/error"]
    assert (
        len(errors) == 1
        and errors[0]["sls"] == bad
        and "Rendering SLS 'salt://reactor/bad.sls' failed" in errors[0]["error"]
    )
    assert reactor.problems == 3 and len(reactions.published) == 3  # the good SLS ran every time


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("r:\n  local.test.ping:\n    - tgt: m1\n    - args: [1, 2]\n", "Incorrect argument format"),
        ("r:\n  local.test.ping:\n    - tgt: m1\n    - kwarg: [1]\n", "'kwarg' must be a mapping"),
        ("r:\n  caller.test.ping: []\n", "caller.test.ping runs on a masterless minion's reactor"),
        ("r:\n  runner.nosuch.fun: []\n", "runner 'nosuch.fun' is not available"),
        ("r:\n  wheel.key.gen: []\n", "wheel 'key.gen' is not available"),
        ("r:\n  local: [tgt: m1]\n", "'local' is not a reaction (kind.function"),
        ("r: [1, 2]\n", "ID r in SLS salt://reactor/x.sls is not a dictionary"),
        ("r:\n  local.test.ping:\n    - tgt: m1\n    - just_a_word\n", "'just_a_word' is not an argument"),
        ("- a list\n", "does not render to a mapping of reaction IDs"),
        ("{{ nosuch.attr }}\n", "Rendering SLS 'salt://reactor/x.sls' failed"),
    ],
)
def test_each_broken_form_gets_a_clear_error_and_nothing_runs(opts, body: str, message: str) -> None:
    ref = write(opts, "reactor/x.sls", body)
    reactor, fired, reactions = make(opts, [{"ev": ref}])
    assert reactor.react("ev", {}) == []
    (error,) = [d for t, d in fired if t == "salt/reactor/error"]
    assert message in error["error"] and error["tag"] == "ev"
    assert reactions.published == []


def test_legacy_runner_form_takes_the_functions_own_keys(opts) -> None:
    chunk = {"state": "runner", "fun": "jobs.list_jobs", "__id__": "r", "__sls__": "s", "name": "r", "order": 1}
    assert parse_reaction({**chunk, "search_function": "test.*", "bogus": 1}, Reactions(opts)).kwargs == {
        "search_function": "test.*"
    }
    assert parse_reaction({**chunk, "args": [{"search_function": "x"}]}, Reactions(opts)).kwargs == {
        "search_function": "x"
    }
    with pytest.raises(ReactionError, match="needs a 'tgt'"):
        parse_reaction({**chunk, "state": "local", "fun": "test.ping"}, Reactions(opts))
    caller = {**chunk, "state": "caller", "fun": "test.arg", "args": ["a", "b"]}
    with pytest.raises(ReactionError, match="masterless"):
        parse_reaction(caller, Reactions(opts))


def test_a_runner_reaction_runs_the_runner(opts) -> None:
    ref = write(opts, "reactor/run.sls", "jobs:\n  runner.jobs.list_jobs: []\n")
    reactor, fired, _ = make(opts, [{"ev": ref}])
    (outcome,) = reactor.react("ev", {})
    assert outcome["reaction"] == "runner.jobs.list_jobs" and outcome["result"] is True and outcome["return"] == {}


def test_wheel_key_accept_and_delete_change_the_key_store(opts) -> None:
    keys = KeyStore(opts, fire_events=False)
    keys.ensure_master_keys()
    keys.register("web1", keys.master_public_pem())  # any valid public key: pending
    accept = write(
        opts, "reactor/accept.sls", "ok:\n  wheel.key.accept:\n    - args:\n      - match: {{ data['id'] }}\n"
    )
    delete = write(opts, "reactor/delete.sls", "gone:\n  wheel.key.delete:\n    - match: {{ data['id'] }}\n")
    reactor, fired, _ = make(opts, [{"salt/auth": accept}, {"salt/minion/*/gone": delete}])
    (outcome,) = reactor.react("salt/auth", {"id": "web1", "act": "pend"})
    assert outcome["result"] is True and outcome["return"] == {"minions": ["web1"]}
    assert keys.status("web1") == "accepted"
    (outcome,) = reactor.react("salt/minion/web1/gone", {"id": "web1"})
    assert outcome["return"] == {"minions": ["web1"]} and keys.status("web1") is None


def test_wheel_reactions_take_salts_arguments_and_report_a_missing_match(opts) -> None:
    """The reactor runs the wheel of briny.master.wheel: Salt's ``include_rejected`` moves a
    rejected key, the legacy form passes only the function's own keys, and a reaction without
    ``match`` fails with the wheel's error while the next one still runs."""
    keys = KeyStore(opts, fire_events=False)
    keys.ensure_master_keys()
    keys.register("db1", keys.master_public_pem())
    keys.reject("db1", False, False)
    plain = write(opts, "reactor/plain.sls", "a:\n  wheel.key.accept:\n    - match: db1\n    - bogus: 1\n")
    forced = write(
        opts,
        "reactor/forced.sls",
        "a:\n  wheel.key.accept:\n    - args:\n      - match: db*\n      - include_rejected: true\n",
    )
    nomatch = write(opts, "reactor/nomatch.sls", "a:\n  wheel.key.reject: []\n")
    reactor, fired, _ = make(opts, [{"plain": plain}, {"forced": forced}, {"nomatch": nomatch}])
    (outcome,) = reactor.react("plain", {})
    assert outcome["result"] is True and outcome["return"] == {} and keys.status("db1") == "rejected"
    (outcome,) = reactor.react("nomatch", {})
    assert outcome["result"] is False and "need 'match'" in outcome["error"]
    (outcome,) = reactor.react("forced", {})
    assert outcome["return"] == {"minions": ["db1"]} and keys.status("db1") == "accepted"


def test_the_service_queues_off_the_bus_and_a_slow_reaction_blocks_nothing(opts) -> None:
    """Reactions wait in the pool's queue while the one worker is held: the listener keeps taking
    events (none missed), a full queue drops reactions and says so, and once released every
    queued reaction runs."""
    ref = write(opts, "reactor/r.sls", "r:\n  local.test.ping:\n    - tgt: {{ data['n'] }}\n")
    service_opts = {**opts, "reactor": [{"burst/*": ref}], "reactor_worker_threads": 1, "reactor_worker_hwm": 5}
    bus = EventBus(service_opts, name="master").start_thread()
    fired: list[tuple[str, dict[str, Any]]] = []
    reactions = Recording(service_opts)
    reactions.gate = threading.Event()
    reactor = master_reactor(service_opts, lambda tag, data: fired.append((tag, data)), reactions)
    service = ReactorService(service_opts, lambda _fire: reactor, "master").start()
    try:
        with EventListener(service_opts, "salt/reactor/*", name="master") as events:
            join_listener(events, events.fire, "salt/reactor/probe")
            events.fire("burst/e", {"n": "m0"})
            wait_until(reactions.entered.is_set, 10, "the one worker to hold the first reaction")
            for n in range(1, 20):
                events.fire("burst/e", {"n": f"m{n}"})
            # one held by the worker, five waiting, the rest dropped and announced on the bus
            notice = events.get_event(10)
            assert notice is not None and notice[0] == "salt/reactor/dropped", notice
            wait_until(lambda: service.dropped == 14, 10, "14 reactions dropped")
            assert service.missed == 0
            reactions.gate.set()
            wait_until(lambda: len(reactions.published) == 6, 10, "the six queued reactions to run")
    finally:
        reactions.gate.set()
        service.stop()
        bus.stop()
    assert [r.tgt for r in reactions.published] == [f"m{n}" for n in range(6)]
