"""``briny-minion``: the minion daemon's process shell.

Runs once per managed host. Reads ``-c DIR/minion``, sets up logging
(:mod:`briny.common.logsetup`: console unless daemonized, ``log_file``;
SIGHUP reopens it), daemonizes with ``-d`` (double fork, ``setsid``, standard
streams to ``/dev/null``), writes ``pidfile``, detects grains, and runs
:class:`~briny.minion.agent.MinionAgent` on an asyncio loop with a ZeroMQ
transport to ``master:master_port`` / ``publish_port`` (one per master when
``master`` lists several: :mod:`briny.minion.masters`); the subscription moves
to the publish port each master names in its auth reply.

With ``multiprocessing: True`` (the default) the job launcher
(:mod:`briny.minion.launcher`) is forked right before the asyncio loop
starts, while this process has no other thread.

SIGTERM or SIGINT shut down cleanly (loop): no new jobs are taken, running
jobs get ``shutdown_grace`` seconds (default 5) to finish and send their
returns, then they are terminated (SIGTERM, then SIGKILL; a job process's
return says it was killed), then the pidfile is removed. Exit status: 0 after a clean stop, 2
for a usage or config error (the message says which key or file).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import threading
from typing import Any

from briny import __version__
from briny.common import config, logsetup, saltkeys, sdnotify, versions
from briny.common.cliargs import add_config_dir, config_dir
from briny.common.config import load_minion_config
from briny.common.daemonize import daemonize, remove_pidfile, report, running_pid, write_pidfile
from briny.common.exceptions import BrinyError

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="briny-minion", description="Run a briny minion.")
    add_config_dir(p, "minion")
    p.add_argument("-d", "--daemon", action="store_true", help="run in the background")
    logsetup.add_arguments(p)
    p.add_argument("--pid-file", dest="pidfile", help="pid file (default: the config's pidfile)")
    versions.add_arguments(p)
    return p


def _config(ns: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    if ns.pidfile:
        overrides["pidfile"] = os.path.abspath(ns.pidfile)
    opts = load_minion_config(config_dir(ns.config_dir), overrides)
    opts.update(logsetup.cli_overrides(ns))
    return opts


# -- running ---------------------------------------------------------------------------------------


def _transport_factory(opts: dict[str, Any]) -> Any:
    """The connection factory of the one master, or (several) a map of each master's name to its
    factory, in the order of the ``master`` list (:mod:`briny.minion.masters`)."""
    from briny.common.transport import ZmqClient
    from briny.minion.masters import Connector, MasterAddress, master_addresses

    recon, recon_max = config.count(opts, "recon_default"), config.count(opts, "recon_max")
    masters = master_addresses(opts)

    def connect(a: MasterAddress) -> ZmqClient:
        return ZmqClient(a.host, a.port, a.pub_port, reconnect_ms=recon, reconnect_max_ms=recon_max)

    factories = {}
    for address in masters:
        log.info("master at %s (requests on %d, publishes on %d)", address.host, address.port, address.pub_port)
        factories[address.name] = Connector(address, connect)
    if len(masters) > 1:
        log.info("%d masters, master_type %s", len(masters), opts.get("master_type") or "str")
        return factories
    return next(iter(factories.values()))


async def serve(opts: dict[str, Any], grains: dict[str, Any], launcher: Any = None) -> None:
    """Run the agent, and the local IPC ``briny-call`` talks to, until SIGTERM/SIGINT (loop);
    with a launcher, each job runs in a process of its own."""
    import zmq

    from briny.minion.agent import MinionAgent
    from briny.minion.localapi import LocalAPIServer

    agent = MinionAgent(opts, _transport_factory(opts), grains=grains, launcher=launcher)
    loop = asyncio.get_running_loop()
    notified = asyncio.ensure_future(_notify_ready(agent))
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, _on_signal, agent, sig)
    loop.add_signal_handler(signal.SIGHUP, logsetup.reopen_logfiles)
    api: LocalAPIServer | None = None
    task: asyncio.Task[None] | None = None
    try:
        api = LocalAPIServer(opts, agent)
        api.bind()
        task = asyncio.ensure_future(api.serve())
    except (BrinyError, OSError, zmq.ZMQError) as exc:
        log.error("briny-call cannot reach this minion: the local socket did not open (%s)", exc)
        api = None
    try:
        await agent.run()
    finally:
        notified.cancel()
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if api is not None:
            api.close()


async def _notify_ready(agent: Any) -> None:
    """READY=1 to systemd once the first authentication has an outcome: connected, or pending
    acceptance / no master and retrying (the daemon is up either way; waiting on the master
    would hold ``systemctl start`` until someone accepts the key)."""
    await agent.attempted.wait()
    sdnotify.ready(f"{agent.status}: master {config.setting(agent.opts, 'master')}")


def _on_signal(agent: Any, sig: int) -> None:
    log.info("received %s; shutting down", signal.Signals(sig).name)
    sdnotify.stopping()
    agent.stop()


def run(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    sdnotify.take_socket()  # out of the environment before the job launcher forks
    logsetup.setup_console(ns.log_level)
    try:
        opts = _config(ns)
    except BrinyError as exc:
        print(f"briny-minion: {exc}", file=sys.stderr)
        return 2
    from briny.common.ids import id_problem

    problem = id_problem(opts.get("id"))
    if problem is not None:
        print(
            f"briny-minion: the minion id {opts.get('id')!r} cannot be used: {problem}; "
            f"set 'id' in {opts.get('conf_file') or 'the minion config'}",
            file=sys.stderr,
        )
        return 2
    pidfile = str(opts.get("pidfile") or "")
    other = running_pid(pidfile) if pidfile else None
    if other is not None:
        print(
            f"briny-minion: a minion already runs as pid {other} (pidfile {pidfile}); stop it first, "
            "or remove the pidfile if that process is not a minion",
            file=sys.stderr,
        )
        return 2
    try:  # before forking: a log file that cannot be opened is reported on the terminal
        logsetup.setup_logging(opts, console_level=ns.log_level, console=not ns.daemon)
    except BrinyError as exc:
        print(f"briny-minion: {exc}", file=sys.stderr)
        return 2
    saltkeys.warn_unsupported(opts)  # every key briny will not act on, named once
    ready_fd = daemonize("briny-minion") if ns.daemon else None
    wrote_pid = False
    if pidfile:
        try:
            write_pidfile(pidfile)
            wrote_pid = True
        except OSError as exc:
            report(ready_fd, f"briny-minion: cannot write the pidfile {pidfile}: {exc.strerror}\n")
            return 1
    report(ready_fd, "ok")  # detached and recorded: the operator's command may return
    log.info("briny-minion %s starting as %s (pid %d)", __version__, opts["id"], os.getpid())
    try:
        from briny.minion.host.grains import load_grains

        grains = load_grains(opts)
        launcher = None
        if opts.get("multiprocessing", True):
            from briny.minion.launcher import Launcher, share_with_launcher

            share_with_launcher()  # what the daemon runs, imported once for both processes
            launcher = Launcher.start(opts)  # now: this process has no thread yet (fork is safe)
        asyncio.run(serve(opts, grains, launcher))
    except (BrinyError, OSError) as exc:
        msg = str(exc) if isinstance(exc, BrinyError) else f"{exc.strerror}: {exc.filename or ''}".rstrip(": ")
        log.error("cannot run the minion: %s", msg)
        if not ns.daemon:
            print(f"briny-minion: {msg}", file=sys.stderr)
        return 2
    finally:
        if wrote_pid:
            remove_pidfile(pidfile)
    log.info("briny-minion stopped")
    return 0


def main() -> None:
    exit_with(run())


def exit_with(code: int) -> None:
    """End a minion process (``briny-minion``, ``briny-swarm``) with ``code``."""
    logging.shutdown()
    # a job still blocked in a system call after the grace period must not keep the process
    # alive (worker threads are joined at interpreter exit)
    if any(t.name.startswith(("briny-job", "job-")) and t.is_alive() for t in threading.enumerate()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    main()
