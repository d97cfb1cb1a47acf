"""postgres_* and mysql_* states applied live against throwaway servers (tests/pgserver.py,
tests/mariadbserver.py), checked by querying the servers directly.

Each scenario applies its SLS, applies it again (nothing changes), runs it in
test mode with something new (nothing is created), and feeds bad input (a
wrong password, a refused connection, an unknown privilege, an unknown
option) that fails only the state concerned. The connection comes from the
``postgres.*`` / ``mysql.*`` config keys here (the golden cases give it as
state arguments), and once through a socket as the server's own user.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.dbfixtures import mariadb_server, pg_server  # noqa: F401 - fixtures
from tests.pgserver import free_port

pytestmark = pytest.mark.host


@pytest.fixture
def apply(tmp_path: Path, briny_call):
    """apply(config, sls_text, test=False) -> ({id: result}, stderr) of `state.sls main` on a fresh tree."""
    tree = tmp_path / "srv"
    tree.mkdir()

    def run(config: dict[str, Any], sls: str, test: bool = False) -> tuple[dict[str, dict[str, Any]], str]:
        conf = tmp_path / "etc"
        conf.mkdir(exist_ok=True)
        base = {
            "id": "dbtest",
            "file_client": "local",
            "file_roots": {"base": [str(tree)]},
            "root_dir": str(tmp_path / "root"),
            "cachedir": str(tmp_path / "cache"),
            "pki_dir": str(tmp_path / "pki"),
            "log_file": str(tmp_path / "minion.log"),
        }
        (conf / "minion").write_text(yaml.safe_dump({**base, **config}))
        (tree / "main.sls").write_text(textwrap.dedent(sls))
        p = briny_call(conf, ["state.sls", "main", *(["test=True"] if test else [])], cwd=tmp_path)
        try:
            data = json.loads(p.stdout)["local"]
        except (ValueError, KeyError):
            raise AssertionError(f"briny-call failed: {p.stdout}\n{p.stderr}") from None
        assert isinstance(data, dict), data
        return {r["__id__"]: r for r in data.values()}, p.stderr

    return run


def _quiet(results: dict[str, dict[str, Any]]) -> None:
    for r in results.values():
        assert r["result"] is True and r["changes"] == {}, r


# --------------------------------------------------------------------- PostgreSQL


def _pg_config(pg, password: str | None = None, port: int | None = None) -> dict[str, Any]:
    return {
        "postgres.host": "127.0.0.1",
        "postgres.port": port or pg.port,
        "postgres.user": "postgres",
        "postgres.pass": pg.password if password is None else password,
    }


PG_SLS = """
    it_group:
      postgres_group.present: []

    it_user:
      postgres_user.present:
        - password: 'pw:with\\colon'
        - encrypted: scram-sha-256
        - createdb: true
        - groups: it_group
        - require:
          - postgres_group: it_group

    it_db:
      postgres_database.present:
        - owner: it_user
        - encoding: UTF8
        - template: template0
        - require:
          - postgres_user: it_user

    it_schema:
      postgres_schema.present:
        - dbname: it_db
        - owner: it_user
        - require:
          - postgres_database: it_db

    it_ext:
      postgres_extension.present:
        - name: hstore
        - maintenance_db: it_db
        - schema: it_schema
        - require:
          - postgres_schema: it_schema

    it_table_grant:
      postgres_privileges.present:
        - name: it_group
        - object_name: it_t
        - object_type: table
        - prepend: it_schema
        - privileges: [SELECT, UPDATE]
        - grant_option: true

    it_db_grant:
      postgres_privileges.present:
        - name: it_group
        - object_name: it_db
        - object_type: database
        - privileges: [ALL]
        - require:
          - postgres_database: it_db

    it_space:
      postgres_tablespace.present:
        - directory: {tsdir}
        - owner: it_user
        - require:
          - postgres_user: it_user
