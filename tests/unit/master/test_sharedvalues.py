"""Equal values of many minions' maps kept once (master/sharedvalues.py), and the grains cache
keeping its minions' grains through it."""

from __future__ import annotations

import asyncio
from typing import Any

from briny.master.grainscache import GrainsCache
from briny.master.sharedvalues import SharedValues


def grains(minion_id: str, **extra: Any) -> dict[str, Any]:
    return {"id": minion_id, "os": "Debian", "cpu_flags": ["fpu", "vme", "sse2"], "mem": {"total": 2048}, **extra}


def test_equal_values_are_one_object_and_distinct_ones_are_not():
    shared = SharedValues()
    a = shared.share(grains("m1"))
    b = shared.share(grains("m2"))
    assert a == grains("m1") and b == grains("m2")
    assert a["cpu_flags"] is b["cpu_flags"] and a["mem"] is b["mem"] and a["os"] is b["os"]
    assert a["id"] != b["id"]
    assert len(shared) == 5  # os, cpu_flags, mem, and two ids


def test_values_equal_in_python_but_of_other_types_are_kept_apart():
    shared = SharedValues()
    a = shared.share({"v": 1, "w": [1]})
    b = shared.share({"v": True, "w": [1.0]})
    assert a["v"] is 1 and b["v"] is True  # noqa: F632 - identity is the point
    assert isinstance(b["w"][0], float)
    c = shared.share({"v": 1, "w": [1]})
    assert c["w"] is a["w"]
    d = shared.share({"w2": [1]})  # the same value under another key is another entry
    assert d["w2"] is not a["w"]


def test_releasing_every_map_forgets_every_value():
    shared = SharedValues()
    kept = [shared.share(grains(f"m{i}")) for i in range(50)]
    assert len(shared) == 3 + 50
    for one in kept[:25]:
        shared.release(one)
    assert len(shared) == 3 + 25
    again = shared.share(grains("m1"))  # its id was forgotten: kept anew, the rest shared
    assert again["mem"] is kept[30]["mem"] and len(shared) == 3 + 26
    for one in [*kept[25:], again]:
        shared.release(one)
    assert len(shared) == 0


def test_a_value_that_cannot_be_packed_is_kept_unshared_and_a_foreign_map_releases_nothing():
    shared = SharedValues()
    odd = object()
    kept = shared.share({"odd": odd, "os": ["Debian"], 7: "not a str key"})
    assert kept["odd"] is odd and kept[7] == "not a str key"  # type: ignore[index]
    assert len(shared) == 1
    shared.release({"os": ["Debian"]})  # an equal value this table did not hand out: no count taken
    assert len(shared) == 1
    shared.release(kept)
    assert len(shared) == 0


def test_the_grains_cache_shares_equal_grains_and_releases_replaced_ones(tmp_path):
    cache = GrainsCache(str(tmp_path))

    async def main() -> None:
        for i in range(100):
            cache.put(f"m{i}", grains(f"m{i}"))
        one, two = cache.get("m1"), cache.get("m2")
        assert one is not None and two is not None
        assert one == grains("m1") and one["cpu_flags"] is two["cpu_flags"]
        assert len(cache._shared) == 3 + 100
        cache.put("m1", grains("m1", os="Ubuntu"))  # replaced: its old values released
        assert cache.get("m1") == grains("m1", os="Ubuntu") and len(cache._shared) == 3 + 100 + 1
        for i in range(100):
            cache.remove(f"m{i}")
        assert len(cache._shared) == 0

    asyncio.run(main())
    cache.flush()
    again = GrainsCache(str(tmp_path))
    assert again.load_all() == 0
    cache.close()
    again.close()


def test_grains_loaded_from_the_files_are_shared(tmp_path):
    cache = GrainsCache(str(tmp_path))

    async def main() -> None:
        for i in range(3):
            cache.put(f"m{i}", grains(f"m{i}"))

    asyncio.run(main())
    cache.flush()
    again = GrainsCache(str(tmp_path))
    assert again.load_all() == 3
    a, b = again.get("m0"), again.get("m2")
    assert a is not None and b is not None and a["mem"] is b["mem"] and a == grains("m0")
    cache.close()
    again.close()


def test_reported_configs_share_equal_values_and_release_them(tmp_path):
    from briny.common.reported import accept_reported

    cache = GrainsCache(str(tmp_path))
    report = {"saltenv": "base", "file_roots_note": ["a", "b"], "renderer": "jinja|yaml"}

    async def main() -> None:
        for i in range(3):
            cache.put_opts(f"m{i}", accept_reported({**report, "id": f"m{i}"}, f"m{i}"))
        one, two = cache.opts_of("m1"), cache.opts_of("m2")
        assert one is not None and two is not None
        assert one.data == {**report, "id": "m1"} and one.data["file_roots_note"] is two.data["file_roots_note"]
        kept = len(cache._shared)
        cache.put_opts("m1", None)  # forgotten: its own id value goes, the shared ones stay
        assert cache.opts_of("m1") is None and len(cache._shared) == kept - 1
        cache.put_opts("m2", accept_reported({**report, "id": "m2", "saltenv": "dev"}, "m2"))  # replaced
        cache.remove("m0")
        cache.remove("m2")
        assert len(cache._shared) == 0

    asyncio.run(main())
    cache.close()
