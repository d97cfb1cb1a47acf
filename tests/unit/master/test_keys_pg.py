"""The key store on PostgreSQL (``key_store: postgres``, master/keys/pg.py): the key store's own
behaviour tests run again on it (imported from test_keys.py, with this module's ``store``), then
what only it has: two masters sharing one table, the first-start copy of the key folders, the
database going away, and a bad configuration."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from briny.common.exceptions import ConfigError, KeyStoreError
from briny.master.keys.store import ACC, DEN, PEND, REJ, KeyChange, KeyStore
from briny.master.keys.pg import PgKeyTable
from briny.master.keys.watch import KeyWatch
from tests.pgserver import PgServer

from .test_keys import (  # noqa: F401 - the key store's behaviour, run here on PostgreSQL
    test_accept_denied_key_replaces_accepted,
    test_cache_sees_changes_by_other_processes,
    test_changed_key_of_accepted_minion_is_denied,
    test_changed_key_of_pending_minion_is_denied_not_replaced,
    test_delete_removes_every_folder,
    test_denied_only_minion_goes_pending,
    test_list_status,
    test_new_minion_goes_pending_then_accepted,
    test_operator_globs_and_lists,
    test_pem_format_does_not_matter_for_comparison,
    test_rejected_minion_stays_rejected,
    test_small_and_non_rsa_keys_refused,
    test_unusable_keys_refused,
)


def pg_opts(root: Path, dsn: str, name: str = "m1") -> dict[str, Any]:
    return {
        "pki_dir": str(root / name / "pki"),
        "sock_dir": str(root / name / "sock"),
        "key_store": "postgres",
        "postgres.dsn": dsn,
    }


@pytest.fixture
def store(tmp_path: Path, pg_dsn: str) -> Iterator[KeyStore]:
    keys = KeyStore(pg_opts(tmp_path, pg_dsn))
    yield keys
    keys.close()


@pytest.fixture
def two(tmp_path: Path, pg_dsn: str) -> Iterator[tuple[KeyStore, KeyStore]]:
    """The key stores of two masters (their own pki_dir each) on one database."""
    first, second = KeyStore(pg_opts(tmp_path, pg_dsn, "m1")), KeyStore(pg_opts(tmp_path, pg_dsn, "m2"))
    yield first, second
    first.close()
    second.close()


def test_the_keys_are_rows_and_the_master_key_pair_stays_on_disk(
    store: KeyStore, pubkeys: list[str], pg_server: PgServer
) -> None:
    assert isinstance(store.table, PgKeyTable)
    store.ensure_master_keys()
    store.authorize("m1", pubkeys[0], auto_accept=True)
    db = store.opts["postgres.dsn"].rsplit("dbname=", 1)[1]
    assert pg_server.query("SELECT minion_id, state FROM minion_keys", db) == [["m1", "accepted"]]
    assert os.path.isfile(os.path.join(store.pki_dir, "master.pem"))
    assert not os.path.exists(os.path.join(store.pki_dir, ACC, "m1"))  # nothing of the minion on disk
    tables = pg_server.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1", db)
    assert [t[0] for t in tables] == ["key_generation", "minion_keys"]


def test_two_masters_share_acceptance(two: tuple[KeyStore, KeyStore], pubkeys: list[str]) -> None:
    m1, m2 = two
    watch = KeyWatch(m2)
    before = watch.read()
    assert m1.authorize("web1", pubkeys[0]).status == "pending"
    assert m2.status("web1") == "pending"
    assert m2.list_keys()[PEND] == ["web1"]
    # accepted on the second master: the first lets the minion in with the same key
    assert m2.accept("web1") == [KeyChange("web1", "accept", PEND, ACC)]
    assert m1.authorize("web1", pubkeys[0]).status == "accepted"
    assert m1.register("web1", pubkeys[1]) == "denied"  # another key for it is parked, on both
    assert m2.public_key("web1", DEN) == pubkeys[1]
    # the second master's watch sees what the first changed, in one newer view
    after = watch.read()
    assert after.generation > before.generation and after.accepted == frozenset({"web1"})
    assert watch.read() is after  # nothing changed since: the same view
    m1.reject("web1", include_accepted=True)
    assert "web1" not in watch.read().accepted
    assert m2.authorize("web1", pubkeys[0], auto_accept=True).status == "rejected"


def test_a_new_minion_authenticating_with_both_at_once_is_one_key(
    two: tuple[KeyStore, KeyStore], pubkeys: list[str]
) -> None:
    import threading

    m1, m2 = two
    results: list[str] = []
    threads = [threading.Thread(target=lambda s=s: results.append(s.register("new", pubkeys[0]))) for s in (m1, m2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results) == ["pending", "pending"]
    assert m1.list_keys() == {ACC: [], PEND: ["new"], REJ: [], DEN: []}


def test_the_first_start_copies_the_key_folders(
    tmp_path: Path, pg_dsn: str, pubkeys: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    opts = pg_opts(tmp_path, pg_dsn)
    on_disk = KeyStore({k: v for k, v in opts.items() if k != "key_store"})  # the master before the move
    on_disk.authorize("old1", pubkeys[0], auto_accept=True)
    on_disk.authorize("old2", pubkeys[1])
    with caplog.at_level(logging.WARNING, "briny.master.keys.pg"):
        shared = KeyStore(opts)
    try:
        assert "2 keys of" in caplog.text
        assert shared.list_keys() == {ACC: ["old1"], PEND: ["old2"], REJ: [], DEN: []}
        assert shared.public_key("old1") == pubkeys[0]
        shared.delete("old2")
        on_disk.authorize("old3", pubkeys[2], auto_accept=True)  # the folders are not read again
        again = KeyStore(opts)
        assert again.list_keys()[ACC] == ["old1"] and again.list_keys()[PEND] == []
        again.close()
    finally:
        shared.close()


def test_the_database_away_serves_known_keys_and_refuses_changes(
    tmp_path: Path, pg_server_own: PgServer, pubkeys: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    store = KeyStore(pg_opts(tmp_path, pg_server_own.dsn))
    try:
        store.authorize("known", pubkeys[0], auto_accept=True)
        generation, _ = store.folders()
        assert store.authorize("known", pubkeys[0]).status == "accepted"  # its key text is remembered
        pg_server_own.pause()
        with caplog.at_level(logging.WARNING, "briny.master.keys.pg"):
            assert store.status("known") == "accepted"
            assert store.folders() == (generation, store.folders()[1])
            assert store.accepted_ids() == ["known"]
            assert store.authorize("known", pubkeys[0]).status == "accepted"  # a known minion gets in
            with pytest.raises(KeyStoreError, match="unreachable"):
                store.authorize("stranger", pubkeys[1])  # a new key is a change
            with pytest.raises(KeyStoreError, match="unreachable"):
                store.accept("*")
        assert "serving the keys as last read" in caplog.text
        pg_server_own.resume()
        store.table._retry_at = 0.0  # type: ignore[attr-defined]  # do not wait out the reconnection delay
        assert store.authorize("newcomer", pubkeys[2]).status == "pending"
        assert store.list_keys()[PEND] == ["newcomer"]
    finally:
        store.close()


def test_a_bad_key_store_config_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="key_store: unknown backend 'ldap'"):
        KeyStore({"pki_dir": str(tmp_path / "pki"), "key_store": "ldap"})
    opts = {
        "pki_dir": str(tmp_path / "pki"),
        "key_store": "postgres",
        "postgres.dsn": "host=127.0.0.1 port=1 password=secret",
    }
    with pytest.raises(ConfigError, match="key_store: postgres: cannot connect with postgres.dsn") as err:
        KeyStore(opts)
    assert "secret" not in str(err.value)


def test_a_database_that_stops_answering_fails_a_read_in_seconds(store: KeyStore) -> None:
    """Every auth reads the key table under one lock: its connection bounds each statement and
    notices a silent peer (TCP keepalives, a user timeout), so a hung database cannot hold every
    auth for the kernel's retransmission timeout."""
    table = store.table
    assert isinstance(table, PgKeyTable)
    store.list_keys()  # opens the connection
    conn = table._conn  # type: ignore[attr-defined]  # the table's one connection
    params = conn.info.get_parameters()
    assert params.get("keepalives") == "1" and params.get("tcp_user_timeout") == "10000", params
    (timeout,) = conn.execute("SHOW statement_timeout").fetchone()
    assert timeout == "15s"


