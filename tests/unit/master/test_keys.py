"""The key store (master/keys/store.py): layout, auth decisions, operator moves, fingerprints."""

from __future__ import annotations

import logging
import os
import stat
import time

import pytest

from briny.common import crypto
from briny.common.exceptions import ConfigError, SaltInvocationError
from briny.master.keys import store as keysmod
from briny.master.keys.store import ACC, DEN, PEND, REJ, KeyChange, KeyStore

# A public key and the fingerprint `salt-key -f` (Salt 3007.17) printed for it.
SALT_KEY = """-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAyu3G22uwDGFCXroeBiDV
Fj4MMTYVZJiXrF9d4J6lY8Q3KYp8Kg3plGygDVYEJ1rhiXy86/83W6kn7bfx/UdK
whBZ+I+XI2R+Y6xhL99aji6iL+Rgt9p6m7ojb99gO9qNfOYfDuiaiGJVg2j/LHQf
OkKXGj7NmSdwDORYOo4LzTk2p0kkyYOgVFRhHHnNsx7bDx8oh/yePNYumA5Agq5H
+LwJB2OKyRY7hBv4lArT78mY4i9kVmXzzJkMTSBTjxNl3UEUkK2ra2e8Q9gOll8d
TtEj5EjztOL/WuiPhimX8z4Fs/9/Ec0QSIwcRJ7lmC+2aWAHudWX4Fo0Pqqjasvz
owIDAQAB
-----END PUBLIC KEY-----
"""
SALT_FINGER = "16:cb:e1:37:46:9a:a5:8a:31:4d:ca:72:dc:1f:e7:95:39:8d:cd:da:c2:22:50:40:14:24:f4:da:44:55:b9:22"
# and with `hash_type: md5` in the master config
SALT_FINGER_MD5 = "aa:29:e7:a5:3e:32:cd:46:b6:c0:cf:c1:32:a3:14:c1"


@pytest.fixture
def store(tmp_path):
    return KeyStore({"pki_dir": str(tmp_path / "pki"), "sock_dir": str(tmp_path / "sock")})


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_master_keys_created_once_with_safe_modes(store):
    assert store.ensure_master_keys() is True
    pem = os.path.join(store.pki_dir, "master.pem")
    assert _mode(pem) == 0o600
    assert _mode(store.pki_dir) == 0o700
    for folder in (ACC, PEND, REJ, DEN):
        assert _mode(os.path.join(store.pki_dir, folder)) == 0o700
    pub = store.master_public_pem()
    assert pub.startswith("-----BEGIN PUBLIC KEY-----")
    assert store.master_key().key_size == 2048
    assert store.ensure_master_keys() is False
    assert store.master_public_pem() == pub
    assert store.local_keys() == ["master.pem", "master.pub"]


def test_new_minion_goes_pending_then_accepted(store, pubkeys):
    assert store.status("m1") is None
    decision = store.authorize("m1", pubkeys[0])
    assert decision.status == "pending"
    assert decision.changes == [KeyChange("m1", "pend", None, PEND)]
    assert decision.event["act"] == "pend" and decision.event["result"] is True
    assert store.status("m1") == "pending"
    # same key again: still pending, nothing changes
    again = store.authorize("m1", pubkeys[0])
    assert again.status == "pending" and again.changes == []
    changes = store.accept("m1")
    assert changes == [KeyChange("m1", "accept", PEND, ACC)]
    assert store.status("m1") == "accepted"
    assert store.register("m1", pubkeys[0]) == "accepted"
    assert store.public_key("m1") == pubkeys[0]
    assert store.accepted_ids() == ["m1"]


def test_auto_accept(store, pubkeys):
    d = store.authorize("m1", pubkeys[0], auto_accept=True)
    assert d.status == "accepted" and d.changes == [KeyChange("m1", "accept", None, ACC)]
    store.authorize("m2", pubkeys[1])
    assert store.register("m2", pubkeys[1], auto_accept=True) == "accepted"
    assert store.list_keys()[PEND] == []


def test_auto_accept_from_opts(tmp_path, pubkeys):
    store = KeyStore({"pki_dir": str(tmp_path / "pki"), "auto_accept": True})
    assert store.authorize("m1", pubkeys[0]).status == "accepted"


