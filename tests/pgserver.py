"""A throwaway PostgreSQL server for tests: a cluster in a temporary directory.

Used by the ``postgres_*`` state tests, the golden recorder
(``dev/record_db_golden.py``) and the PostgreSQL job cache tests (which also
:meth:`PgServer.pause` and :meth:`PgServer.resume` it: the database going away). It
never touches a system instance, the default port or the default socket
directory:

- ``initdb`` runs as an unprivileged user: the ``postgres`` system user when
  the suite runs as root (Debian's ``postgresql`` package creates it), else
  the current user;
- the server listens on 127.0.0.1 on a free port, with its socket in the
  temporary directory, ``fsync`` off; it is stopped by pid (fast shutdown,
  then SIGKILL after a deadline) and the directory removed; it gets the fast
  shutdown too when the process that started it dies (tests/serverproc.py).

Authentication: ``trust`` on the socket, ``scram-sha-256`` over TCP; the
superuser ``postgres`` has the random password :attr:`PgServer.password`.

    with PgServer.start() as pg:
        pg.query("SELECT 1")            # rows as lists of strings (None for NULL)
        pg.dsn                           # for a driver: host=127.0.0.1 port=... user=... password=...

Standard library only.
"""

from __future__ import annotations

import csv
import glob
import io
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.serverproc import ServerUnavailable, as_user, free_port, launch, log_tail, stop_process
from tests.serverproc import owner as owner_of

__all__ = ["PgServer", "ServerUnavailable", "bin_dir", "free_port", "stop_process"]

SUPERUSER = "postgres"