"""


def test_postgres_states_live(pg_server, apply, tmp_path):  # noqa: F811 - the imported fixtures
    pg = pg_server
    tsdir = pg.root / "it_space"
    tsdir.mkdir()
    os.chown(tsdir, *_ids(pg.owner))
    # the state under test grants on a table: the table comes first, made by hand
    sls = PG_SLS.replace("{tsdir}", str(tsdir))
    config = _pg_config(pg)

    first, err = apply(config, sls, test=True)
    assert {r["result"] for r in first.values()} == {None}, first
    assert pg.value("SELECT count(*) FROM pg_roles WHERE rolname IN ('it_user', 'it_group')") == "0"

    pg.psql("CREATE SCHEMA IF NOT EXISTS it_schema; CREATE TABLE it_schema.it_t (id int)", db="postgres")
    res, err = apply(config, sls)
    failed = {k: r for k, r in res.items() if r["result"] is not True}
    assert not failed, f"{failed}\n{err}"
    assert res["it_user"]["changes"] == {"it_user": "Present"}
    # the server, asked directly
    row = pg.query(
        "SELECT rolcreatedb, rolcanlogin, rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = 'it_user'"
    )
    assert row == [["t", "t", "t"]]
    assert pg.value("SELECT pg_has_role('it_user', 'it_group', 'MEMBER')") == "t"
    assert pg.query(
        "SELECT pg_get_userbyid(datdba), pg_encoding_to_char(encoding) FROM pg_database WHERE datname = 'it_db'"
    ) == [["it_user", "UTF8"]]
    assert (
        pg.value("SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'it_schema'", db="it_db")
        == "it_user"
    )
    assert (
        pg.value(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname = 'hstore'",
            db="it_db",
        )
        == "it_schema"
    )
    assert pg.value("SELECT pg_tablespace_location(oid) FROM pg_tablespace WHERE spcname = 'it_space'") == str(tsdir)
    assert pg.value("SELECT has_database_privilege('it_group', 'it_db', 'CREATE, TEMPORARY, CONNECT')") == "t"
    # it_table_grant names no maintenance_db: the table lives in "postgres"
    assert pg.value("SELECT has_table_privilege('it_group', 'it_schema.it_t', 'UPDATE WITH GRANT OPTION')") == "t"
    # the password is the one asked for: log in with it over TCP
    login = pg.psql_as("it_user", "pw:with\\colon", "SELECT current_user", db="it_db")
    assert login.returncode == 0 and "it_user" in login.stdout, login.stderr

    again, err = apply(config, sls)
    _quiet(again)

    # test mode with something new: announced, not done
    new = sls + "\n    it_new_user:\n      postgres_user.present: []\n"
    tried, _ = apply(config, new, test=True)
    assert tried["it_new_user"]["result"] is None
    assert tried["it_new_user"]["comment"] == "User it_new_user is set to be created"
    assert pg.value("SELECT count(*) FROM pg_roles WHERE rolname = 'it_new_user'") == "0"

    # changing an attribute and the password
    changed, _ = apply(config, "it_user:\n  postgres_user.present:\n    - createdb: false\n    - password: other\n")
    assert changed["it_user"]["changes"] == {"it_user": {"createdb": False, "password": True}}
    assert pg.value("SELECT rolpassword LIKE 'md5%' FROM pg_authid WHERE rolname = 'it_user'") == "t"

    # removing, through the socket as the server's own user (runas), no password
    gone, err = apply(
        {},
        f"""
        it_space:
          postgres_tablespace.absent:
            - db_host: {pg.socket_dir}
            - db_port: {pg.port}
            - user: {pg.owner}
        it_db:
          postgres_database.absent:
            - db_host: {pg.socket_dir}
            - db_port: {pg.port}
            - user: {pg.owner}
            - require:
              - postgres_tablespace: it_space
        """,
    )
    assert all(r["result"] is True and r["changes"] for r in gone.values()), f"{gone}\n{err}"
    assert pg.value("SELECT count(*) FROM pg_database WHERE datname = 'it_db'") == "0"


def test_postgres_bad_input(pg_server, apply):  # noqa: F811 - the imported fixtures
    pg = pg_server
    sls = """
        bad_password:
          postgres_user.present:
            - db_password: wrong
        refused:
          postgres_database.present:
            - db_port: {dead}
        unknown_privilege:
          postgres_privileges.present:
            - name: postgres
            - object_name: postgres
            - object_type: database
            - privileges: [SELEKT]
        unknown_option:
          postgres_user.present:
            - bogus: 1
        still_fine:
          postgres_user.present: []
    """.replace("{dead}", str(free_port()))
    res, err = apply(_pg_config(pg), sls)
    assert res["bad_password"]["result"] is False
    assert res["bad_password"]["comment"] == "Failed to create user bad_password"
    assert 'password authentication failed for user "postgres"' in err
    assert res["refused"]["result"] is False and res["refused"]["comment"] == "Failed to create database refused"
    assert "Connection refused" in err
    assert res["unknown_privilege"] == {
        **res["unknown_privilege"],
        "result": False,
        "comment": "Invalid privilege(s): SELEKT provided for object database",
    }
    assert res["unknown_option"]["result"] is False
    assert res["unknown_option"]["comment"] == "'bogus' is an invalid keyword argument for 'postgres_user.present'"
    assert res["still_fine"]["result"] is True and res["still_fine"]["changes"] == {"still_fine": "Present"}
    assert pg.value("SELECT count(*) FROM pg_roles WHERE rolname IN ('bad_password', 'unknown_option')") == "0"


def _ids(user: str) -> tuple[int, int]:
    import pwd

    pw = pwd.getpwnam(user)
    return pw.pw_uid, pw.pw_gid


# --------------------------------------------------------------------- MariaDB


def _my_config(my, password: str | None = None, port: int | None = None) -> dict[str, Any]:
    return {
        "mysql.host": "127.0.0.1",
        "mysql.port": port or my.port,
        "mysql.user": "root",
        "mysql.pass": my.password if password is None else password,
    }


MY_SLS = """
    it_db:
      mysql_database.present:
        - character_set: utf8mb4
        - collate: utf8mb4_unicode_ci

    it_user:
      mysql_user.present:
        - host: '%'
        - password: "it's a secret"

    it_grant:
      mysql_grants.present:
        - grant: select, insert, update
        - database: it_db.*
        - user: it_user
        - host: '%'
        - grant_option: true
        - require:
          - mysql_user: it_user
          - mysql_database: it_db