def test_a_role_without_create_uses_the_tables_made_before(
    tmp_path: Path, pg_dsn: str, pg_rw_dsn: Any, pg_server: PgServer, pubkeys: list[str]
) -> None:
    """The role needs CREATE only while a table is missing (docs/scaling.md, "Keys on PostgreSQL"):
    once a master with CREATE made them, a master whose role may only read and write them starts,
    records and accepts keys; a missing table is a clear error for that role."""
    owner = KeyStore(pg_opts(tmp_path, pg_dsn, "m1"))  # the first start makes the tables
    restricted = KeyStore(pg_opts(tmp_path, pg_rw_dsn(), "m2"))
    try:
        assert restricted.authorize("web1", pubkeys[0]).status == "pending"
        assert restricted.accept("web1") == [KeyChange("web1", "accept", PEND, ACC)]
        assert owner.authorize("web1", pubkeys[0]).status == "accepted"  # one table for both
    finally:
        restricted.close()
        owner.close()
    pg_server.psql("DROP TABLE key_generation", pg_dsn.rsplit("dbname=", 1)[1])
    with pytest.raises(ConfigError, match=r"key_store: postgres: cannot create the tables .*permission denied"):
        KeyStore(pg_opts(tmp_path, pg_rw_dsn(), "m2"))
