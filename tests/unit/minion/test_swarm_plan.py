"""briny-swarm's plan (minion/swarm.py): the identities, and their cut into processes (--procs)."""

from __future__ import annotations

import pytest

from briny.common.exceptions import ConfigError
from briny.minion.swarm import Identity, plan, slices, swarm_ids


def idents(n: int) -> list[Identity]:
    return [Identity(f"sw-{i}", {}) for i in range(n)]


@pytest.mark.parametrize(("n", "parts", "sizes"), [(7, 3, [3, 2, 2]), (6, 2, [3, 3]), (2, 5, [1, 1]), (5, 1, [5])])
def test_slices_are_consecutive_even_and_cover_every_identity_once(n: int, parts: int, sizes: list[int]) -> None:
    whole = idents(n)
    cut = slices(whole, parts)
    assert [len(part) for part in cut] == sizes
    assert [i for part in cut for i in part] == whole


def test_the_plan_gives_each_identity_its_own_folders(tmp_path) -> None:
    base = {"id": "sw", "pki_dir": str(tmp_path / "pki"), "cachedir": str(tmp_path / "cache")}
    got = plan(base, 3)
    assert [i.id for i in got] == ["sw-0", "sw-1", "sw-2"]
    assert got[1].pki_dir == tmp_path / "pki" / "swarm" / "sw-1"
    assert got[2].opts["cachedir"] == str(tmp_path / "cache" / "swarm" / "sw-2")
    assert not got[0].opts["mine_enabled"] and not got[0].opts["multiprocessing"]
    with pytest.raises(ConfigError, match="at least one minion"):
        swarm_ids("sw", 0)
