"""common/sdnotify.py: one datagram per notification to NOTIFY_SOCKET, taken out of the environment;
nothing without it, and a socket that is gone is logged, never raised."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest

from briny.common import sdnotify


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdnotify, "_taken", False)
    monkeypatch.setattr(sdnotify, "_address", None)


def test_without_notify_socket_nothing_is_sent(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sdnotify.ready("serving") is False
    assert sdnotify.stopping() is False


def test_ready_and_stopping_reach_the_socket_and_leave_the_environment(monkeypatch):
    with tempfile.TemporaryDirectory(prefix="sdn", dir="/tmp") as tmp:
        path = Path(tmp) / "notify"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.bind(str(path))
            sock.settimeout(5)
            monkeypatch.setenv("NOTIFY_SOCKET", str(path))
            assert sdnotify.ready("serving on 127.0.0.1") is True
            assert sock.recv(4096).decode().splitlines() == ["READY=1", "STATUS=serving on 127.0.0.1"]
            assert "NOTIFY_SOCKET" not in os.environ  # children started from now on never see it
            assert sdnotify.stopping() is True
            assert sock.recv(4096).decode().splitlines() == ["STOPPING=1", "STATUS=shutting down"]


def test_a_socket_that_is_gone_is_logged_not_raised(monkeypatch, caplog):
    monkeypatch.setenv("NOTIFY_SOCKET", "/nonexistent/briny-notify")
    assert sdnotify.ready("serving") is False
    assert "could not notify systemd (/nonexistent/briny-notify)" in caplog.text


def test_a_relative_notify_socket_is_refused_with_a_warning(monkeypatch, caplog):
    monkeypatch.setenv("NOTIFY_SOCKET", "relative/notify")
    assert sdnotify.ready("serving") is False
    assert "neither a path nor an abstract socket" in caplog.text
