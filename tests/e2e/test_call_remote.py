"""End-to-end ``briny-call`` without ``--local`` (issue 6): a real ``briny-minion`` runs the call
for it over ``sock_dir/minion_client.ipc`` and asks the real ``briny-master`` for its compiled
states (``compile`` request); the master's ``salt://`` files and pillar reach the run; exit
statuses are those of ``--local``; with no minion running, a clear message and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .support import Fleet


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def tree(fleet: Fleet, out: Path) -> None:
    write(
        Path(fleet.master_opts["file_roots"]["base"][0]),
        {
            "top.sls": "base:\n  '*':\n    - common\n",
            "common.sls": f"""\
            motd:
              file.managed:
                - name: {out}/{{{{ grains['id'] }}}}.motd
                - source: salt://motd.j2
                - template: jinja
            role:
              test.succeed_without_changes:
                - name: role {{{{ grains['role'] }}}}
                - require:
                  - file: motd
            """,
            "motd.j2": "{{ grains['id'] }} is {{ grains['role'] }}, {{ pillar['color'] }}\n",
            "broken.sls": "x:\n  test.nop:\n    - name: {{ nosuch.attr }\n",
        },
    )
    write(
        Path(fleet.master_opts["pillar_roots"]["base"][0]),
        {
            "top.sls": "base:\n  '*':\n    - data\n",
            "data.sls": "color: {{ grains['role'] }}-blue\n",
        },
    )


def call(fleet: Fleet, minion_id: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "briny.minion.call", "-c", str(fleet.minions[minion_id].conf_dir), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def local(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)["local"]


def master_log(fleet: Fleet) -> str:
    return fleet.master.log_file.read_text(errors="replace")


@pytest.mark.slow
def test_briny_call_goes_through_the_minion_and_the_master(make_fleet, tmp_path):
    fleet = make_fleet(["m1"], auto_accept=True, grains={"m1": {"role": "web"}})
    out = tmp_path / "out"
    out.mkdir()
    tree(fleet, out)
    fleet.start()

    ping = call(fleet, "m1", "test.ping", "--out", "json")
    assert ping.returncode == 0, ping.stderr
    assert local(ping) is True
    # the master keeps the call as a job of its own targeting m1 alone (Salt's "req" jid)
    jobs = fleet.wait(
        lambda: fleet.run("jobs.list_jobs", "search_function=test.ping", "--out", "json").json(),
        30,
        "the call's job in the master's job cache",
    )
    assert [(j["Function"], j["Target"]) for j in jobs.values()] == [("test.ping", "m1")]
    assert fleet.wait_returns(next(iter(jobs)), ["m1"]) == {"m1": True}

    dry = call(fleet, "m1", "state.apply", "test=True", "--out", "json")
    assert dry.returncode == 0, dry.stderr
    assert not list(out.iterdir())

    applied = call(fleet, "m1", "state.apply", "--out", "json")
    assert applied.returncode == 0, applied.stderr + applied.stdout
    results = local(applied)
    assert {r["__id__"] for r in results.values()} == {"motd", "role"}
    assert all(r["result"] is True for r in results.values())
    assert {r["name"] for r in results.values() if r["__id__"] == "role"} == {"role web"}
    assert (out / "m1.motd").read_text() == "m1 is web, web-blue\n"
    log = master_log(fleet)
    assert "compile request from m1 for state.apply: 2 chunk(s)" in log
    assert "compiled highstate for m1 on the master" in log

    # the default outputter of a state run is highstate, as with --local
    again = call(fleet, "m1", "state.apply")
    assert again.returncode == 0, again.stderr
    assert "Succeeded: 2" in again.stdout

    broken = call(fleet, "m1", "state.sls", "broken", "--out", "json")
    assert broken.returncode == 1, broken.stderr
    errors = local(broken)
    assert isinstance(errors, list) and "Rendering SLS 'base:broken' failed" in errors[0]
    assert "compile request from m1 for state.sls: 1 error(s)" in master_log(fleet)

    missing = call(fleet, "m1", "nosuch.fun")
    assert missing.returncode == 255 and "'nosuch.fun' is not available" in missing.stderr

    fleet.stop(fleet.minions["m1"])
    gone = call(fleet, "m1", "test.ping")
    assert gone.returncode == 2
    assert "no briny-minion is running for this config (sock_dir" in gone.stderr
    assert "start it, or use --local" in gone.stderr
