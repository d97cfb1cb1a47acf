"""End-to-end acceptance of issue 5: real ``briny-master`` and ``briny-minion`` processes on 127.0.0.1.

Every scenario drives the daemons only through what an operator has: the
``briny``, ``briny-key`` and ``briny-run`` commands, signals, and (for the
security cases) raw ZeroMQ sockets on the master's ports. Covered: key
states and acceptance (pending, ``-a``, ``-r``, ``-d``, ``auto_accept``,
minions started before the master), every targeting form, returns in the
job cache, ``--async``, ``-b``, ``state.event``, ``manage.status``, a
master restart during a job (with ``briny`` waiting across it), a minion
killed mid-job, a minion restarted while jobs were published to it, the CLI
when the master goes away, SIGTERM to the master or a minion with jobs in
flight, garbage on both master ports, forged publishes, unauthenticated and
replayed requests.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import time
import types
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from briny.common import crypto, handshake, wire
from briny.common.config import load_master_config
from briny.common.event import EventSender
from briny.common.transport import free_ports, topic_for
from briny.master.server import NOT_OPENED

from tests.waiting import join_listener

from .support import Fleet, RawPeer, jid_from, pid_alive, script, tail

NO_RESPONSE = "Minion did not return. [No response]"


def static_json(fleet: Fleet, *args: str, timeout: float = 60.0) -> tuple[int, dict[str, Any]]:
    """``briny --static --out json ARGS``: (exit status, returns by minion)."""
    res = fleet.briny("--static", "--out", "json", *args, timeout=timeout)
    data = res.json() if res.stdout.strip() else {}
    assert isinstance(data, dict), res.stdout
    return res.returncode, data


def ran_jobs(fleet: Fleet, minion_id: str) -> set[str]:
    """The jids a minion's log says it ran."""
    try:
        text = fleet.minions[minion_id].log_file.read_text(errors="replace")
    except FileNotFoundError:
        return set()
    return {line.split("running job ", 1)[1].split(":", 1)[0] for line in text.splitlines() if "running job " in line}


def runs_of(fleet: Fleet, minion_id: str, jid: str) -> int:
    """How many times a minion's log says it started job ``jid`` (over all its processes)."""
    return fleet.minions[minion_id].log_file.read_text(errors="replace").count(f"running job {jid}:")


# -- a raw peer on the master's ROUTER ---------------------------------------------------------


def err_of(raw: bytes | None) -> str | None:
    assert raw is not None, "no reply"
    env = wire.decode(raw)
    return str(wire.clear_payload(env).get("error")) if env.kind == "err" else None


def unanswered(peer: RawPeer, frame: bytes, behind: bytes) -> bool:
    """Whether the master drops ``frame``: ``behind``, sent right after it on the same socket
    (the master handles one peer's frames in order), is answered with no reply to ``frame`` first."""
    first, second = os.urandom(8), os.urandom(8)
    peer.sock.send_multipart([first, frame])
    peer.sock.send_multipart([second, behind])
    while peer.sock.poll(10_000):
        corr = peer.sock.recv_multipart()[0]
        if corr == first:
            return False
        if corr == second:
            return True
    raise AssertionError("the frame sent behind got no reply within 10 s")


def hello(minion_id: str = "m9") -> bytes:
    return handshake.hello(minion_id, os.urandom(handshake.TOKEN_BYTES))


# -- jobs on a shared fleet (m1, m3: role web; m2: role db) ----------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["*"], {"m1", "m2", "m3"}),
        (["m[12]"], {"m1", "m2"}),
        (["-L", "m1,m3"], {"m1", "m3"}),
        (["-G", "role:web"], {"m1", "m3"}),
        (["-G", "tier:front"], {"m1"}),
        (["-E", "m[23]$"], {"m2", "m3"}),
        (["-C", "G@role:web and not L@m1"], {"m3"}),
        (["-C", "E@m[12] or G@role:db"], {"m1", "m2"}),
        (["-C", "L@m1,m2 and not G@role:db"], {"m1"}),
        (["-C", "not G@role:web"], {"m2"}),
        (["-C", "( m1 or m2 ) and not E@m2"], {"m1"}),
    ],
)
def test_every_targeting_form(fleet: Fleet, args: list[str], expected: set[str]) -> None:
    code, data = static_json(fleet, *args, "test.ping")
    assert code == 0
    assert data == {m: True for m in expected}


def test_no_matching_minion_is_an_error(fleet: Fleet) -> None:
    res = fleet.briny("-G", "role:nothing", "test.ping")
    assert res.returncode == 2 and "No minions matched" in res.stdout


