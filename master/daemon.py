"""``briny-master``: the master daemon's process shell.

Runs on the master host. Reads ``DIR/master``, sets up logging, optionally
daemonizes (``-d``: double fork, the parent waits until the master serves
or failed, then exits 0 or 1 with the reason), writes the pidfile, and runs
one asyncio loop (``zmq.asyncio``) holding:

- :class:`briny.master.server.MasterServer` on a ZeroMQ ROUTER + PUB
  (``interface:ret_port`` / ``interface:publish_port``);
- :class:`briny.master.clientapi.ClientAPIServer` on
  ``sock_dir/master_client.ipc``;
- the master's schedule (:class:`briny.master.scheduler.MasterScheduler`: runners
  of ``schedule:`` on time, in a small pool of its own);
- the housekeeping task (key store reads, job cache pruning);
- the reactor (:class:`briny.common.reactor.ReactorService`, threads of its
  own) when ``reactor:`` maps tags to reactor SLS.

:func:`build_server` builds the master's subsystems (the grains cache, each
minion's pillar, the file server, the state compiler) and the
:class:`~briny.master.server.MasterServer` they plug into; tests build them
the same way, or with fakes.

Threads besides the loop (``docs/DEVELOPING.md``, "Threads"): the master
event bus (``EventBus``, its own thread), the job cache writer, the grains
cache writer, and the master's worker pool (RSA, key store, targeting,
pillar, files, compiles). SIGTERM/SIGINT shut down cleanly: the operator IPC
closes (no new jobs), the ROUTER stops being read after the frames already
queued are handled (so in-flight returns are stored), the job cache is
flushed and closed, then the bus stops and the pidfile is removed. SIGHUP
reopens the log file (:func:`briny.common.logsetup.reopen_logfiles`).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence
from typing import Any

import zmq
import zmq.asyncio

from briny.common.cliargs import add_config_dir, config_dir
from briny.common.config import load_master_config
from briny.common import config
from briny.common.daemonize import (
    daemonize,
    report as _report,
    running_pid as _running_pid,
    with_pidfile,
)
from briny.common.event import EventBus, EventSender
from briny.common.exceptions import BrinyError
from briny.common import logsetup, saltkeys, sdnotify, versions
from briny.common.transport import ServerTransport, ZmqServer
from briny.master.clientapi import ClientAPIServer
from briny.master.compile import MasterCompiler
from briny.master.filerecv import FileReceiver
from briny.master import gitfsloop
from briny.master.fileserver import FileServer
from briny.master.grainscache import GrainsCache
from briny.master.mine import MineStore
from briny.master.eventreturn import event_returner
from briny.master.jobcache import open_job_cache
from briny.master.jobcache.base import JobCache
from briny.master.keys.store import KeyStore
from briny.master.pillar import MinionPillars
from briny.common.reactor import ReactorService
from briny.master.reactor import start as start_reactor
from briny.master.server import Fire, MasterServer
from briny.master.scheduler import MasterScheduler

log = logging.getLogger(__name__)

DRAIN_SECONDS = 1.0
CACHE_CLOSE_SECONDS = 30.0  # the job cache's last flush at exit, at most (a database that went away)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="briny-master", description="Run the briny master.")
    add_config_dir(p, "master")
    p.add_argument("-d", "--daemon", action="store_true", help="run in the background")
    p.add_argument("--pid-file", dest="pidfile", help="pidfile (default: the 'pidfile' option)")
    logsetup.add_arguments(p)
    versions.add_arguments(p)
    return p


def check_ports(opts: dict[str, Any]) -> None:
    """Refuse early, with a clear message, when a port is taken (before forking)."""
    host = str(config.setting(opts, "interface"))
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for key in ("ret_port", "publish_port"):
        port = config.count(opts, key)
        probe = socket.socket(family, socket.SOCK_STREAM)
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            raise BrinyError(
                f"cannot bind {key} {host}:{port}: {exc.strerror}; is another master "
                "running, or set another port in the master config"
            ) from None
        finally:
            probe.close()


# -- the master and its subsystems -------------------------------------------------------


def build_server(
    opts: dict[str, Any],
    transport: ServerTransport,
    keys: KeyStore,
    jobcache: JobCache,
    *,
    fire: Fire | None = None,
    executor: concurrent.futures.Executor | None = None,
) -> MasterServer:
    """The master with its subsystems plugged in (on the loop, before it serves): the grains cache
    (loaded from ``cachedir``), each minion's pillar, the file server and the state compiler,
    whose requests run in the server's workers. The caller closes ``server.grains`` after
    :meth:`MasterServer.close`."""
    grains = GrainsCache(str(config.setting(opts, "cachedir", "master")))
    loaded = grains.load_all()
    if loaded:
        log.info("loaded the cached grains of %d minions", loaded)
    pillar = MinionPillars(opts, grains.get)  # each minion's pillar from the master's pillar_roots
    fileserver = FileServer(opts)  # file_roots for authenticated minions
    compiler = MasterCompiler(opts, fileserver, pillar, grains.get, grains.opts_of)  # state jobs per minion
    server = MasterServer(
        opts, transport, keys, jobcache, grains=grains, compiler=compiler, fire=fire, executor=executor
    )
    # each minion's mine, read by mine.get with targeting (accepted minions, grains, compiled pillars)
    mine = MineStore(opts, grains.get, lambda: server.keywatch.read().accepted, pillar.cached)
    mined = mine.load_all()
    if mined:
        log.info("loaded the cached mines of %d minions", mined)
    pillar.mine = compiler.mine = mine
    pillar.fire = server.fire  # minion/refresh/<id> after each pillar request, as Salt's master
    server.publisher.pillar_of = pillar.for_targeting  # -I, I@, J@ publishes match the pillars compiled here
    server.on_forget.append(pillar.files.remove)  # the pillar a deleted minion last got (cache.pillar)
    pillar.register(server)  # pillar
    fileserver.register(server)  # file_envs, file_list, file_hash, file_chunk
    compiler.register(server)  # compile (briny-call on a minion)
    mine.register(server)  # mine
    FileReceiver(opts).register(server)  # file_recv (cp.push), off unless file_recv: True
    return server


def _fileserver(server: MasterServer) -> FileServer:
    """The file server ``build_server`` plugged into ``server`` (its compiler's)."""
    compiler = server.publisher.compiler
    assert compiler is not None  # build_server always gives one
    return compiler.fileserver


# -- the loop ---------------------------------------------------------------------------


async def serve(opts: dict[str, Any], ready_fd: int | None = None) -> int:
    """Run the master until SIGTERM/SIGINT (loop). Returns the exit status."""
    loop = asyncio.get_running_loop()
    ctx = zmq.asyncio.Context()
    bus = EventBus(opts, name="master").start_thread()
    sender = EventSender(opts, name="master")
    cache: JobCache | None = None
    transport: ZmqServer | None = None
    capi: ClientAPIServer | None = None
    server: MasterServer | None = None
    reactor: ReactorService | None = None
    tasks: list[asyncio.Task[Any]] = []
    try:
        cache = open_job_cache(opts)  # PostgreSQL: a database it cannot reach is a ConfigError naming the key
        bus.sink = event_returner(opts, cache)  # event_return: the bus's events into the job cache (or None)
        keys = KeyStore(opts)
        transport = ZmqServer(
            str(opts["interface"]),
            int(opts["ret_port"]),
            int(opts["publish_port"]),
            ctx=ctx,
            send_hwm=config.count(opts, "ret_send_hwm"),
            max_connections=config.count(opts, "ret_max_connections"),
            pub_hwm=config.count(opts, "pub_hwm"),
            pub_max_connections=config.count(opts, "pub_max_connections"),
        )
        server = build_server(opts, transport, keys, cache, fire=sender.fire)
        capi = ClientAPIServer(opts, server, ctx=ctx)
        capi.bind()
        if opts.get("reactor"):  # reacts on the bus; local reactions publish through capi
            reactor = start_reactor(opts)
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        loop.add_signal_handler(signal.SIGHUP, logsetup.reopen_logfiles)
        serving = asyncio.ensure_future(server.serve())
        tasks = [
            serving,
            asyncio.ensure_future(capi.serve()),
            asyncio.ensure_future(server.housekeeping()),
            asyncio.ensure_future(MasterScheduler(opts, cache, sender.fire).run(stop)),  # schedule: runners on time
        ]
        if gitfsloop.wanted(_fileserver(server)):  # gitfs remotes fetched on their update_interval
            tasks.append(asyncio.ensure_future(gitfsloop.run(opts, _fileserver(server), sender.fire)))
        log.warning(
            "briny-master %s serving on %s (ret %s, publish %s)",
            os.getpid(),
            opts["interface"],
            opts["ret_port"],
            opts["publish_port"],
        )
        _report(ready_fd, "ok")
        ready_fd = None
        sdnotify.ready(f"serving on {opts['interface']} (ret {opts['ret_port']}, publish {opts['publish_port']})")
        stopper = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait([stopper, *tasks], return_when=asyncio.FIRST_COMPLETED)
        status = 0
        for task in done:
            if task is not stopper and not task.cancelled() and task.exception() is not None:
                log.error("a master task stopped: %r", task.exception(), exc_info=task.exception())
                status = 1
        stopper.cancel()
        log.warning("briny-master shutting down")
        sdnotify.stopping()
        capi.close()  # no new jobs
        server.stop()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        handled = await server.drain(DRAIN_SECONDS)  # frames already queued: in-flight returns
        if handled:
            log.info("handled %d queued requests before exit", handled)
        return status
    except (BrinyError, zmq.ZMQError, OSError) as exc:
        log.error("briny-master cannot start: %s", exc)
        _report(ready_fd, f"briny-master: {exc}\n")
        ready_fd = None
        return 1
    finally:
        if reactor is not None:
            await loop.run_in_executor(None, reactor.stop)  # no new reactions; bounded wait on running ones
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if capi is not None:
            capi.close()
        if transport is not None:
            transport.close()
        bus.sink = None  # no more events for a closing cache
        if cache is not None:  # flushes every queued write (waits a bounded time for an absent database)
            await loop.run_in_executor(None, cache.close, CACHE_CLOSE_SECONDS)
        if server is not None:
            server.close()
            await loop.run_in_executor(None, server.grains.close)  # writes what is queued
        sender.close()
        bus.stop()
        ctx.term()
        _report(ready_fd, "briny-master: stopped before it was ready; see the log file\n")


def run(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    sdnotify.take_socket()  # out of the environment before anything forks or runs
    overrides: dict[str, Any] = {}
    if ns.pidfile:
        overrides["pidfile"] = os.path.abspath(ns.pidfile)
    logsetup.setup_console(ns.log_level)
    try:
        opts = load_master_config(config_dir(ns.config_dir, required=True), overrides)
        opts.update(logsetup.cli_overrides(ns))
        pidfile = str(opts["pidfile"])
        other = _running_pid(pidfile)
        if other is not None:
            raise BrinyError(f"a master is already running with pid {other} (pidfile {pidfile})")
        check_ports(opts)
        # before forking: a log file that cannot be opened is reported on the terminal
        logsetup.setup_logging(opts, console_level=ns.log_level, console=not ns.daemon)
    except BrinyError as exc:
        print(f"briny-master: {exc}", file=sys.stderr)
        return 2
    saltkeys.warn_unsupported(opts)  # every key briny will not act on, named once
    ready_fd = daemonize("briny-master") if ns.daemon else None
    return with_pidfile("briny-master", pidfile, ready_fd, lambda: asyncio.run(serve(opts, ready_fd)))


def main() -> None:
    try:
        code = run()
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)
