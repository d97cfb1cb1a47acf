"""Every command takes Salt's logging options and logs where Salt's does.

``briny`` and ``briny-run`` write the master's ``log_file``, ``briny-key``
its ``key_logfile`` (Salt: ``/var/log/salt/key``); ``-l`` is the console's
(``briny-key`` has only ``--log-level``: its ``-l`` lists keys).
"""

from __future__ import annotations

import io

import pytest

from briny.common.exceptions import UsageError
from briny.master import daemon as master_daemon
from briny.master import keycli, opcli, runcli
from briny.minion import call as minion_call
from briny.minion import daemon as minion_daemon


def key(master_dir, *args):
    out, err = io.StringIO(), io.StringIO()
    return (
        keycli.run(["-c", str(master_dir), *args], out=out, err=err, stdin=io.StringIO("")),
        out.getvalue(),
        err.getvalue(),
    )


def run(master_dir, *args):
    out, err = io.StringIO(), io.StringIO()
    return runcli.run(["-c", str(master_dir), *args], out=out, err=err), out.getvalue(), err.getvalue()


def briny(master_dir, *args):
    out, err = io.StringIO(), io.StringIO()
    return opcli.run(["-c", str(master_dir), *args], stdout=out, stderr=err), out.getvalue(), err.getvalue()


def test_briny_key_logs_to_its_key_logfile(master_dir, tmp_path):
    code, out, err = key(master_dir, "-L", "--log-level", "debug", "--log-file-level", "debug")
    assert code == 0 and "Accepted Keys:" in out
    assert f"[DEBUG   ] Reading configuration from {master_dir / 'master'}" in err
    text = (tmp_path / "root" / "var" / "log" / "briny" / "key").read_text()
    assert "Reading configuration" not in text  # before the file was set up
    assert "[DEBUG   ]" in text
    code, _, err = key(master_dir, "-L", "--log-file", str(tmp_path / "k.log"), "--log-file-level", "debug")
    assert code == 0 and err == "" and "[DEBUG   ]" in (tmp_path / "k.log").read_text()


def test_briny_run_logs_to_the_masters_log_file(master_dir, tmp_path):
    code, out, err = run(master_dir, "-l", "debug", "--log-file-level", "info", "jobs.list_jobs")
    assert code == 0, err
    assert f"[DEBUG   ] Reading configuration from {master_dir / 'master'}" in err
    text = (tmp_path / "root" / "var" / "log" / "briny" / "master").read_text()
    assert "[DEBUG   ]" not in text  # the file's own level


def test_briny_logs_and_says_the_master_is_not_running(master_dir):
    code, _, err = briny(master_dir, "-l", "debug", "*", "test.ping")
    assert code == 2
    assert f"[DEBUG   ] Reading configuration from {master_dir / 'master'}" in err


@pytest.mark.parametrize(
    "parser",
    [
        master_daemon.build_parser,
        minion_daemon.build_parser,
        minion_call.build_parser,
        opcli.build_parser,
        runcli.build_parser,
    ],
)
def test_every_command_takes_salts_logging_options(parser):
    positional = (
        ["test.ping"] if parser is runcli.build_parser else (["*", "test.ping"] if parser is opcli.build_parser else [])
    )
    ns = parser().parse_args(["-l", "trace", "--log-file", "x.log", "--log-file-level", "garbage", *positional])
    assert (ns.log_level, ns.log_file, ns.log_file_level) == ("trace", "x.log", "garbage")
    with pytest.raises((SystemExit, UsageError)):  # briny's parser raises its usage error
        parser().parse_args(["--log-file-level", "loud", *positional])
    ns = keycli.build_parser().parse_args(["--log-level", "info", "--log-file", "k", "--log-file-level", "all"])
    assert (ns.log_level, ns.log_file, ns.log_file_level) == ("info", "k", "all")


def test_an_unopenable_log_file_exits_2(master_dir, tmp_path):
    (tmp_path / "afile").write_text("")
    bad = str(tmp_path / "afile" / "x.log")
    code, _, err = key(master_dir, "-L", "--log-file", bad)
    assert code == 2 and "briny-key: cannot open the log file" in err
    code, _, err = run(master_dir, "--log-file", bad, "jobs.list_jobs")
    assert code == 2 and "briny-run: cannot open the log file" in err
    code, _, err = briny(master_dir, "--log-file", bad, "*", "test.ping")
    assert code == 2 and "cannot open the log file" in err
