"""The saved schedule: ``<config dir>/minion.d/_schedule.conf``, read and written.

``schedule.save`` writes the entries not from pillar there (as Salt does; the minion reads it at
start with the rest of ``minion.d``) and ``schedule.reload`` reads it back: the daemon
(:mod:`briny.minion.schedulectl`) and the execution module (``offline=True``, which works without
a daemon) share this file's format, so it lives here, beneath both.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from briny.common.exceptions import ConfigError

SAVE_NAME = "_schedule.conf"


def save_path(opts: dict[str, Any]) -> Path:
    """``<config dir>/minion.d/_schedule.conf`` (the config dir: ``conf_dir``, else the config file's)."""
    conf_dir = opts.get("conf_dir") or (os.path.dirname(str(opts["conf_file"])) if opts.get("conf_file") else "")
    return Path(str(conf_dir or "/etc/briny")) / "minion.d" / SAVE_NAME


def read_saved(path: Path) -> Any:
    """The ``schedule`` mapping saved in ``path`` ({} when there is none); ConfigError when unreadable."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read the saved schedule {path}: {exc}") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"the saved schedule {path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the saved schedule {path} is not a mapping")
    return data.get("schedule") or {}


def write_saved(path: Path, schedule: dict[str, Any]) -> None:
    """Write ``{"schedule": schedule}`` to ``path`` (atomically); OSError when it cannot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump({"schedule": schedule}, default_flow_style=False))
    os.replace(tmp, path)