def test_returns_land_in_the_job_cache(fleet: Fleet) -> None:
    res = fleet.briny("-v", "*", "test.echo", "hello")
    assert res.returncode == 0, res.stderr
    jid = jid_from(res.stdout)
    assert fleet.lookup_jid(jid) == {"m1": "hello", "m2": "hello", "m3": "hello"}
    jobs = fleet.run("jobs.list_jobs", "--out", "json")
    assert jobs.returncode == 0, jobs.stderr
    job = jobs.json()[jid]
    assert job["Function"] == "test.echo" and job["Target"] == "*" and job["Arguments"] == ["hello"]
    printed = fleet.run("jobs.print_job", jid, "--out", "json").json()[jid]
    assert printed["Result"]["m2"]["return"] == "hello"


def test_async_prints_a_jid_whose_returns_arrive(fleet: Fleet, tmp_path: Path) -> None:
    go = tmp_path / "go"
    held = f"for i in $(seq 600); do [ -e {go} ] && echo done && exit 0; sleep 0.05; done; exit 1"
    res = fleet.briny("--async", "-G", "role:web", "cmd.run", held)
    # it printed the jid while the job could not have ended: it did not wait for it
    assert res.returncode == 0 and res.stdout.startswith("Executed command with job ID: ")
    assert not go.exists()
    jid = jid_from(res.stdout)
    go.touch()
    assert fleet.wait_returns(jid, ["m1", "m3"], timeout=40) == {"m1": "done", "m3": "done"}


def test_batches_of_two(fleet: Fleet) -> None:
    res = fleet.briny("-b", "2", "*", "test.echo", "batched", "--out", "json")
    assert res.returncode == 0, res.stderr
    runs = [line for line in res.stdout.splitlines() if line.startswith("Executing run on")]
    assert len(runs) == 2, res.stdout
    assert runs[0].count("'m") == 2 and runs[1].count("'m") == 1
    assert res.stdout.count('"batched"') == 3
    res = fleet.briny("-b", "34%", "-G", "role:web", "test.echo", "pct", "--out", "json")
    assert res.returncode == 0, res.stderr
    assert [line for line in res.stdout.splitlines() if line.startswith("Executing run on")] == [
        "Executing run on ['m1']",
        "Executing run on ['m3']",
    ]


