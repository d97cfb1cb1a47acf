"""A masterless minion's reactor (issue 12): reactor SLS rendered with the minion's functions and
``caller.<fun>`` reactions run through its executor; other kinds and unknown functions reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from briny.common.config import MINION_DEFAULTS, apply_config
from briny.minion.executor import Executor
from briny.minion.reactor import minion_reactor


def make(tmp_path: Path, sls: str) -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    srv = tmp_path / "srv"
    (srv / "reactor").mkdir(parents=True)
    (srv / "reactor" / "r.sls").write_text(sls)
    opts = apply_config(
        {
            "id": "m1",
            "root_dir": str(tmp_path),
            "cachedir": "cache",
            "file_client": "local",
            "file_roots": {"base": [str(srv)]},
            "reactor": [{"custom/*": ["salt://reactor/r.sls"]}],
        },
        MINION_DEFAULTS,
    )
    fired: list[tuple[str, dict[str, Any]]] = []
    reactor = minion_reactor(opts, Executor(opts, dict), lambda tag, data: fired.append((tag, data)))
    return reactor, fired


def test_a_caller_reaction_runs_the_minions_function_with_the_events_data(tmp_path: Path) -> None:
    target = tmp_path / "touched"
    sls = (
        "touch:\n  caller.file.touch:\n    - args:\n      - name: {{ data['path'] }}\n"
        "echo:\n  caller.test.arg:\n    - args: [{{ grains.get('nothing', 'positional') | tojson }}]\n"
    )
    reactor, fired = make(tmp_path, sls)
    outcomes = reactor.react("custom/go", {"path": str(target)})
    assert [(o["reaction"], o["result"]) for o in outcomes] == [("caller.test.arg", True), ("caller.file.touch", True)]
    assert target.is_file()
    assert outcomes[0]["return"]["args"] == ["positional"]
    assert [tag for tag, _ in fired] == ["salt/reactor/ret", "salt/reactor/ret"]


def test_unknown_functions_and_reactions_needing_a_master_are_reported(tmp_path: Path) -> None:
    sls = (
        "nope:\n  caller.nosuch.fun:\n    - args:\n      - name: x\n"
        "pub:\n  local.test.ping:\n    - tgt: '*'\n"
        "run:\n  runner.jobs.list_jobs: []\n"
        "bad:\n  caller.test.arg:\n    - args: [1]\n    - arg: [2]\n"
    )
    reactor, fired = make(tmp_path, sls)
    outcomes = reactor.react("custom/go", {})
    errors = {data.get("id"): data["error"] for tag, data in fired if tag == "salt/reactor/error"}
    assert (
        errors["pub"]
        == "Reactor 'pub': local.test.ping needs a master; a masterless minion's reactor runs caller.<function> (caller.test.ping)"
    )
    assert errors["run"].startswith("Reactor 'run': runner.jobs.list_jobs needs a master")
    assert "'nosuch.fun' is not available" in errors["nope"]
    ran = {o["id"]: o for o in outcomes}
    assert ran["nope"]["result"] is False and ran["bad"]["result"] is True  # 'arg' next to 'args' is ignored
    assert ran["bad"]["return"]["args"] == [1]


def test_a_caller_state_apply_reaction_applies_an_sls_from_the_roots(tmp_path: Path) -> None:
    target = tmp_path / "fixed"
    reactor, _ = make(tmp_path, "fix:\n  caller.state.apply:\n    - args:\n      - mods: fix\n")
    (tmp_path / "srv" / "fix.sls").write_text(
        f"fixed:\n  file.managed:\n    - name: {target}\n    - contents: fixed by the reactor\n"
    )
    [outcome] = reactor.react("custom/broken", {})
    assert outcome["result"] is True, outcome
    [state] = outcome["return"].values()
    assert state["result"] is True and target.read_text() == "fixed by the reactor\n"
    (tmp_path / "srv" / "fix.sls").write_text("broken:\n  test.fail_without_changes: []\n")
    [failed] = reactor.react("custom/broken", {})
    assert failed["result"] is False and "error" not in failed
    assert [s["comment"] for s in failed["return"].values()] == ["Failure!"]
