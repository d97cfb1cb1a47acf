"""The proc files of jobs that last (minion/procfiles.py): the delay, state jobs at once, the config key."""

import json
import logging

from briny.minion import procfiles
from briny.minion.procfiles import DEFAULT_DELAY, ProcFiles, proc_file_delay

from tests.waiting import wait_until


def record(jid: str, fun: str = "test.sleep") -> dict:
    return {"jid": jid, "fun": fun, "arg": [], "pid": 1, "ret": ""}


def test_a_file_comes_due_after_the_delay_and_goes_at_the_end(tmp_path):
    files = ProcFiles(tmp_path / "proc", 0.05)
    files.begin("20240101000000000001", "test.sleep", record("20240101000000000001"))
    path = tmp_path / "proc" / "20240101000000000001"
    wait_until(path.exists, 5, "the proc file")
    assert json.loads(path.read_text())["jid"] == "20240101000000000001" and files.written("20240101000000000001")
    assert path.stat().st_mode & 0o777 == 0o600
    files.end("20240101000000000001")
    assert not path.exists() and not files.written("20240101000000000001")


def test_a_job_ended_before_its_delay_never_gets_a_file(tmp_path):
    files = ProcFiles(tmp_path / "proc", 0.05)
    files.begin("20240101000000000001", "test.ping", record("20240101000000000001"))
    files.end("20240101000000000001")  # before its time
    files.begin("20240101000000000002", "test.sleep", record("20240101000000000002"))  # due after the first
    wait_until(lambda: files.written("20240101000000000002"), 5, "the second job's proc file")
    assert [p.name for p in (tmp_path / "proc").iterdir()] == ["20240101000000000002"]  # the first one's time passed
    files.end("20240101000000000002")


def test_state_jobs_and_a_delay_of_zero_write_at_once(tmp_path):
    for files, fun in (
        (ProcFiles(tmp_path / "proc", 30), "state.apply"),
        (ProcFiles(tmp_path / "proc", 0), "test.ping"),
    ):
        files.begin("20240101000000000001", fun, record("20240101000000000001", fun))
        assert (tmp_path / "proc" / "20240101000000000001").exists()  # no wait: written by begin
        files.end("20240101000000000001")
        assert not (tmp_path / "proc" / "20240101000000000001").exists()


def test_an_unwritable_folder_is_logged_and_the_job_goes_on(tmp_path, caplog):
    (tmp_path / "proc").write_text("a file, not a folder")
    files = ProcFiles(tmp_path / "proc", 0)
    with caplog.at_level(logging.DEBUG, logger=procfiles.__name__):
        files.begin("20240101000000000001", "test.ping", record("20240101000000000001"))
    assert not files.written("20240101000000000001") and "no proc file for job 20240101000000000001" in caplog.text
    files.end("20240101000000000001")


def test_the_delay_from_the_config(caplog):
    assert proc_file_delay({}) == DEFAULT_DELAY and proc_file_delay({"proc_file_delay": 0}) == 0
    assert proc_file_delay({"proc_file_delay": 2.5}) == 2.5
    for bad in (-1, "soon", True):
        with caplog.at_level(logging.WARNING, logger=procfiles.__name__):
            assert proc_file_delay({"proc_file_delay": bad}) == DEFAULT_DELAY
        assert "proc_file_delay must be a number of seconds" in caplog.text
