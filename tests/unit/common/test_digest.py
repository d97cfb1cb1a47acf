"""The one data digest (``common/digest.py``) the master's caches key on."""

from __future__ import annotations

from briny.common.digest import data_digest


def test_equal_data_equal_digest_and_any_change_shows():
    a = {"os": "Debian", "roles": ["web", "db"], "n": 1}
    assert data_digest(a) == data_digest({"os": "Debian", "roles": ["web", "db"], "n": 1})
    assert len(data_digest(a)) == 32 and int(data_digest(a), 16) >= 0
    for changed in ({**a, "n": 2}, {**a, "roles": ["db", "web"]}, {**a, "x": None}, [a]):
        assert data_digest(changed) != data_digest(a)


def test_data_msgpack_cannot_pack_is_digested_by_its_repr():
    assert data_digest({1, 2}) == data_digest({1, 2})
    assert data_digest(object) == data_digest(object)
    assert data_digest(2**70) == data_digest(2**70) != data_digest(2**70 + 1)
