"""A real master on the PostgreSQL job cache (``job_cache: postgres``, issue 13) with real minions:
jobs and returns land in the database and ``briny-run jobs.*`` reads them there; the database
going away does not stop the master, which writes the returns once it is back; a DSN the master
cannot use stops it at start with an error naming the key."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from tests.dbfixtures import pg_server, pg_server_own  # noqa: F401 - the throwaway PostgreSQL servers
from tests.pgserver import PgServer

from .support import Fleet, jid_from, script


def on_pg(dsn: str) -> dict[str, Any]:
    return {"job_cache": "postgres", "postgres.dsn": dsn}


@pytest.mark.slow
def test_a_master_on_postgres_keeps_its_jobs_there(make_fleet: Callable[..., Fleet], pg_server: PgServer) -> None:  # noqa: F811 - the imported fixture
    pg_server.psql('DROP DATABASE IF EXISTS "e2e_jobs" WITH (FORCE); CREATE DATABASE "e2e_jobs"')
    dsn = pg_server.dsn.replace("dbname=postgres", "dbname=e2e_jobs")
    fleet = make_fleet(["p1", "p2"], auto_accept=True, master_opts=on_pg(dsn)).start()
    res = fleet.briny("-v", "--out", "json", "*", "test.ping")
    assert res.returncode == 0, res.stdout + res.stderr
    jid = jid_from(res.stdout)
    assert fleet.lookup_jid(jid) == {"p1": True, "p2": True}
    jobs = fleet.run("jobs.list_jobs", "--out", "json")
    assert jobs.returncode == 0, jobs.stderr
    assert jobs.json()[jid]["Function"] == "test.ping"
    printed = fleet.run("jobs.print_job", jid, "--out", "json").json()[jid]
    assert printed["Result"]["p2"]["return"] is True
    # the rows are in PostgreSQL, not in a SQLite file
    count = f"SELECT count(*) FROM returns WHERE jid = '{jid}'"  # noqa: S608 - a jid is 20 digits (jid_from)
    assert pg_server.value(count, "e2e_jobs") == "2"
    assert not (fleet.master_dir / "cache" / "jobs.sqlite").exists()


@pytest.mark.slow
def test_the_master_keeps_serving_while_postgres_is_away(
    make_fleet: Callable[..., Fleet],
    pg_server_own: PgServer,  # noqa: F811 - the imported fixture
) -> None:
    fleet = make_fleet(["q1", "q2"], auto_accept=True, master_opts=on_pg(pg_server_own.dsn)).start()
    assert fleet.briny("--static", "--out", "json", "*", "test.ping").json() == {"q1": True, "q2": True}
    pg_server_own.pause()
    res = fleet.briny("-v", "--out", "json", "*", "test.echo", "away")
    assert res.returncode == 0, res.stdout + res.stderr  # the returns reach the operator all the same
    jid = jid_from(res.stdout)
    log = fleet.master.log_file
    fleet.wait(lambda: "writes buffered" in log.read_text(), 20, "the master to log that it buffers")
    assert fleet.master.running
    pg_server_own.resume()
    assert fleet.wait_returns(jid, ["q1", "q2"], timeout=40) == {"q1": "away", "q2": "away"}
    assert "the database is back" in log.read_text()


@pytest.mark.slow
def test_a_dsn_the_master_cannot_use_stops_it_with_the_key_named(make_fleet: Callable[..., Fleet]) -> None:
    fleet = make_fleet([], master_opts=on_pg("host=127.0.0.1 port=1 user=briny password=secret dbname=x"))
    proc = subprocess.run(
        [*script("briny-master"), "-c", str(fleet.master_conf)], capture_output=True, text=True, timeout=60
    )
    out = proc.stdout + proc.stderr + fleet.master.log_file.read_text()
    assert proc.returncode != 0
    assert "postgres.dsn" in out and "port=1" in out and "secret" not in out
