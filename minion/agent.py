"""The minion's logic over a :class:`~briny.common.transport.ClientTransport`: connect, serve, reconnect.

Owns, for one minion: the connection to the master (one transport per auth
attempt, reconnection with jittered exponential backoff), the session it
serves (:class:`~briny.minion.auth.Session`: heartbeats, sealed requests,
the publish reader), returns and events on their way to the master (kept in
the :class:`~briny.minion.outbox.Outbox` while it cannot take them), the
master channel jobs use (pillar, files, compiles), and forwarding the local
event bus to the master. The contract is ``docs/PROTOCOL.md``. Its parts:

- :mod:`briny.minion.auth`: the minion's key pair, the handshake, master key
  pinning and ``master_finger``;
- :mod:`briny.minion.sessionio`: a sealed request on a session and its reply,
  a publish opened and checked;
- :mod:`briny.minion.jobrunner`: running each job (publish or local call) in
  a process or a worker thread, and its return;
- :mod:`briny.minion.outbox`: what waits for the next session.
- :mod:`briny.minion.masters`: several masters (``master`` as a list): one
  :class:`~briny.minion.masters.MasterLink` per master (its session, pinned
  key, backoff and outbox); hot-hot (a connect loop per master, each job's
  return to the master that published it) or ``failover`` (one master at a
  time, the next when it dies, ``master_failback``).

Threads (``docs/DEVELOPING.md``, "Threads"):

- **the asyncio loop** (one thread) owns the session, the outbox and the job
  table, and runs everything in :class:`MinionAgent` whose name does not say
  otherwise: auth, the publish reader, the heartbeat, requests to the
  master, the event-bus forwarder, and sending each job's return;
- **job processes** (``multiprocessing: True``, the default, when the
  daemon gives a :class:`~briny.minion.launcher.Launcher`): each job runs
  in a process of its own; :class:`~briny.minion.procjobs.ProcessJobs`
  relays its channel on the loop (requests to the master, events, pillar,
  the job registry);
- **worker threads** (a ``ThreadPoolExecutor``): with ``multiprocessing:
  False`` each job runs in one (:mod:`briny.minion.jobrunner`); in process
  mode the pool runs the relay's blocking work (pillar from the master,
  refreshes). A worker reaches the loop only with
  ``asyncio.run_coroutine_threadsafe`` (:meth:`MinionAgent.request_sync`,
  :meth:`MinionAgent._from_worker`), never touching what it owns;
- the event bus (``EventBus(opts, name="minion")``) republishes in its own
  thread and hands every event to :class:`~briny.minion.busrelay.BusRelay`
  (its sink: scheduled onto the loop, never a subscription to join), which
  forwards them to the master on the loop;
- local calls (``briny-call`` without ``--local``) arrive on the loop from
  :mod:`briny.minion.localapi` and run through :meth:`MinionAgent.start_local`,
  the same path as a publish.

A frame that does not parse, a publish not signed by the master's key, one
sealed with another key, a stale or replayed one, is logged and dropped;
the minion keeps serving. A ping without reply within ``auth_timeout``, or
an ``err`` reply, drops the session and the minion authenticates again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

from briny.common import config
from briny.common.exceptions import ConfigError, WireError
from briny.common.ids import id_problem
from briny.common.onloop import assert_on_loop, call_on_loop, wait_on_loop
from briny.common.transport import ClientTransport, topic_for
from briny.minion.auth import MinionAuth, Session
from briny.minion.executor import EX_GENERIC, Executor, Job, JobResult
from briny.minion.pillar import LocalPillar, MasterPillar
from briny.minion.jobregistry import JobRegistry
from briny.minion.jobrunner import JobRunner
from briny.minion.masters import (
    DISABLE,
    FAILOVER,
    Backoff,
    Failover,
    MasterLink,
    Origins,
    alive_interval,
    failback_interval,
    make_links,
    master_mode,
)
from briny.minion import sessionio
from briny.minion.masterless import Masterless, warn_reactor
from briny.minion.outbox import Outbox
from briny.minion.busrelay import dropped_event
from briny.minion.beaconrunner import BeaconRunner, HostReadings, daemon_salt
from briny.minion.scheduler import ScheduleRunner
from briny.minion.takenjids import FILENAME as TAKEN_FILE
from briny.minion.takenjids import TakenJids

log = logging.getLogger(__name__)

DEFAULT_WORKERS = 16  # job threads at once when process_count_max sets no limit

TransportFactory = Callable[[], ClientTransport]

__all__ = ["Backoff", "MinionAgent", "TransportFactory", "public_opts"]


# -- the agent --------------------------------------------------------------------------------


class MinionAgent:
    """One minion: connect, authenticate, serve jobs, reconnect; until :meth:`stop`.

    ``transport_factory`` makes a fresh connection to the master (a
    ``ZmqClient`` in the daemon, ``MemoryHub.client`` in tests); one is used
    per auth attempt and closed when its session dies. With several masters
    (:mod:`briny.minion.masters`) it maps each master's name to its factory,
    in the order of the ``master`` list. ``grains`` are the host's grains
    (detected by the daemon at start; ``{}`` is fine in tests).
    """

    def __init__(
        self,
        opts: dict[str, Any],
        transport_factory: TransportFactory | Mapping[str, TransportFactory],
        *,
        grains: dict[str, Any] | None = None,
        event_bus: bool = True,
        workers: int | None = None,
        launcher: Any = None,
        pool: concurrent.futures.ThreadPoolExecutor | None = None,
        check_key: bool = True,
    ) -> None:
        problem = id_problem(opts.get("id"))
        if problem is not None:
            raise ConfigError(
                f"the minion id {opts.get('id')!r} cannot be used: {problem}; set 'id' in the minion config"
            )
        self.opts = opts
        self.id: str = opts["id"]
        self.topic = topic_for(self.id)
        self.grains: dict[str, Any] = dict(grains or {})
        self.ping_interval = config.number(opts, "ping_interval")
        self.auth_timeout = config.number(opts, "auth_timeout")
        self.acceptance_wait = config.number(opts, "acceptance_wait_time")
        self.shutdown_grace = config.number(opts, "shutdown_grace")
        self.pause: Callable[[float], Awaitable[None]] = self._sleep  # between attempts; tests record it
        self.use_bus = event_bus
        self.auth = MinionAuth(opts, self.id, self.auth_timeout, check_key=check_key)
        self.pub_pem = self.auth.pub_pem
        self.mode = master_mode(opts)
        # Salt's master_type: disable: no master (briny.minion.masterless)
        self.masterless = Masterless(opts) if self.mode == DISABLE else None
        warn_reactor(opts, self.masterless is not None)
        self.links = [] if self.masterless else make_links(opts, self.auth, transport_factory)
        if self.mode == FAILOVER:
            self.ping_interval = alive_interval(opts)
        several = len(self.links) > 1
        self.failover = Failover(self.links, failback_interval(opts)) if self.mode == FAILOVER and several else None
        self.origins = Origins()  # jid -> the master that published it (hot, several masters)
        # ``pool``: job threads shared with other agents (briny-swarm); its owner shuts it down
        self.pool = pool or concurrent.futures.ThreadPoolExecutor(
            max_workers=workers or config.limit(opts, "process_count_max") or DEFAULT_WORKERS,
            thread_name_prefix="briny-job",
        )
        self.registry = JobRegistry()
        local = opts.get("file_client") == "local"
        pillar: Any = LocalPillar(cache=True) if local else MasterPillar(self._fetch_pillar)
        self.executor = Executor(
            opts,
            lambda: self.grains,
            pillar,
            self.registry,
            master=self.request_sync,
            refresh_pillar=self._refresh_pillar,
            refresh_grains=self._refresh_grains,
            schedule=lambda action, args: self.scheduler.control_sync(action, args),
            beacons=lambda action, args: self.beacons.control_sync(action, args),
            release=True,  # its jobs run in this process's threads: free what each made at its end
        )
        self.procs: Any = None
        if launcher is not None:  # multiprocessing: a process per job
            from briny.minion.procjobs import DaemonLinks, ProcessJobs

            links = DaemonLinks(
                opts,
                lambda: self.grains,
                pillar,
                self._request_when_up,
                self._job_event,
                self._refresh_pillar,
                self._refresh_grains,
                self.pool,
                lambda action, args: self.scheduler.control(action, args),
                beacons=lambda action, args: self.beacons.control(action, args),
            )
            self.procs = ProcessJobs(links, self.registry, launcher)
        self.jobs = JobRunner(
            self.id,
            self.executor,
            self.registry,
            self.pool,
            self.procs,
            self.deliver,
            self._spawn,
            self._from_worker,
            taken=TakenJids(Path(str(opts["cachedir"])) / TAKEN_FILE if opts.get("cachedir") else None),
            own_pool=pool is None,
        )
        self.scheduler = ScheduleRunner(
            opts, self.id, self.jobs, lambda: pillar.get(self.opts, self.grains, None), self.pool
        )
        self.beacons = BeaconRunner(
            opts,
            self.id,
            HostReadings(daemon_salt(self.executor)),
            lambda tag, data: self._to_every_master("event", {"tag": tag, "data": data}),
            lambda: pillar.get(self.opts, self.grains, None),
            self.pool,
        )
        self.status = "starting"  # last auth status (of any master), for logs and tests
        self.connected = asyncio.Event()  # set while a session with some master is up (tests wait on it)
        self.attempted = asyncio.Event()  # set once the first auth has an outcome (readiness)
        # what may go to any master (its own master's first: MasterLink.outbox)
        self.outbox = Outbox(config.count(opts, "outbox_max"))
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._bus: Any = None

    # -- the masters, as one (loop) -----------------------------------------------------------
    @property
    def session(self) -> Session | None:
        """The session requests without a master of their own use: the first master's that is up."""
        link = self._live()
        return link.session if link is not None else None

    @property
    def backoff(self) -> Backoff:
        """The first master's reconnect delays (with one master, the only one)."""
        return self.links[0].backoff

    @property
    def auth_count(self) -> int:
        """Sessions opened so far, with every master."""
        return sum(link.auth_count for link in self.links)

    def _live(self) -> MasterLink | None:
        return next((link for link in self.links if link.up), None)

    def _update_connected(self) -> None:
        if any(link.up for link in self.links):
            self.connected.set()
        else:
            self.connected.clear()

    # -- lifecycle (loop) ---------------------------------------------------------------------
    async def run(self) -> None:
        """Serve until :meth:`stop`; then let running jobs finish (up to ``shutdown_grace`` s)
        and send their returns."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        if self.use_bus:
            self._start_bus()
        up = self.connected
        if self.masterless:
            up = asyncio.Event()  # no master to wait for: set once the reactor listens (below)
        self._spawn(self.scheduler.run(up, self._stop))
        self._spawn(self.beacons.run(up, self._stop))
        try:
            if self.masterless:
                self.status = "masterless"
                # the reactor first: the schedule's and beacons' first events, and readiness, after it listens
                try:
                    await self.masterless.start(self._bus is not None, self.executor, self.pool)
                finally:
                    up.set()
                    self.attempted.set()
                await self._stop.wait()
            elif self.failover is not None:
                await self.failover.run(self._connect_once, self.pause, self._stop.is_set)
            else:
                await asyncio.gather(*(self._keep_up(link) for link in self.links))
        finally:
            await self._finish()

    async def _keep_up(self, link: MasterLink) -> None:
        """Hot: serve ``link``'s master, authenticating again whenever its session dies, until stop
        (one master that does not answer never holds up the others)."""
        assert self._stop is not None
        while not self._stop.is_set():
            delay = await self._connect_once(link)
            if delay > 0 and not self._stop.is_set():
                log.debug("next connection attempt to %s in %.2f s", link.name, delay)
                await self.pause(delay)

    def stop(self) -> None:
        """Stop taking jobs and shut down (loop; from another thread use
        ``loop.call_soon_threadsafe(agent.stop)``)."""
        self.jobs.accepting = False
        if self._stop is not None:
            self._stop.set()

    async def _sleep(self, seconds: float) -> None:
        assert self._stop is not None
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _finish(self) -> None:
        await self.jobs.finish(self.shutdown_grace)
        if self.masterless:  # after the jobs: their last events still reach the bus
            await self.masterless.stop()
        for link in self.links:
            if link.up:
                await self._flush_outbox(link)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for link in self.links:
            if link.session is not None:
                link.session.transport.close()
                link.session = None
        self.connected.clear()
        if self._bus is not None:
            self._bus.stop()
        self.jobs.close()
        waiting = len(self.outbox) + sum(len(link.outbox) for link in self.links)
        if waiting:
            log.warning("%d return(s)/event(s) could not be sent before shutdown", waiting)

    # -- one connection (loop) -----------------------------------------------------------------
    async def _connect_once(self, link: MasterLink) -> float:
        """Authenticate with ``link``'s master on a fresh transport and serve until the session
        dies; the delay before the next attempt."""
        if not await link.resolves():  # no connection to a name that does not resolve (said at ERROR)
            return link.backoff.next()
        transport = link.factory()
        transport.subscribe(self.topic)  # before auth: a job published right after is not missed
        session: Session | None = None
        try:
            auth = asyncio.ensure_future(link.auth.authenticate(transport))
            assert self._stop is not None
            stop = asyncio.ensure_future(self._stop.wait())
            await asyncio.wait([auth, stop], return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            if not auth.done():
                auth.cancel()
                await asyncio.gather(auth, return_exceptions=True)
                return 0.0
            outcome = auth.result()
            link.status = self.status = outcome.status
            self.attempted.set()
            if outcome.session is None:
                return link.retry_after(outcome.status, self.acceptance_wait, self.id)
            session = outcome.session
            link.session = session
            link.connected()
            link.auth_count += 1
            self._update_connected()
            log.info("connected to the master as %s (%s)", self.id, link.name)
            await self._serve(link, session)
            return 0.0 if self._stop is not None and self._stop.is_set() else link.backoff.next()
        finally:
            if session is None or not (self._stop is not None and self._stop.is_set()):
                # on shutdown the session stays open until returns are flushed (_finish)
                if link.session is session:
                    link.session = None
                transport.close()
            self._update_connected()

    async def _serve(self, link: MasterLink, session: Session) -> None:
        assert self._stop is not None
        tasks = [
            asyncio.ensure_future(self._read_publishes(link, session)),
            asyncio.ensure_future(self._heartbeat(link, session)),
            asyncio.ensure_future(self._after_auth(link)),
        ]
        if self.failover is not None and self.failover.failback is not None and link is not self.links[0]:
            tasks.append(asyncio.ensure_future(self.failover.watch(link, session)))
        stop = asyncio.ensure_future(self._stop.wait())
        dead = asyncio.ensure_future(session.dead.wait())
        try:
            await asyncio.wait([stop, dead], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks + [stop, dead]:
                task.cancel()
            await asyncio.gather(*tasks, stop, dead, return_exceptions=True)
        if session.dead.is_set() and (self.failover is None or self.failover.back_to is None):
            log.warning("lost the master %s; authenticating again", link.name)

    async def _after_auth(self, link: MasterLink) -> None:
        """Grains first (the master fires ``salt/minion/<id>/start`` on them and hands over jobs
        it kept for this minion), then whatever waited in the outbox."""
        await self.request("grains", {"grains": self.grains, "opts": public_opts(self.opts)}, link=link)
        await self._flush_outbox(link)

    # -- requests (loop) --------------------------------------------------------------------------
    async def request(
        self, cmd: str, payload: dict[str, Any], timeout: float | None = None, *, link: MasterLink | None = None
    ) -> dict[str, Any] | None:
        """One sealed request to ``link``'s master (default: the first master up); the reply
        payload, or None when there is no session, no reply in time or an ``err`` reply (those
        two also mark the session dead)."""
        session = link.session if link is not None else self.session
        return await sessionio.request(session, self.id, cmd, payload, timeout or self.auth_timeout)

    async def deliver(self, cmd: str, payload: dict[str, Any]) -> bool:
        """Send a return or an event: a job's to the master that published it (hot multi-master),
        anything else to the first master up; kept in an outbox (and sent after the next auth)
        when that master cannot take it now. Masterless: an event goes to this minion's own bus,
        a return stays here (as Salt's masterless minion)."""
        if self.masterless:
            return self.masterless.deliver(cmd, payload)
        link = self.origins.of(cmd, payload)
        reply = await self.request(cmd, payload, link=link)
        if reply is None:
            (link.outbox if link is not None else self.outbox).keep(cmd, payload)
            return False
        return True

    async def _to_every_master(self, cmd: str, payload: dict[str, Any]) -> None:
        """An event of the local bus: to every master up, as Salt's ``event.fire_master`` does
        with several (hot) masters; kept for the next one when none is up."""
        links = [link for link in self.links if link.up] if self.mode != FAILOVER else []
        if len(links) < 2:
            await self.deliver(cmd, payload)
            return
        await asyncio.gather(*(self.request(cmd, payload, link=link) for link in links))

    async def _flush_outbox(self, link: MasterLink) -> None:
        """Send what waited for ``link``'s master, then what waited for any, while its session lives."""

        async def send(cmd: str, payload: dict[str, Any]) -> dict[str, Any] | None:
            return await self.request(cmd, payload, link=link)

        def notice(count: int) -> dict[str, Any]:
            return dropped_event(self.id, count, "outbox")

        await link.outbox.flush(send, lambda: link.up, notice)
        await self.outbox.flush(send, lambda: link.up, notice)

    async def _heartbeat(self, link: MasterLink, session: Session) -> None:
        """A ``ping`` when the master has not answered any request of this session for
        ``ping_interval`` seconds: a return or an event answered proves the session as well (and
        the master counts every request as heard), so a busy minion adds no heartbeats to a busy
        master. At most one ping per ``ping_interval``."""
        due = time.monotonic() + self.ping_interval
        while not session.dead.is_set():
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            quiet_until = session.heard + self.ping_interval
            if quiet_until > time.monotonic():
                due = quiet_until
                continue
            await self.request("ping", {}, link=link)  # no reply or an err marks the session dead
            due = time.monotonic() + self.ping_interval

    # -- publishes (loop) -----------------------------------------------------------------------
    async def _read_publishes(self, link: MasterLink, session: Session) -> None:
        while True:
            topic, frame = await session.transport.recv_publish()
            try:
                job = sessionio.open_publish(session, self.id, self.topic, topic, frame)
            except WireError as exc:
                log.warning("dropped a publish from %s: %s", link.name, exc)
                continue
            if self.jobs.take(job):  # once per jid, whichever master sent it
                if len(self.links) > 1 and self.mode != FAILOVER:
                    self.origins.note(job.jid, link)
                self.jobs.start(job)

    def start_local(self, job: Job) -> "asyncio.Task[JobResult] | None":
        """Run a local call (``briny-call`` through :mod:`briny.minion.localapi`) like a publish:
        the task gives the result at once and the return goes to the master after it. None while
        shutting down. Masterless, a call that comes while the daemon starts waits until its
        reactor listens (its events would be missed)."""
        if self.masterless and not self.attempted.is_set() and self.jobs.accepting:
            return self._spawn(self._local_when_ready(job))
        return self.jobs.start_local(job)

    async def _local_when_ready(self, job: Job) -> JobResult:
        await self.attempted.wait()
        task = self.jobs.start_local(job)
        if task is None:
            message = "the minion is shutting down; it takes no new calls"
            return JobResult(job.jid, job.fun, job.fun_args(), message, EX_GENERIC, False, "killed")
        return await task

    def _job_event(self, jid: str, tag: str, data: dict[str, Any]) -> None:
        """An event from a job process (loop): to the master, as a thread job's are sent."""
        self._spawn(self.deliver("event", self.jobs.event_body(jid, tag, data)))

    def _from_worker(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Worker thread: hand a coroutine to the loop without waiting for it."""
        loop = self._loop
        if loop is None or loop.is_closed():
            coro.close()
            return
        try:
            asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:
            coro.close()
            log.debug("the loop is gone; message dropped")

    # -- hooks for jobs (worker threads) ---------------------------------------------------------
    def _fetch_pillar(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Ask the master for this minion's pillar and wait for the answer."""
        return wait_on_loop(self._loop, self.request("pillar", payload), self.auth_timeout + 1, "the pillar request")

    def request_sync(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
        """Worker thread (never the loop): one request (``payload["cmd"]`` names it) through the
        loop, waiting up to ``timeout`` s (default ``auth_timeout``) for a session and the reply;
        the reply payload, or None (no session, no reply, the loop gone). The remote file
        client's channel (:mod:`briny.minion.remotefiles`)."""
        wait = 2 * (timeout or self.auth_timeout) + 1
        what = f"the request {payload.get('cmd', '')!r} to the master"
        return wait_on_loop(self._loop, self._request_when_up(payload, timeout), wait, what)

    async def _request_when_up(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
        """One request (``payload["cmd"]`` names it), waiting up to ``timeout`` s (default
        ``auth_timeout``) for a session first (loop): what a job's ``master`` channel does."""
        body = dict(payload)
        cmd = str(body.pop("cmd", ""))
        wait = timeout or self.auth_timeout
        if self.session is None:
            try:
                await asyncio.wait_for(self.connected.wait(), wait)
            except asyncio.TimeoutError:
                return None
        return await self.request(cmd, body, wait)

    def _refresh_pillar(self) -> bool:
        """Worker thread: forget the kept pillar; with a master, ask it again right away."""
        source = self.executor.pillar
        if isinstance(source, MasterPillar):
            done = source.reload(self.opts)
        else:
            source.refresh()
            done = True
        self._from_worker(self.scheduler.load_pillar())  # the pillar's schedule: entries afresh
        self._from_worker(self.beacons.load_pillar())  # and its beacons:
        return done

    def _refresh_grains(self) -> bool:
        """Worker thread: read this host's grains anew (slow: here, off the loop), then hand them
        to the loop, which owns ``self.grains`` and the links (:meth:`_take_grains`); False when
        the loop did not take them in time (logged)."""
        from briny.minion.host.grains import load_grains

        grains = load_grains(self.opts)
        loop = self._loop
        if loop is None or loop.is_closed():  # no loop (not started, or gone): nothing else touches them
            self.grains = grains
        elif call_on_loop(loop, lambda: self._take_grains(grains), self.auth_timeout + 1, "the grains refresh") is None:
            return False
        self.executor.pillar.refresh()  # pillar depends on grains: the next job asks again
        return True

    def _take_grains(self, grains: dict[str, Any]) -> bool:
        """Loop: keep the new grains and tell every master this minion is connected to."""
        assert_on_loop("the minion's grains and links")
        self.grains = grains
        for link in self.links:
            if link.up:
                self._spawn(self.request("grains", {"grains": grains, "opts": public_opts(self.opts)}, link=link))
        return True

    # -- the local event bus (loop) ---------------------------------------------------------------
    def _start_bus(self) -> None:
        from briny.common.event import EventBus
        from briny.minion.busrelay import BusRelay

        relay = None
        if not self.masterless:  # masterless: no master to forward to (the bus is this minion's own)
            assert self._loop is not None
            hwm = config.count(self.opts, "event_listener_hwm")
            relay = BusRelay(self.id, self._to_every_master, hwm, self._loop)  # the sink: nothing to join
        try:
            self._bus = EventBus(self.opts, name="minion", sink=None if relay is None else relay.take).start_thread()
        except (OSError, ValueError, RuntimeError) as exc:
            log.error("the minion event bus did not start (%s); local events will not reach the master", exc)
            self._bus = None
            return
        if relay is not None:
            self._spawn(relay.run())


# -- helpers ------------------------------------------------------------------------------------


def public_opts(opts: dict[str, Any]) -> dict[str, Any]:
    """This minion's config as it tells the master (with its grains), so templates the master
    renders for it see ``opts`` as they would here: only the keys the master may take
    (:mod:`briny.common.reported`: no paths, module locations, sockets, keys or secrets)."""
    from briny.common import reported

    return reported.public_opts(opts)
