"""``briny-call`` logs as ``salt-call`` does: ``-l debug`` on stderr, the log file at its own level."""

from __future__ import annotations

import re

from .test_call import call, local, minion, write  # noqa: F401 - minion is a fixture

TREE = {
    "web.sls": """
        hello:
          test.succeed_with_changes
        {{ salt['grains.get']('id') }}-echo:
          cmd.run:
            - name: echo hi
            - require:
              - test: hello
        broken:
          test.fail_without_changes
        """,
}


def test_debug_on_the_console_says_what_happens(minion):  # noqa: F811 - the imported fixture
    conf, tree, root = minion
    write(tree, TREE)
    proc = call(conf, "-l", "debug", "state.sls", "web")
    assert proc.returncode == 1, proc.stderr  # 'broken' fails
    assert set(local(proc)) == {
        "test_|-hello_|-hello_|-succeed_with_changes",
        "cmd_|-itest-echo_|-echo hi_|-run",
        "test_|-broken_|-broken_|-fail_without_changes",
    }
    err = proc.stderr
    expected = [
        rf"\[DEBUG   \] Reading configuration from {re.escape(str(conf / 'minion'))}",
        r"\[DEBUG   \] running state\.sls locally as itest \(jid \d{20}\)",
        r"\[DEBUG   \] Rendering SLS 'base:web' \(web\.sls\)",
        r"\[PROFILE \] Time \(in seconds\) to render SLS 'base:web' \(web\.sls\): \d+\.\d+",
        r"\[DEBUG   \] running 3 state\(s\)",
        r"\[INFO    \] Running state \[hello\] at time \d\d:\d\d:\d\d\.\d+",
        r"\[INFO    \] Executing state test\.succeed_with_changes for \[hello\]",
        r"\[INFO    \] Made the following changes:\n'testing' changed from 'Unchanged' to 'Something pretended to change'\n",
        r"\[INFO    \] Completed state \[hello\] at time \d\d:\d\d:\d\d\.\d+ \(duration_in_ms=\d+\.?\d*\)",
        r"\[INFO    \] Executing state cmd\.run for \[echo hi\]",
        r"\[INFO    \] Executing command 'echo' in directory",
        r"\[ERROR   \] Failure!",
        r"\[DEBUG   \] state\.sls returned \(retcode [12]\)",
    ]
    missing = [pattern for pattern in expected if not re.search(pattern, err)]
    assert missing == [], f"missing from stderr:\n{missing}\n--- stderr ---\n{err}"
    # the log file keeps the config's level (warning), whatever -l says, as salt-call's does
    logfile = root / "var" / "log" / "briny" / "minion"
    assert logfile.exists() and "Running state" not in logfile.read_text()


def test_the_default_console_is_quiet_and_the_log_file_has_its_own_level(minion, tmp_path):  # noqa: F811 - the imported fixture
    conf, tree, root = minion
    write(tree, TREE)
    logfile = tmp_path / "call.log"
    proc = call(conf, "--log-file", str(logfile), "--log-file-level", "info", "state.sls", "web")
    assert proc.returncode == 1
    assert "Running state" not in proc.stderr and "[ERROR   ] Failure!" in proc.stderr
    text = logfile.read_text()
    assert re.search(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[briny\.common\.state\.state_call *:\d+ *\]\[INFO    \]"
        r"\[\d+\] Running state \[hello\] at time",
        text,
    ), text
    assert "[DEBUG   ]" not in text
    # the config's level for the file, the console at -l
    (conf / "minion").write_text((conf / "minion").read_text() + "log_level: info\nlog_level_logfile: debug\n")
    proc = call(conf, "-l", "error", "--log-file", str(logfile), "state.sls", "web")
    assert "Running state" not in proc.stderr and "Failure!" in proc.stderr
    assert "[DEBUG   ][" in logfile.read_text()


def test_bad_levels_and_an_unopenable_log_file_exit_2(minion, tmp_path):  # noqa: F811 - the imported fixture
    conf, tree, _ = minion
    write(tree, TREE)
    proc = call(conf, "-l", "loud", "test.ping")
    assert proc.returncode == 2 and "invalid choice: 'loud'" in proc.stderr
    (tmp_path / "afile").write_text("")
    proc = call(conf, "--log-file", str(tmp_path / "afile" / "x.log"), "test.ping")
    assert proc.returncode == 2
    assert "briny-call: cannot open the log file" in proc.stderr and "Not a directory" in proc.stderr
