"""The ``rest_cherrypy`` (or ``rest_tornado``) section of the master config, read once.

Runs in ``briny-api`` at start. Salt's names and defaults: ``host`` (0.0.0.0), ``port``
(required), ``ssl_crt`` / ``ssl_key`` or ``disable_ssl``, ``debug``, ``expire_responses``
(True), ``max_request_body_size`` (1048576), ``thread_pool`` (100), ``webhook_url`` (/hook),
``webhook_disable_auth`` (False), ``app`` / ``static`` / ``static_path`` (/static), and the
master's ``netapi_enable_clients`` ([]: Salt 3006+ refuses every client not listed) and
``token_expire`` (43200). Keys of the section briny does not act on are named in one warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from briny.common.exceptions import ConfigError

log = logging.getLogger(__name__)

KNOWN = {
    "host", "port", "ssl_crt", "ssl_key", "disable_ssl", "debug", "expire_responses",
    "max_request_body_size", "thread_pool", "webhook_url", "webhook_disable_auth",
    "app", "app_path", "static", "static_path", "log_access_file", "log_error_file",
    "socket_queue_size", "collect_stats", "root_prefix", "stats_disable_auth", "num_processes",
}  # fmt: skip
IGNORED = {"log_access_file", "log_error_file", "socket_queue_size", "collect_stats", "root_prefix", "num_processes"}
CLIENTS = ("local", "local_async", "runner", "runner_async", "wheel")


@dataclass
class ApiSettings:
    host: str = "0.0.0.0"  # noqa: S104 - Salt's default; tests and the docs set 127.0.0.1
    port: int = 8000
    ssl_crt: str | None = None
    ssl_key: str | None = None
    disable_ssl: bool = False
    debug: bool = False
    expire_responses: bool = True
    max_request_body_size: int = 1048576
    thread_pool: int = 100
    webhook_url: str = "/hook"
    webhook_disable_auth: bool = False
    stats_disable_auth: bool = False
    app: str | None = None
    app_path: str = "/app"
    static: str | None = None
    static_path: str = "/static"
    enabled_clients: list[str] = field(default_factory=list)
    token_expire: float = 43200.0
    section: str = "rest_cherrypy"


def _bool(section: dict[str, Any], key: str, default: bool) -> bool:
    value = section.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"'{key}' of the API config must be true or false, not {value!r}")
    return value


def _int(section: dict[str, Any], key: str, default: int) -> int:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"'{key}' of the API config must be a whole number, not {value!r}")
    return value


def _path(section: dict[str, Any], key: str, default: str) -> str:
    value = str(section.get(key) or default)
    return value if value.startswith("/") else "/" + value


def load(opts: dict[str, Any]) -> ApiSettings:
    """The API settings of the master ``opts``; ConfigError for a missing or bad value."""
    name = "rest_cherrypy" if "rest_cherrypy" in opts else "rest_tornado" if "rest_tornado" in opts else None
    if name is None:
        raise ConfigError("the master config has no 'rest_cherrypy' section: briny-api needs at least its 'port'")
    section = opts.get(name) or {}
    if not isinstance(section, dict):
        raise ConfigError(f"'{name}' must be a map of settings")
    if "port" not in section:
        raise ConfigError(f"'{name}' has no 'port': say where briny-api listens")
    unknown = sorted(set(section) - KNOWN)
    if unknown:
        log.warning("%s: keys briny-api does not know, ignored: %s", name, ", ".join(unknown))
    ignored = sorted(set(section) & IGNORED)
    if ignored:
        log.warning("%s: Salt keys briny-api does not act on (its own access log goes to the API's log): %s",
                    name, ", ".join(ignored))  # fmt: skip
    s = ApiSettings(section=name)
    s.host = str(section.get("host") or s.host)
    s.port = _int(section, "port", s.port)
    if not 0 < s.port < 65536:
        raise ConfigError(f"'{name}: port' must be a TCP port, not {s.port}")
    s.ssl_crt = section.get("ssl_crt")
    s.ssl_key = section.get("ssl_key")
    s.disable_ssl = _bool(section, "disable_ssl", False)
    if not s.disable_ssl and not (s.ssl_crt and s.ssl_key):
        raise ConfigError(
            f"'{name}' has neither 'ssl_crt' and 'ssl_key' nor 'disable_ssl: True': "
            "give a certificate, or disable TLS explicitly (only behind a TLS proxy or on 127.0.0.1)"
        )
    s.debug = _bool(section, "debug", False)
    if s.debug:
        log.warning("%s: debug: briny-api never sends a traceback to a client; it logs them (at every level)", name)
    s.expire_responses = _bool(section, "expire_responses", True)
    s.max_request_body_size = _int(section, "max_request_body_size", s.max_request_body_size)
    s.thread_pool = max(1, _int(section, "thread_pool", s.thread_pool))
    s.webhook_url = _path(section, "webhook_url", "/hook").rstrip("/") or "/hook"
    s.webhook_disable_auth = _bool(section, "webhook_disable_auth", False)
    s.stats_disable_auth = _bool(section, "stats_disable_auth", False)
    s.app = section.get("app")
    s.app_path = _path(section, "app_path", "/app")
    s.static = section.get("static")
    s.static_path = _path(section, "static_path", "/static")
    clients = opts.get("netapi_enable_clients") or []
    if not isinstance(clients, list):
        raise ConfigError("'netapi_enable_clients' must be a list of client names")
    s.enabled_clients = [str(c) for c in clients]
    unsupported = [c for c in s.enabled_clients if c not in CLIENTS]
    if unsupported:
        log.warning(
            "netapi_enable_clients: briny-api does not have the clients %s yet; requests for them are refused",
            ", ".join(unsupported),
        )
    expire = opts.get("token_expire", 43200)
    if isinstance(expire, bool) or not isinstance(expire, (int, float)) or expire <= 0:
        raise ConfigError(f"'token_expire' must be a number of seconds, not {expire!r}")
    s.token_expire = float(expire)
    return s