def test_changed_key_of_accepted_minion_is_denied(store, pubkeys):
    store.authorize("m1", pubkeys[0], auto_accept=True)
    d = store.authorize("m1", pubkeys[1])
    assert d.status == "denied"
    assert d.event == {"result": False, "act": "denied", "id": "m1", "pub": pubkeys[1]}
    assert d.changes == [KeyChange("m1", "denied", None, DEN)]
    # the accepted key stays; the offered one is parked in minions_denied
    assert store.public_key("m1") == pubkeys[0]
    assert store.public_key("m1", DEN) == pubkeys[1]
    assert store.status("m1") == "accepted"
    assert store.list_keys() == {ACC: ["m1"], PEND: [], REJ: [], DEN: ["m1"]}
    # the right key still gets in; auto_accept does not let the wrong one in
    assert store.register("m1", pubkeys[0]) == "accepted"
    assert store.register("m1", pubkeys[2], auto_accept=True) == "denied"


def test_changed_key_of_pending_minion_is_denied_not_replaced(store, pubkeys):
    store.authorize("m1", pubkeys[0])
    assert store.register("m1", pubkeys[1]) == "denied"
    assert store.public_key("m1", PEND) == pubkeys[0]
    assert store.public_key("m1", DEN) == pubkeys[1]
    assert store.register("m1", pubkeys[1], auto_accept=True) == "denied"


def test_rejected_minion_stays_rejected(store, pubkeys):
    store.authorize("m1", pubkeys[0])
    assert store.reject("m1") == [KeyChange("m1", "reject", PEND, REJ)]
    d = store.authorize("m1", pubkeys[0], auto_accept=True)
    assert d.status == "rejected" and d.changes == [] and d.event["result"] is False
    assert store.register("m1", pubkeys[1]) == "rejected"


def test_denied_only_minion_goes_pending(store, pubkeys):
    store.authorize("m1", pubkeys[0], auto_accept=True)
    store.authorize("m1", pubkeys[1])  # denied
    store.delete({ACC: ["m1"]})
    assert store.status("m1") == "denied"
    assert store.register("m1", pubkeys[1]) == "pending"


def test_a_file_in_a_key_folder_that_is_no_id_is_ignored_and_reported(store, pubkeys, caplog):
    store.authorize("m1", pubkeys[0], auto_accept=True)
    acc = os.path.join(store.pki_dir, ACC)
    for name in (".hidden", ".tmp-abc123"):  # a hidden key from before ids were checked; a write
        with open(os.path.join(acc, name), "w") as fh:
            fh.write(pubkeys[1])
    with caplog.at_level(logging.WARNING, logger="briny.master.keys.store"):
        assert KeyStore(store.opts, fire_events=False).list_keys()[ACC] == ["m1"]
    warned = [r.getMessage() for r in caplog.records if "not minion ids" in r.getMessage()]
    assert len(warned) == 1 and "'.hidden'" in warned[0] and ".tmp-" not in warned[0]
    with pytest.raises(SaltInvocationError, match="must not start with '.'"):
        store.authorize(".hidden", pubkeys[1], auto_accept=True)


def test_pem_format_does_not_matter_for_comparison(store, pubkeys):
    from cryptography.hazmat.primitives import serialization

    store.authorize("m1", pubkeys[0], auto_accept=True)
    key = serialization.load_pem_public_key(pubkeys[0].encode())
    pkcs1 = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1).decode()
    assert store.register("m1", pkcs1) == "accepted"
    assert store.register("m1", pubkeys[0].replace("\n", "\r\n")) == "accepted"


@pytest.mark.parametrize("bad_id", ["../x", "a/b", "a\x00b", "..", ".", "", "-x", "a\\b", "x" * 300, ".hidden"])
def test_hostile_ids_never_touch_the_disk(store, pubkeys, tmp_path, bad_id):
    store.ensure_dirs()
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    with pytest.raises(SaltInvocationError):
        store.authorize(bad_id, pubkeys[0], auto_accept=True)
    with pytest.raises(SaltInvocationError):
        store.status(bad_id)
    with pytest.raises(SaltInvocationError):
        store.public_key(bad_id)
    with pytest.raises(SaltInvocationError):
        store.accept({PEND: [bad_id]})
    with pytest.raises(SaltInvocationError):
        store.delete({ACC: [bad_id]})
    after = sorted(str(p) for p in tmp_path.rglob("*") if not p.name.startswith(".keys.lock"))
    assert after == [p for p in before if not p.endswith(".keys.lock")]


