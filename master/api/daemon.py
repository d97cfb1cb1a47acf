"""``briny-api``: the REST API daemon (Salt's ``salt-api`` with ``rest_cherrypy``).

Runs on the master host, as the master's user, beside ``briny-master``. Usage:
``briny-api [-c DIR] [-d] [--pid-file F] [-l LEVEL] [--log-file F]``. Reads ``DIR/master``
(the ``rest_cherrypy`` section, :mod:`.settings`), logs to ``api_logfile`` (default: ``api``
beside the master's ``log_file``) as the other daemons log (:mod:`briny.common.logsetup`),
writes ``api_pidfile`` (default: ``briny-api.pid`` beside the master's ``pidfile``), and serves
on one asyncio loop (aiohttp) with a thread pool of ``thread_pool`` workers for what blocks.
Under systemd (``Type=notify``) it says ``READY=1`` once the port is bound and ``STOPPING=1``
on SIGTERM / SIGINT; SIGHUP reopens the log file. Exit status: 0 after a clean stop; 1 when
it could not start once daemonized; 2 for a config error (a missing ``port``, no
certificate without ``disable_ssl``, a port taken), with the reason on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import logging
import os
import signal
import ssl
import sys
from collections.abc import Sequence
from typing import Any

from briny.common import ratelog, logsetup, sdnotify, versions
from briny.common.cliargs import add_config_dir, config_dir
from briny.common.config import load_master_config
from briny.common.daemonize import daemonize, report, running_pid, with_pidfile
from briny.common.exceptions import BrinyError, ConfigError
from briny.master.api import settings as api_settings
from briny.master.api.tokens import TokenStore

log = logging.getLogger(__name__)

PRUNE_SECONDS = 300.0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="briny-api", description="Serve Salt's REST API for the briny master.")
    add_config_dir(p, "master")
    p.add_argument("-d", "--daemon", action="store_true", help="run in the background")
    p.add_argument("--pid-file", dest="pidfile", help="pidfile (default: the 'api_pidfile' option)")
    logsetup.add_arguments(p, default_file="api_logfile")
    versions.add_arguments(p)
    return p


def _beside(opts: dict[str, Any], value: Any, sibling: str, name: str) -> str:
    """``value`` (relative to ``root_dir``), or ``name`` in the folder of the ``sibling`` option."""
    if not value:
        base = os.path.dirname(str(opts.get(sibling) or "")) or str(opts.get("root_dir") or "/")
        return os.path.join(base, name)
    text = str(value)
    if logsetup.is_syslog(text) or os.path.isabs(text):
        return text
    return os.path.join(str(opts.get("root_dir") or "/"), text)


def _ssl_context(s: api_settings.ApiSettings) -> ssl.SSLContext | None:
    if s.disable_ssl:
        return None
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(str(s.ssl_crt), str(s.ssl_key))
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot load ssl_crt {s.ssl_crt} / ssl_key {s.ssl_key}: {exc}") from None
    return ctx


async def serve(opts: dict[str, Any], s: api_settings.ApiSettings, ready_fd: int | None) -> int:
    from aiohttp import web

    from briny.master.api.app import AccessLogger, Api, make_app

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, logsetup.reopen_logfiles)
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=s.thread_pool, thread_name_prefix="api")
    api = Api(opts, s, TokenStore(opts), executor)
    runner = web.AppRunner(
        make_app(api), access_log=logging.getLogger("briny.master.api.access"), access_log_class=AccessLogger
    )
    await runner.setup()
    try:
        try:
            site = web.TCPSite(runner, s.host, s.port, ssl_context=_ssl_context(s), backlog=128)
            await site.start()
        except (OSError, ConfigError) as exc:
            log.error("briny-api cannot start: %s", exc)
            report(ready_fd, f"briny-api: {exc}\n")
            return 1
        scheme = "http" if s.disable_ssl else "https"
        log.warning("briny-api serving on %s://%s:%d (clients: %s)", scheme, s.host, s.port,
                    ", ".join(s.enabled_clients) or "none: netapi_enable_clients is empty")  # fmt: skip
        report(ready_fd, "ok")
        sdnotify.ready(f"serving on {scheme}://{s.host}:{s.port}")
        pruned = loop.time()
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except TimeoutError:
                ratelog.flush_all()  # the end of a burst of refusals is reported too
                if loop.time() - pruned < PRUNE_SECONDS:
                    continue
                pruned = loop.time()
                gone = await loop.run_in_executor(executor, api.tokens.prune)
                if gone:
                    log.info("api: removed %d expired tokens", gone)
        log.warning("briny-api shutting down")
        sdnotify.stopping()
        return 0
    finally:
        await runner.cleanup()
        executor.shutdown(wait=False, cancel_futures=True)


def run(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    sdnotify.take_socket()
    logsetup.setup_console(ns.log_level)
    try:
        opts = load_master_config(config_dir(ns.config_dir, required=True))
        opts["api_logfile"] = _beside(opts, opts.get("api_logfile"), "log_file", "api")
        opts.update(logsetup.cli_overrides(ns, file_key="api_logfile"))
        pidfile = (
            os.path.abspath(ns.pidfile)
            if ns.pidfile
            else _beside(opts, opts.get("api_pidfile"), "pidfile", "briny-api.pid")
        )
        other = running_pid(pidfile)
        if other is not None:
            raise BrinyError(f"briny-api is already running with pid {other} (pidfile {pidfile})")
        logsetup.setup_logging(opts, console_level=ns.log_level, console=not ns.daemon, file_key="api_logfile")
        s = api_settings.load(opts)
        _ssl_context(s)  # a bad certificate is reported here, before forking
    except BrinyError as exc:
        print(f"briny-api: {exc}", file=sys.stderr)
        return 2
    try:
        import aiohttp  # noqa: F401 - the optional extra: say how to get it
    except ImportError:
        print("briny-api: aiohttp is not installed; install briny with the 'api' extra (pip install 'briny[api]')",
              file=sys.stderr)  # fmt: skip
        return 2
    ready_fd = daemonize("briny-api") if ns.daemon else None
    return with_pidfile("briny-api", pidfile, ready_fd, lambda: asyncio.run(serve(opts, s, ready_fd)))


def main() -> None:
    try:
        code = run()
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)
