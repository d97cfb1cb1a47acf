"""``mine.*`` on a minion (its requests answered by a real master-side store) and masterless
(the local cache), with Salt 3007's mine_functions forms and answers."""

from __future__ import annotations

import copy

import pytest

from briny.common.exceptions import CommandExecutionError
from briny.common.jobcontext import JobContext
from briny.common.loader import minion_mods
from briny.master.mine import MineStore

FUNCTIONS = {
    "test.ping": [],
    "internal_ip": [{"mine_function": "network.calc_net"}, "10.1.2.3", {"netmask": "255.0.0.0"}],
    "secret": {"mine_function": "grains.get", "key": "role", "allow_tgt": "web*"},
    "bogus.fun": [],
}


@pytest.fixture
def master(tmp_path):
    grains = {"m1": {"role": "db"}, "web9": {"role": "web"}}
    return MineStore({"cachedir": str(tmp_path / "master"), "__role": "master"}, grains.get, lambda: ["m1", "web9"])


def minion(tmp_path, master, minion_id="m1", **opts):
    def ask(payload, timeout=None):
        return master.answer(minion_id, payload)

    base = {"id": minion_id, "cachedir": str(tmp_path / minion_id), "mine_functions": copy.deepcopy(FUNCTIONS), **opts}
    return minion_mods(base, {"id": minion_id, "role": "db"}, {}, job=JobContext(master=ask))


def test_update_and_get_through_the_master(tmp_path, master):
    salt = minion(tmp_path, master)
    assert salt["mine.update"]() is True
    stored = master.mine_of("m1")
    assert stored["test.ping"] is True
    assert stored["internal_ip"] == "10.0.0.0/8"
    assert stored["secret"] == {"__data__": "db", "__saltmine_acl__": 1, "allow_tgt": "web*"}
    assert "bogus.fun" not in stored  # missing functions are skipped, as Salt does
    assert salt["mine.get"]("*", "internal_ip") == {"m1": "10.0.0.0/8"}
    assert salt["mine.get"]("*", "internal_ip", exclude_minion=True) == {}
    assert salt["mine.get"]("m1", "secret") == {}  # allow_tgt: only web*
    web = minion(tmp_path, master, "web9")
    assert web["mine.get"]("m1", "secret") == {"m1": "db"}
    assert salt["mine.valid"]() == {
        "test.ping": [],
        "internal_ip": {"network.calc_net": ["10.1.2.3", {"netmask": "255.0.0.0"}]},
        "secret": {"grains.get": [{"key": "role"}]},
    }


def test_send_delete_flush(tmp_path, master):
    salt = minion(tmp_path, master, mine_functions={})
    assert salt["mine.update"]() is None  # nothing configured: nothing sent
    assert master.mine_of("m1") == {}
    assert salt["mine.send"]("myping", mine_function="test.ping") is True
    assert salt["mine.send"](
        "calc", "10.9.9.9/16", mine_function="network.calc_net", allow_tgt="web9", allow_tgt_type="list"
    )
    assert master.mine_of("m1")["calc"]["allow_tgt_type"] == "list"
    assert salt["mine.send"]("nosuch.function") is False
    assert salt["mine.get"]("m1", "myping,calc") == {"myping": {"m1": True}}
    assert salt["mine.update"](mine_functions=["test.ping"]) is True
    assert salt["mine.update"](clear=True, mine_functions={"one": {"mine_function": "test.ping"}}) is True
    assert master.mine_of("m1") == {"one": True}
    assert salt["mine.delete"]("one") is True
    assert salt["mine.flush"]() is True
    assert master.mine_of("m1") == {}


def test_no_master_or_a_refusal_is_an_error(tmp_path, master):
    salt = minion_mods({"id": "m1", "cachedir": str(tmp_path)}, {}, {}, job=JobContext())
    with pytest.raises(CommandExecutionError, match="no connection"):
        salt["mine.get"]("*", "x")
    assert salt["mine.send"]("t", mine_function="test.ping") is False  # logged, as Salt's send does
    salt = minion(tmp_path, master)
    with pytest.raises(CommandExecutionError, match="Unknown target type"):
        salt["mine.get"]("*", "x", tgt_type="bogus")


def test_masterless_local_cache(tmp_path):
    opts = {
        "id": "golden",
        "file_client": "local",
        "cachedir": str(tmp_path),
        "mine_functions": copy.deepcopy(FUNCTIONS),
    }
    salt = minion_mods(opts, {"id": "golden", "role": "db"}, {})
    assert salt["mine.get"]("*", "internal_ip") == {}
    assert salt["mine.update"]() is True
    assert salt["mine.get"]("*", "internal_ip") == {"golden": "10.0.0.0/8"}
    assert salt["mine.get"]("other", "internal_ip") == {}  # the target must name this minion
    assert salt["mine.get"]("golden", "internal_ip,secret") == {
        "internal_ip": {"golden": "10.0.0.0/8"},
        "secret": {"golden": "db"},
    }
    assert salt["mine.get"]("G@role:db", "secret", "compound") == {"golden": "db"}
    # Salt's masterless get tests membership in each value: a bool stored there fails it
    with pytest.raises(TypeError, match="not iterable"):
        salt["mine.get"]("*", "test.ping")
    assert salt["mine.delete"]("test.ping") is True
    assert salt["mine.get"]("*", "test.ping") == {}
    assert salt["mine.flush"]() is True
    assert salt["mine.get"]("*", "internal_ip") == {}


def test_config_merge_reads_opts_master_and_pillar(tmp_path):
    pillar = {"mine_functions": {"p": [], "both": ["pillar"]}, "master": {"mine_functions": {"m": []}}}
    salt = minion_mods({"id": "x", "mine_functions": {"o": [], "both": ["opts"]}}, {}, pillar)
    assert salt["config.merge"]("mine_functions") == {"o": [], "both": ["opts"], "m": [], "p": []}
    assert salt["config.merge"]("nope", default=3) == 3
    assert salt["config.merge"]("mine_functions", omit_opts=True, omit_master=True) == pillar["mine_functions"]
