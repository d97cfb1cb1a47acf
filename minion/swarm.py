"""``briny-swarm``: N real-protocol minions in one process, to load a master.

``briny-swarm -c DIR -n N`` reads the minion config ``DIR/minion`` (it must
name ``master``: one address or a list, served as ``briny-minion`` serves it,
hot-hot or ``failover``; ``master_port``, ``publish_port``, the timeouts and
``grains:`` apply as for ``briny-minion``) and runs N minion identities,
``<id>-0`` ... ``<id>-<N-1>`` (the config's ``id`` as the prefix), each a
:class:`~briny.minion.agent.MinionAgent` of its own on one asyncio loop:

- its own RSA key pair in ``pki_dir/swarm/<id>/`` (made on the first start, in
  a process pool since a 2048-bit key takes ~50 ms; kept and reused after),
  its own pinned master key there, and ``cachedir/swarm/<id>/`` for its jids
  and proc files;
- its own auth handshake, session key, replay guard, heartbeat and
  subscription to its own publish topic: the real wire protocol and crypto
  (:mod:`briny.minion.auth`, :mod:`briny.common.handshake`,
  :mod:`briny.common.wire`), nothing simulated;
- its own grains (the host's, detected once, with ``id`` set to its id), sent
  to the master after each auth;
- jobs (``test.*``, ``state.apply`` with the master's compile, ...) run in
  threads of one pool shared by all identities (``--workers``, default
  :data:`DEFAULT_WORKERS`), through the real executor and requisite engine.

What differs from N ``briny-minion`` processes, on purpose: one DEALER
connection per identity, but the publishes of :data:`DEFAULT_SHARE`
identities share one SUB connection per master (each identity still subscribes its own
topic only; :class:`~briny.common.transport.SharedSubscriber`), since a
process may hold only so many file descriptors; no local event bus, no
``briny-call`` socket, no mine (``mine_enabled`` is forced off), jobs in
threads (``multiprocessing`` is forced off).

SIGTERM or SIGINT stop every identity (running jobs get ``shutdown_grace``
seconds), close every socket, and exit 0. Exit status 2 for a usage or
config error (the message says which).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import gc
import logging
import multiprocessing
import os
import resource
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from briny.common import config, crypto, gcpause, logsetup
from briny.common.cliargs import add_config_dir, config_dir
from briny.common.daemonize import die_with
from briny.common.exceptions import BrinyError, ConfigError
from briny.common.ids import id_problem
from briny.minion.masters import MasterAddress, master_addresses

from briny import __version__

log = logging.getLogger(__name__)

DEFAULT_WORKERS = 8  # job threads shared by every identity (2 cores: more only adds GIL contention)
DEFAULT_SHARE = 64  # identities whose publishes share one SUB connection
KEY_POOL_MIN = 16  # keys to make before a process pool pays off
FDS_PER_IDENTITY = 2  # its DEALER: the socket's TCP connection and its mailbox
KEY_NAME, PUB_NAME = "minion.pem", "minion.pub"
REAP_MARGIN = 15.0  # seconds past shutdown_grace a child process gets to stop
SETTLE_CHECK = 2.0  # seconds between looks at how many identities are up (see Swarm._freeze_settled)


@dataclass(frozen=True)
class Identity:
    """One minion of the swarm: its id and its opts (its own pki_dir and cachedir)."""

    id: str
    opts: dict[str, Any]

    @property
    def pki_dir(self) -> Path:
        return Path(str(self.opts["pki_dir"]))


@dataclass(frozen=True)
class KeyReport:
    """What :func:`ensure_keys` did: keys made, keys already there, seconds it took."""

    made: int
    kept: int
    seconds: float


# -- the plan (pure) ---------------------------------------------------------------------------------


def swarm_ids(prefix: str, count: int) -> list[str]:
    """``<prefix>-0`` ... ``<prefix>-<count-1>``; ConfigError when ``count`` is not positive or an
    id would not be valid (:mod:`briny.common.ids`)."""
    if count < 1:
        raise ConfigError(f"the swarm needs at least one minion (-n {count})")
    ids = [f"{prefix}-{i}" for i in range(count)]
    for minion_id in (ids[0], ids[-1]):  # the same characters but the digits: the longest is last
        problem = id_problem(minion_id)
        if problem is not None:
            raise ConfigError(
                f"the swarm id {minion_id!r} (from the config's 'id' {prefix!r}) cannot be used: {problem}"
            )
    return ids


def identity_opts(base: dict[str, Any], minion_id: str) -> dict[str, Any]:
    """The opts of one identity: the config's, with its id, its own ``pki_dir`` and ``cachedir``
    (under the config's, in ``swarm/<id>``), no mine and jobs in threads."""
    opts = dict(base)
    opts["id"] = minion_id
    opts["pki_dir"] = os.path.join(str(config.setting(base, "pki_dir", "minion")), "swarm", minion_id)
    if base.get("cachedir"):
        opts["cachedir"] = os.path.join(str(base["cachedir"]), "swarm", minion_id)
    opts["mine_enabled"] = False
    opts["multiprocessing"] = False
    return opts


def plan(base: dict[str, Any], count: int) -> list[Identity]:
    """The identities of a swarm of ``count`` from the minion config ``base``."""
    return [Identity(i, identity_opts(base, i)) for i in swarm_ids(str(base["id"]), count)]


def slices(identities: list[Identity], parts: int) -> list[list[Identity]]:
    """``identities`` cut into at most ``parts`` runs of consecutive ones, as even as can be (one
    per swarm process: ``--procs``)."""
    parts = max(1, min(parts, len(identities)))
    size, extra = divmod(len(identities), parts)
    out, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        out.append(identities[start:end])
        start = end
    return out


def names_master(conf_dir: str) -> bool:
    """Whether the minion config in ``conf_dir`` (its file or a ``minion.d/*.conf``) sets ``master``
    (the swarm does not fall back on Salt's default name ``salt``)."""
    files = [Path(conf_dir) / "minion", *sorted((Path(conf_dir) / "minion.d").glob("*.conf"))]
    for path in files:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue  # the config loader already read it, or it is not there
        if isinstance(data, dict) and data.get("master"):
            return True
    return False


# -- keys ----------------------------------------------------------------------------------------------


def _make_key(pki_dir: str) -> None:
    """A key-pool process: the key pair of one identity (made unless it is there)."""
    pki = Path(pki_dir)
    pki.mkdir(parents=True, exist_ok=True, mode=0o700)
    crypto.load_or_create_rsa(pki / KEY_NAME, pki / PUB_NAME)


def ensure_keys(identities: list[Identity], processes: int | None = None) -> KeyReport:
    """Make the key pair of every identity that has none, in a process pool when there are many
    (call before any thread starts: the pool forks)."""
    start = time.monotonic()
    missing = [str(i.pki_dir) for i in identities if not (i.pki_dir / KEY_NAME).exists()]
    if len(missing) >= KEY_POOL_MIN:
        workers = processes or os.cpu_count() or 2
        ctx = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            for _ in pool.map(_make_key, missing, chunksize=max(1, len(missing) // (workers * 8))):
                pass
    else:
        for pki in missing:
            _make_key(pki)
    return KeyReport(len(missing), len(identities) - len(missing), time.monotonic() - start)


def raise_fd_limit(count: int) -> int:
    """Raise the soft limit of open files towards what ``count`` identities need (up to the hard
    limit); the soft limit now. ConfigError when the hard limit is too low."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = FDS_PER_IDENTITY * count + 4 * (count // DEFAULT_SHARE + 1) + 256
    if hard != resource.RLIM_INFINITY and need > hard:
        raise ConfigError(
            f"{count} minions need about {need} open files; this process may open {hard} "
            f"(raise the hard limit, `ulimit -Hn`, or run fewer minions per swarm)"
        )
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need if hard == resource.RLIM_INFINITY else hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# -- the swarm (loop) ---------------------------------------------------------------------------------


class Swarm:
    """Every identity's agent on this loop, over one ZeroMQ context; :meth:`run` until :meth:`stop`."""

    def __init__(
        self,
        base: dict[str, Any],
        identities: list[Identity],
        grains: dict[str, Any],
        *,
        workers: int = DEFAULT_WORKERS,
        share: int = DEFAULT_SHARE,
    ) -> None:
        self.base = base
        self.identities = identities
        self.grains = grains
        self.workers = workers
        self.share = max(1, share)
        self.agents: list[Any] = []
        self._stopping = False

    async def run(self) -> None:
        import zmq
        import zmq.asyncio
        from briny.common.transport import SharedSubscriber, ZmqClient
        from briny.minion.agent import MinionAgent

        masters = master_addresses(self.base)
        if len(masters) > 1:  # each identity has a DEALER per master
            raise_fd_limit(len(self.identities) * len(masters))
        recon, recon_max = config.count(self.base, "recon_default"), config.count(self.base, "recon_max")

        def transport(master: MasterAddress, subscriber: SharedSubscriber) -> Callable[[], ZmqClient]:
            return lambda: ZmqClient(
                master.host,
                master.port,
                master.pub_port,
                ctx,
                reconnect_ms=recon,
                reconnect_max_ms=recon_max,
                publishes=subscriber,
            )

        ctx = zmq.asyncio.Context()
        ctx.set(zmq.MAX_SOCKETS, 2 * len(self.identities) + 1024)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="briny-job")
        subscribers: list[SharedSubscriber] = []
        shared: dict[str, SharedSubscriber] = {}  # per master, for this run of `share` identities
        try:
            for index, ident in enumerate(self.identities):
                if index % self.share == 0:
                    shared = {m.name: SharedSubscriber(m.host, m.pub_port, ctx, recon, recon_max) for m in masters}
                    subscribers.extend(shared.values())
                factories = {m.name: transport(m, shared[m.name]) for m in masters}
                grains = {**self.grains, "id": ident.id}
                agent = MinionAgent(
                    ident.opts,
                    factories if len(masters) > 1 else factories[masters[0].name],
                    grains=grains,
                    event_bus=False,
                    pool=pool,
                    check_key=False,
                )
                self.agents.append(agent)
                if index % 256 == 255:
                    await asyncio.sleep(0)  # keep the loop (and signals) responsive while building
                if self._stopping:
                    break
            log.warning("briny-swarm: %d minions (%s ...) started", len(self.agents), self.identities[0].id)
            freezer = asyncio.ensure_future(self._freeze_settled())
            try:
                if not self._stopping:
                    await asyncio.gather(*(agent.run() for agent in self.agents))
            finally:
                freezer.cancel()
        finally:
            for agent in self.agents:
                agent.stop()
            for subscriber in subscribers:
                subscriber.close()
            pool.shutdown(wait=False, cancel_futures=True)
            ctx.destroy(linger=0)  # every socket is closed by now; this ends the I/O thread

    async def _freeze_settled(self) -> None:
        """Keep what the identities hold for good out of Python's full collections (loop).

        N minions share one heap here (a million objects at 5,000), where a real one has its
        own small heap: each full collection, which the garbage of a few thousand jobs sets off,
        would walk all N minions' keys, sessions and grains (measured: 1.0-1.3 s of a process's
        CPU in each ping of 5,000, half of the swarm's work). Once the number of identities up
        has not changed for :data:`SETTLE_CHECK` seconds, what exists then is collected once and
        frozen for good (:func:`briny.common.gcpause.keep_frozen`: a state run's ``frozen_heap``
        no longer thaws it when it ends): later collections walk only what came after, as a real
        minion's would. Again whenever that number settles somewhere new (identities that
        authenticated again)."""
        frozen_at, previous = 0, -1
        while not self._stopping:
            await asyncio.sleep(SETTLE_CHECK)
            up = self.connected()
            if up == previous and up != frozen_at:
                started = time.monotonic()
                gc.collect()
                frozen = gcpause.keep_frozen()  # state runs' frozen_heap leaves it frozen
                frozen_at = up
                log.info(
                    "briny-swarm: %d minions up; %d objects frozen in %.2f s", up, frozen, time.monotonic() - started
                )
            previous = up

    def stop(self) -> None:
        """Stop every identity (loop)."""
        self._stopping = True
        for agent in self.agents:
            agent.stop()

    def connected(self) -> int:
        """How many identities have a session now."""
        return sum(1 for agent in self.agents if agent.connected.is_set())


# -- the command ----------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="briny-swarm", description="Run N real-protocol minions in one process, to load a master."
    )
    add_config_dir(p, "minion")
    p.add_argument("-n", "--count", required=True, help="how many minions (ids <id>-0 ... <id>-<N-1>)")
    p.add_argument(
        "--workers", default=str(DEFAULT_WORKERS), help=f"job threads shared by all (default {DEFAULT_WORKERS})"
    )
    p.add_argument(
        "--share",
        default=str(DEFAULT_SHARE),
        help=f"minions whose publishes share one SUB connection (default {DEFAULT_SHARE})",
    )
    p.add_argument(
        "--procs",
        default="1",
        help="processes to run the minions in, each with its share of them (default 1: one process)",
    )
    logsetup.add_arguments(p)
    p.add_argument("--version", action="version", version=f"briny-swarm {__version__}")
    return p


def _positive(value: str, what: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{what} must be a whole number, not {value!r}") from None
    if number < 1:
        raise ConfigError(f"{what} must be at least 1, not {number}")
    return number


def _setup(ns: argparse.Namespace) -> tuple[dict[str, Any], list[Identity], int, int]:
    count = _positive(ns.count, "-n (the number of minions)")
    workers = _positive(ns.workers, "--workers")
    share = _positive(ns.share, "--share")
    _positive(ns.procs, "--procs")
    folder = config_dir(ns.config_dir, required=True)
    assert folder is not None
    if not (Path(folder) / "minion").is_file():
        raise ConfigError(f"no minion config file {Path(folder) / 'minion'} (the swarm needs one naming 'master')")
    base = config.load_minion_config(folder, logsetup.cli_overrides(ns))
    if not names_master(folder):
        raise ConfigError(
            f"{Path(folder) / 'minion'} does not set 'master'; the swarm needs the master's address "
            "(master: HOST, and master_port / publish_port when they are not 4506 / 4505)"
        )
    master_addresses(base)  # ConfigError now for a bad master list
    base["multiprocessing"] = False
    return base, plan(base, count), workers, share


def run(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    logsetup.setup_console(ns.log_level)
    try:
        base, identities, workers, share = _setup(ns)
        raise_fd_limit(len(identities))
        logsetup.setup_logging(base, console_level=ns.log_level)
    except BrinyError as exc:
        sys.stderr.write(f"briny-swarm: {exc}\n")
        return 2
    children: list[int] = []
    code = 0
    try:
        keys = ensure_keys(identities)  # before any thread: the key pool forks
        log.warning(
            "briny-swarm: %d keys made in %.1f s, %d kept (%s)",
            keys.made,
            keys.seconds,
            keys.kept,
            Path(str(config.setting(base, "pki_dir", "minion"))) / "swarm",
        )
        from briny.minion.host.grains import load_grains

        grains = load_grains(base)
        parts = slices(identities, int(ns.procs))
        for part in parts[1:]:  # before any thread or loop: each child serves its share, then exits
            parent, pid = os.getpid(), os.fork()
            if pid == 0:
                die_with(parent)  # SIGTERM when the first process dies, even by SIGKILL
                os._exit(_serve_part(base, part, grains, workers, share, []))
            children.append(pid)
        if children:
            log.warning("briny-swarm: %d processes (pids %s and this one)", len(parts), children)
        code = _serve_part(base, parts[0], grains, workers, share, children)
    except (BrinyError, OSError) as exc:
        code = _failed(exc)
    finally:
        code = max(code, _reap(children, config.number(base, "shutdown_grace", zero=True) + REAP_MARGIN))
    if code == 0:
        log.warning("briny-swarm stopped")
    return code


def _serve_part(
    base: dict[str, Any],
    identities: list[Identity],
    grains: dict[str, Any],
    workers: int,
    share: int,
    children: list[int],
) -> int:
    """Serve ``identities`` in this process until SIGTERM/SIGINT (passed on to ``children``); its
    exit status."""

    async def serve() -> None:
        swarm = Swarm(base, identities, grains, workers=workers, share=share)
        loop = asyncio.get_running_loop()

        def stop(sig: int) -> None:
            _signal(children, sig)
            swarm.stop()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop, sig)
        await swarm.run()

    try:
        asyncio.run(serve())
    except (BrinyError, OSError) as exc:
        return _failed(exc)
    return 0


def _failed(exc: BrinyError | OSError) -> int:
    """Say why the swarm (or one of its processes) stops, in its log and on stderr; exit status 2."""
    msg = str(exc) if isinstance(exc, BrinyError) else f"{exc.strerror}: {exc.filename or ''}".rstrip(": ")
    log.error("briny-swarm (pid %d): %s", os.getpid(), msg)
    sys.stderr.write(f"briny-swarm: {msg}\n")
    return 2


def _signal(children: list[int], sig: int) -> None:
    for pid in children:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _reap(children: list[int], grace: float) -> int:
    """Wait for the child processes (SIGTERM first if they still run, SIGKILL after ``grace``
    seconds); the highest exit status (1 for one killed)."""
    code, deadline = 0, time.monotonic() + grace
    for pid in children:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                child = os.waitstatus_to_exitcode(status)
                if child:
                    log.error("briny-swarm: process %d exited with %d", pid, child)
                    code = max(code, child if child > 0 else 1)  # negative: killed by a signal
                break
            if time.monotonic() >= deadline:
                log.error("briny-swarm: process %d did not stop within %.0f s; killed", pid, grace)
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                code = max(code, 1)
                break
            time.sleep(0.05)
    return code


def main() -> None:
    from briny.minion.daemon import exit_with

    exit_with(run())


if __name__ == "__main__":
    main()
