#!/usr/bin/env python3
"""Memory of a real master under pre-auth decoding bombs and an auth flood (issue 11, finding 6).

Starts one ``briny-master`` and two ``briny-minion`` processes on 127.0.0.1
(keys accepted), then, for each case below, resets the master's peak RSS
(``/proc/<pid>/clear_refs``, needs root or the master's user), sends the
frames from a raw ZeroMQ DEALER (a peer with no key and no session), waits
until the master has handled them (a probe request it must answer, then its
RSS steady) and reads its peak RSS (``VmHWM``). Then both minions must
still answer ``briny '*' test.ping``, and the master's RSS and PSS
(``smaps_rollup``) are read once it is steady again (after that ping: glibc
returns the freed top of its heap to the system only on a later ``free``).

- **envelope bomb**: one 8 MiB frame that is an array of 8 Mi empty maps
  (the frame itself, before any envelope check);
- **auth-body bombs**: three well-formed ``auth`` envelopes whose body is
  such an 8 MiB array;
- **auth flood**: 12000 well-formed ``auth`` frames of ~16 KiB each (a junk
  ``pub`` of 16 000 characters, the largest the master reads), sent as fast
  as the socket takes them, four times; a ``briny '*' test.ping`` runs while
  the master works through the first.

Targets: no case grows the master's peak RSS by more than 64 MiB; once a
bomb is handled its RSS is at most 32 MiB above where it was; the highest
RSS after floods 3 and 4 is at most 8 MiB above the highest after floods 1
and 2 (the first floods grow the allocator's free lists, which glibc keeps
and gives back in steps; what later floods add is what the master really
holds on to); every ping answers.
Prints the figures; exits 1 when a target is missed, 2 when the fleet did not
come up.

Run: ``.venv/bin/python bench/bombs.py`` (as root, or as the user the master
runs as).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import zmq

from briny.common import crypto, wire
from tests.e2e.support import Fleet, FleetError

PEAK_TARGET = 64.0  # MiB of peak RSS growth per case
AFTER_TARGET = 32.0  # MiB of RSS growth once a bomb is handled
AGAIN_TARGET = 8.0  # MiB the RSS high water of later floods may exceed the first two's
FLOODS = 4
BOMB_ITEMS = 8 * 1024 * 1024
FLOOD = 12000
FLOOD_PUB = 16000


def status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise FleetError(f"no {field} in /proc/{pid}/status")


def rollup_kb(pid: int, field: str) -> int:
    """``Rss`` or ``Pss`` from ``/proc/<pid>/smaps_rollup`` (a page-table walk: exact, where
    ``VmRSS`` in ``status`` is a counter the kernel may update late)."""
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise FleetError(f"no {field} in /proc/{pid}/smaps_rollup")


def reset_peak(pid: int) -> None:
    with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")


def bomb(items: int = BOMB_ITEMS) -> bytes:
    """msgpack of an array of ``items`` empty maps: one byte each on the wire."""
    return b"\xdd" + items.to_bytes(4, "big") + b"\x80" * items


def auth_frame(minion_id: str, body: bytes) -> bytes:
    return wire.Envelope("auth", minion_id, time.time(), crypto.new_nonce(), body).encode()


def probe(sock: zmq.Socket, timeout: float = 120.0) -> float:
    """Send a request for an id with no session and wait for the master's ``err`` reply: the
    master handles frames in order, so everything sent before has been decoded. Seconds waited."""
    start = time.monotonic()
    corr = os.urandom(8)
    env = wire.Envelope("req", "bench-probe", time.time(), crypto.new_nonce(), b"\0" * 16)
    sock.send_multipart([corr, env.encode()])
    while True:
        left = timeout - (time.monotonic() - start)
        if left <= 0 or not sock.poll(int(left * 1000)):
            raise FleetError(f"the master did not answer the probe within {timeout:g} s")
        parts = sock.recv_multipart()
        if parts and parts[0] == corr:
            return time.monotonic() - start


def settle(pid: int, quiet: float = 1.0, bound: float = 30.0) -> None:
    """Wait until the master's RSS stops moving (auth work runs in its threads after the probe)."""
    deadline = time.monotonic() + bound
    last, since = rollup_kb(pid, "Rss"), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = rollup_kb(pid, "Rss")
        if abs(now - last) > 256:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return


def pings_ok(fleet: Fleet) -> tuple[bool, float]:
    res = fleet.briny("--static", "--out", "json", "-t", "20", "*", "test.ping", timeout=90)
    data = res.json() if res.stdout.strip() else {}
    ok = isinstance(data, dict) and all(data.get(m) is True for m in fleet.ids)
    return ok, res.elapsed


def run_case(fleet: Fleet, name: str, frames: Iterable[bytes], ping_during: bool = False) -> dict[str, Any]:
    pid = fleet.master.pid
    settle(pid)
    reset_peak(pid)
    base_rss, base_pss = rollup_kb(pid, "Rss"), rollup_kb(pid, "Pss")
    sock = dealer(fleet)
    try:
        start = time.monotonic()
        sent = count = 0
        for frame in frames:
            sock.send_multipart([os.urandom(8), frame])
            sent += len(frame)
            count += 1
        during = pings_ok(fleet) if ping_during else None
        waited = probe(sock)
        handled = time.monotonic() - start
        settle(pid)
    finally:
        sock.close()
    peak = status_kb(pid, "VmHWM")
    # glibc gives the freed top of its heap back on a later free(): read the memory after the
    # master served one ordinary job, as it would in use
    after_ok, after_s = pings_ok(fleet)
    settle(pid)
    rss, pss = rollup_kb(pid, "Rss"), rollup_kb(pid, "Pss")
    return {
        "name": name,
        "sent": sent / 2**20,
        "frames": count,
        "base": base_rss / 1024,
        "rss": rss / 1024,
        "peak": (peak - base_rss) / 1024,
        "after": (rss - base_rss) / 1024,
        "pss_after": (pss - base_pss) / 1024,
        "handled": handled,
        "probe": waited,
        "during": during,
        "ping_after": (after_ok, after_s),
        "alive": fleet.master.running,
    }


