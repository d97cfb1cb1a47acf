"""One msgpack file per minion in a folder of the master's cache: the one store of the grains
cache (``cachedir/grains``), the mine (``cachedir/mine``) and the cached pillars
(``cachedir/pillar``).

``<folder>/<id>.msgpack``: ids are checked before they become file names (a bad one is a
:class:`~briny.common.exceptions.SaltInvocationError`), the folder is made 0700, each file is
replaced atomically (0600, :func:`briny.common.atomicfile.write_atomic`), and a file that does not
parse is skipped with a log line naming it. No lock and no thread of its own: its users say who
writes when (their docstrings).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from typing import Any

import msgpack

from briny.common.atomicfile import TMP_PREFIX, write_atomic
from briny.common.exceptions import SaltInvocationError
from briny.common.ids import check_id, valid_id

log = logging.getLogger(__name__)

SUFFIX = ".msgpack"
# what a file that is not msgpack raises when read
_BAD = (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError)


class MinionFiles:
    """``folder``: one msgpack mapping per minion id; ``what`` names the data in log lines;
    ``fsync``: flush each write to the disk before it replaces the old file."""

    def __init__(self, folder: str, what: str, *, fsync: bool = False) -> None:
        self.folder = folder
        self.what = what
        self.fsync = fsync

    def path(self, minion_id: str) -> str:
        """The file of ``minion_id`` (SaltInvocationError when the id cannot be a file name)."""
        return os.path.join(self.folder, check_id(minion_id) + SUFFIX)

    def write(self, minion_id: str, data: Mapping[str, Any]) -> None:
        """Replace the file of ``minion_id`` with ``data``; OSError or SaltInvocationError when it cannot."""
        path = self.path(minion_id)
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        write_atomic(path, msgpack.packb(dict(data), use_bin_type=True, default=str), fsync=self.fsync)

    def remove(self, minion_id: str) -> None:
        """Remove the file of ``minion_id``, if there is one."""
        with contextlib.suppress(OSError, SaltInvocationError):
            os.unlink(self.path(minion_id))

    def read(self, minion_id: str) -> dict[str, Any] | None:
        """The mapping kept for ``minion_id``, or None (no file, or one that does not read: logged)."""
        try:
            data = self._read(self.path(minion_id))
        except FileNotFoundError:
            return None
        except (OSError, SaltInvocationError, *_BAD) as exc:
            log.warning("ignoring the %s of %s: %s", self.what, minion_id, exc)
            return None
        return data if isinstance(data, dict) else None

    def ids(self) -> list[str]:
        """The minions that have a file (sorted)."""
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        found = (n[: -len(SUFFIX)] for n in names if n.endswith(SUFFIX) and not n.startswith(TMP_PREFIX))
        return sorted(i for i in found if valid_id(i))

    def read_all(self) -> dict[str, dict[str, Any]]:
        """Every minion's mapping, by id (files that do not read are skipped with a log line)."""
        found: dict[str, dict[str, Any]] = {}
        for minion_id in self.ids():
            try:
                data = self._read(self.path(minion_id))
            except FileNotFoundError:
                continue  # removed meanwhile
            except (OSError, *_BAD) as exc:
                log.warning("ignoring the %s file %s%s: %s", self.what, minion_id, SUFFIX, exc)
                continue
            if isinstance(data, dict):
                found[minion_id] = data
        return found

    @staticmethod
    def _read(path: str) -> Any:
        with open(path, "rb") as fh:
            return msgpack.unpackb(fh.read(), raw=False, strict_map_key=False)
