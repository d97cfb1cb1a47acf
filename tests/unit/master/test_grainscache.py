"""The master's grains cache (master/grainscache.py): files, and its thread rule."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os

import pytest

from briny.common.exceptions import SaltInvocationError
from briny.master.grainscache import GrainsCache


def on_loop(fn, *args):
    """Run ``fn(*args)`` on an asyncio loop, as the master's handlers do."""

    async def main():
        return fn(*args)

    return asyncio.run(main())


def test_round_trip_through_the_files(tmp_path):
    cache = GrainsCache(str(tmp_path))
    on_loop(cache.put, "m1", {"os": "Debian"})
    on_loop(cache.put_opts, "m1", {"saltenv": "base"})
    cache.flush()
    assert (tmp_path / "grains" / "m1.msgpack").is_file()
    (tmp_path / "grains" / "junk.msgpack").write_bytes(b"\xc1\xc1")
    (tmp_path / "grains" / "..msgpack").write_bytes(b"\x80")
    again = GrainsCache(str(tmp_path))
    assert again.load_all() == 1 and again.get("m1") == {"os": "Debian"}
    assert again.opts_of("m1") is None  # the reported config is memory only
    on_loop(again.remove, "m1")
    again.flush()
    assert again.get("m1") is None and not os.path.exists(tmp_path / "grains" / "m1.msgpack")
    assert cache.opts_of("m1") == {"saltenv": "base"}
    on_loop(cache.put_opts, "m1", None)
    assert cache.opts_of("m1") is None
    with pytest.raises(SaltInvocationError):
        cache._path("../evil")
    cache.close()
    again.close()


def test_only_the_loop_writes_and_any_thread_reads(tmp_path):
    cache = GrainsCache(str(tmp_path))

    async def main() -> None:
        cache.put("m1", {"os": "Debian"})
        loop = asyncio.get_running_loop()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            for write, args in ((cache.put, ("m2", {})), (cache.put_opts, ("m2", {})), (cache.remove, ("m1",))):
                with pytest.raises(AssertionError, match="the grains cache belongs to the asyncio loop"):
                    await loop.run_in_executor(pool, write, *args)
            assert await loop.run_in_executor(pool, cache.get, "m1") == {"os": "Debian"}
            assert await loop.run_in_executor(pool, cache.ids) == ["m1"]
            assert await loop.run_in_executor(pool, cache.snapshot) == {"m1": {"os": "Debian"}}

    asyncio.run(main())
    assert cache.ids() == ["m1"]  # the refused writes changed nothing
    cache.close()
    assert sorted(os.listdir(tmp_path / "grains")) == ["m1.msgpack"]


def test_a_put_after_close_keeps_memory_and_says_so(tmp_path, caplog):
    cache = GrainsCache(str(tmp_path))
    cache.close()
    caplog.set_level("DEBUG", "briny.master.grainscache")
    on_loop(cache.put, "m1", {"os": "Debian"})
    assert cache.get("m1") == {"os": "Debian"}
    assert "closed; m1 not written" in caplog.text
    assert not (tmp_path / "grains").exists()
