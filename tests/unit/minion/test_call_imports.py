"""What ``briny-call --local test.ping`` imports (issue 25: the masterless call starts fast because
it leaves out the daemon's client, ZeroMQ and asyncio)."""

from __future__ import annotations

import subprocess
import sys


def test_a_local_ping_does_not_import_zeromq_asyncio_or_the_daemon_client(tmp_path):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "minion").write_text(
        f"id: lean\nroot_dir: {tmp_path}\nfile_client: local\ncachedir: cache\npki_dir: pki\n"
        f"log_file: minion.log\nfile_roots:\n  base: [{tmp_path / 'srv'}]\npillar_roots:\n  base: [{tmp_path / 'pil'}]\n"
    )
    code = (
        "import sys\n"
        "from briny.minion.call import run\n"
        f"code = run(['-c', {str(conf)!r}, '--local', '--out', 'json', 'test.ping'])\n"
        "heavy = ('zmq', 'asyncio', 'briny.minion.localapi', 'briny.common.localipc')\n"
        "print('code', code, [m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "code 0 []", out.stdout
    assert "true" in out.stdout


def test_the_minion_executor_leaves_the_outputters_to_the_command_that_prints():
    code = "import sys, briny.minion.executor; print('briny.common.output' in sys.modules, 'asyncio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False False", out.stderr