class Watcher:
    """``briny-run state.event ARGS`` in the background, its output read line by line."""

    def __init__(self, fleet: Fleet, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*script("briny-run"), "-c", str(fleet.master_conf), "state.event", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        self.buffer = b""

    def line(self, timeout: float) -> tuple[str, dict[str, Any]] | None:
        """The next ``tag<TAB>json`` line, or None when none came within ``timeout`` s."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\n", 1)
        tag, body = raw.decode().split("\t", 1)
        return tag, json.loads(body)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def test_state_event_prints_the_returns_as_they_arrive(fleet: Fleet) -> None:
    watch = Watcher(fleet, "salt/job/*/ret/*")
    sender = EventSender(load_master_config(str(fleet.master_conf)), name="master")
    try:
        join_listener(
            types.SimpleNamespace(get_event=watch.line), sender.fire, "salt/job/probe/ret/probe"
        )  # it prints what comes from now on
        code, _ = static_json(fleet, "-L", "m1,m2", "test.echo", "seen")
        assert code == 0
        lines: list[tuple[str, dict[str, Any]]] = []
        deadline = time.monotonic() + 15
        while len(lines) < 2:  # (a late return of an earlier test's job may come too)
            line = watch.line(max(0.0, deadline - time.monotonic()))
            assert line is not None, f"state.event printed only {lines}"
            if line[1].get("return") == "seen":
                lines.append(line)
    finally:
        watch.close()
        sender.close()
    assert sorted(tag.rsplit("/", 1)[1] for tag, _ in lines) == ["m1", "m2"]


def test_state_event_stops_after_count_events(fleet: Fleet) -> None:
    watch = Watcher(fleet, "probe/*", "count=2")
    sender = EventSender(load_master_config(str(fleet.master_conf)), name="master")
    try:
        fired = 0
        while watch.proc.poll() is None:  # until it has seen two (the first ones may come too early)
            assert fired < 400, "state.event count=2 did not stop"
            sender.fire(f"probe/{fired}", {"n": fired})
            fired += 1
            time.sleep(0.05)
        out = watch.proc.stdout.read().decode() if watch.proc.stdout else ""
    finally:
        watch.close()
        sender.close()
    assert watch.proc.returncode == 0
    assert len([line for line in out.splitlines() if line.startswith("probe/")]) == 2, out


def test_a_failing_job_exits_non_zero(fleet: Fleet) -> None:
    code, data = static_json(fleet, "m2", "cmd.retcode", "exit 3")
    assert code == 1 and data == {"m2": 3}


# -- security across real processes --------------------------------------------------------------


def test_garbage_on_both_master_ports_leaves_the_fleet_serving(fleet: Fleet) -> None:
    rnd = os.urandom
    auth = wire.clear("auth", "m9", {"pub": "x", "token": rnd(32)}).encode()
    ctx = zmq.Context.instance()
    dealer = ctx.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(f"tcp://127.0.0.1:{fleet.ret_port}")
    xsub = ctx.socket(zmq.XSUB)
    xsub.setsockopt(zmq.LINGER, 0)
    xsub.connect(f"tcp://127.0.0.1:{fleet.pub_port}")
    try:
        for frames in (
            [rnd(100)],
            [b"", rnd(5000)],
            [rnd(8), rnd(300)],
            [rnd(8), auth[: len(auth) // 2]],
            [rnd(8), auth[:-1]],
            [rnd(8), b"\xde\xad"],
            [rnd(8), msgpack.packb({"v": 1, "k": "req"})],
            [rnd(8), msgpack.packb({"v": 1, "k": "pub", "id": "m1", "t": "x", "n": 5, "b": 1})],
            [rnd(8), msgpack.packb([1, 2, 3])],
            [rnd(8), rnd(20), rnd(20), rnd(20)],
            [rnd(8), b""],
        ):
            dealer.send_multipart(frames)
        for frame in (rnd(64), b"\x01" + rnd(64), b"\x00", b"\x01m:m1\x00", rnd(4096)):
            xsub.send(frame)  # subscription frames, valid and not
        for port in (fleet.ret_port, fleet.pub_port):
            for blob in (rnd(1), rnd(11), rnd(2048), b"\xff" + b"\x00" * 8 + b"\x7f" + rnd(50)):
                with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
                    raw.sendall(blob)
        # behind the garbage on the same socket: answered once the master has been through it
        dealer.send_multipart([b"corr-hello", hello()])
        assert dealer.poll(10_000) and dealer.recv_multipart()[0] == b"corr-hello"
    finally:
        dealer.close()
        xsub.close()
    assert fleet.master.running and all(m.running for m in fleet.minions.values())
    code, data = static_json(fleet, "*", "test.ping")
    assert code == 0 and data == {"m1": True, "m2": True, "m3": True}


def test_forged_publishes_are_never_run(fleet: Fleet, tmp_path: Path) -> None:
    marker = tmp_path / "forged"
    load = {
        "jid": "20990101000000000001",
        "fun": "cmd.run",
        "arg": [f"touch {marker}"],
        "kwarg": {},
        "tgt": "m1",
        "tgt_type": "glob",
        "user": "root",
        "timeout": 5,
    }
    forged = wire.sign(wire.sealed("pub", "m1", os.urandom(32), load), Ed25519PrivateKey.generate()).encode()
    unsigned = wire.sealed("pub", "m1", os.urandom(32), load).encode()
    (rogue_port,) = free_ports(1)
    ctx = zmq.Context.instance()
    rogue = ctx.socket(zmq.PUB)  # a rogue publisher bound elsewhere: minions never connect to it
    rogue.setsockopt(zmq.LINGER, 0)
    rogue.bind(f"tcp://127.0.0.1:{rogue_port}")
    peer = RawPeer(fleet.ret_port)
    try:
        for _ in range(10):
            rogue.send_multipart([topic_for("m1"), forged])
            rogue.send_multipart([topic_for("m1"), unsigned])
        # a publish pushed into the master's ROUTER is dropped (minions send only auth and req)
        assert unanswered(peer, forged, behind=hello())
    finally:
        rogue.close()
        peer.close()
    code, data = static_json(fleet, "m1", "test.ping")
    assert code == 0 and data == {"m1": True}
    assert not marker.exists()
    assert load["jid"] not in ran_jobs(fleet, "m1")


@pytest.mark.slow
def test_unauthenticated_and_replayed_requests_are_refused(make_fleet: Any) -> None:
    fleet = make_fleet(["m1"])
    fleet.start()
    peer = RawPeer(fleet.ret_port)
    key = crypto.generate_rsa()
    try:
        # no auth at all: every request is refused with `unauthenticated`
        for cmd in ("ping", "grains", "ret", "event", "pillar", "file_list", "nonsense"):
            frame = wire.sealed("req", "ghost", os.urandom(32), {"cmd": cmd, "jid": "1" * 20}).encode()
            assert err_of(peer.ask(frame)) == "unauthenticated", cmd
        # a pending minion has no session either
        assert peer.auth("raw1", key) == "pending"
        frame = wire.sealed("req", "raw1", os.urandom(32), {"cmd": "ping"}).encode()
        assert err_of(peer.ask(frame)) == "unauthenticated"
        # a request claiming a connected minion's id but sealed with another key: refused, to
        # the sender only (m1 keeps its session, below)
        frame = wire.sealed("req", "m1", os.urandom(32), {"cmd": "event", "tag": "x", "data": {}}).encode()
        assert err_of(peer.ask(frame)) == NOT_OPENED
        # accepted: a request works once; its replay is dropped; a fresh one works again
        assert fleet.key("-a", "raw1", "-y").returncode == 0
        assert peer.auth("raw1", key) == "accepted"
        assert peer.session is not None
        ping = wire.sealed("req", "raw1", peer.session, {"cmd": "ping"}).encode()
        first = peer.ask(ping)
        assert first is not None and wire.decode(first).kind == "rep"
        assert unanswered(peer, ping, behind=wire.sealed("req", "raw1", peer.session, {"cmd": "ping"}).encode())
        again = peer.ask(wire.sealed("req", "raw1", peer.session, {"cmd": "ping"}).encode())
        assert again is not None and wire.decode(again).kind == "rep"
    finally:
        peer.close()
    code, data = static_json(fleet, "m1", "test.ping")
    assert code == 0 and data == {"m1": True}


# -- keys ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_key_states_accept_reject_delete(make_fleet: Any) -> None:
    fleet = make_fleet(["m1", "m2", "m3"])
    fleet.start(accept=False)
    fleet.wait_keys("minions_pre", ["m1", "m2", "m3"])
    assert fleet.keys()["minions"] == []
    res = fleet.briny("*", "test.ping")  # nothing accepted: nothing runs
    assert res.returncode == 2 and "No minions matched" in res.stdout

    assert fleet.key("-a", "m1", "-y").returncode == 0
    assert fleet.key("-a", "m2", "-y").returncode == 0
    fleet.wait_connected(["m1", "m2"])
    code, data = static_json(fleet, "*", "test.ping")
    assert code == 0 and data == {"m1": True, "m2": True}
    assert "m3" in fleet.keys()["minions_pre"] and not ran_jobs(fleet, "m3")

    # spy on the publish port: who is still sent anything
    spy = zmq.Context.instance().socket(zmq.SUB)
    spy.setsockopt(zmq.LINGER, 0)
    for minion_id in ("m1", "m2"):
        spy.setsockopt(zmq.SUBSCRIBE, topic_for(minion_id))
    spy.connect(f"tcp://127.0.0.1:{fleet.pub_port}")
    try:
        for _ in range(100):  # joined: jobs for m1 until the spy gets one of their publishes
            fleet.publish("m1", "test.ping")
            if spy.poll(200):
                break
        else:
            raise AssertionError("the spy never got a publish")
        start = time.time()  # publishes are stamped by the master (same host, same clock)
        res = fleet.key("-r", "m2", "--include-accepted", "-y")
        assert res.returncode == 0 and "Key for minion m2 rejected." in res.stdout
        assert fleet.keys()["minions_rejected"] == ["m2"]
        before = ran_jobs(fleet, "m2")
        for _ in range(2):
            code, data = static_json(fleet, "*", "test.ping")
            assert code == 0 and data == {"m1": True}
        res = fleet.briny("m2", "test.ping")
        assert res.returncode == 2 and "No minions matched" in res.stdout
        marker = time.time()
        fleet.publish("m1", "test.ping")  # its publish goes out after all the above
        topics: list[bytes] = []
        while True:
            assert spy.poll(10_000), "the marker job's publish never reached the spy"
            topic, frame = spy.recv_multipart()
            stamped = wire.decode(frame).ts
            if stamped < start:
                continue  # a publish of the joining jobs
            if topic == topic_for("m1") and stamped >= marker:
                break
            topics.append(topic)
    finally:
        spy.close()
    assert topic_for("m1") in topics and topic_for("m2") not in topics
    assert ran_jobs(fleet, "m2") == before
    assert fleet.minions["m2"].running  # a rejected minion waits; it runs nothing

    # delete: an accepted key goes, the minion comes back as pending and runs nothing more
    res = fleet.key("-d", "m1", "-y")
    assert res.returncode == 0 and "Key for minion m1 deleted." in res.stdout
    fleet.wait_keys("minions_pre", ["m1"], timeout=20)
    res = fleet.briny("*", "test.ping")
    assert res.returncode == 2 and "No minions matched" in res.stdout
    assert fleet.key("-d", "m3", "-y").returncode == 0
    fleet.wait_keys("minions_pre", ["m3"], timeout=20)
    # and accepting it again brings it back
    assert fleet.key("-a", "m1", "-y").returncode == 0
    fleet.wait_connected(["m1"])
    code, data = static_json(fleet, "*", "test.ping")
    assert code == 0 and data == {"m1": True}


@pytest.mark.slow
def test_auto_accept_with_minions_started_before_the_master(make_fleet: Any) -> None:
    fleet = make_fleet(["a1", "a2"], auto_accept=True)
    for minion_id in fleet.ids:  # boot order: minions first, the master later
        fleet.start_minion(minion_id)
    for minion_id in fleet.ids:  # they try, get no answer, back off
        log = fleet.minions[minion_id].log_file
        fleet.wait(lambda log=log: "did not answer the auth request" in tail(log, 200), 30, f"{minion_id} to try")
    fleet.start_master()
    fleet.wait_connected(["a1", "a2"])
    assert sorted(fleet.keys()["minions"]) == ["a1", "a2"]
    code, data = static_json(fleet, "*", "test.ping")
    assert code == 0 and data == {"a1": True, "a2": True}


# -- failures and signals ------------------------------------------------------------------------


@pytest.mark.slow
def test_master_restart_during_a_job(make_fleet: Any) -> None:
    fleet = make_fleet(["m1", "m2"])
    fleet.start()
    cli = fleet.popen_briny("-v", "-t", "5", "--static", "--out", "json", "*", "test.sleep", "3")
    try:
        fleet.wait(lambda: all(ran_jobs(fleet, m) for m in ("m1", "m2")), 10, "the job to start")
        old = fleet.master.pid
        assert fleet.stop_master(signal.SIGTERM) == 0
        assert not pid_alive(old)
        fleet.start_master()  # same config, same ports
        # the operator's `briny`, waiting across the restart, still gets every return
        out, err = cli.communicate(timeout=40)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(10)
    assert cli.returncode == 0, err
    jid = jid_from(out.splitlines()[0])
    assert json.loads(out[out.index("{") :]) == {"m1": True, "m2": True}
    fleet.wait_connected(["m1", "m2"], timeout=30)
    code, data = static_json(fleet, "*", "test.ping")
    assert code == 0 and data == {"m1": True, "m2": True}
    # the job that ran across the restart is in the new master's job cache
    assert fleet.lookup_jid(jid) == {"m1": True, "m2": True}


@pytest.mark.slow
def test_a_minion_killed_mid_job_is_reported_and_the_cli_does_not_hang(make_fleet: Any) -> None:
    fleet = make_fleet(["m1", "m2"])
    fleet.start()
    start = time.monotonic()
    cli = fleet.popen_briny("-t", "2", "--static", "--out", "json", "*", "test.sleep", "3")
    try:
        fleet.wait(lambda: ran_jobs(fleet, "m2"), 10, "m2 to start the job")
        fleet.stop(fleet.minions["m2"], signal.SIGKILL)
        out, err = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(10)
    elapsed = time.monotonic() - start
    data = json.loads(out)
    assert cli.returncode == 1, err
    assert data["m1"] is True
    assert data["m2"].startswith(NO_RESPONSE)
    data_m2 = data["m2"]
    # -t 2, then gather_job_timeout 2 for the find_job probe; m1 is still running at 2 s and
    # gets another -t: bounded well below anything that looks like a hang
    assert elapsed < 15, elapsed
    status = fleet.run("manage.status", "timeout=2", "--out", "json")
    assert status.returncode == 0, status.stderr
    assert status.json() == {"up": ["m1"], "down": ["m2"]}
    # started again, the same minion (same key) is back and answers; the job it was killed
    # in is not run a second time
    before = fleet.sessions("m2")
    fleet.start_minion("m2")
    fleet.wait_session("m2", before)
    code, data = static_json(fleet, "*", "test.ping")
    assert code == 0 and data == {"m1": True, "m2": True}
    assert runs_of(fleet, "m2", jid_from(data_m2)) == 1
    assert fleet.run("manage.up", "--out", "json").json() == ["m1", "m2"]


@pytest.mark.slow
def test_a_restarted_minion_gets_the_jobs_published_while_it_was_away(make_fleet: Any) -> None:
    fleet = make_fleet(["m1", "m2"])
    fleet.start()
    # killed: the master still holds m2's old session and seals the next jobs with its key
    fleet.stop(fleet.minions["m2"], signal.SIGKILL)
    jid = jid_from(fleet.briny("--async", "*", "test.echo", "while-away").stdout)
    fleet.wait_returns(jid, ["m1"], timeout=15)
    before = fleet.sessions("m2")
    fleet.start_minion("m2")
    fleet.wait_session("m2", before)
    assert fleet.wait_returns(jid, ["m1", "m2"], timeout=15) == {"m1": "while-away", "m2": "while-away"}
    assert runs_of(fleet, "m2", jid) == 1
    # a clean restart followed at once by a job: no "[No response]" for the restarted minion
    assert fleet.stop(fleet.minions["m2"], signal.SIGTERM) == 0
    fleet.start_minion("m2")
    code, data = static_json(fleet, "-t", "5", "*", "test.ping")
    assert code == 0 and data == {"m1": True, "m2": True}


@pytest.mark.slow
def test_sigterm_to_the_master_keeps_returns_in_flight(make_fleet: Any) -> None:
    fleet = make_fleet(["m1", "m2"], minion_env={"m1": {"E2E_DELAY": "0"}, "m2": {"E2E_DELAY": "2"}})
    fleet.start()
    res = fleet.briny("--async", "*", "cmd.run", "sleep $E2E_DELAY; echo slept $E2E_DELAY")
    jid = jid_from(res.stdout)
    fleet.wait_returns(jid, ["m1"], timeout=15)  # m1's return is in; m2 still sleeps
    # and one job whose returns are on the wire as the signal lands
    burst = jid_from(fleet.briny("--async", "*", "test.echo", "burst").stdout)
    assert fleet.stop_master(signal.SIGTERM) == 0
    fleet.start_master()
    assert fleet.lookup_jid(jid).get("m1") == "slept 0"
    returns = fleet.wait_returns(jid, ["m1", "m2"], timeout=20)
    assert returns == {"m1": "slept 0", "m2": "slept 2"}
    assert fleet.wait_returns(burst, ["m1", "m2"], timeout=20) == {"m1": "burst", "m2": "burst"}


@pytest.mark.slow
def test_the_cli_does_not_hang_when_the_master_goes_away(make_fleet: Any) -> None:
    fleet = make_fleet(["m1"], minion_opts={"shutdown_grace": 1})  # its job is still running at the end
    fleet.start()
    start = time.monotonic()
    cli = fleet.popen_briny("-t", "2", "--static", "--out", "json", "*", "test.sleep", "5")
    try:
        fleet.wait(lambda: ran_jobs(fleet, "m1"), 10, "m1 to start the job")
        assert fleet.stop_master(signal.SIGTERM) == 0
        out, err = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(10)
    assert cli.returncode == 1 and json.loads(out)["m1"].startswith(NO_RESPONSE), err
    assert "cannot ask the minions" in err
    assert time.monotonic() - start < 8  # -t 2, then it sees the master is gone
    res = fleet.briny("*", "test.ping")
    assert res.returncode == 2 and "the master is not running" in res.stderr


@pytest.mark.slow
def test_sigterm_to_a_minion_lets_its_running_job_return(make_fleet: Any, tmp_path: Path) -> None:
    fleet = make_fleet(["m1"])
    fleet.start()
    go = tmp_path / "go"
    held = f"for i in $(seq 600); do [ -e {go} ] && echo done && exit 0; sleep 0.05; done; exit 1"
    jid = jid_from(fleet.briny("--async", "m1", "cmd.run", held).stdout)
    fleet.wait(lambda: jid in ran_jobs(fleet, "m1"), 10, "m1 to start the job")
    minion = fleet.minions["m1"]
    os.kill(minion.pid, signal.SIGTERM)
    # it waits for the job it runs (which cannot end before the test lets it)
    fleet.wait(lambda: "running job(s)" in tail(minion.log_file, 50), 10, "m1 to wait for its job")
    assert minion.running
    go.touch()
    assert minion.proc is not None and minion.proc.wait(15) == 0
    assert fleet.lookup_jid(jid) == {"m1": "done"}
