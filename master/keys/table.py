"""Where the minions' public keys and their states live: the interface of a key table, and its names.

Runs on the master host, under :class:`briny.master.keys.store.KeyStore` (the daemon, ``briny-key``,
the wheel and runners). A key table holds, for each minion id, at most one public key (PEM text)
in each of four states, Salt's folders: ``minions`` (accepted), ``minions_pre`` (pending),
``minions_rejected``, ``minions_denied``. Two tables:

- :class:`briny.master.keys.fs.FolderTable` (``key_store: files``, the default): one file per key
  in the four folders under ``pki_dir``, as Salt keeps them;
- :class:`briny.master.keys.pg.PgKeyTable` (``key_store: postgres``): one row per key in a
  PostgreSQL table, so several masters share acceptance without a shared file system.

Only minion public keys and their states are in a table; the master's own key pair stays in its
``pki_dir`` (:mod:`briny.master.keys.store`). The auth decision and the operator operations are the key
store's, written once over these primitives: a table only stores, moves and lists.

Every table has a :attr:`KeyTable.generation`, a number that grows whenever a listing finds the
table changed (whoever changed it: this process, ``briny-key``, another master), so a running
master learns of changes by comparing it (:mod:`briny.master.keys.watch`).
"""

from __future__ import annotations

import abc
import contextlib
from typing import Any

ACC = "minions"
PEND = "minions_pre"
REJ = "minions_rejected"
DEN = "minions_denied"
KEY_DIRS: tuple[str, ...] = (ACC, PEND, REJ, DEN)
STATUS_OF = {ACC: "accepted", PEND: "pending", REJ: "rejected", DEN: "denied"}
FOLDER_OF = {v: k for k, v in STATUS_OF.items()}
MAX_PEM_BYTES = 16384


class KeyTable(abc.ABC):
    """Minion public keys by state; see the module docstring. Safe from any thread."""

    #: where the keys are, for messages (a folder, or a database without its password)
    where: str = ""

    @abc.abstractmethod
    def locked(self) -> contextlib.AbstractContextManager[Any]:
        """Where a change runs: exclusive against every other change, in this process and in
        any other sharing the table (``briny-key``, another master), and all or nothing."""

    @abc.abstractmethod
    def states_of(self, minion_id: str) -> frozenset[str]:
        """The folders holding a key of ``minion_id``: exact (read now, never from a listing)."""

    @abc.abstractmethod
    def text(self, folder: str, minion_id: str) -> str | None:
        """The PEM text of ``minion_id``'s key in ``folder``, or None."""

    @abc.abstractmethod
    def names(self, folder: str) -> frozenset[str]:
        """The ids with a key in ``folder`` (may be served from a listing a moment old)."""

    @abc.abstractmethod
    def folders(self) -> tuple[int, dict[str, frozenset[str]]]:
        """(the generation, the ids in each folder), consistent with each other."""

    @abc.abstractmethod
    def write(self, folder: str, minion_id: str, text: str) -> None:
        """Store a key (within :meth:`locked`)."""

    @abc.abstractmethod
    def move(self, src: str, dst: str, minion_id: str) -> bool:
        """Move a key between folders (within :meth:`locked`); False when it was not in ``src``."""

    @abc.abstractmethod
    def remove(self, folder: str, minion_id: str) -> bool:
        """Remove a key (within :meth:`locked`); False when there was none."""

    def close(self) -> None:
        """Release what the table holds (connections)."""
        return None