def test_unusable_keys_refused(store):
    for junk in ("", "not a key", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "x" * 20000):
        with pytest.raises(SaltInvocationError):
            store.authorize("m1", junk)
    assert store.status("m1") is None


def test_small_and_non_rsa_keys_refused(store):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    small = rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key()
    ecpub = ec.generate_private_key(ec.SECP256R1()).public_key()
    for key in (small, ecpub):
        pem = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        with pytest.raises(SaltInvocationError):
            store.authorize("m1", pem)


def test_operator_globs_and_lists(store, pubkeys):
    for i, name in enumerate(["web1", "web2", "db1"]):
        store.authorize(name, pubkeys[i])
    assert store.name_match("web*") == {PEND: ["web1", "web2"]}
    assert store.name_match("db1,web2") == {PEND: ["db1", "web2"]}
    assert [c.id for c in store.accept("web*")] == ["web1", "web2"]
    assert store.list_keys() == {ACC: ["web1", "web2"], PEND: ["db1"], REJ: [], DEN: []}
    # reject leaves accepted keys alone unless asked
    assert store.reject("web1") == []
    assert store.reject("web1", include_accepted=True) == [KeyChange("web1", "reject", ACC, REJ)]
    assert store.accept("web1") == []
    assert store.accept("web1", include_rejected=True) == [KeyChange("web1", "accept", REJ, ACC)]
    assert [c.id for c in store.reject_all()] == ["db1"]
    assert [(c.id, c.src) for c in store.delete_all()] == [("web1", ACC), ("web2", ACC), ("db1", REJ)]
    assert store.list_keys() == {ACC: [], PEND: [], REJ: [], DEN: []}


def test_accept_denied_key_replaces_accepted(store, pubkeys):
    store.authorize("m1", pubkeys[0], auto_accept=True)
    store.authorize("m1", pubkeys[1])
    changes = store.accept("m1", include_denied=True)
    assert changes == [KeyChange("m1", "accept", DEN, ACC)]
    assert store.public_key("m1") == pubkeys[1]
    assert store.register("m1", pubkeys[1]) == "accepted"


def test_delete_removes_every_folder(store, pubkeys):
    store.authorize("m1", pubkeys[0], auto_accept=True)
    store.authorize("m1", pubkeys[1])
    changes = store.delete("m1")
    assert [(c.act, c.src) for c in changes] == [("delete", ACC), ("delete", DEN)]
    assert changes[0].revokes and not changes[1].revokes
    assert store.status("m1") is None


def test_list_skips_dotfiles_and_bad_names(store, pubkeys):
    store.ensure_dirs()
    for name in (".hidden", ".tmp-abc", "-x"):
        with open(os.path.join(store.pki_dir, PEND, name), "w") as fh:
            fh.write(pubkeys[0])
    os.mkdir(os.path.join(store.pki_dir, PEND, "adir"))
    assert store.list_keys()[PEND] == []


def test_fingerprint_matches_salt_key(store, tmp_path):
    assert crypto.fingerprint(SALT_KEY) == SALT_FINGER
    # salt-key prints the same for a CRLF copy, blank lines, no final newline
    assert crypto.fingerprint(SALT_KEY.replace("\n", "\r\n")) == SALT_FINGER
    assert crypto.fingerprint("\n" + SALT_KEY.rstrip("\n") + "\n\n") == SALT_FINGER
    assert crypto.fingerprint(SALT_KEY.encode(), "MD5") == SALT_FINGER_MD5
    with pytest.raises(ConfigError, match="hash_type 'crc32'"):
        crypto.fingerprint(SALT_KEY, "crc32")
    md5 = KeyStore({"pki_dir": str(tmp_path / "pki-md5"), "hash_type": "md5"}, fire_events=False)
    md5.authorize("m1", SALT_KEY)
    assert md5.fingerprint("m1") == SALT_FINGER_MD5
    store.authorize("m1", SALT_KEY)
    assert store.fingerprint("m1") == SALT_FINGER
    assert store.fingerprints("m1") == {PEND: {"m1": SALT_FINGER}}
    store.ensure_master_keys()
    local = store.fingerprints("master*")["local"]
    assert sorted(local) == ["master.pem", "master.pub"]
    assert store.fingerprint("nope") is None


