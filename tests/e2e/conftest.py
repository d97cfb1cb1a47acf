"""Fixtures for the end-to-end tests: real ``briny-master`` / ``briny-minion`` processes on 127.0.0.1.

- ``make_fleet(ids, **kw)`` builds a :class:`~tests.e2e.support.Fleet` under
  ``tmp_path`` (not started: call ``.start()``); every fleet it made is
  stopped by pid at teardown, even when the test failed.
- ``fleet``: one started fleet per module, three accepted minions with
  grains (``m1``/``m3`` ``role: web``, ``m2`` ``role: db``), for the tests
  that only run jobs.

When a test using a fleet fails, the tails of the daemons' logs are added
to the failure report (section "fleet logs").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .support import Fleet

GRAINS = {"m1": {"role": "web", "tier": "front"}, "m2": {"role": "db"}, "m3": {"role": "web"}}


def _fleets_of(item: pytest.Item) -> list[Fleet]:
    found: list[Fleet] = list(getattr(item, "_briny_fleets", []))
    funcargs = getattr(item, "funcargs", {}) or {}
    found += [v for v in funcargs.values() if isinstance(v, Fleet) and v not in found]
    return found


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and report.when in ("setup", "call"):
        for index, fleet in enumerate(_fleets_of(item)):
            try:
                report.sections.append((f"fleet logs ({index})", fleet.logs(40)))
            except Exception as exc:  # noqa: BLE001 - a report must never fail because a log is gone
                report.sections.append((f"fleet logs ({index})", f"unreadable: {exc!r}"))


@pytest.fixture
def make_fleet(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., Fleet]]:
    made: list[Fleet] = []
    setattr(request.node, "_briny_fleets", made)

    def make(ids: list[str] | tuple[str, ...] = ("m1", "m2"), **kw: Any) -> Fleet:
        fleet = Fleet(tmp_path / f"f{len(made)}", ids, **kw)
        made.append(fleet)
        return fleet

    yield make
    for fleet in made:
        fleet.close()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    shared = Fleet(tmp_path_factory.mktemp("fleet"), ["m1", "m2", "m3"], grains=GRAINS)
    try:
        shared.start()
        yield shared
    finally:
        shared.close()
