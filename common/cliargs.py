"""The option every briny command shares: ``-c/--config-dir``, and what a given folder means.

Runs in the commands (``briny-master``, ``briny-minion``, ``briny``,
``briny-key``, ``briny-run``, ``briny-call``) while they parse their command
line; the logging options they share are :func:`briny.common.logsetup.add_arguments`.
The default folder is ``/etc/briny``, or ``$BRINY_CONFIG_DIR``.
"""

from __future__ import annotations

import argparse
import os

from .exceptions import ConfigError

DEFAULT_CONFIG_DIR = "/etc/briny"


def add_config_dir(parser: argparse.ArgumentParser, config_file: str) -> None:
    """``-c/--config-dir DIR``: the folder holding the ``config_file`` ("master", "minion")."""
    parser.add_argument(
        "-c",
        "--config-dir",
        default=os.environ.get("BRINY_CONFIG_DIR", DEFAULT_CONFIG_DIR),
        help=f"folder holding the '{config_file}' config file (default %(default)s)",
    )


def config_dir(path: str, required: bool = False) -> str | None:
    """``path`` when it is a folder; None for the default folder when it is missing and not
    ``required`` (the built-in defaults apply); ConfigError for any other missing folder."""
    if os.path.isdir(path):
        return path
    if required or path != DEFAULT_CONFIG_DIR:
        raise ConfigError(f"config directory {path} does not exist (use -c DIR)")
    return None
