"""briny against Salt 3007's recorded answers on the functions corpus (issue 20's "Functions
Salt users call every day": dnsutil, grains writes and states, http.query, system.reboot /
shutdown, cmd.script, state.sls_id, file.accumulated).

Each case of ``tests/golden/functions/calls.yaml`` runs its calls in order with ``briny-call
--local`` on one fresh minion (the layout the recorder gave Salt, the same local HTTP server on
127.0.0.1), and every call's exit status and data, what the calls left in the sandbox and the
minion's grains file are compared with Salt's. Re-record (needs the reference Salt):

    python3 dev/record_functions_golden.py [CASE ...]
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

import goldenlib  # put on sys.path by conftest.py
from tests.integration.test_golden import _diff

# Deliberate differences from Salt: "<case>/<call index>" -> (why, what briny must say instead: the
# call must fail with the same exit status and this text in its output).
KNOWN_DIFFERENCES: dict[str, tuple[str, str]] = {
    "grains_module/20": ("Salt prints a traceback for a bad argument", "setvals grains must be a dictionary."),
    "cmd_script/12": ("Salt prints a traceback for a missing cwd", "either not absolute or does not exist"),
    "state_sls_id/6": (
        "Salt prints the function's whole docstring before its error",
        "No matches for ID 'nothere' found in SLS 'sls_id' within saltenv 'base'",
    ),
    "cmd_script/13": ("Salt prints its usage for an unknown runas user", "User 'nosuchuser' is not available"),
}


@pytest.fixture(scope="module")
def http_port():
    port, stop = goldenlib.serve_http()
    yield port
    stop()


@pytest.fixture(scope="module")
def dns_port():
    port, stop = goldenlib.serve_dns()
    yield port
    stop()


def _cases() -> list[str]:
    return sorted(goldenlib.functions_cases())


@pytest.mark.parametrize("case", _cases())
def test_functions_golden(case: str, briny_call, http_port: int, dns_port: int, tmp_path, monkeypatch) -> None:
    missing = [c for c in goldenlib.functions_cases()[case].get("needs", []) if not shutil.which(c)]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (tests/run.sh installs bind9-dnsutils)")
    rec = json.loads((goldenlib.FUNCTIONS_EXPECTED / f"{case}.json").read_text())
    work = tmp_path / "work"
    work.mkdir()
    conf, sandbox, calls = goldenlib.build_functions_case(work, case, http_port, dns_port)
    monkeypatch.setenv("PATH", goldenlib.functions_path(case, sandbox, os.environ["PATH"]))
    if "system." in str(calls):  # never the host's shutdown: the case's own must come first
        assert shutil.which("shutdown") == str(sandbox / "bin" / "shutdown")
    problems = []
    for n, (args, want) in enumerate(zip(calls, rec["calls"], strict=True)):
        p = briny_call(conf, args, cwd=work)
        data = goldenlib.functions_mask(goldenlib.parse_output(p.stdout, p.stderr), sandbox, http_port)
        if f"{case}/{n}" in KNOWN_DIFFERENCES:
            error = KNOWN_DIFFERENCES[f"{case}/{n}"][1]
            assert p.returncode == want["rc"] and error in p.stdout + p.stderr, (n, error, p.stderr[-800:])
            continue
        data = goldenlib.without_log_lines(data)
        if (want["rc"], goldenlib.without_log_lines(want["data"])) != (p.returncode, data):
            problems.append(
                f"--- call {n}: {' '.join(want['args'])} (exit status salt {want['rc']}, briny {p.returncode}) ---\n"
                + _diff(goldenlib.without_log_lines(want["data"]), data)
                + (f"\n--- briny stderr (tail) ---\n{p.stderr[-1200:]}" if p.stderr.strip() else "")
            )
    got = goldenlib.functions_outcome(conf, sandbox, http_port)
    for key in ("disk", "grains_file"):
        if rec[key] != got[key]:
            problems.append(f"--- {key} after the calls ---\n" + _diff(rec[key], got[key]))
    if problems:
        pytest.fail("briny differs from Salt:\n" + "\n".join(problems), pytrace=False)


def test_goldens_exist() -> None:
    missing = [c for c in _cases() if not (goldenlib.FUNCTIONS_EXPECTED / f"{c}.json").exists()]
    assert not missing, f"no golden for {missing}: run dev/record_functions_golden.py"


def test_known_differences_name_real_cases() -> None:
    cases = set(_cases())
    assert not {k for k in KNOWN_DIFFERENCES if k.split("/")[0] not in cases}


def test_system_reboot_in_test_mode_runs_nothing(briny_call, http_port: int, tmp_path, monkeypatch) -> None:
    """briny's addition (Salt refuses ``test=True`` here): the command that would run, and no run."""
    work = tmp_path / "work"
    work.mkdir()
    conf, sandbox, _ = goldenlib.build_functions_case(work, "system_reboot", http_port)
    monkeypatch.setenv("PATH", goldenlib.functions_path("system_reboot", sandbox, os.environ["PATH"]))
    assert shutil.which("shutdown") == str(sandbox / "bin" / "shutdown")
    for args, said in (
        (["system.reboot", "at_time='+5'", "test=True"], "Would run: shutdown -r +5"),
        (["system.shutdown", "test=True"], "Would run: shutdown -h now"),
    ):
        p = briny_call(conf, args, cwd=work)
        assert (p.returncode, json.loads(p.stdout)) == (0, {"local": said}), p.stderr
    assert not (sandbox / "shutdown.log").exists()
