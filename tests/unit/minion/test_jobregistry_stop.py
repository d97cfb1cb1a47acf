"""Stopping a thread job leaves the interpreter as it was: a trace function set afterwards (coverage,
a debugger, a profiler) still runs. In its own interpreter, since a broken one stays broken."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import signal, sys, threading, time
    from briny.common.exceptions import JobKilled
    from briny.common.jobcontext import RunningJob
    from briny.minion.jobregistry import JobRegistry

    registry = JobRegistry()
    outcome = []

    def job(jid):
        registry.add(RunningJob(jid, "test.sleep", time.time(), 0, threading.get_ident()))
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                time.sleep(0.001)
        except JobKilled:
            outcome.append((jid, "stopped"))
        finally:
            registry.remove(jid)

    def stop(jid):
        deadline = time.monotonic() + 5
        while registry.get(jid) is None and time.monotonic() < deadline:
            time.sleep(0.001)
        return registry.signal(jid, signal.SIGTERM)

    worker = threading.Thread(target=job, args=("20240101000000000001",))
    worker.start()
    print(stop("20240101000000000001"))
    worker.join(5)
    assert not worker.is_alive() and outcome == [("20240101000000000001", "stopped")], outcome

    # what a coverage run does next: trace every thread
    sys.settrace(lambda *args: None)
    threading.settrace(lambda *args: None)
    traced = threading.Thread(target=lambda: outcome.append(sum(range(1000))))
    traced.start()
    traced.join(5)
    sys.settrace(None)
    print("traced thread ran:", outcome[-1] == 499500 and not traced.is_alive())
    """
)


def test_a_trace_function_still_runs_after_a_thread_job_was_stopped():
    # before the fix the stop was withdrawn with PyThreadState_SetAsyncExc(id, NULL), and the
    # traced thread never ran: the child hung until this timeout killed it
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    sent, ran = proc.stdout.splitlines()
    assert sent.startswith("Signal 15 sent to job 20240101000000000001 at pid ")
    assert ran == "traced thread ran: True"