"""


def test_mysql_states_live(mariadb_server, apply, tmp_path):  # noqa: F811 - the imported fixtures
    my = mariadb_server
    config = _my_config(my)
    first, _ = apply(config, MY_SLS, test=True)
    assert {r["result"] for r in first.values()} == {None}, first
    assert my.value("SELECT count(*) FROM mysql.user WHERE User = 'it_user'") == "0"

    res, err = apply(config, MY_SLS)
    assert all(r["result"] is True for r in res.values()), f"{res}\n{err}"
    assert res["it_grant"]["changes"] == {"it_grant": "Present"}
    assert my.query(
        "SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA "
        "WHERE SCHEMA_NAME = 'it_db'"
    ) == [["utf8mb4", "utf8mb4_unicode_ci"]]
    grants = [r[0] for r in my.query("SHOW GRANTS FOR 'it_user'@'%'")]
    # escape (the default) quotes the name and escapes "_", as Salt does: the grant is on it_db only
    assert any("GRANT SELECT, INSERT, UPDATE ON `it\\_db`.*" in g and "WITH GRANT OPTION" in g for g in grants), grants
    assert my.login_works("it_user", "it's a secret")

    again, _ = apply(config, MY_SLS)
    _quiet(again)

    # connection_default_file: the password from an option file, the rest as arguments
    optfile = tmp_path / "client.cnf"
    optfile.write_text(f"[client]\npassword={my.password}\n")
    optfile.chmod(0o600)
    via_file, err = apply(
        {},
        f"""
        it_db_from_file:
          mysql_database.present:
            - name: it_db
            - connection_host: 127.0.0.1
            - connection_port: {my.port}
            - connection_user: root
            - connection_default_file: {optfile}
        """,
    )
    assert via_file["it_db_from_file"]["result"] is True, f"{via_file}\n{err}"
    assert via_file["it_db_from_file"]["comment"] == "Database it_db is already present"

    # a new password, then removal
    changed, _ = apply(config, "it_user:\n  mysql_user.present:\n    - host: '%'\n    - password: newer\n")
    assert changed["it_user"]["changes"] == {"it_user": "Updated"}
    assert my.login_works("it_user", "newer") and not my.login_works("it_user", "it's a secret")
    removed, _ = apply(
        config,
        """
        it_grant:
          mysql_grants.absent:
            - grant: insert
            - database: it_db.*
            - user: it_user
            - host: '%'
        it_user:
          mysql_user.absent:
            - host: '%'
            - require:
              - mysql_grants: it_grant
        it_db:
          mysql_database.absent: []
        """,
    )
    assert all(r["result"] is True and r["changes"] for r in removed.values()), removed
    assert my.value("SELECT count(*) FROM mysql.user WHERE User = 'it_user'") == "0"
    assert my.value("SELECT count(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'it_db'") == "0"


def test_mysql_bad_input(mariadb_server, apply):  # noqa: F811 - the imported fixtures
    my = mariadb_server
    sls = """
        bad_password:
          mysql_database.present:
            - connection_pass: wrong
        refused:
          mysql_database.present:
            - connection_port: {dead}
        unknown_privilege:
          mysql_grants.present:
            - grant: selekt
            - database: mysql.*
            - user: root
        unknown_option:
          mysql_database.present:
            - bogus: 1
    """.replace("{dead}", str(free_port()))
    res, err = apply(_my_config(my), sls)
    assert res["bad_password"] == {
        **res["bad_password"],
        "result": False,
        "comment": "MySQL Error 1045: Access denied for user 'root'@'localhost' (using password: YES)",
    }
    assert res["refused"]["result"] is False
    assert res["refused"]["comment"].startswith("MySQL Error 2002: Can't connect to server on '127.0.0.1'")
    assert res["unknown_privilege"]["result"] is False
    assert res["unknown_privilege"]["comment"] == 'Failed to execute: "GRANT selekt ON mysql.* TO root@localhost"'
    assert "Invalid grant : 'SELEKT'" in err
    # Salt takes any other argument as a connection argument and ignores it; briny names it
    assert res["unknown_option"]["result"] is True
    assert "these arguments are not connection arguments and were ignored: bogus" in err
    assert my.value("SELECT count(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'unknown_option'") == "1"
