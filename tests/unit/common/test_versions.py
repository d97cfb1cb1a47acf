"""``--version``, ``--versions-report`` on every command, in Salt 3007's layout."""

from __future__ import annotations

import subprocess
import sys

import pytest

import briny
from briny.common import versions

COMMANDS = {
    "briny": "briny.master.opcli:main",
    "briny-run": "briny.master.cli:main_run",
    "briny-key": "briny.master.cli:main_key",
    "briny-master": "briny.master.daemon:main",
    "briny-minion": "briny.minion.daemon:main",
    "briny-call": "briny.minion.call:main",
    "briny-cp": "briny.master.cli:main_cp",
}


def _run(entry: str, *args: str) -> subprocess.CompletedProcess[str]:
    module, func = entry.split(":")
    prog = next(name for name, e in COMMANDS.items() if e == entry)
    code = f"import sys; sys.argv = [{prog!r}, *{list(args)!r}]; from {module} import {func}; {func}()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("prog", sorted(COMMANDS))
def test_every_command_prints_its_version(prog: str) -> None:
    done = _run(COMMANDS[prog], "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{prog} {briny.__version__} (Salt {briny.SALT_COMPAT_VERSION})\n"


@pytest.mark.parametrize("prog", sorted(COMMANDS))
def test_every_command_prints_the_versions_report(prog: str) -> None:
    done = _run(COMMANDS[prog], "--versions-report")
    assert done.returncode == 0, done.stderr
    assert done.stdout == versions.versions_report() + "\n"
    assert done.stdout.startswith(f"Salt Version:\n          Salt: {briny.SALT_COMPAT_VERSION}\n")


def test_report_layout_is_salts() -> None:
    info = {
        "Salt Version": {"Salt": "3007.17", "briny": "0.1.0"},
        "Dependency Versions": {"cryptography": "50.0.2", "M2Crypto": None},
    }
    assert versions.versions_report(info) == (
        "Salt Version:\n"
        "          Salt: 3007.17\n"
        "         briny: 0.1.0\n"
        " \n"
        "Dependency Versions:\n"
        "  cryptography: 50.0.2\n"
        "      M2Crypto: Not Installed\n"
        " "
    )


def test_missing_dependency_is_none_in_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "DEPENDENCIES", (("nothere", "briny-no-such-dist"),))
    assert versions.versions_information()["Dependency Versions"]["nothere"] is None
