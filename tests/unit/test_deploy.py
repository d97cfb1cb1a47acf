"""The example configs in deploy/ load cleanly (every key is a known one of the right type)."""

from pathlib import Path

import yaml

from briny.common.config import MASTER_DEFAULTS, MINION_DEFAULTS, load_master_config, load_minion_config

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _uncommented(path: Path) -> dict:
    """The example with every commented-out setting switched on."""
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("#") and not line.startswith("# ") and line[1:2].strip():
            lines.append(line[1:])
    return yaml.safe_load("\n".join(lines)) or {}


def test_example_configs_load_with_every_setting_on(tmp_path):
    for name, defaults, loader in (
        ("master", MASTER_DEFAULTS, load_master_config),
        ("minion", MINION_DEFAULTS, load_minion_config),
    ):
        data = _uncommented(DEPLOY / "config" / name)
        assert data, name
        unknown = sorted(set(data) - set(defaults))
        assert unknown == [], f"{name} example documents keys briny does not know: {unknown}"
        (tmp_path / name).write_text(yaml.safe_dump(data))
        opts = loader(tmp_path)
        for key, value in data.items():
            if key not in ("root_dir", "pki_dir", "cachedir", "sock_dir", "log_file", "pidfile"):
                assert opts[key] == value, key


def test_the_examples_show_the_real_defaults_of_paths_and_logging():
    """The commented path and logging settings in deploy/config say what the code does (briny's
    own paths, never Salt's; Salt's log formats)."""
    keys = (
        "pki_dir",
        "cachedir",
        "sock_dir",
        "log_file",
        "key_logfile",
        "pidfile",
        "log_level",
        "log_level_logfile",
        "log_fmt_console",
        "log_fmt_logfile",
        "log_datefmt",
        "log_datefmt_logfile",
        "log_rotate_max_bytes",
        "log_rotate_backup_count",
        "root_dir",
    )
    for name, defaults in (("master", MASTER_DEFAULTS), ("minion", MINION_DEFAULTS)):
        data = _uncommented(DEPLOY / "config" / name)
        shown = {k: data[k] for k in keys if k in data}
        assert shown == {k: defaults[k] for k in shown}, name
        assert {"pki_dir", "cachedir", "sock_dir", "log_file", "pidfile"} <= set(shown), name


def test_the_examples_show_only_keys_briny_acts_on():
    """Switching on any commented setting of deploy/config never draws the daemon's warning about
    keys it ignores (common/saltkeys.py)."""
    from briny.common import saltkeys

    for name in ("master", "minion"):
        assert saltkeys.unsupported(_uncommented(DEPLOY / "config" / name), name) == ([], []), name


def test_install_links_every_operator_command_onto_the_path():
    """deploy/install.sh links each console script into /usr/local/bin but briny-swarm (a load
    tool, documented as run from the venv): docs/migrating.md says which."""
    import re
    import tomllib

    scripts = set(tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())["project"]["scripts"])
    install = (DEPLOY / "install.sh").read_text()
    [listed] = re.findall(r"for cmd in ([a-z -]+); do", install)
    assert set(listed.split()) == scripts - {"briny-swarm"}
    doc = (DEPLOY.parent / "docs" / "migrating.md").read_text()
    assert "`briny-swarm`" in doc and "/opt/briny/bin/briny-swarm" in doc
