"""Where a local IPC socket may live: the one check on its path.

Runs wherever a daemon binds, or a process connects to, a ZeroMQ ``ipc://``
socket under ``sock_dir``: the event buses (:mod:`briny.common.event`) and the
daemons' local APIs (:mod:`briny.common.localipc`). A Unix socket's path is at
most 107 bytes on Linux; a longer one (a deep ``sock_dir``) is a config
error, said as such instead of ZeroMQ's "Invalid argument". Kept apart from
both users so a process that only fires events does not import asyncio.
"""

from __future__ import annotations

from .exceptions import ConfigError

IPC_PATH_MAX = 107  # sun_path is 108 bytes on Linux, with the NUL


def ipc_path(path: str) -> str:
    """``path`` when an IPC socket can live there; ConfigError when it is longer than a socket
    path may be (a long ``sock_dir``)."""
    if len(path.encode()) > IPC_PATH_MAX:
        raise ConfigError(
            f"the path {path} is too long for an IPC socket "
            f"({len(path.encode())} > {IPC_PATH_MAX} bytes); set a shorter sock_dir"
        )
    return path
