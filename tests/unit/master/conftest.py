"""Fixtures for the master's unit tests: RSA public keys, a master config dir, a PostgreSQL database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.dbfixtures import pg_server, pg_server_own  # noqa: F401 - throwaway PostgreSQL servers (the job cache's tests)


def _pub_pem(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@pytest.fixture(scope="session")
def pubkeys() -> list[str]:
    """Five distinct RSA 2048 public keys (PEM), made once per session."""
    return [_pub_pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)) for _ in range(5)]


@pytest.fixture
def master_dir(tmp_path: Path) -> Path:
    """A config dir whose ``master`` file puts everything under tmp_path/root."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "master").write_text(f"root_dir: {tmp_path / 'root'}\npki_dir: pki\ncachedir: cache\nsock_dir: sock\n")
    return conf


@pytest.fixture
def master_opts(master_dir: Path) -> dict:
    from briny.common.config import load_master_config

    return load_master_config(master_dir)


@pytest.fixture
def pg_dsn(pg_server, request) -> str:  # noqa: F811 - the imported fixture
    """A connection string to a new, empty database of the session's PostgreSQL (dropped after the test)."""
    name = "jc_" + re.sub(r"\W", "_", request.node.name.lower())[:50]
    pg_server.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE); CREATE DATABASE "{name}"')
    yield pg_server.dsn.replace("dbname=postgres", f"dbname={name}")
    pg_server.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', check=False)


@pytest.fixture
def pg_rw_dsn(pg_server, pg_dsn):  # noqa: F811 - the imported fixture
    """A function making a login role that may only read and write the tables ``pg_dsn``'s database
    has when it is called (no ``CREATE`` on the schema, owning nothing): its connection string.
    Called again, it grants the tables made since. The database and the role are dropped after the test."""
    db = pg_dsn.rsplit("dbname=", 1)[1]
    role = f"{db}_rw"[:60]
    pg_server.psql(f"DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD 'pw'")

    def grant() -> str:
        pg_server.psql(
            f"REVOKE CREATE ON SCHEMA public FROM PUBLIC; GRANT USAGE ON SCHEMA public TO {role}; "
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
            db,
        )
        return f"host={pg_server.host} port={pg_server.port} user={role} password=pw dbname={db}"

    yield grant
    pg_server.psql(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE); DROP ROLE IF EXISTS {role}', check=False)
