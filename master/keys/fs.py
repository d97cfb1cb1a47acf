"""The minion keys as files in Salt's four folders under ``pki_dir`` (``key_store: files``, the default).

Runs on the master host, under :class:`briny.master.keys.store.KeyStore`. Layout: ``minions/``
(accepted), ``minions_pre/`` (pending), ``minions_rejected/``, ``minions_denied/``, one PEM
public key file per minion named by its id; folders mode 0700.

Every id is validated with :mod:`briny.common.ids` before it touches the file system (so no id
starts with ``.``: a file in a key folder whose name is not an id is ignored, and a listing logs
it as a warning); key files are written atomically (temporary file + rename); folder listings and
key reads are cached by folder/file stamp, so a listing is one ``stat`` while nothing changed.
Changes take a lock (a thread lock and ``flock`` on ``pki_dir/.keys.lock``) so the daemon and
``briny-key`` do not interleave. The folders are the source of truth: whoever changes them (an
operator moving a file by hand too), the next listing sees it.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from briny.common.atomicfile import TMP_PREFIX, write_atomic
from briny.common.exceptions import SaltInvocationError
from briny.common.ids import check_id, valid_id
from briny.master.keys.table import KEY_DIRS, MAX_PEM_BYTES, KeyTable

log = logging.getLogger(__name__)

# A listing or read of a folder/file changed less than this ago may miss a
# change made within the same file-system timestamp tick: such a "racy"
# listing is scanned again (at most every _RESCAN_NS) until it is old enough.
_RACY_NS = 1_000_000_000
_RESCAN_NS = 20_000_000


@dataclass
class _Listing:
    stamp: tuple[int, int]
    names: frozenset[str]
    racy: bool
    scanned: int  # time.monotonic_ns() of the scan


@dataclass
class _KeyRead:
    stamp: tuple[int, int, int, int]
    text: str
    racy: bool


class FolderTable(KeyTable):
    """The key folders under ``pki_dir``; see the module docstring."""

    def __init__(self, pki_dir: str) -> None:
        self.pki_dir = pki_dir
        self.where = pki_dir
        self._tlock = threading.RLock()
        self._listings: dict[str, _Listing] = {}
        # what each folder held at its last scan, and how many scans found a change (any folder)
        self._seen: dict[str, frozenset[str]] = {}
        self._seen_lock = threading.RLock()
        self.generation = 0
        self._reads: dict[str, _KeyRead] = {}
        self._dirs_ready = False

    # ----- folders, locking ----------------------------------------------------------------
    def ensure_dirs(self) -> None:
        """Create ``pki_dir`` and the four key folders (mode 0700) when missing."""
        if self._dirs_ready:
            return
        os.makedirs(self.pki_dir, mode=0o700, exist_ok=True)
        for folder in KEY_DIRS:
            os.makedirs(os.path.join(self.pki_dir, folder), mode=0o700, exist_ok=True)
        self._dirs_ready = True

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with self._tlock:
            self.ensure_dirs()
            self._listings.clear()
            fd = os.open(os.path.join(self.pki_dir, ".keys.lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # releases the flock
                self._listings.clear()

    def path(self, folder: str, minion_id: str) -> str:
        if folder not in KEY_DIRS:
            raise SaltInvocationError(f"unknown key folder {folder!r}")
        return os.path.join(self.pki_dir, folder, check_id(minion_id))

    # ----- reads ---------------------------------------------------------------------------
    def names(self, folder: str) -> frozenset[str]:
        path = os.path.join(self.pki_dir, folder)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return self._note(folder, frozenset())
        stamp = (st.st_mtime_ns, st.st_ino)
        cached = self._listings.get(folder)
        if (
            cached is not None
            and cached.stamp == stamp
            and (not cached.racy or time.monotonic_ns() - cached.scanned < _RESCAN_NS)
        ):
            return cached.names
        names = set()
        stray: list[str] = []
        with os.scandir(path) as entries:
            for entry in entries:
                if not valid_id(entry.name):
                    if not entry.name.startswith(TMP_PREFIX):
                        stray.append(entry.name)
                    continue
                if entry.is_file():
                    names.add(entry.name)
        if stray:
            # e.g. a hidden key accepted before ids starting with '.' were refused: no minion can
            # authenticate with it now, but the operator should see it and remove it
            log.warning(
                "%s holds %d file(s) whose names are not minion ids, ignored (no minion can "
                "use them; remove them by hand): %s",
                path,
                len(stray),
                ", ".join(repr(n) for n in sorted(stray)[:10]),
            )
        listing = _Listing(stamp, frozenset(names), time.time_ns() - st.st_mtime_ns < _RACY_NS, time.monotonic_ns())
        self._listings[folder] = listing
        return self._note(folder, listing.names)

    def _note(self, folder: str, names: frozenset[str]) -> frozenset[str]:
        """Count a scan that found ``folder`` changed (:attr:`generation`)."""
        with self._seen_lock:
            if self._seen.get(folder) != names:
                self._seen[folder] = names
                self.generation += 1
        return names

    def folders(self) -> tuple[int, dict[str, frozenset[str]]]:
        """One ``stat`` per folder while nothing changed (the listings are cached by folder stamp);
        every scan that finds a folder changed since its last scan adds one to the generation."""
        with self._seen_lock:
            listing = {folder: self.names(folder) for folder in KEY_DIRS}
            return self.generation, listing

    def read(self, path: str) -> str | None:
        """The text of a key file (cached by its stamp), or None."""
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            self._reads.pop(path, None)
            return None
        stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size)
        cached = self._reads.get(path)
        if cached is not None and cached.stamp == stamp and not cached.racy:
            return cached.text
        try:
            with open(path, "rb") as fh:
                text = fh.read(MAX_PEM_BYTES + 1).decode("utf-8", "replace")
        except (FileNotFoundError, IsADirectoryError):
            return None
        read = _KeyRead(stamp, text, time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < _RACY_NS)
        if len(self._reads) > 100_000:
            self._reads.clear()
        self._reads[path] = read
        return text

    def text(self, folder: str, minion_id: str) -> str | None:
        return self.read(self.path(folder, minion_id))

    def states_of(self, minion_id: str) -> frozenset[str]:
        """One ``stat`` per folder, never a folder scan: exact and cheap on every auth."""
        return frozenset(folder for folder in KEY_DIRS if _is_key_file(self.path(folder, minion_id)))

    # ----- changes (within locked()) -------------------------------------------------------
    def write(self, folder: str, minion_id: str, text: str) -> None:
        write_atomic(self.path(folder, minion_id), text.encode("utf-8"), 0o644, fsync=True)

    def move(self, src: str, dst: str, minion_id: str) -> bool:
        try:
            os.replace(self.path(src, minion_id), self.path(dst, minion_id))
        except FileNotFoundError:
            return False  # gone meanwhile
        return True

    def remove(self, folder: str, minion_id: str) -> bool:
        try:
            os.unlink(self.path(folder, minion_id))
        except FileNotFoundError:
            return False
        return True


def _is_key_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
