"""Wheel key functions (``salt.wheel`` orchestration steps): Salt's answers, keys really moved."""

from __future__ import annotations

from typing import Any

import pytest

from briny.common.exceptions import FunctionNotFound, SaltInvocationError
from briny.master import wheel
from briny.master.keys.store import KeyStore


def test_key_functions_move_keys(master_opts: dict[str, Any], pubkeys: list[str]) -> None:
    store = KeyStore(master_opts, fire_events=False)
    store.ensure_dirs()
    for num, minion in enumerate(("web1", "web2", "db1")):
        assert store.register(minion, pubkeys[num]) == "pending"
    assert wheel.call(master_opts, "key.accept", match="web*") == {"minions": ["web1", "web2"]}
    assert wheel.call(master_opts, "key.reject", match=["db1"]) == {"minions_rejected": ["db1"]}
    assert wheel.call(master_opts, "key.list_all") == {
        "minions": ["web1", "web2"],
        "minions_pre": [],
        "minions_rejected": ["db1"],
        "minions_denied": [],
    }
    assert wheel.call(master_opts, "key.list", match="acc") == {"minions": ["web1", "web2"]}
    assert set(wheel.call(master_opts, "key.finger", match="web1")["minions"]) == {"web1"}
    assert wheel.call(master_opts, "key.delete", match="web2,db1") == {
        "minions": ["web2"],
        "minions_rejected": ["db1"],
    }
    assert KeyStore(master_opts).list_keys()["minions"] == ["web1"]
    assert wheel.call(master_opts, "key.accept", match="nobody") == {}


def test_bad_names_and_arguments(master_opts: dict[str, Any]) -> None:
    with pytest.raises(FunctionNotFound, match="'key.nosuch' is not available."):
        wheel.call(master_opts, "key.nosuch")
    with pytest.raises(FunctionNotFound, match="'config.values' is not available."):
        wheel.call(master_opts, "config.values")
    with pytest.raises(SaltInvocationError, match="need 'match'"):
        wheel.call(master_opts, "key.accept")
    with pytest.raises(SaltInvocationError, match="not valid: bogus=1"):  # Salt refuses them too (format_call)
        wheel.call(master_opts, "key.list_all", bogus=1)
    assert wheel.function("key.list") is wheel.list_status
