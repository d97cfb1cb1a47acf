"""Configuration: defaults, files, types, root_dir placement."""

import pytest

from briny.common.config import load_master_config, load_minion_config
from briny.common.exceptions import ConfigError


def test_defaults_and_file(tmp_path):
    (tmp_path / "minion").write_text("id: web1\nmaster_port: 4606\nfile_roots:\n  base: [/srv/x]\n")
    opts = load_minion_config(tmp_path)
    assert opts["id"] == "web1" and opts["master_port"] == 4606
    assert opts["file_roots"] == {"base": ["/srv/x"]}
    assert opts["state_auto_order"] is True and opts["renderer"] == "jinja|yaml"


def test_dropin_files_override(tmp_path):
    (tmp_path / "minion").write_text("id: a\n")
    (tmp_path / "minion.d").mkdir()
    (tmp_path / "minion.d" / "10-id.conf").write_text("id: b\n")
    assert load_minion_config(tmp_path)["id"] == "b"


def test_paths_live_under_root_dir(tmp_path):
    (tmp_path / "master").write_text(f"root_dir: {tmp_path}/root\ncachedir: cache\n")
    opts = load_master_config(tmp_path)
    assert opts["cachedir"] == f"{tmp_path}/root/cache"
    assert opts["pki_dir"] == f"{tmp_path}/root/etc/briny/pki/master"
    assert opts["extension_modules"] == f"{tmp_path}/root/cache/extmods"


@pytest.mark.parametrize(
    "text,message",
    [
        ("master_port: abc\n", "'master_port' must be an integer, not a string"),
        ("file_roots: [a]\n", "'file_roots' must be a mapping, not a list"),
        ("file_roots:\n  base: /srv\n", "'file_roots:base' must be a list of directories"),
        ("test: maybe\n", "'test' must be a boolean"),
        ("log_level: loud\n", "'log_level' must be one of"),
        ("log_level_logfile: loud\n", "'log_level_logfile' must be one of"),
        ("log_granular_levels: {briny.common: loud}\n", "'log_granular_levels:briny.common' must be one of"),
        ("log_granular_levels: [a]\n", "'log_granular_levels' must be a mapping"),
        ("log_fmt_console: '%(nosuchfield)s'\n", "'log_fmt_console' is not a usable log format"),
        ("log_fmt_logfile: '%(message)d'\n", "'log_fmt_logfile' is not a usable log format"),
        ("log_rotate_max_bytes: big\n", "'log_rotate_max_bytes' must be an integer"),
        ("- a\n- b\n", "must hold a mapping of keys"),
        ("a: [1,\n", "is not valid YAML"),
    ],
)
def test_bad_config_names_the_key(tmp_path, text, message):
    (tmp_path / "minion").write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_minion_config(tmp_path)


