"""The service state module over a fake ``service`` execution module: Salt
3007's comments and changes (observed with the reference on Debian 12 with
its sysvinit provider), test mode, ``enable``, ``init_delay`` and
``mod_watch``."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

_FAKE_SERVICE = textwrap.dedent("""
    def _db():
        return __opts__["_fakesvc"]

    def available(name, **kwargs):
        return name in _db()["services"]

    def status(name, sig=None, **kwargs):
        return _db()["services"].get(name, {}).get("running", False)

    def enabled(name, **kwargs):
        return _db()["services"].get(name, {}).get("enabled", False)

    def _act(name, action, **changes):
        _db()["calls"].append((action, name))
        if _db().get("fail") == action:
            return False
        _db()["services"][name].update(changes)
        return True

    def start(name, **kwargs):
        return _act(name, "start", running=True)

    def stop(name, **kwargs):
        return _act(name, "stop", running=False)

    def restart(name, **kwargs):
        return _act(name, "restart", running=True)

    def reload(name, **kwargs):
        return _act(name, "reload")

    def full_restart(name, **kwargs):
        return _act(name, "full_restart", running=True)

    def enable(name, **kwargs):
        return _act(name, "enable", enabled=True)

    def disable(name, **kwargs):
        return _act(name, "disable", enabled=False)

    def force_reload(name, **kwargs):
        return _act(name, "force_reload")
""")

# Salt's systemd extras on an offline host (its `service` is the Debian
# provider plus these functions of the systemd module)
_FAKE_SYSTEMD_EXTRAS = textwrap.dedent("""
    def offline(**kwargs):
        return _db().get("offline", False)

    def masked(name, runtime=False, **kwargs):
        return ("runtime" if runtime else "mask") in _db()["services"][name].get("masks", ())

    def _set(name, runtime, on):
        _db()["calls"].append(("mask" if on else "unmask", name, runtime))
        if _db().get("fail") == "mask":
            raise CommandExecutionError("Failed to mask service " + repr(name))
        masks = set(_db()["services"][name].get("masks", ()))
        kind = "runtime" if runtime else "mask"
        if _db().get("fail") != "silently":
            masks = masks | {kind} if on else masks - {kind}
        _db()["services"][name]["masks"] = masks
        return True

    def mask(name, runtime=False, **kwargs):
        return _set(name, runtime, True)

    def unmask(name, runtime=False, **kwargs):
        return _set(name, runtime, False)
