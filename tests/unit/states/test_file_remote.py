"""file.managed with http:// sources and source_hash files, against a real HTTP server on 127.0.0.1.

The expected results are the ones Salt 3007.17 returned for the same states against the same
kind of server (test=True, a first and a second live run), checked side by side while this was
written: "Failed to cache <url>: Error: HTTP 404: File not found reading <path>", "Unable to
verify upstream hash ...", the source_hash file fetched, a list of sources probed in turn, and on
the second run a file with the right hash left alone without a download.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from briny.common.exceptions import FileServerError
from briny.minion.host.fileops import remote

from .test_file_more import NOTE, _rcc, _states

BODY = b"hello remote\n"
SHA = hashlib.sha256(BODY).hexdigest()


class _Handler(http.server.SimpleHTTPRequestHandler):
    hits: list[str] = []

    def log_message(self, format: str, *args: Any) -> None:
        self.hits.append(f"{self.command} {self.path}")


@contextlib.contextmanager
def _serving(server: socketserver.BaseServer) -> Iterator[int]:
    """``server`` serving in a thread: its port; shut down, closed and joined on exit."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def web(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "web"
    root.mkdir()
    (root / "a.txt").write_bytes(BODY)
    (root / "a.txt.sha256").write_text(f"{SHA}  a.txt\n")
    _Handler.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: _Handler(*a, directory=str(root)))
    with _serving(server) as port:
        yield f"http://127.0.0.1:{port}"


