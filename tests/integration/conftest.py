"""Fixtures for the integration tests: run `briny-call --local` on a temporary
state tree laid out exactly as the golden recorders lay it out for Salt."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys
from typing import Any

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "golden"))
import goldenlib  # noqa: E402 - found on the path set just above

_SCRIPT = "import sys; from briny.minion.call import main; sys.exit(main())"


def briny_call_command():
    """How to start briny-call: this interpreter if it can import briny (so the
    tests see the working tree), else the venv's console script."""
    try:
        if importlib.util.find_spec("briny.minion.call") is not None:
            return [sys.executable, "-c", _SCRIPT]
    except ImportError:
        pass
    script = REPO / ".venv" / "bin" / "briny-call"
    if script.exists():
        return [str(script)]
    return None


@pytest.fixture(scope="session")
def briny_call():
    """run(conf_dir, args, cwd) -> CompletedProcess of `briny-call --local -c CONF ARGS --out=json`."""
    cmd = briny_call_command()
    if cmd is None:
        pytest.fail(
            "briny-call is not available: neither `briny.minion.call` is importable "
            f"by {sys.executable} nor {REPO}/.venv/bin/briny-call exists"
        )

    def run(conf, args, cwd):
        return subprocess.run(
            [*cmd, "--local", "-c", str(conf), *args, "--out=json"],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=cwd,
        )

    return run


@pytest.fixture
def compiler_case(tmp_path):
    """build(case) -> (conf_dir, work_dir, mask replacements): the case's trees,
    pillar and minion config under a fresh temporary directory."""

    def build(case):
        work = tmp_path / "work"
        work.mkdir()
        conf, replacements = goldenlib.build_compiler_case(case, work)
        return conf, work, replacements

    return build


@pytest.fixture
def requisite_case(tmp_path):
    """build() -> (conf_dir, work_dir, sandbox): salt-golden.py's layout, the
    whole requisite cases folder as the tree, @SANDBOX@ replaced."""

    def build():
        work = tmp_path / "work"
        work.mkdir()
        conf, sandbox = goldenlib.build_requisite_case(work)
        return conf, work, sandbox

    return build


@pytest.fixture(scope="session")
def rpm_world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A throwaway RHEL-like package world (tests/rpmrepo.py), built once per session."""
    from tests import rpmrepo

    return rpmrepo.world_fixture(tmp_path_factory)
