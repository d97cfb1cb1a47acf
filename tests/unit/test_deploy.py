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
    for name, defaults, loader in (("master", MASTER_DEFAULTS, load_master_config),
                                   ("minion", MINION_DEFAULTS, load_minion_config)):
        data = _uncommented(DEPLOY / "config" / name)
        assert data, name
        unknown = sorted(set(data) - set(defaults))
        assert unknown == [], f"{name} example documents keys briny does not know: {unknown}"
        (tmp_path / name).write_text(yaml.safe_dump(data))
        opts = loader(tmp_path)
        for key, value in data.items():
            if key not in ("root_dir", "pki_dir", "cachedir", "sock_dir", "log_file", "pidfile"):
                assert opts[key] == value, key