def bin_dir() -> Path:
    """The folder holding ``initdb``, ``postgres`` and ``psql`` (Debian keeps them per version)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(os.path.realpath(initdb)).parent
    raise ServerUnavailable("PostgreSQL is not installed (no initdb): install Debian's postgresql package")


@dataclass
class PgServer:
    """A running throwaway cluster; :meth:`stop` (or leaving the ``with`` block) ends it."""

    root: Path
    port: int
    password: str
    owner: str
    bindir: Path
    proc: subprocess.Popen | None = None
    host: str = "127.0.0.1"
    superuser: str = SUPERUSER
    _uid: int = field(default=-1, repr=False)
    _gid: int = field(default=-1, repr=False)

    @property
    def socket_dir(self) -> str:
        return str(self.root / "sock")

    @property
    def datadir(self) -> str:
        return str(self.root / "data")

    @property
    def dsn(self) -> str:
        return f"host={self.host} port={self.port} user={self.superuser} password={self.password} dbname=postgres"

    @property
    def psql_bin(self) -> str:
        return str(self.bindir / "psql")

    @classmethod
    def start(cls, timeout: float = 60.0) -> PgServer:
        bindir = bin_dir()
        owner = owner_of("postgres")
        root = Path(tempfile.mkdtemp(prefix="briny-pg-"))
        os.chown(root, owner.pw_uid, owner.pw_gid)
        server = cls(root, 0, secrets.token_hex(12), owner.pw_name, bindir, _uid=owner.pw_uid, _gid=owner.pw_gid)
        try:
            server._initdb()
            for _attempt in range(3):
                server.port = free_port()
                if server._launch(timeout):
                    return server
            raise ServerUnavailable(f"PostgreSQL did not start: {server.log_tail()}")
        except BaseException:
            server.stop()
            raise

    def _initdb(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        os.chown(pwfile, self._uid, self._gid)
        os.chmod(pwfile, 0o600)
        (self.root / "sock").mkdir(mode=0o700)
        os.chown(self.root / "sock", self._uid, self._gid)
        cmd = [
            str(self.bindir / "initdb"),
            "-D",
            self.datadir,
            "-U",
            self.superuser,
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ]
        p = subprocess.run(
            cmd, capture_output=True, text=True, timeout=120, cwd=self.root, **as_user(self._uid, self._gid)
        )
        pwfile.unlink()
        if p.returncode != 0:
            raise ServerUnavailable(f"initdb failed: {(p.stdout + p.stderr)[-1500:]}")

    def _launch(self, timeout: float) -> bool:
        def answers() -> bool:
            if not os.path.exists(f"{self.socket_dir}/.s.PGSQL.{self.port}"):
                return False
            try:
                self.query("SELECT 1")
            except RuntimeError:
                return False
            return True

        self.proc = launch(
            [
                str(self.bindir / "postgres"),
                "-D",
                self.datadir,
                "-p",
                str(self.port),
                "-c",
                f"listen_addresses={self.host}",
                "-c",
                f"unix_socket_directories={self.socket_dir}",
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "max_connections=40",
                "-c",
                "shared_buffers=16MB",
            ],
            self.root,
            answers,
            timeout,
            # fast shutdown: SIGTERM's smart one would wait for the clients a killed run left behind
            death_signal=signal.SIGINT,
            **as_user(self._uid, self._gid),
        )
        return self.proc is not None

    def placeholders(self) -> list[tuple[str, str]]:
        """(marker, value) pairs for the golden cases (tests/dbgolden.py), masked back in the results."""
        return [
            ("@PGPORT@", str(self.port)),
            ("@PGPASS@", self.password),
            ("@PGROOT@", str(self.root)),
            ("@PGDEADPORT@", str(free_port())),
        ]

    def substitutions(self) -> list[tuple[str, str]]:
        """:meth:`placeholders` and ``@PGUSER@`` (the server's system user: put in place, never masked back)."""
        return [*self.placeholders(), ("@PGUSER@", self.owner)]

    def log_tail(self) -> str:
        return log_tail(self.root)

    def psql(self, sql: str, db: str = "postgres", check: bool = True) -> subprocess.CompletedProcess:
        """Run SQL as the superuser over the socket (trust); raises RuntimeError on failure when ``check``."""
        p = subprocess.run(
            [
                self.psql_bin,
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "--csv",
                "-h",
                self.socket_dir,
                "-p",
                str(self.port),
                "-U",
                self.superuser,
                "-d",
                db,
                "-f",
                "-",
            ],
            input=sql,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PGPASSWORD": self.password, "PGCONNECT_TIMEOUT": "10"},
        )
        if check and p.returncode != 0:
            raise RuntimeError(f"psql failed ({p.returncode}): {p.stderr.strip()}")
        return p

    def psql_as(self, user: str, password: str, sql: str, db: str = "postgres") -> subprocess.CompletedProcess:
        """Run SQL as ``user`` logging in with ``password`` over TCP (scram): whether that login works."""
        return subprocess.run(
            [self.psql_bin, "-X", "-w", "-h", self.host, "-p", str(self.port), "-U", user, "-d", db, "-c", sql],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PGPASSWORD": password, "PGCONNECT_TIMEOUT": "10"},
        )

    def query(self, sql: str, db: str = "postgres") -> list[list[str | None]]:
        """The rows of one SELECT (header dropped); NULL comes back as None."""
        out = self.psql(f"\\pset null '<NULL>'\n{sql}", db).stdout
        rows = list(csv.reader(io.StringIO(out)))[1:]
        return [[None if v == "<NULL>" else v for v in row] for row in rows]

    def value(self, sql: str, db: str = "postgres") -> str | None:
        """The single value of a one-row, one-column SELECT (None when no row)."""
        rows = self.query(sql, db)
        return rows[0][0] if rows else None

    def pause(self, timeout: float = 30.0) -> None:
        """Stop the server by pid (fast shutdown) but keep its data: :meth:`resume` starts it again."""
        proc, self.proc = self.proc, None
        stop_process(proc, signal.SIGINT, timeout)

    def resume(self, timeout: float = 60.0) -> None:
        """Start a paused server again, on the same port."""
        if not self._launch(timeout):
            raise ServerUnavailable(f"PostgreSQL did not start again on port {self.port}: {self.log_tail()}")

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the server by pid (fast shutdown, SIGKILL after ``timeout``) and remove its directory."""
        proc, self.proc = self.proc, None
        stop_process(proc, signal.SIGINT, timeout)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
