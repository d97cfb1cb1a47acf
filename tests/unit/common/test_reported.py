"""The config a minion reports and what the master takes of it (common/reported.py): never a
path, a module location, a socket, a key or a secret; only plain data of bounded size; the
minion sends no more than the master takes."""

from __future__ import annotations

import logging

import pytest

from briny.common.config import MINION_DEFAULTS, apply_config
from briny.common.reported import COMPILE_KEYS, REPORT_MAX, accept_reported, is_private, public_opts

PRIVATE = [
    "root_dir",
    "pki_dir",
    "cachedir",
    "sock_dir",
    "log_file",
    "pidfile",
    "extension_modules",
    "file_roots",
    "pillar_roots",
    "module_dirs",
    "file_client",
    "master",
    "master_port",
    "publish_port",
    "master_finger",
    "conf_file",
    "autoload_dynamic_modules",
    "grains",
    "pillar",
    "__role",
    "_private",
    "utils_dirs",
    "gpg_keydir",
    "mysql.pass",
    "mongo.password",
    "api_key",
    "vault.token",
    "ssh_key",
    "some:secret_value",
    "x509_cert",
    "my_private_thing",
    "db-passwd",
    "ldap.bindpw_file",
    "redis.host",
    "ipc_socket",
    "",
]
PUBLIC = [
    "id",
    "test",
    "saltenv",
    "pillarenv",
    "hash_type",
    "state_compile",
    "timeout",
    "my_setting",
    "mongo.db",
    "ldap.scope",
    "renderer",
    "nodegroups",
    "state_output",
    "keyboard_layout",
    "monkey",
]


@pytest.mark.parametrize("key", PRIVATE)
def test_private_keys(key):
    assert is_private(key)


@pytest.mark.parametrize("key", PUBLIC)
def test_public_keys(key):
    assert not is_private(key)


def test_a_minion_sends_only_what_the_master_takes():
    opts = apply_config(
        {"id": "m1", "root_dir": "/tmp/x", "mysql.pass": "hunter2", "color_scheme": "dark", "big": "x" * 20000},
        MINION_DEFAULTS,
    )
    opts["__fileclient"] = object()
    sent = public_opts(opts)
    assert sent["color_scheme"] == "dark" and sent["id"] == "m1" and sent["renderer"] == "jinja|yaml"
    assert not any(is_private(k) for k in sent) and "big" not in sent and "__fileclient" not in sent
    taken = accept_reported(sent, "m1")
    assert taken is not None and taken.data == sent and not taken.refused
    assert COMPILE_KEYS <= set(sent) | {"jinja_trim_blocks", "jinja_lstrip_blocks", "disabled_requisites"}


def test_the_master_refuses_what_a_hostile_minion_reports(caplog):
    caplog.set_level(logging.WARNING)
    taken = accept_reported(
        {
            "extension_modules": "/evil",
            "file_roots": {"base": ["/"]},
            "ok": 1,
            "saltenv": "../x",
            "pillarenv": "dev",
            "test": "yes",
            "deep": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]],
            7: "not a key",
            "k" * 200: 1,
            "big": "x" * 20000,
        },
        "evil1",
    )
    assert taken is not None and taken.data == {"ok": 1, "pillarenv": "dev"}
    assert {"extension_modules", "file_roots", "saltenv", "test", "deep", "big", "7"} <= taken.refused
    assert not taken.knows("extension_modules") and not taken.knows("saltenv") and taken.knows("other")
    assert (
        "evil1 reported config keys the master never takes (paths, module locations, sockets, keys, "
        "secrets): extension_modules, file_roots"
    ) in caplog.text
    assert "saltenv (not an environment name)" in caplog.text and "big (over 16384 bytes)" in caplog.text


def test_a_report_that_is_not_a_map_or_too_big_is_ignored(caplog):
    assert accept_reported(None, "m1") is None and accept_reported(["x"], "m1") is None
    assert accept_reported({f"k{i}": "v" * 10000 for i in range(10)}, "m1") is None
    assert f"m1 reported a config over {REPORT_MAX} bytes" in caplog.text
    assert accept_reported({f"k{i}": i for i in range(5000)}, "m1") is None
    same = accept_reported({"a": 1}, "m1")
    assert same is not None and same.digest == accept_reported({"a": 1}, "m2").digest
