"""Shared fixtures: a state tree on disk and a compiler over it."""

from __future__ import annotations

import fcntl
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from briny.common import logsetup
from briny.common.config import load_minion_config
from briny.common.fileclient import LocalFileClient
from briny.common.state.stages import RenderEnv


@pytest.fixture(autouse=True)
def _reset_logging():
    """CLIs run in-process install log handlers; each test starts without them."""
    yield
    logsetup.close()


HOST_LOCK = Path("/tmp/briny-host-tests.lock")


@pytest.fixture(autouse=True)
def _one_host_test_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests marked ``host`` change this machine (packages, apt sources, users, mounts, ...): two
    suites running at once (two checkouts, CI beside a developer) would see each other's changes,
    so such tests take one machine-wide lock, across processes, for their whole run."""
    if request.node.get_closest_marker("host") is None:
        yield
        return
    with HOST_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def make_env(tmp_path: Path) -> Callable[..., RenderEnv]:
    """make_env({"a.sls": "..."}, renderer="yaml", grains=..., pillar=..., **opts)"""

    def _make(
        files: dict[str, str],
        *,
        grains: dict[str, Any] | None = None,
        pillar: dict[str, Any] | None = None,
        salt: Any = None,
        **overrides: Any,
    ) -> RenderEnv:
        tree = write_tree(tmp_path / "srv", files)
        opts = load_minion_config(
            None, {"file_client": "local", "id": "minion1", "file_roots": {"base": [str(tree)]}, **overrides}
        )
        return RenderEnv(
            opts=opts,
            client=LocalFileClient(opts["file_roots"]),
            salt=salt or {},
            grains=grains or {},
            pillar=pillar or {},
        )

    return _make
