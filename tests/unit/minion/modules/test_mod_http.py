"""``http.query``: what it refuses (Salt's answers for the requests: tests/golden/functions)."""

from __future__ import annotations

import socket

import pytest

from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods


@pytest.fixture
def salt():
    return minion_mods({"id": "m1", "http_request_timeout": 5}, {}, {})


@pytest.mark.parametrize("url", ["notaurl", "file:///etc/hostname", "ftp://127.0.0.1:1/x"])
def test_only_http_urls(salt, url):
    with pytest.raises(CommandExecutionError, match=f"^Unsupported url scheme: {url}$"):
        salt["http.query"](url)


def test_options_briny_does_not_take_are_named(salt):
    got = salt["http.query"]("http://127.0.0.1:1/x", cookies=True, stream=True, backend="requests")
    assert got == {"error": "http.query options briny does not support: cookies, stream"}


def test_test_mode_makes_no_request(salt):
    with socket.socket() as listener:  # a server that would see a request: none comes
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.2)
        port = listener.getsockname()[1]
        assert salt["http.query"](f"http://127.0.0.1:{port}/x", test=True) == {}
        with pytest.raises(TimeoutError):
            listener.accept()
