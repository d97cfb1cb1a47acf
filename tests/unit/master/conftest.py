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