def dealer(fleet: Fleet) -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, 0)
    sock.connect(f"tcp://127.0.0.1:{fleet.ret_port}")
    return sock


def flood_frames(fleet: Fleet) -> list[bytes]:
    """The flood: well-formed auth frames with a junk key. Where the master hands out challenges
    (``briny.common.handshake``, auth protocol 2) each frame carries one, taken from a hello
    first, so the flood reaches the auth workers; a junk signature is refused there."""
    junk_pub = "x" * FLOOD_PUB
    try:
        from briny.common import handshake  # type: ignore[attr-defined]
    except ImportError:
        return [auth_frame(f"flood{i}", wire.pack({"pub": junk_pub, "token": os.urandom(32)})) for i in range(FLOOD)]
    sock = dealer(fleet)
    tokens: dict[bytes, tuple[str, bytes]] = {}
    frames: list[bytes] = []
    try:
        for i in range(FLOOD):
            corr, token = os.urandom(8), os.urandom(32)
            tokens[corr] = (f"flood{i}", token)
            sock.send_multipart([corr, handshake.hello(f"flood{i}", token)])
        deadline = time.monotonic() + 60
        while tokens and sock.poll(max(1, int((deadline - time.monotonic()) * 1000))):
            corr, raw = sock.recv_multipart()
            minion_id, token = tokens.pop(corr)
            offer = handshake.read_challenge(wire.decode(raw), minion_id, token)
            frames.append(
                wire.clear(
                    "auth",
                    minion_id,
                    {"pub": junk_pub, "token": token, "challenge": offer.challenge, "sig": b"s" * 256},
                ).encode()
            )
    finally:
        sock.close()
    if tokens:
        raise FleetError(f"{len(tokens)} hellos got no challenge")
    return frames


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="bbm", dir="/tmp"))
    fleet = Fleet(root, ["bomb1", "bomb2"], log_level="warning")
    failed = False
    try:
        try:
            fleet.start(timeout=120)
        except FleetError as exc:
            print(f"the fleet did not come up: {str(exc)[:2000]}", file=sys.stderr)
            return 2
        payload = bomb()
        print(
            f"master pid {fleet.master.pid}; targets: peak RSS growth <= {PEAK_TARGET:.0f} MiB, "
            f"RSS growth after a bomb <= {AFTER_TARGET:.0f} MiB, later floods' RSS high water <= "
            f"{AGAIN_TARGET:.0f} MiB over the first two's; every ping answers"
        )
        bombs = [
            ("envelope bomb (1 x 8 MiB)", [payload]),
            ("auth-body bombs (3 x 8 MiB)", [auth_frame(f"bomb-auth{i}", payload) for i in range(3)]),
        ]
        for name, frames in bombs:
            r = run_case(fleet, name, frames)
            failed = report(r, r["after"] <= AFTER_TARGET) or failed
        floods = []
        for n in range(1, FLOODS + 1):
            name = f"auth flood {n}/{FLOODS} ({FLOOD} x {FLOOD_PUB // 1000} kB)"
            floods.append(run_case(fleet, name, flood_frames(fleet), n == 1))
            failed = report(floods[-1], True) or failed
        # the first floods grow the allocator's free lists (glibc keeps freed heap, and gives it
        # back in steps of ~16 MiB on a later free): compare high waters, not single readings.
        # What later floods add over the first two is what the master keeps per flood (the
        # replay guard's nonces, forgotten after 300 s)
        kept = max(f["rss"] for f in floods[2:]) - max(f["rss"] for f in floods[:2])
        ok = kept <= AGAIN_TARGET
        failed = failed or not ok
        print(
            f"  floods 3 to {FLOODS} raised the master's RSS high water {kept:+.1f} MiB over floods 1 "
            f"and 2   [target <= {AGAIN_TARGET:.0f} MiB: {'ok' if ok else 'MISSED'}]"
        )
    finally:
        fleet.close()
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


def report(r: dict[str, Any], after_ok: bool) -> bool:
    """Print one case; True when it missed a target."""
    ok_during = r["during"] is None or r["during"][0]
    ok = r["peak"] <= PEAK_TARGET and after_ok and r["ping_after"][0] and ok_during and r["alive"]
    extra = ""
    if r["during"] is not None:
        extra = f", ping during {'ok' if r['during'][0] else 'FAILED'} in {r['during'][1]:.2f} s"
    print(
        f"{r['name']}: sent {r['sent']:.1f} MiB in {r['frames']} frames; master RSS "
        f"{r['base']:.1f} MiB before, peak +{r['peak']:.1f} MiB, after {r['after']:+.1f} MiB "
        f"(PSS {r['pss_after']:+.1f} MiB); handled in {r['handled']:.2f} s{extra}, ping after "
        f"{'ok' if r['ping_after'][0] else 'FAILED'} in {r['ping_after'][1]:.2f} s   "
        f"[{'ok' if ok else 'MISSED'}]"
    )
    sys.stdout.flush()
    return not ok


if __name__ == "__main__":
    sys.exit(main())
