"""Bare git repositories for gitfs tests, made with the ``git`` command, and a ``git daemon``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.serverproc import free_port
from tests.waiting import wait_until

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@x",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@x",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def git(*args: str, cwd: Path | str | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True, timeout=30
    ).stdout


def make_repo(tmp: Path, name: str, files: dict[str, str], branch: str = "master") -> tuple[Path, Path]:
    """(bare repository, its working clone) with ``files`` committed on ``branch``."""
    bare = tmp / f"{name}.git"
    work = tmp / f"{name}-work"
    git("init", "-q", "--bare", "-b", branch, str(bare))
    git("init", "-q", "-b", branch, str(work))
    git("remote", "add", "origin", str(bare), cwd=work)
    commit(work, files, branch=branch)
    return bare, work


def commit(work: Path, files: dict[str, str], branch: str = "master", symlinks: dict[str, str] | None = None) -> str:
    """Write ``files`` (and ``symlinks``) on ``branch`` of ``work``, commit and push."""
    if git("branch", "--show-current", cwd=work).strip() != branch:
        try:
            git("checkout", "-q", branch, cwd=work)
        except subprocess.CalledProcessError:
            git("checkout", "-q", "-b", branch, cwd=work)
    for rel, text in files.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for rel, target in (symlinks or {}).items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, work / rel)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "c", "--allow-empty", cwd=work)
    git("push", "-q", "-f", "origin", branch, cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


@contextmanager
def git_daemon(base: Path) -> Iterator[int]:
    """``git daemon`` serving every repository under ``base`` on 127.0.0.1 (its port), stopped by pid."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            f"--base-path={base}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(base),
        ],
        env=GIT_ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(lambda: _listening(port), timeout=10, what="git daemon listening")
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


@contextmanager
def silent_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts and never answers (a hanging git server)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        sock.close()


@contextmanager
def git_http(base: Path, user: str, password: str, tls: Path | None = None) -> Iterator[int]:
    """``git http-backend`` behind a tiny HTTP server on 127.0.0.1 that asks for Basic credentials;
    with ``tls`` (a folder), HTTPS with a self-signed certificate made there."""
    import base64
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    wanted = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _serve(self) -> None:
            if self.headers.get("Authorization") != wanted:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            env = {
                **GIT_ENV,
                "GIT_PROJECT_ROOT": str(base),
                "GIT_HTTP_EXPORT_ALL": "1",
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "REQUEST_METHOD": self.command,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                "REMOTE_USER": user,
                "REMOTE_ADDR": "127.0.0.1",
            }
            out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=30).stdout
            head, _, payload = out.partition(b"\r\n\r\n")
            status = 200
            headers = []
            for line in head.decode().split("\r\n"):
                key, _, value = line.partition(":")
                if key.lower() == "status":
                    status = int(value.strip().split()[0])
                elif key:
                    headers.append((key, value.strip()))
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = _serve
        do_POST = _serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        import ssl

        key, cert = tls / "key.pem", tls / "cert.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert)]
            + ["-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


SSHD = "/usr/sbin/sshd"


def keypair(folder: Path, name: str, passphrase: str = "") -> Path:
    """An ed25519 key (its private file; ``.pub`` beside it)."""
    key = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f", str(key)], check=True, timeout=30
    )
    return key


@contextmanager
def sshd(folder: Path, authorized: list[Path]) -> Iterator[int]:
    """A throwaway ``sshd`` on 127.0.0.1 (its port) with its own host key, letting the current user in
    with the ``authorized`` keys only; stopped by pid."""
    folder.mkdir(parents=True, exist_ok=True)
    host = keypair(folder, "host_key")
    (folder / "authorized_keys").write_text("".join(Path(f"{k}.pub").read_text() for k in authorized))
    port = free_port()
    conf = folder / "sshd_config"
    conf.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {folder / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\nStrictModes no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\nUsePAM no\n"
    )
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation folder
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(conf)], stdout=subprocess.DEVNULL, stderr=(folder / "log").open("wb")
    )
    try:
        wait_until(lambda: _listening(port) or proc.poll() is not None, timeout=10, what="sshd listening")
        assert proc.poll() is None, (folder / "log").read_text()
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
