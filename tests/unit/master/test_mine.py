"""The master's mine store: each minion writes its own, reads others' with targeting and ACLs,
and the data survive a restart (a new store on the same cachedir)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from briny.master.mine import ACL_DATA, ACL_ID, MineStore

GRAINS = {"web1": {"role": "web"}, "web2": {"role": "web"}, "db1": {"role": "db"}}
PILLARS = {"web1": {"tier": "front"}, "db1": {"tier": "back"}}


def store(tmp_path, **opts):
    return MineStore(
        {"cachedir": str(tmp_path), "__role": "master", **opts},
        GRAINS.get,
        lambda: ["web1", "web2", "db1"],
        PILLARS.get,
    )


def acl(data, tgt, tgt_type=None):
    entry = {ACL_DATA: data, ACL_ID: 1, "allow_tgt": tgt}
    if tgt_type:
        entry["allow_tgt_type"] = tgt_type
    return entry


@pytest.fixture
def mine(tmp_path):
    m = store(tmp_path)
    m.update("web1", {"network.ip_addrs": ["10.0.0.1"], "role": "web"})
    m.update("web2", {"network.ip_addrs": ["10.0.0.2"], "secret": acl("s2", "db*")})
    m.update("db1", {"network.ip_addrs": ["10.0.0.3"]})
    return m


def test_get_with_targets(mine):
    assert mine.get("db1", "*", "network.ip_addrs") == {
        "web1": ["10.0.0.1"],
        "web2": ["10.0.0.2"],
        "db1": ["10.0.0.3"],
    }
    assert mine.get("db1", "web*", "network.ip_addrs") == {"web1": ["10.0.0.1"], "web2": ["10.0.0.2"]}
    assert mine.get("db1", "web1,db1", "network.ip_addrs", "list") == {"web1": ["10.0.0.1"], "db1": ["10.0.0.3"]}
    assert mine.get("db1", "role:db", "network.ip_addrs", "grain") == {"db1": ["10.0.0.3"]}
    assert mine.get("db1", "G@role:web and not web2", "network.ip_addrs", "compound") == {"web1": ["10.0.0.1"]}
    assert mine.get("db1", r"web\d", "network.ip_addrs", "pcre") == {"web1": ["10.0.0.1"], "web2": ["10.0.0.2"]}
    # pillar targets match the pillars the master compiled, exactly (Salt: pillar_exact)
    assert mine.get("db1", "tier:front", "network.ip_addrs", "pillar") == {"web1": ["10.0.0.1"]}
    assert mine.get("db1", "tier:fr*", "network.ip_addrs", "pillar") == {}
    # several functions: keyed by function; a function nobody has is left out
    assert mine.get("db1", "web1", "network.ip_addrs,role,nope") == {
        "network.ip_addrs": {"web1": ["10.0.0.1"]},
        "role": {"web1": "web"},
    }
    assert mine.get("db1", "web1", ["role"]) == {"role": {"web1": "web"}}
    assert mine.get("db1", "nomatch", "role") == {}
    assert mine.get("db1", "*", 5) == {}


def test_allow_tgt(mine):
    assert mine.get("db1", "web2", "secret") == {"web2": "s2"}
    assert mine.get("web1", "web2", "secret") == {}
    mine.update("web1", {"only_web": acl("x", "role:web", "grain")})
    assert mine.get("web2", "*", "only_web") == {"web1": "x"}
    assert mine.get("db1", "*", "only_web") == {}


def test_master_mine_get_acl(tmp_path):
    m = store(tmp_path, mine_get={"web.*": ["network\\..*"]})
    m.update("db1", {"network.ip_addrs": ["10.0.0.3"], "role": "db"})
    assert m.get("web1", "*", "network.ip_addrs") == {"db1": ["10.0.0.3"]}
    assert m.get("web1", "*", "role") == {}
    assert m.get("db1", "*", "network.ip_addrs") == {}  # no rule names db1


def test_update_clear_delete_flush_and_restart(tmp_path, mine):
    mine.update("web1", {"extra": 1})
    assert mine.mine_of("web1") == {"network.ip_addrs": ["10.0.0.1"], "role": "web", "extra": 1}
    mine.update("web1", {"only": 2}, clear=True)
    assert mine.mine_of("web1") == {"only": 2}
    mine.delete("web1", "only")
    assert mine.mine_of("web1") == {}
    mine.flush("db1")
    assert mine.mine_of("db1") == {}
    generation = mine.generation
    mine.delete("web2", "nope")  # nothing changed: the compile caches stay valid
    assert mine.generation == generation
    # a new master on the same cachedir reads what was stored
    again = store(tmp_path)
    assert again.load_all() == 1
    assert again.get("db1", "*", "network.ip_addrs") == {"web2": ["10.0.0.2"]}


def test_requests_and_refusals(mine):
    session = SimpleNamespace(id="web1")
    assert mine.handle_request(session, {"op": "update", "data": {"k": [1]}}) == {"ok": True}
    assert mine.handle_request(session, {"op": "get", "tgt": "web1", "fun": "k"}) == {"mine": {"web1": [1]}}
    refused = mine.handle_request(session, {"op": "update", "id": "db1", "data": {"k": 2}})
    assert "cannot act as 'db1'" in refused["error"]
    assert mine.mine_of("db1") == {"network.ip_addrs": ["10.0.0.3"]}
    assert "'op' must be one of" in mine.handle_request(session, {"op": "drop"})["error"]
    assert "'data' must be a map" in mine.handle_request(session, {"op": "update", "data": [1]})["error"]
    assert "needs 'tgt' and 'fun'" in mine.handle_request(session, {"op": "get", "fun": "k"})["error"]
    assert (
        "Unknown target type"
        in mine.handle_request(session, {"op": "get", "tgt": "x", "fun": "k", "tgt_type": "zz"})["error"]
    )
    # the store keeps serving after bad requests
    assert mine.handle_request(session, {"op": "flush"}) == {"ok": True}
    assert mine.mine_of("web1") == {}


def test_reader_for_master_side_compiles_reads_only(mine):
    ask = mine.reader("db1")
    assert ask({"cmd": "mine", "op": "get", "tgt": "web2", "fun": "secret"}) == {"mine": {"web2": "s2"}}
    assert "only mine.get" in ask({"cmd": "mine", "op": "flush"})["error"]
    assert mine.mine_of("db1") == {"network.ip_addrs": ["10.0.0.3"]}


def test_a_broken_file_is_ignored(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "web1.msgpack").write_bytes(b"\xc1 not msgpack")
    (tmp_path / "mine" / "..bad.msgpack").write_bytes(b"\x80")
    m = store(tmp_path)
    assert m.load_all() == 0
    m.update("web1", {"a": 1})
    assert store(tmp_path).get("db1", "web1", "a") == {"web1": 1}