def test_missing_config_dir(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_minion_config(tmp_path / "nope")


# Every path briny writes defaults to briny's own names, never Salt's: a host may still run Salt
# (tests/e2e/test_salt_side_by_side.py starts both daemons next to a Salt install's files).
BRINY_DEFAULTS = {
    "minion": {
        "pki_dir": "/etc/briny/pki/minion",
        "cachedir": "/var/cache/briny/minion",
        "sock_dir": "/run/briny/minion",
        "log_file": "/var/log/briny/minion",
        "pidfile": "/run/briny/briny-minion.pid",
        "extension_modules": "/var/cache/briny/minion/extmods",
    },
    "master": {
        "pki_dir": "/etc/briny/pki/master",
        "cachedir": "/var/cache/briny/master",
        "sock_dir": "/run/briny/master",
        "log_file": "/var/log/briny/master",
        "key_logfile": "/var/log/briny/key",
        "pidfile": "/run/briny/briny-master.pid",
        "extension_modules": "/var/cache/briny/master/extmods",
    },
}


@pytest.mark.parametrize("role,loader", [("minion", load_minion_config), ("master", load_master_config)])
def test_default_paths_are_brinys_own(tmp_path, role, loader):
    opts = loader(tmp_path)  # no config file: every default, root_dir "/"
    assert {k: opts[k] for k in BRINY_DEFAULTS[role]} == BRINY_DEFAULTS[role]
    salts = {k: v for k, v in opts.items() if isinstance(v, str) and v.startswith("/") and "salt" in v.split("/")}
    assert salts == {}, f"{role} defaults still name Salt's paths: {salts}"
    # the trees stay Salt's: running the same trees unchanged is the point
    assert opts["file_roots"] == {"base": ["/srv/salt", "/srv/spm/salt"]}
    assert opts["pillar_roots"] == {"base": ["/srv/pillar", "/srv/spm/pillar"]}
    (tmp_path / role).write_text(f"root_dir: {tmp_path}/root\n")
    rooted = loader(tmp_path)
    assert {k: rooted[k] for k in BRINY_DEFAULTS[role]} == {
        k: f"{tmp_path}/root{v}" for k, v in BRINY_DEFAULTS[role].items()
    }


def test_logging_defaults_are_salts_and_syslog_urls_stay(tmp_path):
    opts = load_minion_config(tmp_path)
    assert opts["log_level"] == "warning" and opts["log_level_logfile"] is None
    assert opts["log_fmt_console"] == "[%(levelname)-8s] %(message)s"
    assert opts["log_fmt_logfile"] == (
        "%(asctime)s,%(msecs)03d [%(name)-17s:%(lineno)-4d][%(levelname)-8s][%(process)d] %(message)s"
    )
    assert (opts["log_datefmt"], opts["log_datefmt_logfile"]) == ("%H:%M:%S", "%Y-%m-%d %H:%M:%S")
    assert opts["log_granular_levels"] == {}
    (tmp_path / "minion").write_text(
        f"root_dir: {tmp_path}/root\nlog_file: udp://loghost:10514/LOG_LOCAL3\n"
        "log_fmt_console: '%(colorlevel)s %(colormsg)s'\n"
    )
    opts = load_minion_config(tmp_path)
    assert opts["log_file"] == "udp://loghost:10514/LOG_LOCAL3"  # not a path under root_dir


def test_reading_the_config_is_logged(tmp_path, caplog):
    (tmp_path / "minion").write_text("id: a\n")
    (tmp_path / "minion.d").mkdir()
    (tmp_path / "minion.d" / "10.conf").write_text("id: b\n")
    with caplog.at_level("DEBUG", logger="briny.common.config"):
        load_minion_config(tmp_path)
    assert [r.getMessage() for r in caplog.records] == [
        f"Reading configuration from {tmp_path / 'minion'}",
        f"Reading configuration from {tmp_path / 'minion.d' / '10.conf'}",
    ]


# -- reading settings: one accessor, the defaults in one place ------------------------------------


def test_setting_falls_back_to_the_one_default(tmp_path):
    from briny.common import config

    master = load_master_config(tmp_path, {"hash_type": "md5"})
    assert config.setting(master, "hash_type") == "md5"
    assert config.setting({}, "hash_type") == "sha256"
    assert config.setting({"job_cache": None}, "job_cache") == "sqlite"
    assert config.setting({"state_compile": ""}, "state_compile") == "auto"
    assert config.setting({"auto_accept": False}, "auto_accept") is False
    # a key whose master and minion defaults differ: the config's role, or the caller's
    assert config.setting({"__role": "master"}, "cachedir") == "/var/cache/briny/master"
    assert config.setting({}, "cachedir", "minion") == "/var/cache/briny/minion"
    with pytest.raises(ConfigError, match="'cachedir' has a master default and a minion default"):
        config.setting({}, "cachedir")
    with pytest.raises(ConfigError, match="'no_such_key' is not a setting briny knows"):
        config.setting({}, "no_such_key")


def test_numbers_are_positive_or_the_default_with_a_warning_once(caplog):
    from briny.common import config

    assert config.number({"timeout": 2.5}, "timeout") == 2.5
    assert config.number({}, "timeout") == 5.0  # unset: quietly the default
    with caplog.at_level("WARNING", logger="briny.common.config"):
        assert config.number({"auth_timeout": -3}, "auth_timeout") == 10.0
        assert config.number({"auth_timeout": -3}, "auth_timeout") == 10.0
        assert config.number({"recon_max": True}, "recon_max") == 10000.0
    assert [r.getMessage() for r in caplog.records] == [
        "config: 'auth_timeout' must be a positive number, not -3; using 10.0",
        "config: 'recon_max' must be a positive number, not True; using 10000.0",
    ]
    caplog.clear()
    with caplog.at_level("WARNING", logger="briny.common.config"):
        # ping_interval: Salt's default 0 means a heartbeat every 10 s in briny, without a warning
        assert config.number({"ping_interval": 0}, "ping_interval") == 10.0
        assert config.number({"ping_interval": 0.2}, "ping_interval") == 0.2
        # zero=True: 0 is a value (no caching, keep every job)
        assert config.number({"fileserver_list_cache_time": 0}, "fileserver_list_cache_time", zero=True) == 0.0
        assert config.number({"keep_jobs": 0}, "keep_jobs", zero=True) == 0.0
    assert caplog.records == []


def test_counts_and_limits():
    from briny.common import config

    assert config.count({"worker_threads": 8}, "worker_threads") == 8
    assert config.count({"worker_threads": 8.9}, "worker_threads") == 8  # as int() reads it
    assert config.count({"worker_threads": 0}, "worker_threads") == 5
    assert config.count({}, "master_port") == 4506
    assert config.limit({"process_count_max": -1}, "process_count_max") is None  # Salt's "no limit"
    assert config.limit({}, "process_count_max") is None
    assert config.limit({"process_count_max": 3}, "process_count_max") == 3


def test_numeric_settings_are_read_through_the_accessor():
    """No call site restates a numeric default (``opts.get("timeout") or 5``): they read
    config.number/count/limit, whose defaults are the tables in common/config.py."""
    import re
    from pathlib import Path

    from briny.common.config import MASTER_DEFAULTS, MINION_DEFAULTS

    numeric = {
        k
        for table in (MASTER_DEFAULTS, MINION_DEFAULTS)
        for k, v in table.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
    # logsetup sits below config (config imports it): its two rotation sizes (0: off) stay
    allowed = {("common/logsetup.py", "log_rotate_max_bytes"), ("common/logsetup.py", "log_rotate_backup_count")}
    access = re.compile(r"""(?:opts\w*|__opts__)\s*\.get\(\s*["'](\w+)["']""")
    root = Path(__file__).resolve().parents[3]
    found = []
    for folder in ("common", "master", "minion", "states"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel == "common/config.py":
                continue
            text = path.read_text(encoding="utf-8")
            for m in access.finditer(text):
                if m.group(1) in numeric and (rel, m.group(1)) not in allowed:
                    found.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}")
    assert found == []
