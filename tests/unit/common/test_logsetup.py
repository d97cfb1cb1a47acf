"""Log set-up: Salt's levels, formats and defaults; console and file levels apart; logrotate and SIGHUP."""

import io
import logging
import os
import re
import socket
import stat

import pytest

from briny.common import logsetup
from briny.common.config import load_minion_config
from briny.common.exceptions import ConfigError

log = logging.getLogger("briny.test.logsetup")


def opts_for(tmp_path, **overrides):
    return load_minion_config(tmp_path, {"root_dir": str(tmp_path), "log_file": "minion.log", **overrides})


def lines(path):
    return path.read_text().splitlines() if path.exists() else []


def test_console_and_file_levels_are_independent(tmp_path):
    console = io.StringIO()
    logsetup.setup_logging(opts_for(tmp_path, log_level="warning", log_level_logfile="debug"), stream=console)
    log.debug("only in the file")
    log.warning("in both")
    assert console.getvalue() == "[WARNING ] in both\n"
    text = (tmp_path / "minion.log").read_text()
    assert "only in the file" in text and "in both" in text

    console = io.StringIO()
    logsetup.setup_logging(
        opts_for(tmp_path, log_level="warning", log_level_logfile="error"), console_level="debug", stream=console
    )
    log.debug("console only")
    assert console.getvalue().endswith("[DEBUG   ] console only\n")
    assert "console only" not in (tmp_path / "minion.log").read_text()


def test_dash_l_is_the_consoles_only_as_in_salt(tmp_path):
    """salt-call -l debug with log_level warning in the config: the log file stays at warning."""
    console = io.StringIO()
    logsetup.setup_logging(opts_for(tmp_path), console_level="debug", stream=console)
    log.info("an info line")
    assert "[INFO    ] an info line" in console.getvalue()
    assert lines(tmp_path / "minion.log") == []


def test_the_log_files_format_is_salts(tmp_path):
    logsetup.setup_logging(opts_for(tmp_path, log_level="info"), stream=io.StringIO())
    log.info("hello %s", "there")
    (line,) = lines(tmp_path / "minion.log")
    # 2026-11-24 00:23:33,010 [salt.config      :2082][DEBUG   ][10980] Reading configuration ...
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[briny\.test\.logsetup:\d+ *\]"
        rf"\[INFO    \]\[{os.getpid()}\] hello there",
        line,
    ), line


def test_formats_and_salts_extra_fields(tmp_path):
    console = io.StringIO()
    opts = opts_for(
        tmp_path,
        log_level="info",
        log_fmt_console="%(asctime)s %(bracketlevel)s %(colormsg)s",
        log_datefmt="%Y",
        log_fmt_logfile="%(levelname)s|%(message)s",
    )
    logsetup.setup_logging(opts, stream=console)
    log.info("formatted")
    assert re.fullmatch(r"\d{4} \[INFO    \] formatted\n", console.getvalue())  # no colour off a terminal
    assert lines(tmp_path / "minion.log") == ["INFO|formatted"]


def test_salts_level_names(tmp_path):
    console = io.StringIO()
    logsetup.setup_logging(opts_for(tmp_path), console_level="trace", stream=console)
    console.truncate(0)
    console.seek(0)
    log.log(logsetup.TRACE, "t")
    log.log(logsetup.PROFILE, "p")
    log.log(logsetup.GARBAGE, "g")  # below trace
    assert console.getvalue() == "[TRACE   ] t\n[PROFILE ] p\n"
    console = io.StringIO()
    logsetup.setup_logging(opts_for(tmp_path), console_level="quiet", stream=console)
    log.critical("nothing on a quiet console")
    assert console.getvalue() == ""


def test_granular_levels_and_salts_logger_names(tmp_path, caplog):
    console = io.StringIO()
    opts = opts_for(
        tmp_path,
        log_level="debug",
        log_granular_levels={"briny.test.noisy": "error", "salt.modules": "info", "salt.utils.lazy": "debug"},
    )
    logsetup.setup_logging(opts, stream=console)
    logging.getLogger("briny.test.noisy").warning("dropped")
    logging.getLogger("briny.test.noisy.child").error("kept")
    logging.getLogger("briny.test.other").debug("kept too")
    logging.getLogger("briny.loaded.modules.cmd_3").debug("dropped: salt.modules means briny.loaded.modules")
    out = console.getvalue()
    assert "dropped" not in out and "[ERROR   ] kept" in out and "[DEBUG   ] kept too" in out
    assert "'salt.utils.lazy' is a Salt logger name briny does not have" in out
    # the next set-up forgets the previous granular levels
    logsetup.setup_logging(opts_for(tmp_path, log_level="debug"), stream=console)
    assert logging.getLogger("briny.test.noisy").level == logging.NOTSET


