"""The masters a minion serves: its ``master:`` setting read into addresses, and one link per master.

``master`` is one address or a list of them (Salt's multi-master). Each entry is ``host``,
``host:port`` or ``[v6]:port`` (the port is that master's request port, ``master_port``
otherwise, as Salt reads it). Each master names its publish port in its auth reply and the
minion subscribes there (:meth:`briny.minion.auth.MinionAuth.authenticate`); ``publish_port``
is where it subscribes first, and stays when the master names none or the minion's config
sets a ``publish_port`` of its own (not 4505).
``master_type`` says how a list is used:

- ``str`` (Salt's default, "hot-hot"): the minion authenticates with every master, takes jobs
  from any, and returns each job to the master that published it;
- ``failover``: the minion serves the first master that answers and moves on to the next when
  it stops answering (checked every ``master_alive_interval`` s); with ``master_failback`` it
  goes back to an earlier master of the list once that one answers again (tried every
  ``master_failback_interval`` s, default ``master_alive_interval``).

- ``disable``: no master at all (Salt's masterless daemon, with ``file_client: local``): the
  minion runs its schedule, beacons and reactor on its own event bus (:mod:`briny.minion.agent`).

Salt's other types (``func``, ``distributed``) are not supported: a warning names them and the
list is used hot-hot.

Each master's key is pinned on its first accepted auth: with one master in
``pki_dir/minion_master.pub`` (as Salt), with several in ``pki_dir/minion_master_<host>_<port>.pub``
per master, so masters with their own key pairs can serve one minion. A master with no key of
its own pinned yet is checked against ``minion_master.pub`` when it exists (Salt's multi-master
shares one key pair between the masters: a minion moved over from Salt keeps its trust).

A master that cannot be reached is said at ERROR, as Salt says it, naming the host, then retried:
a ``master`` whose name does not resolve (asked before each attempt, as Salt asks before it
connects: no connection is tried until it resolves), or one that does not answer the auth request
within ``auth_timeout``; at the first failure, then at most once a minute while it lasts.

Threads: :class:`MasterLink` and :class:`Failover` live on the minion's loop
(:mod:`briny.minion.agent`).
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import socket
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from briny.common import config
from briny.common.exceptions import ConfigError
from briny.common.transport import ClientTransport
from briny.minion.auth import MinionAuth, Session
from briny.minion.outbox import Outbox

log = logging.getLogger(__name__)

HOT, FAILOVER, DISABLE = "str", "failover", "disable"
REPORT_EVERY = 60.0  # seconds between two ERRORs saying one master still cannot be reached
ORIGINS_KEPT = 1000  # jids whose publishing master the agent remembers (for their returns)
LEGACY_PIN = "minion_master.pub"

_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]+)):(?P<port>\d+)$")


@dataclass(frozen=True)
class MasterAddress:
    """One master of the list: where its request socket listens, and where its publisher is
    looked for until its auth names its own port."""

    host: str
    port: int
    pub_port: int

    @property
    def name(self) -> str:
        """``host:port`` (``[v6]:port``), as logs say it."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def master_addresses(opts: Mapping[str, Any]) -> list[MasterAddress]:
    """The masters ``master`` names, in order; ConfigError for an empty list, an entry that is
    not an address, or a bad port."""
    raw = config.setting(opts, "master")
    entries = raw if isinstance(raw, list) else [raw]
    if not entries:
        raise ConfigError("'master' is an empty list; name at least one master")
    port, pub_port = config.count(opts, "master_port"), config.count(opts, "publish_port")
    found: list[MasterAddress] = []
    for entry in entries:
        if not isinstance(entry, str) or not entry.strip():
            raise ConfigError(f"'master' entries must be addresses (host or host:port), not {entry!r}")
        text = entry.strip()
        match = _HOST_PORT.match(text)
        if match is None:
            found.append(MasterAddress(text.strip("[]"), port, pub_port))
            continue
        number = int(match["port"])
        if not 0 < number < 65536:
            raise ConfigError(f"'master' entry {entry!r}: the port must be within 1-65535")
        found.append(MasterAddress(match["v6"] or match["host"], number, pub_port))
    if len(set(found)) != len(found):
        raise ConfigError(f"'master' lists the same master twice: {entries!r}")
    return found


def master_mode(opts: Mapping[str, Any]) -> str:
    """:data:`HOT`, :data:`FAILOVER` or :data:`DISABLE` from ``master_type`` (an unsupported type
    is warned about and read as :data:`HOT`)."""
    kind = str(opts.get("master_type") or HOT)
    if kind in (HOT, FAILOVER, DISABLE):
        return kind
    log.warning("master_type %r is not supported by briny (only 'str', 'failover', 'disable'); using 'str'", kind)
    return HOT


