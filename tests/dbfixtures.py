"""pytest fixtures for the throwaway database servers (tests/pgserver.py, tests/mariadbserver.py).

Import the ones a test module needs (``from tests.dbfixtures import pg_server``):
each starts one server for the whole session, skips (with the reason) when
the server cannot be started here, and stops it by pid at the end.
"""

from __future__ import annotations

import pytest

from tests import mariadbserver, pgserver


def _started_pg():
    """A started :class:`pgserver.PgServer` (skips when there cannot be one), stopped after."""
    try:
        server = pgserver.PgServer.start()
    except pgserver.ServerUnavailable as exc:
        pytest.skip(f"no throwaway PostgreSQL server: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_server():
    """A running :class:`pgserver.PgServer` for the session."""
    yield from _started_pg()


@pytest.fixture
def pg_server_own():
    """A :class:`pgserver.PgServer` of the test's own, which it may pause and resume (the job cache's outage tests)."""
    yield from _started_pg()


@pytest.fixture(scope="session")
def pg_placeholders(pg_server):
    """The golden placeholders of ``pg_server`` (tests/dbgolden.py), computed once: the dead port stays."""
    return pg_server.substitutions()


@pytest.fixture(scope="session")
def mariadb_server():
    """A running :class:`mariadbserver.MariaDBServer` for the session."""
    try:
        server = mariadbserver.MariaDBServer.start()
    except pgserver.ServerUnavailable as exc:
        pytest.skip(f"no throwaway MariaDB server: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def mariadb_placeholders(mariadb_server):
    """The golden placeholders of ``mariadb_server`` (tests/dbgolden.py), computed once."""
    return mariadb_server.substitutions()
