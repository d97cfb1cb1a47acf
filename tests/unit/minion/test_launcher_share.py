"""What the daemon imports before it forks its job launcher (issue 25: one copy of the daemon's
modules, shared by both processes, instead of one each)."""

from __future__ import annotations

import subprocess
import sys


def fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_daemon_imports_what_it_runs_before_the_fork_without_a_thread_or_jinja():
    code = (
        "import sys, threading, gc\n"
        "from briny.minion.launcher import DAEMON_MODULES, share_with_launcher\n"
        "share_with_launcher()\n"
        "heavy = ('jinja2', 'briny.common.state.compiler', 'briny.common.state.engine', 'briny.common.state.render')\n"
        "print(threading.active_count(), [m for m in DAEMON_MODULES if m not in sys.modules],\n"
        "      [m for m in heavy if m in sys.modules], gc.get_freeze_count() > 0)"
    )
    assert fresh(code) == "1 [] [] True"  # fork still safe; everything shared; jobs' modules left out