def alive_interval(opts: Mapping[str, Any]) -> float:
    """Seconds between two checks that the served master answers, in failover mode:
    ``master_alive_interval``, or the heartbeat's ``ping_interval`` when it is 0 or unset."""
    value = opts.get("master_alive_interval") or 0
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"'master_alive_interval' must be a number of seconds, not {value!r}") from None
    if seconds < 0:
        raise ConfigError(f"'master_alive_interval' must not be negative, not {value!r}")
    return seconds or config.number(opts, "ping_interval")


def failback_interval(opts: Mapping[str, Any]) -> float | None:
    """Seconds between attempts to go back to an earlier master (``master_failback``), or None
    when failback is off."""
    if not opts.get("master_failback"):
        return None
    value = opts.get("master_failback_interval") or 0
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"'master_failback_interval' must be a number of seconds, not {value!r}") from None
    return seconds if seconds > 0 else alive_interval(opts)


@dataclass(frozen=True)
class Connector:
    """A real master's connection factory (the daemon's): where it connects, so that the name is
    resolved before each attempt and an unreachable master is named (:meth:`MasterLink.resolves`).
    A plain callable (tests' in-memory transports) is never resolved."""

    address: MasterAddress
    make: Callable[[MasterAddress], ClientTransport]

    def __call__(self) -> ClientTransport:
        return self.make(self.address)


def pin_path(pki_dir: Path, name: str, several: bool) -> Path:
    """Where the key of the master ``name`` (:attr:`MasterAddress.name`) is pinned (see the
    module docstring)."""
    if not several:
        return pki_dir / LEGACY_PIN
    return pki_dir / f"minion_master_{re.sub(r'[^A-Za-z0-9.-]', '_', name)}.pub"


@dataclass
class Backoff:
    """Reconnect delays: doubling from ``min_ms`` to ``max_ms``, with random jitter of up to half
    the interval (upwards below the cap, downwards at it), always within [min_ms, max_ms].
    ``uniform(a, b)`` draws the jitter (tests pin it)."""

    min_ms: float
    max_ms: float
    attempt: int = 0
    uniform: Callable[[float, float], float] = field(default=random.uniform, repr=False)

    def next(self) -> float:
        lo, hi = max(1.0, float(self.min_ms)), max(1.0, float(self.max_ms), float(self.min_ms))
        base = min(hi, lo * (2.0 ** min(self.attempt, 32)))
        self.attempt += 1
        if base < hi:
            delay = min(hi, base + self.uniform(0, base / 2))
        else:
            delay = max(lo, hi - self.uniform(0, hi / 2))
        return delay / 1000.0

    def reset(self) -> None:
        self.attempt = 0


@dataclass
class MasterLink:
    """One master the minion serves: its connection factory, its auth (its pinned key), its
    session while one is up, what waits for it (returns of the jobs it published)."""

    name: str
    factory: Callable[[], ClientTransport]
    auth: MinionAuth
    backoff: Backoff
    session: Session | None = None
    status: str = "starting"  # last auth outcome
    auth_count: int = 0
    outbox: Outbox = field(default_factory=Outbox)
    address: MasterAddress | None = None  # where a :class:`Connector` connects (None: not resolved first)
    reported: float | None = None  # when (monotonic) an unreachable master was last said at ERROR
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    @property
    def up(self) -> bool:
        """Whether a session with this master lives."""
        return self.session is not None and not self.session.dead.is_set()

    async def resolves(self) -> bool:
        """Whether the master's host name resolves (asked in a worker thread, as Salt asks
        before it connects); when not, an ERROR names the host (see :meth:`unreachable`)."""
        if self.address is None:
            return True
        try:
            await asyncio.get_running_loop().getaddrinfo(self.address.host, self.address.port, type=socket.SOCK_STREAM)
        except OSError as exc:  # socket.gaierror: no such name, or no resolver
            self.unreachable(
                f"DNS lookup of the master '{self.address.host}' failed ({exc.strerror or exc}); set 'master' in the "
                "minion config to a name that resolves"
            )
            return False
        return True

    def unreachable(self, why: str) -> None:
        """Log at ERROR (the default log level shows it, as Salt's) that this master cannot be
        reached and that the minion keeps trying: at the first failure, then at most every
        :data:`REPORT_EVERY` s until a session is up again (:meth:`connected`)."""
        now = self.clock()
        if self.reported is not None and now - self.reported < REPORT_EVERY:
            return
        self.reported = now
        log.error("%s; retrying (said again every %.0f s while it lasts)", why, REPORT_EVERY)

    def connected(self) -> None:
        """A session is up: the next time the master cannot be reached is said at once."""
        self.reported = None
        self.backoff.reset()

    def retry_after(self, status: str, acceptance_wait: float, minion_id: str) -> float:
        """Seconds before the next auth attempt after one that gave ``status`` (not accepted)."""
        if status == "pending":
            log.info(
                "this minion's key is pending on %s; accept it there with `briny-key -a %s`; asking again in %.1f s",
                self.name,
                minion_id,
                acceptance_wait,
            )
            return acceptance_wait
        if status in ("rejected", "denied"):
            wait = max(acceptance_wait, self.backoff.max_ms / 1000.0) * 3
            log.error(
                "%s has %s this minion's key; it runs nothing from it. Asking again in %.0f s "
                "(delete the key on the master with `briny-key -d %s` to start over)",
                self.name,
                status,
                wait,
                minion_id,
            )
            return wait
        if status == "no_reply":
            self.unreachable(f"the master {self.name} did not answer the auth request within {self.auth.timeout:g} s")
        return self.backoff.next()  # no reply, or an answer that did not check out