def test_remote_sources_test_mode(tmp_path: Path, web: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    st = _states(tmp_path, test=True)
    ret = st["file.managed"](name=str(out / "ok"), source=f"{web}/a.txt", source_hash=f"sha256={SHA}")
    assert _rcc(ret) == (None, f"The file {out}/ok is set to be changed" + NOTE, {"newfile": f"{out}/ok"})
    ret = st["file.managed"](name=str(out / "nf"), source=f"{web}/missing.txt", source_hash=f"sha256={SHA}")
    assert _rcc(ret) == (
        False,
        f"Failed to cache {web}/missing.txt: Error: HTTP 404: File not found reading /missing.txt",
        {},
    )
    ret = st["file.managed"](name=str(out / "nohash"), source=f"{web}/a.txt")
    assert _rcc(ret) == (
        False,
        f"Unable to verify upstream hash of source file {web}/a.txt, please set source_hash or set skip_verify to True",
        {},
    )
    ret = st["file.managed"](
        name=str(out / "list"), source=[f"{web}/missing.txt", f"{web}/a.txt"], source_hash=f"sha256={SHA}"
    )
    assert ret["result"] is None and ret["changes"] == {"newfile": f"{out}/list"}
    ret = st["file.managed"](name=str(out / "none"), source=[f"{web}/m1", f"{web}/m2"], source_hash=f"sha256={SHA}")
    assert _rcc(ret) == (False, "Unable to manage file: none of the specified sources were found", {})
    assert not list(out.iterdir())  # test mode wrote nothing


def test_remote_sources_live_twice(tmp_path: Path, web: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    cases: dict[str, dict[str, Any]] = {
        "ok": {"source": f"{web}/a.txt", "source_hash": f"sha256={SHA}"},
        "skip": {"source": f"{web}/a.txt", "skip_verify": True},
        "hashurl": {"source": f"{web}/a.txt", "source_hash": f"{web}/a.txt.sha256"},
    }
    for name, kw in cases.items():
        ret = _states(tmp_path)["file.managed"](name=str(out / name), **kw)
        assert _rcc(ret) == (True, f"File {out}/{name} updated", {"diff": "New file", "mode": "0644"}), name
        assert (out / name).read_bytes() == BODY
    cached = Path(remote.cache_path(str(tmp_path / "cache"), "base", f"{web}/a.txt"))
    assert cached.read_bytes() == BODY and not Path(f"{cached}.part").exists()
    _Handler.hits = []
    second = {name: _states(tmp_path)["file.managed"](name=str(out / name), **kw) for name, kw in cases.items()}
    assert _rcc(second["ok"]) == (True, f"File {out}/ok exists with proper permissions. No changes made.", {})
    assert _rcc(second["hashurl"]) == (True, f"File {out}/hashurl exists with proper permissions. No changes made.", {})
    assert _rcc(second["skip"]) == (True, f"File {out}/skip is in the correct state", {})
    assert "GET /a.txt" not in _Handler.hits  # a file with the right hash, or skip_verify: no new download
    bad = _states(tmp_path)["file.managed"](
        name=str(out / "wrong"), source=f"{web}/a.txt", source_hash="sha256=" + "0" * 64
    )
    assert _rcc(bad) == (
        False,
        f"Specified sha256 checksum for {out}/wrong ({'0' * 64}) does not match actual checksum ({SHA})",
        {},
    )
    assert not (out / "wrong").exists()
    ret = _states(tmp_path)["file.managed"](
        name=str(out / "hb"), source=f"{web}/a.txt", source_hash=f"{web}/missing.sha256"
    )
    assert _rcc(ret) == (False, "Unable to manage file: Error: HTTP 404: File not found reading /missing.sha256", {})


def test_unreachable_host_fails_that_state_only(tmp_path: Path) -> None:
    # nothing listens on port 9 of 127.0.0.1: the connection is refused at once
    ret = _states(tmp_path)["file.managed"](
        name=str(tmp_path / "x"), source="http://127.0.0.1:9/k.pgp", source_hash=f"sha256={SHA}"
    )
    assert ret["result"] is False
    assert ret["comment"] == (
        "Unable to manage file: Failed to cache http://127.0.0.1:9/k.pgp: Error: [Errno 111] Connection refused "
        "reading /k.pgp"
    )
    assert not (tmp_path / "x").exists()


def test_fetch_and_cache_path(tmp_path: Path, web: str) -> None:
    dest = remote.cache_path(str(tmp_path), "base", f"{web}/dir/../a.txt?x=1")
    assert dest.startswith(str(tmp_path / "extrn_files" / "base" / web.split("//")[1]))
    assert ".." not in dest.split("extrn_files")[1]
    assert remote.cache_path("/c", "dev", "https://u:p@h.example/k/") == "/c/extrn_files/dev/h.example/k/index.html"
    assert remote.redact("https://u:secret@h/x") == "https://u:XXXXXXXXXX@h/x"
    got = remote.fetch(f"{web}/a.txt", str(tmp_path / "f" / "a"))
    assert Path(got).read_bytes() == BODY
    assert remote.cached(got, SHA) and not remote.cached(got, "0" * 64) and not remote.cached(got, None)
    with pytest.raises(FileServerError, match=r"^Error: HTTP 404: File not found reading /nope$"):
        remote.fetch(f"{web}/nope", str(tmp_path / "f" / "nope"))
    assert not (tmp_path / "f" / "nope").exists() and not (tmp_path / "f" / "nope.part").exists()
    with pytest.raises(FileServerError, match="s3:// sources are not supported"):
        remote.fetch("s3://bucket/key", str(tmp_path / "s3"))
    assert remote.probe(f"{web}/a.txt") and not remote.probe(f"{web}/nope")


class _FtpHandler(socketserver.StreamRequestHandler):
    """Just enough FTP for ftplib's login, SIZE and a passive RETR of files under ``root``;
    every session's commands are recorded (so a test sees the QUIT)."""

    root: Path
    sessions: list[list[str]]

    def reply(self, text: str) -> None:
        self.wfile.write(f"{text}\r\n".encode())

    def handle(self) -> None:
        seen: list[str] = []
        self.sessions.append(seen)
        self.reply("220 ready")
        with contextlib.ExitStack() as sockets:
            self.serve(seen, sockets)

    def serve(self, seen: list[str], sockets: contextlib.ExitStack) -> None:
        data: socket.socket | None = None
        for raw in self.rfile:
            cmd, _, arg = raw.decode().strip().partition(" ")
            seen.append(f"{cmd} {arg}" if cmd in ("USER", "PASS") else cmd)
            path = self.root / arg.lstrip("/")
            if cmd == "USER":
                self.reply(f"331 password for {arg}")
            elif cmd == "PASS":
                self.reply("230 in" if arg != "wrong" else "530 Login incorrect.")
            elif cmd == "TYPE":
                self.reply("200 ok")
            elif cmd == "SIZE":
                self.reply(f"213 {path.stat().st_size}" if path.is_file() else "550 No such file.")
            elif cmd == "PASV":
                data = sockets.enter_context(socket.create_server(("127.0.0.1", 0)))
                port = data.getsockname()[1]
                self.reply(f"227 Entering Passive Mode (127,0,0,1,{port >> 8},{port & 255})")
            elif cmd == "RETR" and data is not None:
                if not path.is_file():
                    self.reply("550 No such file.")
                    continue
                self.reply("150 sending")
                conn, _ = data.accept()
                with conn:
                    conn.sendall(path.read_bytes())
                data = None
                self.reply("226 done")
            elif cmd == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("502 not here")


@pytest.fixture
def ftp(tmp_path: Path) -> Iterator[tuple[str, list[list[str]]]]:
    root = tmp_path / "ftp"
    root.mkdir()
    (root / "a.txt").write_bytes(BODY)
    sessions: list[list[str]] = []
    handler = type("Handler", (_FtpHandler,), {"root": root, "sessions": sessions})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    with _serving(server) as port:
        yield f"127.0.0.1:{port}", sessions


@pytest.mark.filterwarnings("error::ResourceWarning", "error::pytest.PytestUnraisableExceptionWarning")
def test_ftp_fetch_and_probe_log_in_and_say_goodbye(tmp_path: Path, ftp: tuple[str, list[list[str]]]) -> None:
    """ftp:// sources: anonymous unless the URL names a user, the file downloaded whole, a missing
    one refused with the URL (password redacted), each session ended with QUIT; a refused login
    is a clear error and a failed probe; no connection is left open (a ResourceWarning fails)."""
    host, sessions = ftp
    got = remote.fetch(f"ftp://{host}/a.txt", str(tmp_path / "f" / "a"))
    assert Path(got).read_bytes() == BODY
    assert sessions[-1][:2] == ["USER anonymous", "PASS anonymous@"] and sessions[-1][-2:] == ["RETR", "QUIT"]
    assert remote.probe(f"ftp://me:pw@{host}/a.txt")
    assert sessions[-1] == ["USER me", "PASS pw", "SIZE", "QUIT"]
    assert not remote.probe(f"ftp://{host}/nope")
    with pytest.raises(FileServerError, match=rf"Could not retrieve ftp://me:XXXXXXXXXX@{host}/nope from FTP server"):
        remote.fetch(f"ftp://me:pw@{host}/nope", str(tmp_path / "f" / "nope"))
    assert not (tmp_path / "f" / "nope").exists() and not (tmp_path / "f" / "nope.part").exists()
    with pytest.raises(FileServerError, match="Login incorrect"):
        remote.fetch(f"ftp://me:wrong@{host}/a.txt", str(tmp_path / "f" / "b"))
    assert not remote.probe(f"ftp://me:wrong@{host}/a.txt")
    assert len(sessions) == 6
