"""``briny-minion`` as a process: config errors, a real ZeroMQ session with a raw master, SIGTERM."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
import types

from briny.common.transport import ZmqServer, free_ports

from tests.waiting import until

from .test_agent_support import RawMaster, held_job, run

SCRIPT = "import sys; from briny.minion.daemon import main; sys.exit(main())"


def minion(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw
    )


def text(path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


async def pinged(master: RawMaster) -> dict:
    """The return of a test.ping that reached the minion: publishes one every 0.2 s until one is
    answered (its SUB socket may not have joined the master's PUB yet: ZeroMQ drops what it missed)."""
    jids: list[str] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        jids.append(await master.publish("dm1", "test.ping"))
        for _ in range(20):
            answered = [r for j in jids for r in master.rets(j)]
            if answered:
                return answered[0]
            await asyncio.sleep(0.01)
    raise AssertionError("no test.ping reached the minion in 20 s")


def test_usage_and_config_errors_exit_2(tmp_path):
    missing = minion("-c", str(tmp_path / "nope"))
    assert missing.wait(30) == 2 and "does not exist" in missing.stderr.read()
    (tmp_path / "minion").write_text("id: ../evil\n")
    bad_id = minion("-c", str(tmp_path))
    assert bad_id.wait(30) == 2 and "cannot be used" in bad_id.stderr.read()
    (tmp_path / "minion").write_text("id: .hidden\n")
    hidden = minion("-c", str(tmp_path))
    assert hidden.wait(30) == 2 and "must not start with '.'" in hidden.stderr.read()
    (tmp_path / "minion").write_text("master_port: many\n")
    bad_type = minion("-c", str(tmp_path))
    assert bad_type.wait(30) == 2 and "'master_port' must be an integer" in bad_type.stderr.read()
    (tmp_path / "minion").write_text(f"id: m1\npidfile: {tmp_path}/m.pid\n")
    (tmp_path / "m.pid").write_text(f"{os.getpid()}\n")  # a live process holds it
    running = minion("-c", str(tmp_path))
    assert running.wait(30) == 2 and "already runs as pid" in running.stderr.read()


def test_a_minion_process_serves_a_raw_zmq_master_and_stops_cleanly_on_sigterm(tmp_path):
    ret_port, pub_port = free_ports(2)
    root = tmp_path / "root"
    (tmp_path / "minion").write_text(
        f"id: dm1\nmaster: 127.0.0.1\nmaster_port: {ret_port}\npublish_port: {pub_port}\n"
        f"root_dir: {root}\nfile_client: local\nfile_roots: {{base: [{tmp_path}/srv]}}\n"
        f"pillar_roots: {{base: [{tmp_path}/pillar]}}\nsock_dir: /tmp/bmd-{os.getpid()}\n"
        f"ping_interval: 1\nlog_level: info\n"
    )
    pidfile = root / "run" / "briny" / "briny-minion.pid"
    log_file = root / "var" / "log" / "briny" / "minion"
    started, flag = tmp_path / "started", tmp_path / "go"

    async def main():
        server = ZmqServer("127.0.0.1", ret_port, pub_port)
        master = RawMaster(types.SimpleNamespace(server=server)).start()
        proc = minion("-c", str(tmp_path))
        try:
            await master.wait_for(lambda r: r["cmd"] == "grains", timeout=20)
            assert pidfile.read_text().strip() == str(proc.pid)
            ping = await pinged(master)
            slow = await master.publish("dm1", "cmd.run", [f"touch {started} && " + held_job(flag)[0]])
            await until(started.exists, 20, "the job to start")
            proc.send_signal(signal.SIGTERM)  # the running job finishes and returns
            await until(lambda: "running job(s)" in text(log_file), 20, "the minion to wait for its job")
            assert proc.poll() is None
            flag.touch()
            slow_ret = await master.wait_ret(slow, timeout=10)
            code = await asyncio.get_running_loop().run_in_executor(None, proc.wait, 20)
        finally:
            if proc.poll() is None:
                proc.kill()
            await master.stop()
            server.close()
        return ping, slow_ret, code, proc.stderr.read()

    ping, slow_ret, code, stderr = run(main(), timeout=60)
    shutil.rmtree(f"/tmp/bmd-{os.getpid()}", ignore_errors=True)
    assert ping["return"] is True and slow_ret["return"] == "done"
    assert code == 0, stderr
    assert not pidfile.exists()
    assert "received SIGTERM" in stderr