class Failover:
    """``master_type: failover`` over ``links`` (loop): which master to serve, and failback."""

    def __init__(self, links: list[MasterLink], failback: float | None) -> None:
        self.links = links
        self.failback = failback  # seconds between failback attempts; None: no failback
        self.back_to: int | None = None  # the index of the earlier master that answered again

    async def run(
        self,
        connect_once: Callable[[MasterLink], Awaitable[float]],
        pause: Callable[[float], Awaitable[None]],
        stopped: Callable[[], bool],
    ) -> None:
        """Serve the first master of the list that answers (``connect_once`` authenticates and
        serves until the session dies); when it dies, the next one; a whole round without an
        answer waits one backoff delay (``pause``)."""
        index, tried = 0, 0
        while not stopped():
            link = self.links[index]
            count = link.auth_count
            delay = await connect_once(link)
            if stopped():
                break
            served = link.auth_count > count
            if served and self.back_to is not None:
                index, tried, self.back_to = self.back_to, 0, None
                continue
            tried = 0 if served else tried + 1
            index = (index + 1) % len(self.links)
            log.info("failover: trying the master %s", self.links[index].name)
            if tried >= len(self.links):
                tried = 0
                await pause(delay or link.backoff.next())

    async def watch(self, link: MasterLink, session: Session) -> None:
        """While ``link``'s ``session`` lives: every ``failback`` s, authenticate with the masters
        listed before it; once one accepts, end ``session`` (:meth:`run` goes back to that one)."""
        assert self.failback is not None
        earlier = self.links[: self.links.index(link)]
        while not session.dead.is_set():
            await asyncio.sleep(self.failback)
            for index, other in enumerate(earlier):
                transport = other.factory()
                try:
                    outcome = await other.auth.authenticate(transport)
                finally:
                    transport.close()
                if outcome.session is not None:
                    log.info("failback: %s answers again; leaving %s", other.name, link.name)
                    self.back_to = index
                    session.dead.set()
                    return


def make_links(
    opts: Mapping[str, Any],
    auth: MinionAuth,
    factories: Callable[[], ClientTransport] | Mapping[str, Callable[[], ClientTransport]],
) -> list[MasterLink]:
    """One link per master: ``factories`` maps each master's name to its connection factory (or
    is the one master's factory); with several, each has its own pinned key (:func:`pin_path`)."""
    if not isinstance(factories, Mapping):
        named = master_addresses(opts) if opts.get("master") else []
        factories = {named[0].name if len(named) == 1 else "the master": factories}
    several = len(factories) > 1
    links = []
    for name, factory in factories.items():
        own = auth.for_master(name, pin_path(auth.pki_dir, name, several)) if several else auth
        backoff = Backoff(config.number(opts, "recon_default"), config.number(opts, "recon_max"))
        outbox = Outbox(config.count(opts, "outbox_max"))
        address = factory.address if isinstance(factory, Connector) else None
        links.append(MasterLink(name, factory, own, backoff, outbox=outbox, address=address))
    if not links:
        raise ConfigError("no master to connect to; set 'master' in the minion config")
    return links


class Origins:
    """The master that published each of the last :data:`ORIGINS_KEPT` jobs taken (hot mode, several
    masters): where its return and events go."""

    def __init__(self, keep: int = ORIGINS_KEPT) -> None:
        self.keep = keep
        self._links: dict[str, MasterLink] = {}

    def note(self, jid: str, link: MasterLink) -> None:
        self._links[jid] = link
        while len(self._links) > self.keep:
            del self._links[next(iter(self._links))]

    def of(self, cmd: str, payload: Mapping[str, Any]) -> MasterLink | None:
        """The master the ``ret`` or ``event`` ``payload`` goes to; None: any master."""
        if not self._links:
            return None
        data = payload.get("data") if cmd == "event" else payload
        jid = data.get("jid") if isinstance(data, Mapping) else None
        return self._links.get(jid) if isinstance(jid, str) else None