""")

S = "briny-test-svc"


@pytest.fixture
def db() -> dict[str, Any]:
    return {"services": {S: {"running": False, "enabled": False}}, "calls": []}


@pytest.fixture
def make(tmp_path: Path, db: dict[str, Any]):
    fake = tmp_path / "fake_modules"
    fake.mkdir()
    header = "from briny.common.exceptions import CommandExecutionError\n"
    (fake / "service.py").write_text(header + _FAKE_SERVICE + _FAKE_SYSTEMD_EXTRAS)
    plain = tmp_path / "fake_plain"
    plain.mkdir()
    (plain / "service.py").write_text(_FAKE_SERVICE)

    def build(test: bool = False, systemd: bool = True) -> Any:
        opts = {"test": test, "id": "t", "_fakesvc": db}
        return loader.states(opts, loader.minion_mods(opts, extra_dirs=[fake if systemd else plain]))

    return build


def _r(result: Any, comment: str, changes: dict | None = None) -> dict[str, Any]:
    return {"name": S, "result": result, "comment": comment, "changes": changes or {}}


def test_running(make, db) -> None:
    assert make(test=True)["service.running"](name=S) == _r(None, f"Service {S} is set to start")
    assert db["calls"] == []
    assert make()["service.running"](name=S) == _r(True, f"Started service {S}", {S: True})
    assert make()["service.running"](name=S) == _r(True, f"The service {S} is already running")


def test_running_with_enable(make, db) -> None:
    assert make(test=True)["service.running"](name=S, enable=True) == _r(None, f"Service {S} is set to start")
    assert make()["service.running"](name=S, enable=True) == _r(
        True, f"Service {S} has been enabled, and is running", {S: True}
    )
    assert make()["service.running"](name=S, enable=True) == _r(True, f"The service {S} is already running")
    # running but not enabled: only the enable is left to do
    db["services"][S]["enabled"] = False
    assert make(test=True)["service.running"](name=S, enable=True) == _r(None, f"Service {S} set to be enabled")
    assert make()["service.running"](name=S, enable=True) == _r(
        True, f"Service {S} has been enabled, and is in the desired state", {S: True}
    )
    # enabled but stopped
    db["services"][S]["running"] = False
    assert make()["service.running"](name=S, enable=True) == _r(
        True, f"Service {S} is already enabled, and is running", {S: True}
    )


def test_running_init_delay_and_failure(make, db) -> None:
    ret = make()["service.running"](name=S, init_delay=0.01)
    assert ret == _r(True, f"Started service {S}\nDelayed return for 0.01 seconds", {S: True})
    db["services"][S]["running"] = False
    db["fail"] = "start"
    ret = make()["service.running"](name=S)
    assert ret["result"] is False and ret["comment"] == f"Service {S} failed to start"


def test_dead(make, db) -> None:
    db["services"][S].update(running=True, enabled=True)
    assert make(test=True)["service.dead"](name=S) == _r(None, f"Service {S} is set to be killed")
    assert make()["service.dead"](name=S) == _r(True, f"Service {S} was killed", {S: False})
    assert make()["service.dead"](name=S) == _r(True, f"The service {S} is already dead")
    assert make(test=True)["service.dead"](name=S, enable=False) == _r(None, f"Service {S} set to be disabled")
    assert make()["service.dead"](name=S, enable=False) == _r(
        True, f"Service {S} has been disabled, and is in the desired state", {S: True}
    )
    db["services"][S]["running"] = True
    assert make()["service.dead"](name=S, enable=False) == _r(
        True, f"Service {S} is already disabled, and is dead", {S: False}
    )


def test_enabled_disabled(make, db) -> None:
    assert make(test=True)["service.enabled"](name=S) == _r(None, f"Service {S} set to be enabled")
    assert make()["service.enabled"](name=S) == _r(
        True, f"Service {S} has been enabled, and is in the desired state", {S: True}
    )
    assert make(test=True)["service.enabled"](name=S) == _r(
        True, f"Service {S} is already enabled, and is in the desired state"
    )
    assert make(test=True)["service.disabled"](name=S) == _r(None, f"Service {S} set to be disabled")
    assert make()["service.disabled"](name=S) == _r(
        True, f"Service {S} has been disabled, and is in the desired state", {S: True}
    )
    assert make()["service.disabled"](name=S) == _r(
        True, f"Service {S} is already disabled, and is in the desired state"
    )
    db["fail"] = "enable"
    ret = make()["service.enabled"](name=S)
    assert ret["result"] is False
    assert (
        ret["comment"] == f"Failed when setting service {S} to start at boot, but the service was in the desired state"
    )


def test_missing_service(make, db) -> None:
    name = "briny-no-such-svc"
    for fun, verb in (("running", "started"), ("dead", "stopped"), ("enabled", "enabled")):
        ret = make(test=True)[f"service.{fun}"](name=name)
        assert ret["result"] is None
        assert ret["comment"] == f"Service {name} not present; if created in this state run, it would have been {verb}"
    expected = {"running": False, "dead": True, "enabled": False, "disabled": True}
    for fun, result in expected.items():
        ret = make()[f"service.{fun}"](name=name)
        assert ret["result"] is result and ret["comment"] == f"The named service {name} is not available"
    assert make(test=True)["service.disabled"](name=name)["result"] is True


@pytest.mark.parametrize(
    "kwargs,action,past",
    [
        ({}, "restart", "restarted"),
        ({"reload": True}, "reload", "reloaded"),
        ({"full_restart": True}, "full_restart", "fully restarted"),
        ({"reload": True, "force": True}, "force_reload", "forcefully reloaded"),
    ],
)
def test_mod_watch_running(make, db, kwargs, action, past) -> None:
    db["services"][S]["running"] = True
    ret = make(test=True)["service.mod_watch"](name=S, sfun="running", **kwargs)
    assert ret == _r(None, f"Service is set to be {past}")
    ret = make()["service.mod_watch"](name=S, sfun="running", **kwargs)
    assert ret == _r(True, f"Service {past}", {S: True})
    assert db["calls"] == [(action, S)]


def test_mod_watch_stopped_and_dead(make, db) -> None:
    assert make(test=True)["service.mod_watch"](name=S, sfun="running") == _r(None, "Service is set to be started")
    assert make()["service.mod_watch"](name=S, sfun="running") == _r(True, "Service started", {S: True})
    assert db["calls"] == [("stop", S), ("start", S)]  # Salt stops before a start
    assert make(test=True)["service.mod_watch"](name=S, sfun="dead") == _r(None, "Service is set to be stopped")
    assert make()["service.mod_watch"](name=S, sfun="dead") == _r(True, "Service stopped", {S: True})
    assert make()["service.mod_watch"](name=S, sfun="dead") == _r(True, "Service is already stopped")
    ret = make()["service.mod_watch"](name=S, sfun="enabled")
    assert ret["result"] is False and ret["comment"] == "Unable to trigger watch for service.enabled"


def test_mod_watch_does_not_ask_availability(make, db) -> None:
    """Salt's mod_watch never asks whether the service exists: test mode says what it would do."""
    ret = make(test=True)["service.mod_watch"](name="briny-no-such-svc", sfun="running")
    assert ret == {**_r(None, "Service is set to be started"), "name": "briny-no-such-svc"}