def test_cache_sees_changes_by_other_processes(store, pubkeys):
    store.authorize("m1", pubkeys[0])
    assert store.status("m1") == "pending"
    other = KeyStore(store.opts)  # another process's view
    assert other.status("m1") == "pending"
    store.accept("m1")
    assert other.status("m1") == "accepted"
    assert other.public_key("m1") == pubkeys[0]
    store.delete("m1")
    store.authorize("m1", pubkeys[1], auto_accept=True)
    assert other.public_key("m1") == pubkeys[1]
    assert other.public_key_obj("m1").public_numbers() == store.public_key_obj("m1").public_numbers()


def test_listing_is_cached_and_status_never_scans(store, pubkeys, monkeypatch):
    store.authorize("m1", pubkeys[0], auto_accept=True)
    store.accepted_ids()
    for listing in store.table._listings.values():  # type: ignore[attr-defined]  # the folder table's cache
        listing.racy = False  # as if the folder had not changed for a while
    calls = []
    real = os.scandir
    monkeypatch.setattr(keysmod.os, "scandir", lambda p: calls.append(p) or real(p))
    for _ in range(100):
        assert store.status("m1") == "accepted"
        assert store.accepted_ids() == ["m1"]
    assert calls == []
    store.authorize("m2", pubkeys[1], auto_accept=True)
    assert store.accepted_ids() == ["m1", "m2"]
    assert len(calls) == 1


def test_key_writes_are_atomic_files(store, pubkeys):
    store.authorize("m1", pubkeys[0])
    folder = os.path.join(store.pki_dir, PEND)
    assert os.listdir(folder) == ["m1"]
    with open(os.path.join(folder, "m1")) as fh:
        assert fh.read() == pubkeys[0]


def test_operator_changes_fire_salt_key_events(store, pubkeys, monkeypatch):
    fired = []
    monkeypatch.setattr(
        "briny.common.event.fire_event", lambda opts, tag, data, name="minion", **kw: fired.append((tag, data, name))
    )
    store.authorize("m1", pubkeys[0])
    assert fired == []  # auth fires nothing itself
    store.accept("m1")
    changes = store.reject("m1", include_accepted=True)
    store.delete("m1")
    assert fired == [
        ("salt/key", {"result": True, "act": "accept", "id": "m1"}, "master"),
        ("salt/key", {"result": True, "act": "reject", "id": "m1"}, "master"),
        ("salt/key", {"result": True, "act": "delete", "id": "m1"}, "master"),
    ]
    assert changes[0].revokes


def _next_generation(store: KeyStore, gen: int) -> tuple[int, dict]:
    """The store's folders once a scan saw a change after ``gen`` (a change within the file
    system's timestamp tick shows at the next rescan of a racy listing, within ~20 ms)."""
    deadline = time.monotonic() + 5
    while True:
        now, folders = store.folders()
        if now > gen or time.monotonic() > deadline:
            return now, folders
        time.sleep(0.005)


def test_generation_counts_the_scans_that_find_a_change(store, pubkeys):
    gen, folders = store.folders()
    assert folders == {ACC: frozenset(), PEND: frozenset(), REJ: frozenset(), DEN: frozenset()}
    other = KeyStore(store.opts, fire_events=False)  # another process: briny-key
    other.authorize("m1", pubkeys[0])
    gen2, folders = _next_generation(store, gen)
    assert gen2 > gen and folders[PEND] == {"m1"}
    other.accept("m1")
    gen3, folders = _next_generation(store, gen2)
    assert gen3 > gen2 and folders[ACC] == {"m1"} and folders[PEND] == frozenset()
    os.unlink(os.path.join(store.pki_dir, ACC, "m1"))  # by hand
    gen4, folders = _next_generation(store, gen3)
    assert gen4 > gen3 and folders[ACC] == frozenset()
    # nothing changed: a rescan (the listings are racy for a second) finds the same names
    assert store.folders()[0] == gen4


def test_fire_event_without_bus_returns(store, pubkeys):
    # no bus is running under sock_dir: the change still happens, quickly
    store.authorize("m1", pubkeys[0])
    assert store.accept("m1")[0].act == "accept"


def test_list_status(store):
    assert store.list_status("acc") == {ACC: []}
    assert store.list_status("un") == {PEND: []}
    assert store.list_status("pre") == {PEND: []}
    assert store.list_status("rej") == {REJ: []}
    assert store.list_status("den") == {DEN: []}
    assert set(store.list_status("all")) == {ACC, PEND, REJ, DEN}
    with pytest.raises(SaltInvocationError):
        store.list_status("bogus")