def test_a_log_file_that_cannot_be_opened_is_a_config_error(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(ConfigError, match=r"cannot open the log file .*afile/x/minion.log: Not a directory"):
        logsetup.setup_logging(
            opts_for(tmp_path, log_file=str(tmp_path / "afile" / "x" / "minion.log")), stream=io.StringIO()
        )


def test_new_log_files_and_folders_are_private(tmp_path):
    opts = opts_for(tmp_path, log_file=str(tmp_path / "logs" / "minion"))
    logsetup.setup_logging(opts, stream=io.StringIO())
    log.warning("x")
    assert stat.S_IMODE(os.stat(tmp_path / "logs").st_mode) == 0o750
    assert stat.S_IMODE(os.stat(tmp_path / "logs" / "minion").st_mode) == 0o640


def test_a_renamed_log_file_is_followed_without_a_signal(tmp_path):
    """logrotate renames the file: the next line goes to a new one (WatchedFileHandler)."""
    logsetup.setup_logging(opts_for(tmp_path), stream=io.StringIO())
    path = tmp_path / "minion.log"
    log.warning("before")
    path.rename(tmp_path / "minion.log.1")
    log.warning("after")
    assert [l.rsplit("] ", 1)[1] for l in lines(path)] == ["after"]
    assert [l.rsplit("] ", 1)[1] for l in lines(tmp_path / "minion.log.1")] == ["before"]


def test_reopen_makes_a_new_file_at_once(tmp_path):
    logsetup.setup_logging(opts_for(tmp_path, log_level="info"), stream=io.StringIO())
    path = tmp_path / "minion.log"
    log.info("before")
    path.rename(tmp_path / "minion.log.1")
    assert logsetup.reopen_logfiles() == [str(path)]
    assert path.exists() and stat.S_IMODE(path.stat().st_mode) == 0o640
    assert "reopened the log file" in path.read_text()
    log.info("after")
    assert "after" in path.read_text() and "after" not in (tmp_path / "minion.log.1").read_text()


def test_in_process_rotation(tmp_path):
    logsetup.setup_logging(
        opts_for(tmp_path, log_rotate_max_bytes=200, log_rotate_backup_count=2), stream=io.StringIO()
    )
    for n in range(10):
        log.warning("line %d", n)
    assert (tmp_path / "minion.log.1").exists() and not (tmp_path / "minion.log.3").exists()
    assert "line 9" in (tmp_path / "minion.log").read_text()


def test_syslog_over_udp(tmp_path):
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.settimeout(10)
    try:
        port = server.getsockname()[1]
        opts = opts_for(tmp_path, log_file=f"udp://127.0.0.1:{port}/LOG_LOCAL3")
        assert opts["log_file"] == f"udp://127.0.0.1:{port}/LOG_LOCAL3"
        logsetup.setup_logging(opts, stream=io.StringIO())
        log.warning("to syslog")
        data = server.recv(4096).decode()
    finally:
        server.close()
    # <PRI>: facility local3 (19) * 8 + warning (4)
    assert data.startswith("<156>") and data.rstrip("\x00").endswith("to syslog")
    with pytest.raises(ConfigError, match="unknown syslog facility LOG_ERR"):
        logsetup.setup_logging(opts_for(tmp_path, log_file="udp://127.0.0.1:9/LOG_ERR"), stream=io.StringIO())


def test_cli_options_and_overrides(tmp_path):
    import argparse

    parser = argparse.ArgumentParser()
    logsetup.add_arguments(parser)
    ns = parser.parse_args(["-l", "debug", "--log-file", "rel.log", "--log-file-level", "info"])
    assert ns.log_level == "debug"
    assert logsetup.cli_overrides(ns) == {"log_file": os.path.abspath("rel.log"), "log_level_logfile": "info"}
    assert logsetup.cli_overrides(ns, "key_logfile")["key_logfile"] == os.path.abspath("rel.log")
    with pytest.raises(SystemExit):
        parser.parse_args(["-l", "loud"])
    keyparser = argparse.ArgumentParser()
    logsetup.add_arguments(keyparser, short=False)
    assert keyparser.parse_args(["--log-level", "info"]).log_level == "info"
    with pytest.raises(SystemExit):
        keyparser.parse_args(["-l", "info"])


def test_timed_logs_only_when_profile_is_on(caplog):
    with caplog.at_level(logging.INFO, logger="briny.test.logsetup"):
        with logsetup.timed(log, "Rendering %s", "Time (in seconds) to render %s: %.6f", "x"):
            pass
    assert caplog.records == []
    with caplog.at_level(logging.DEBUG, logger="briny.test.logsetup"):
        with logsetup.timed(log, "Rendering %s", "Time (in seconds) to render %s: %.6f", "x"):
            pass
    assert [r.levelname for r in caplog.records] == ["DEBUG", "PROFILE"]
    assert re.fullmatch(r"Time \(in seconds\) to render x: \d+\.\d{6}", caplog.records[1].getMessage())
