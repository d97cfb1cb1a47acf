"""common/saltkeys.py: the one table of Salt 3007's config keys. A key briny's code reads is
supported, a Salt key it does not read is ignored and named in a warning, and docs/migrating.md
lists exactly the ignored ones (so code, warnings and docs cannot drift apart)."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest

from briny.common import saltkeys
from briny.common.config import load_master_config, load_minion_config

ROOT = Path(__file__).resolve().parents[3]
SOURCES = ("common", "master", "minion", "states")
OPTS_NAMES = {"opts", "__opts__", "self.opts"}
SETTING_READERS = {"config.setting", "config.number", "config.count", "config.limit", "setting", "number", "count"}
CONFIG_FUNS = {"config.get", "config.merge", "config.option"}
# dict reads the scan takes for config reads but are not: a publish's options (targeting), mount
# options (states/mount.py, minion/host/modules/mount.py)
NOT_CONFIG = {"delimiter", "bind", "remount"}


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return None


def _const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def keys_read_by_the_code() -> dict[str, str]:
    """Every config key briny's code reads by name (opts.get/[]/in, config.setting..., the
    config.get/merge/option modules), with a file reading it."""
    found: dict[str, str] = {}
    for package in SOURCES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                key = None
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                    if node.func.attr in ("get", "setdefault", "pop") and _name(node.func.value) in OPTS_NAMES:
                        key = _const(node.args[0])
                if isinstance(node, ast.Call) and _name(node.func) in SETTING_READERS and len(node.args) >= 2:
                    key = _const(node.args[1])
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and node.args:
                    if _const(node.func.slice) in CONFIG_FUNS:
                        key = _const(node.args[0])
                if isinstance(node, ast.Subscript) and _name(node.value) in OPTS_NAMES:
                    key = _const(node.slice)
                if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
                    if _name(node.comparators[0]) in OPTS_NAMES:
                        key = _const(node.left)
                if key and "." not in key and not key.startswith("__") and key not in NOT_CONFIG:
                    found.setdefault(key, str(path.relative_to(ROOT)))
    return found


READ = keys_read_by_the_code()


def test_the_scan_sees_the_reads_it_must():
    assert {"file_roots", "state_queue", "mine_functions", "keep_jobs_seconds", "ping_interval"} <= set(READ)


def test_every_key_the_code_reads_is_supported():
    lost = {
        key: where
        for key, where in READ.items()
        if "supported" not in (saltkeys.classify("minion", key), saltkeys.classify("master", key))
    }
    assert lost == {}, "read by briny but warned about as unsupported: add them to common/saltkeys.py's READ_*"


def test_every_key_listed_as_read_is_still_read():
    stale = sorted((saltkeys.READ_BOTH | saltkeys.READ_MINION | saltkeys.READ_MASTER) - set(READ))
    assert stale == [], "listed as read in common/saltkeys.py but no code reads them"


def test_keys_not_acted_on_are_really_not_read():
    acted = sorted(saltkeys.NOT_ACTED_ON & set(READ))
    assert acted == [], f"now read by the code ({[READ[k] for k in acted]}): take them out of NOT_ACTED_ON"


@pytest.mark.parametrize(
    "role, key, kind",
    [
        ("minion", "file_roots", "supported"),
        ("minion", "state_queue", "supported"),
        ("master", "state_queue", "unknown"),  # a minion setting, no master's
        ("master", "worker_threads", "supported"),
        ("master", "reactor", "supported"),
        ("minion", "reactor", "supported"),  # a masterless minion runs it (one with a master warns)
        ("minion", "schedule", "supported"),
        ("master", "schedule", "supported"),
        ("master", "gitfs_remotes", "supported"),
        ("master", "gitfs_refspecs", "ignored"),
        ("minion", "startup_states", "ignored"),  # a default briny carries, but nothing runs them
        ("minion", "frobnicate", "unknown"),
        ("minion", "mysql.host", "supported"),  # a module's setting, for config.get
        # Salt settings outside its default tables: Salt's, so ignored, never "not a Salt setting"
        ("minion", "return", "ignored"),  # returners (VALID_OPTS)
        ("minion", "ext_pillar", "ignored"),  # a masterless minion's external pillar
        ("minion", "proxy", "ignored"),  # a proxy minion's block
        ("minion", "vault", "ignored"),
        ("master", "vault", "ignored"),
        ("master", "rest_cherrypy", "supported"),  # briny-api reads it (master/api/settings.py)
        ("master", "rest_tornado", "supported"),
        ("master", "peer_run", "ignored"),
        ("master", "presence_events", "ignored"),
        ("master", "proxy", "unknown"),  # a proxy minion's, no master's
    ],
)
def test_classify(role, key, kind):
    assert saltkeys.classify(role, key) == kind


def test_briny_s_own_defaults_are_never_named():
    for role, defaults in (("minion", load_minion_config(None)), ("master", load_master_config(None))):
        assert saltkeys.unsupported(defaults, role) == ([], []), role


def test_a_default_nothing_acts_on_is_named_once_the_operator_sets_it():
    opts = {**load_minion_config(None), "startup_states": "highstate", "transport": "tcp"}
    assert saltkeys.unsupported(opts, "minion") == (["startup_states", "transport"], [])


def test_warn_unsupported_names_each_key_briny_will_not_act_on(tmp_path, caplog):
    (tmp_path / "minion").write_text(
        "id: web1\nfile_roots: {base: [/srv/salt]}\nschedule: {}\ngrains_refresh_every: 5\nreturner_dirs: []\n"
        "frobnicate: 1\nmysql.host: db\n"
    )
    opts = load_minion_config(tmp_path)
    with caplog.at_level(logging.WARNING, logger="briny.common.saltkeys"):
        saltkeys.warn_unsupported(opts)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        f"{tmp_path}/minion: Salt settings briny does not support, accepted without effect "
        "(docs/migrating.md): grains_refresh_every, returner_dirs",
        f"{tmp_path}/minion: keys that are not Salt 3007 minion settings nor briny's, kept only as data "
        "for config.get: frobnicate",
    ]
    assert opts["frobnicate"] == 1  # kept, as Salt keeps it


def test_a_config_of_supported_keys_warns_nothing(tmp_path, caplog):
    (tmp_path / "master").write_text("interface: 127.0.0.1\nworker_threads: 3\nfile_roots: {base: [/srv/salt]}\n")
    with caplog.at_level(logging.WARNING, logger="briny.common.saltkeys"):
        saltkeys.warn_unsupported(load_master_config(tmp_path))
    assert caplog.records == []


def test_migrating_md_lists_exactly_the_ignored_keys():
    text = (ROOT / "docs" / "migrating.md").read_text()
    begin, end = "<!-- ignored keys: begin -->\n", "<!-- ignored keys: end -->"
    assert begin in text and end in text, "docs/migrating.md lost its generated list's markers"
    listed = text.split(begin, 1)[1].split(end, 1)[0]
    assert listed.strip() == saltkeys.markdown().strip(), (
        "docs/migrating.md's list of ignored keys is stale: regenerate it with dev/migrating_keys.py"
    )
