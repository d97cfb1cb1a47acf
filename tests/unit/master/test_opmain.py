"""``briny --version`` answers without importing the CLI (issue 25: the operator's command starts
in the time the interpreter takes)."""

from __future__ import annotations

import subprocess
import sys

from briny.common.versions import version_string


def briny(*args: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "from briny.master.opmain import main\n"
        f"sys.argv = ['briny', *{list(args)!r}]\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    heavy = ('briny.master.opcli', 'briny.master.clientapi', 'zmq', 'yaml', 'briny.common.config',\n"
        "             'importlib.metadata', 'argparse')\n"
        "    print('imported:', [m for m in heavy if m in sys.modules], file=sys.stderr)\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_briny_version_prints_the_version_and_imports_nothing_heavy():
    out = briny("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout == version_string("briny") + "\n"
    assert "imported: []" in out.stderr


def test_any_other_command_line_goes_to_the_full_cli():
    out = briny("--versions-report")  # not the fast path: the full parser prints the report
    assert out.returncode == 0, out.stderr
    assert "Salt Version:" in out.stdout and "Dependency Versions:" in out.stdout
    assert "'briny.master.opcli'" in out.stderr and "'importlib.metadata'" in out.stderr


def test_the_versions_module_leaves_package_metadata_to_the_versions_report():
    code = "import sys, briny.common.versions as v; print('importlib.metadata' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_the_operator_cli_imports_no_asyncio():
    # the CLI is a synchronous client of the master's IPC: the servers' loop stays out of it
    code = "import sys, briny.master.opcli; print([m for m in ('asyncio', 'zmq.asyncio', 'ssl') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
