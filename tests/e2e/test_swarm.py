"""``briny-swarm`` against a real ``briny-master`` (issue 13): many minion identities in one
process, each with its own key and session, answering pings and running ``state.apply`` through
the real engine; SIGTERM stops it cleanly; bad input is refused with a clear error."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from briny.minion.host.procs import descendants

from .support import Fleet, script

pytestmark = pytest.mark.slow

COUNT = 20
TREE = {
    "top.sls": "base:\n  '*':\n    - swarm\n",
    "swarm.sls": (
        "first:\n  test.succeed_with_changes:\n    - fire_event: True\n"
        "second:\n  test.succeed_without_changes:\n    - require:\n      - test: first\n"
        "third:\n  test.nop:\n    - require:\n      - test: second\n"
    ),
}


def write_config(folder: Path, body: dict[str, Any]) -> Path:
    conf = folder / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "minion").write_text(yaml.safe_dump(body))
    return conf


def swarm_config(fleet: Fleet) -> Path:
    root = fleet.root / "swarm"
    body = {**fleet.minion_base, "id": "sw", "root_dir": str(root), "log_file": "swarm.log", "log_level": "info"}
    return write_config(root, body)


@pytest.fixture
def start_swarm(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(conf: Path, count: int, *extra: str) -> subprocess.Popen[bytes]:
        with open(tmp_path / f"swarm{len(started)}.err", "wb") as err:  # the child keeps its own copy
            proc = subprocess.Popen(
                [*script("briny-swarm"), "-c", str(conf), "-n", str(count), *extra],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def stop(proc: subprocess.Popen[bytes]) -> int:
    """SIGTERM, and the exit status (bounded); no process the swarm started may be left."""
    children = descendants(proc.pid)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(30)
    left = [pid for pid in children if os.path.exists(f"/proc/{pid}")]
    assert not left, f"processes of the swarm left running: {left}"
    return code


def public_keys(fleet: Fleet, ids: list[str]) -> dict[str, str]:
    pki = fleet.root / "swarm" / "pki" / "swarm"
    return {i: (pki / i / "minion.pub").read_text() for i in ids}


def test_swarm_pings_applies_states_and_stops(make_fleet: Callable[..., Fleet], start_swarm: Any) -> None:
    fleet = make_fleet([], auto_accept=True)
    for rel, text in TREE.items():
        (fleet.root / "srv" / "salt" / rel).write_text(text)
    fleet.start_master()
    conf = swarm_config(fleet)
    ids = [f"sw-{i}" for i in range(COUNT)]
    swarm = start_swarm(conf, COUNT)
    fleet.wait_connected(ids, 90)

    keys = public_keys(fleet, ids)
    assert len(set(keys.values())) == COUNT  # one key pair per identity
    assert set(ids) <= set(fleet.keys()["minions"])

    res = fleet.briny("--static", "--out", "json", "*", "test.ping", timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.json() == {i: True for i in ids}

    with fleet.listening("salt/state_result/*", "salt/state_result/probe") as events:
        jid = fleet.publish("*", "state.apply")
        returns = fleet.wait_returns(jid, ids, 90)  # every return in the job cache
        seen: set[str] = set()
        while len(seen) < COUNT:
            event = events.get_event(30)
            assert event is not None, f"state_result events of {sorted(set(ids) - seen)} did not come"
            tag, data = event
            if tag.startswith(f"salt/state_result/{jid}/"):
                seen.add(data["id"])
    assert seen == set(ids)
    for minion_id in ids:
        ret = returns[minion_id]
        assert isinstance(ret, dict) and len(ret) == 3, (minion_id, ret)
        assert all(state["result"] is True for state in ret.values()), (minion_id, ret)
        assert any(state["changes"] for state in ret.values())
    # all up and settled: what the identities hold is frozen out of the collector's full passes
    log_file = fleet.root / "swarm" / "swarm.log"
    fleet.wait(
        lambda: f"{COUNT} minions up; " in log_file.read_text() and "objects frozen" in log_file.read_text(),
        30,
        "the swarm to freeze its settled heap",
    )

    assert stop(swarm) == 0

    # the keys are made once: a second start reuses them and the master accepts them again
    again = start_swarm(conf, COUNT)
    fleet.wait_connected(ids, 90)
    assert public_keys(fleet, ids) == keys
    res = fleet.briny("--static", "--out", "json", "*", "test.ping", timeout=60)
    assert res.json() == {i: True for i in ids}
    assert stop(again) == 0


def test_a_swarm_in_several_processes_serves_every_identity_and_stops_them_all(
    make_fleet: Callable[..., Fleet], start_swarm: Any
) -> None:
    fleet = make_fleet([], auto_accept=True)
    fleet.start_master()
    conf = swarm_config(fleet)
    count = 7
    ids = [f"sw-{i}" for i in range(count)]
    swarm = start_swarm(conf, count, "--procs", "3")
    fleet.wait_connected(ids, 90)
    fleet.wait(lambda: len(descendants(swarm.pid)) >= 2, 30, "the swarm's two other processes")
    res = fleet.briny("--static", "--out", "json", "*", "test.ping", timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.json() == {i: True for i in ids}
    assert stop(swarm) == 0  # every process gone (stop() checks), exit 0

    # SIGKILL of the first process: the others follow it (parent-death signal)
    again = start_swarm(conf, count, "--procs", "2")
    fleet.wait(lambda: len(descendants(again.pid)) >= 1, 30, "the swarm's second process")
    fleet.wait_connected(ids, 90)
    others = descendants(again.pid)
    again.kill()
    again.wait(10)
    fleet.wait(lambda: not any(os.path.exists(f"/proc/{pid}") for pid in others), 30, "the swarm's other process gone")


@pytest.mark.parametrize(
    ("body", "argv", "message"),
    [
        (None, ["-n", "3"], "no minion config file"),
        ({"id": "sw"}, ["-n", "3"], "does not set 'master'"),
        ({"id": "sw", "master": "127.0.0.1"}, ["-n", "many"], "must be a whole number, not 'many'"),
        ({"id": "sw", "master": "127.0.0.1"}, ["-n", "0"], "must be at least 1"),
        ({"id": "sw", "master": "127.0.0.1"}, ["-n", "2", "--workers", "x"], "--workers must be a whole number"),
        ({"id": "sw", "master": "127.0.0.1"}, ["-n", "2", "--procs", "0"], "--procs must be at least 1"),
        ({"id": "-sw", "master": "127.0.0.1"}, ["-n", "2"], "must not start with '-'"),
        # a master list is served as briny-minion serves it; a bad one is refused
        ({"id": "sw", "master": ["127.0.0.1", "127.0.0.1"]}, ["-n", "2"], "'master' lists the same master twice"),
    ],
)
def test_swarm_bad_input(tmp_path: Path, body: dict[str, Any] | None, argv: list[str], message: str) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    if body is not None:
        write_config(tmp_path, {**body, "root_dir": str(tmp_path)})
    done = subprocess.run([*script("briny-swarm"), "-c", str(conf), *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done
    assert message in done.stderr, done.stderr
    assert not (tmp_path / "pki").exists()  # nothing made for a refused command


def test_swarm_missing_folder(tmp_path: Path) -> None:
    done = subprocess.run(
        [*script("briny-swarm"), "-c", str(tmp_path / "nowhere"), "-n", "2"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "does not exist" in done.stderr
