"""The postgres and mysql execution modules' client calls: connection from arguments or config
keys, secrets only in private files, SQL on standard input, errors in Salt's words (a fake
``cmd.run_all`` stands in for psql / mariadb; the live tests run the real clients)."""

from __future__ import annotations

import os
from collections import ChainMap
from pathlib import Path
import shutil
from typing import Any

import pytest

from briny.common.loader import minion_mods


_CLIENTS = {"postgres": ("psql",), "mysql": ("mariadb", "mysql")}


def _loaded(module: str, opts: dict[str, Any], answer: dict[str, Any]):
    if not any(shutil.which(c) for c in _CLIENTS[module]):
        pytest.skip(f"the {module} module loads only where its client is installed ({'/'.join(_CLIENTS[module])})")
    salt = minion_mods({"id": "t", **opts})
    salt[f"{module}.version"]  # load it
    mod = salt.module(module)
    calls: list[dict[str, Any]] = []

    def run_all(argv, **kwargs):
        files = {}
        for key in ("PGPASSFILE",):
            path = (kwargs.get("env") or {}).get(key)
            if path:
                files[key] = (Path(path).read_text(), oct(os.stat(path).st_mode & 0o777))
        for arg in argv:
            if arg.startswith("--defaults-file="):
                path = arg.split("=", 1)[1]
                files["defaults"] = (Path(path).read_text(), oct(os.stat(path).st_mode & 0o777))
        calls.append({"argv": argv, "files": files, **kwargs})
        return dict(answer)

    # the client calls go to the fake; the module's own functions (mysql.user_exists) to the loader
    fake = ChainMap({"cmd.run_all": run_all, "config.option": lambda key, default=None: opts.get(key, default)}, salt)
    assert salt.inject(module, {"__salt__": fake})  # the module and the private files it imports
    return mod, calls


def test_postgres_connection_from_config_keys_and_password_file():
    opts = {"postgres.host": "db.example", "postgres.port": 6543, "postgres.user": "admin", "postgres.pass": "p:w\\x"}
    mod, calls = _loaded("postgres", opts, {"retcode": 0, "stdout": "setting\n15.18\n", "stderr": ""})
    assert mod.version() == "15.18"
    call = calls[0]
    argv = call["argv"]
    assert argv[argv.index("--host") + 1] == "db.example" and argv[argv.index("--port") + 1] == "6543"
    assert argv[argv.index("--username") + 1] == "admin" and argv[argv.index("--dbname") + 1] == "postgres"
    assert "server_version" in call["stdin"] and not any("server_version" in a for a in argv)
    assert call["runas"] is None  # a TCP host: psql runs as the caller
    assert call["files"]["PGPASSFILE"] == ("*:*:*:*:p\\:w\\\\x\n", "0o600")
    assert not os.path.exists(call["env"]["PGPASSFILE"])  # removed after the call
    assert call["clean_env"] is True


def test_postgres_socket_means_runas_postgres_and_failures_read_as_nothing():
    mod, calls = _loaded("postgres", {}, {"retcode": 2, "stdout": "", "stderr": "psql: error: connection refused"})
    assert mod.user_list() is False
    assert mod.role_get("x") is None
    assert mod.db_list() == {}
    assert mod.psql_query("SELECT 1") == []
    assert calls[0]["runas"] == "postgres" and "--host" not in calls[0]["argv"]
    assert "PGPASSFILE" not in (calls[0]["env"] or {})


def test_mysql_connection_arguments_override_config_and_default_file_turns_config_off():
    opts = {"mysql.host": "cfg-host", "mysql.user": "cfg-user", "mysql.pass": "cfg-pass"}
    out = '<?xml version="1.0"?>\n<resultset statement="s"><row><field name="v">10.11.19-MariaDB</field></row></resultset>'
    mod, calls = _loaded("mysql", opts, {"retcode": 0, "stdout": out, "stderr": ""})
    assert mod.version(connection_host="arg-host", connection_port=3307) == "10.11.19-MariaDB"
    text, mode = calls[0]["files"]["defaults"]
    assert mode == "0o600"
    assert "host=arg-host\n" in text and "port=3307\n" in text and "user=cfg-user\n" in text
    assert 'password="cfg-pass"\n' in text
    assert "VERSION()" in calls[0]["stdin"]
    mod.__context__.clear()
    mod.db_list(connection_default_file="/etc/mysql/debian.cnf", connection_user="me")
    text, _ = calls[1]["files"]["defaults"]
    assert text.startswith("!include /etc/mysql/debian.cnf\n[client]\n")
    assert "user=me\n" in text and "cfg-" not in text


def test_mysql_error_reaches_the_context():
    mod, _ = _loaded("mysql", {}, {"retcode": 1, "stdout": "", "stderr": "ERROR 1045 (28000): Access denied for user"})
    assert mod.db_exists("x") is False
    assert mod.__context__["mysql.error"] == "MySQL Error 1045: Access denied for user"
    assert mod.db_list() == [] and mod.user_grants("u") is False


@pytest.mark.parametrize("bad", ["bogus", "client_flags"])
def test_mysql_names_arguments_it_ignores(bad, caplog):
    mod, _ = _loaded("mysql", {}, {"retcode": 0, "stdout": "", "stderr": ""})
    mod.db_list(**{bad: 1})
    assert f"were ignored: {bad}" in caplog.text