def test_offline_mode(make, db) -> None:
    db["offline"] = True
    for test in (True, False):
        for fun in ("running", "dead"):
            assert make(test=test)[f"service.{fun}"](name=S) == _r(True, "Running in OFFLINE mode. Nothing to do")
    assert db["calls"] == []
    # enabled/disabled still work offline (rc links), as in Salt
    assert make()["service.enabled"](name=S)["changes"] == {S: True}


def test_enabled_typo(make, db) -> None:
    db["offline"] = True
    ret = make()["service.running"](name=S, enabled=True)
    assert ret == _r(False, f'Service {S} uses non-existent option "enabled".  Perhaps "enable" option was intended?')


@pytest.mark.parametrize("runtime,kind", [(False, "masked"), (True, "runtime masked")])
def test_masked_unmasked(make, db, runtime, kind) -> None:
    undone = kind.replace("masked", "unmasked")
    assert make(test=True)["service.masked"](name=S, runtime=runtime) == _r(
        None, f"Service {S} would be {kind}", {kind: {"old": False, "new": True}}
    )
    assert db["calls"] == []
    assert make()["service.masked"](name=S, runtime=runtime) == _r(
        True, f"Service {S} was {kind}", {kind: {"old": False, "new": True}}
    )
    assert make()["service.masked"](name=S, runtime=runtime) == _r(True, f"Service {S} is already {kind}")
    assert make(test=True)["service.unmasked"](name=S, runtime=runtime) == _r(
        None, f"Service {S} would be {undone}", {kind: {"old": True, "new": False}}
    )
    assert make()["service.unmasked"](name=S, runtime=runtime) == _r(
        True, f"Service {S} was {undone}", {kind: {"old": True, "new": False}}
    )
    assert make()["service.unmasked"](name=S, runtime=runtime) == _r(True, f"Service {S} was already {undone}")
    assert db["calls"] == [("mask", S, runtime), ("unmask", S, runtime)]


def test_masked_failures(make, db) -> None:
    db["fail"] = "mask"
    assert make()["service.masked"](name=S) == _r(False, f"Failed to mask service '{S}'")
    db["fail"] = "silently"
    assert make()["service.masked"](name=S) == _r(False, f"Failed to mask service {S}")  # Salt: result True
    for fun in ("masked", "unmasked"):
        assert make(systemd=False)[f"service.{fun}"](name=S) == _r(
            False, "Service masking not available on this minion"
        )
