"""A throwaway MariaDB server for tests: a data directory in a temporary folder.

Used by the ``mysql_*`` state tests and the golden recorder
(``dev/record_db_golden.py mysql``). It never touches a system instance,
the default port or the default socket:

- ``mariadb-install-db`` and ``mariadbd`` run with ``--no-defaults`` (no
  ``/etc/mysql`` option file is read) as an unprivileged user: ``mysql``
  (Debian's ``mariadb-server`` package creates it) when the suite runs as
  root, else the current user; ``mariadbd`` is started as that user (not
  ``--user``, which would switch after the start and lose the parent-death
  signal, tests/serverproc.py);
- the server listens on 127.0.0.1 on a free port with its socket in the
  temporary folder; it is stopped by pid (SIGTERM, SIGKILL after a deadline)
  and the folder removed, and gets SIGTERM when the process that started it dies.

``root@localhost`` has the random password :attr:`MariaDBServer.password`.

    with MariaDBServer.start() as my:
        my.query("SELECT 1")             # rows as lists of strings (None for NULL)

Standard library only.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from tests.serverproc import ServerUnavailable, as_user, free_port, launch, log_tail, stop_process
from tests.serverproc import owner as owner_of

_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"


def _binary(*names: str) -> str:
    for name in names:
        for d in ("/usr/sbin", "/usr/bin"):
            if os.access(f"{d}/{name}", os.X_OK):
                return f"{d}/{name}"
        found = shutil.which(name)
        if found:
            return found
    raise ServerUnavailable(f"MariaDB is not installed (no {names[0]}): install Debian's mariadb-server package")


@dataclass
class MariaDBServer:
    """A running throwaway server; :meth:`stop` (or leaving the ``with`` block) ends it."""

    root: Path
    port: int
    password: str
    owner: str
    proc: subprocess.Popen | None = None
    _uid: int = field(default=-1, repr=False)
    _gid: int = field(default=-1, repr=False)
    host: str = "127.0.0.1"
    client: str = field(default_factory=lambda: _binary("mariadb", "mysql"))

    @property
    def socket(self) -> str:
        return str(self.root / "mysqld.sock")

    @property
    def datadir(self) -> str:
        return str(self.root / "data")

    @classmethod
    def start(cls, timeout: float = 60.0) -> MariaDBServer:
        server_bin = _binary("mariadbd", "mysqld")
        install = _binary("mariadb-install-db", "mysql_install_db")
        owner = owner_of("mysql")
        root = Path(tempfile.mkdtemp(prefix="briny-my-"))
        os.chown(root, owner.pw_uid, owner.pw_gid)
        server = cls(root, 0, secrets.token_hex(12), owner.pw_name, _uid=owner.pw_uid, _gid=owner.pw_gid)
        try:
            user = [f"--user={owner.pw_name}"] if os.geteuid() == 0 else []
            p = subprocess.run(
                [
                    install,
                    "--no-defaults",
                    f"--datadir={server.datadir}",
                    *user,
                    "--auth-root-authentication-method=normal",
                    "--skip-test-db",
                ],
                capture_output=True,
                text=True,
                timeout=180,
                cwd=root,
            )
            if p.returncode != 0:
                raise ServerUnavailable(f"mariadb-install-db failed: {(p.stdout + p.stderr)[-1500:]}")
            for _attempt in range(3):
                server.port = free_port()
                if server._launch(server_bin, timeout):
                    break
            else:
                raise ServerUnavailable(f"MariaDB did not start: {server.log_tail()}")
            # one root, with a password: the installer also adds password-less root@127.0.0.1, ::1, <hostname>
            server.sql(
                f"ALTER USER 'root'@'localhost' IDENTIFIED BY '{server.password}';\n"
                "DELETE FROM mysql.global_priv WHERE User = 'root' AND Host <> 'localhost';\nFLUSH PRIVILEGES;",
                password="",
            )
            return server
        except BaseException:
            server.stop()
            raise

    def _launch(self, server_bin: str, timeout: float) -> bool:
        def answers() -> bool:
            if not os.path.exists(self.socket):
                return False
            try:
                self.sql("SELECT 1", password="")
            except RuntimeError:
                return False
            return True

        self.proc = launch(
            [
                server_bin,
                "--no-defaults",
                f"--datadir={self.datadir}",
                f"--socket={self.socket}",
                f"--port={self.port}",
                f"--bind-address={self.host}",
                f"--pid-file={self.root / 'mysqld.pid'}",
                "--skip-log-bin",
                "--innodb-buffer-pool-size=16M",
                "--innodb-log-file-size=8M",
                "--innodb-flush-log-at-trx-commit=0",
                "--max-connections=40",
            ],
            self.root,
            answers,
            timeout,
            **as_user(self._uid, self._gid),
        )
        return self.proc is not None

    def log_tail(self) -> str:
        return log_tail(self.root)

    def placeholders(self) -> list[tuple[str, str]]:
        """(marker, value) pairs for the golden cases (tests/dbgolden.py), masked back in the results."""
        return [
            ("@MYPORT@", str(self.port)),
            ("@MYPASS@", self.password),
            ("@MYSOCK@", self.socket),
            ("@MYROOT@", str(self.root)),
            ("@MYDEADPORT@", str(free_port())),
        ]

    def substitutions(self) -> list[tuple[str, str]]:
        """:meth:`placeholders` and ``@MYUSER@`` (the server's system user: put in place, never masked back)."""
        return [*self.placeholders(), ("@MYUSER@", self.owner)]

    def sql(self, sql: str, db: str = "", password: str | None = None, xml: bool = False) -> str:
        """Run SQL as root over the socket; raises RuntimeError on failure. Returns the output."""
        pw = self.password if password is None else password
        opts = self.root / f"client-{secrets.token_hex(4)}.cnf"
        opts.write_text(f"[client]\nuser=root\npassword={pw}\nsocket={self.socket}\n")
        os.chmod(opts, 0o600)
        try:
            p = subprocess.run(
                [self.client, f"--defaults-file={opts}", "--batch", *(["--xml"] if xml else []), *([db] if db else [])],
                input=sql,
                capture_output=True,
                text=True,
                timeout=60,
            )
        finally:
            opts.unlink()
        if p.returncode != 0:
            raise RuntimeError(f"mariadb failed ({p.returncode}): {p.stderr.strip()}")
        return p.stdout

    def login_works(self, user: str, password: str) -> bool:
        """Whether ``user`` logs in over TCP with ``password``."""
        opts = self.root / f"client-{secrets.token_hex(4)}.cnf"
        opts.write_text(f'[client]\nuser={user}\npassword="{password}"\nhost={self.host}\nport={self.port}\n')
        os.chmod(opts, 0o600)
        try:
            p = subprocess.run(
                [self.client, f"--defaults-file={opts}", "--batch", "-e", "SELECT 1"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        finally:
            opts.unlink()
        return p.returncode == 0

    def query(self, sql: str, db: str = "") -> list[list[str | None]]:
        """The rows of one SELECT; NULL comes back as None."""
        out = self.sql(sql, db, xml=True)
        if not out.strip():
            return []
        rows = []
        for row in ET.fromstring(out).iter("row"):
            rows.append([None if f.get(_NIL) == "true" else (f.text or "") for f in row.iter("field")])
        return rows

    def value(self, sql: str, db: str = "") -> str | None:
        rows = self.query(sql, db)
        return rows[0][0] if rows else None

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the server by pid (SIGTERM, SIGKILL after ``timeout``) and remove its folder."""
        proc, self.proc = self.proc, None
        stop_process(proc, signal.SIGTERM, timeout)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> MariaDBServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
