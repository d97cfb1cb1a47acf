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
