"""Two masters sharing one PostgreSQL (``job_cache: postgres``, ``key_store: postgres``) and three
minions with ``master: [m1, m2]`` (issue 13's acceptance, real daemons):

- keys accepted with ``briny-key`` on the first master are accepted on the second (one table);
- a job from either master reaches every minion, and its returns are visible from both
  (``briny-run jobs.lookup_jid`` on the other master);
- ``kill -9`` of the master that published a highstate, mid-run, loses no return: the minions keep
  them and deliver them when it is back, and the job's row was committed before the publish, so
  the restarted master takes them.

The second master listens on 127.0.0.2 with the first's ports (tests/e2e/test_multimaster.py's
layout), with its own key pair and its own file_roots holding the same tree.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import pytest

from tests.dbfixtures import pg_server  # noqa: F401 - the throwaway PostgreSQL server
from tests.pgserver import PgServer

from .support import Fleet

pytestmark = pytest.mark.slow

SECOND = "127.0.0.2"
IDS = ["s1", "s2", "s3"]
SLOW_SLS = """
slow:
  cmd.run:
    - name: sleep 3
after:
  test.succeed_without_changes:
    - require:
      - cmd: slow
"""


def shared(dsn: str) -> dict[str, Any]:
    return {"job_cache": "postgres", "key_store": "postgres", "postgres.dsn": dsn}


@pytest.fixture
def masters(make_fleet: Callable[..., Fleet], pg_server: PgServer) -> tuple[Fleet, Fleet]:  # noqa: F811 - the imported fixture
    """(the first master's fleet with the three minions, the second master's), both masters started."""
    pg_server.psql('DROP DATABASE IF EXISTS "e2e_shared" WITH (FORCE); CREATE DATABASE "e2e_shared"')
    dsn = pg_server.dsn.replace("dbname=postgres", "dbname=e2e_shared")
    first = make_fleet([], master_opts=shared(dsn))
    second = make_fleet(
        [], master_opts={**shared(dsn), "interface": SECOND, "ret_port": first.ret_port, "publish_port": first.pub_port}
    )
    for fleet in (first, second):
        (fleet.root / "srv" / "salt" / "slow.sls").write_text(SLOW_SLS)
    for minion_id in IDS:
        first.add_minion(minion_id, master=["127.0.0.1", SECOND])
    first.start_master()
    second.start_master()
    return first, second


def test_two_masters_on_postgres_share_keys_jobs_and_returns(masters: tuple[Fleet, Fleet]) -> None:
    first, second = masters
    for minion_id in IDS:
        first.start_minion(minion_id)
    # the minions' keys wait in the shared table; accepted on the first master, on both
    second.wait_keys("minions_pre", IDS, 30)
    accepted = first.key("-A", "-y")
    assert accepted.returncode == 0, accepted.stderr
    assert second.keys()["minions"] == IDS
    first.wait_connected(IDS, 30)
    second.wait_connected(IDS, 30)  # the second master let them in on the first one's acceptance

    # a job from either master reaches every minion; its returns are visible from both
    for publisher, other, word in ((first, second, "from-one"), (second, first, "from-two")):
        jid = publisher.publish("*", "test.echo", word)
        assert publisher.wait_returns(jid, IDS, timeout=30) == dict.fromkeys(IDS, word)
        assert other.lookup_jid(jid) == dict.fromkeys(IDS, word)

    # kill -9 of the publishing master mid-highstate: no return lost
    jid = second.publish("*", "state.apply", "slow")
    logs = [first.minions[m].log_file for m in IDS]
    first.wait(
        lambda: all(f"running job {jid}" in log.read_text() for log in logs), 20, "the highstate on every minion"
    )
    second.stop_master(signal.SIGKILL)
    assert all(f"job {jid} done" not in log.read_text() for log in logs)  # killed mid-run
    # the first master keeps serving meanwhile, and sees the job (its row is in the shared cache)
    assert first.run("jobs.list_job", jid, "--out", "json").json()["Minions"] == IDS
    echo = first.publish("*", "test.echo", "still-served")
    assert first.wait_returns(echo, IDS, timeout=30) == dict.fromkeys(IDS, "still-served")
    first.wait(
        lambda: all(f"job {jid} done" in log.read_text() for log in logs), 30, "the highstate to finish everywhere"
    )
    second.start_master()
    returns = first.wait_returns(jid, IDS, timeout=40)  # read on the master that did not publish it
    for minion_id in IDS:
        results = returns[minion_id]
        assert isinstance(results, dict) and len(results) == 2, results
        assert all(r["result"] is True for r in results.values()), results
    assert second.lookup_jid(jid).keys() == returns.keys()
    assert "is not a job of this master" not in second.master.log_file.read_text()
