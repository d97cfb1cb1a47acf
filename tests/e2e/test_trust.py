"""The trust model against real ``briny-master`` / ``briny-minion`` processes on 127.0.0.1.

- Salt's documented ``master_finger`` workflow: the fingerprint ``briny-key -F master`` prints
  for ``master.pub``, copied into a minion's ``master_finger``, lets that minion in; a wrong one
  is refused by the minion before it signs anything (issue 9);
- an auth made with only a minion's public key (read from the master's key folder) is refused
  and the minion never has to authenticate again: every ``test.ping`` answers (issue 11, 3);
- an auth captured on the wire is refused when sent again, also after a master restart
  (issue 11, 4).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from briny.common import crypto, handshake, wire

from .support import Fleet, RawPeer

pytestmark = pytest.mark.slow


def ping(fleet: Fleet, tgt: str) -> dict[str, Any]:
    res = fleet.briny("--static", "--out", "json", tgt, "test.ping")
    assert res.returncode == 0, (res.stdout, res.stderr)
    return dict(res.json())


def err_of(raw: bytes | None) -> str:
    assert raw is not None, "no reply"
    env = wire.decode(raw)
    assert env.kind == "err", f"expected an err reply, got {env.kind}"
    return str(wire.clear_payload(env)["error"])


def master_pub_finger(output: str) -> str:
    """The ``master.pub`` line under ``Local Keys:`` of ``briny-key -F master``."""
    lines = output.splitlines()
    local = lines.index("Local Keys:")
    for line in lines[local + 1 :]:
        if line.startswith("master.pub:"):
            return line.split(":", 1)[1].strip()
        if line.endswith("Keys:"):
            break
    raise AssertionError(f"no master.pub fingerprint in:\n{output}")


def test_master_finger_copied_from_briny_key_lets_the_minion_in(make_fleet: Any) -> None:
    fleet = make_fleet([])
    fleet.start_master()
    res = fleet.key("-F", "master")
    assert res.returncode == 0, res.stderr
    finger = master_pub_finger(res.stdout)
    assert len(finger.split(":")) == 32
    fleet.add_minion("good", master_finger=finger)
    fleet.add_minion("bad", master_finger="ab:" * 31 + "ab")
    fleet.start_minion("good")
    fleet.start_minion("bad")
    fleet.wait_keys("minions_pre", ["good"])
    assert fleet.key("-a", "good", "-y").returncode == 0
    fleet.wait_connected(["good"])
    assert ping(fleet, "*") == {"good": True}
    pinned = fleet.minions["good"].root / "pki" / "minion_master.pub"
    assert pinned.read_text() == (fleet.master_dir / "pki" / "master.pub").read_text()
    # the wrong finger: the minion refuses the master's challenge and signs nothing, so the
    # master never even learns its key
    bad_log = fleet.minions["bad"].log_file
    fleet.wait(
        lambda: bad_log.exists() and "does not match master_finger" in bad_log.read_text(),
        20,
        "the minion with a wrong master_finger to refuse the master",
    )
    assert not any("bad" in ids for ids in fleet.keys().values())
    assert not (fleet.minions["bad"].root / "pki" / "minion_master.pub").exists()
    assert fleet.minions["bad"].running
    assert ping(fleet, "*") == {"good": True}


@pytest.mark.slow
def test_auths_made_with_only_the_public_key_do_not_cut_the_minion_off(make_fleet: Any) -> None:
    fleet = make_fleet(["m1"])
    fleet.start()
    victim_pub = (fleet.master_dir / "pki" / "minions" / "m1").read_text()  # public, anyone may hold it
    sessions = fleet.sessions("m1")
    attacker = crypto.generate_rsa()
    peer = RawPeer(fleet.ret_port)
    try:
        for i in range(8):
            token = os.urandom(handshake.TOKEN_BYTES)
            raw = peer.ask(handshake.hello("m1", token))
            assert raw is not None, "no challenge"
            offer = handshake.read_challenge(wire.decode(raw), "m1", token)
            if i % 2:  # random bytes for a signature
                frame = wire.clear(
                    "auth",
                    "m1",
                    {"pub": victim_pub, "token": token, "sig": os.urandom(256), "challenge": offer.challenge},
                ).encode()
            else:  # signed, but with the attacker's own key
                frame = handshake.auth_request(
                    "m1", attacker, victim_pub, token, offer.challenge, crypto.fingerprint(offer.master_pub)
                )
            assert "not signed by the key it offers" in err_of(peer.ask(frame))
            assert ping(fleet, "m1") == {"m1": True}
    finally:
        peer.close()
    assert fleet.sessions("m1") == sessions  # its session was never replaced
    assert "lost the master" not in fleet.minions["m1"].log_file.read_text()


@pytest.mark.slow
def test_a_captured_auth_is_refused_after_a_master_restart(make_fleet: Any) -> None:
    fleet = make_fleet(["m1"], auto_accept=True)
    fleet.start()
    key = crypto.generate_rsa()
    peer = RawPeer(fleet.ret_port)
    try:
        assert peer.auth("raw1", key) == "accepted"
        captured, old_session = peer.signed_auth, peer.session
        assert "unknown, used or expired challenge" in err_of(peer.ask(captured))
    finally:
        peer.close()
    fleet.stop_master()
    fleet.start_master()
    peer = RawPeer(fleet.ret_port)
    try:
        assert "unknown, used or expired challenge" in err_of(peer.ask(captured))
        assert old_session is not None
        stale = wire.sealed("req", "raw1", old_session, {"cmd": "ping"}).encode()
        assert err_of(peer.ask(stale)) == "unauthenticated"  # no session came of it
    finally:
        peer.close()
    fleet.wait_connected(["m1"])
    assert ping(fleet, "m1") == {"m1": True}
