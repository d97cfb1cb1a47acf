"""A loader with fixed opts, grains and pillar for the execution-module tests."""

from __future__ import annotations

import pytest

from briny.common.loader import minion_mods

GRAINS = {
    "id": "web01.example.com",
    "os": "Debian",
    "os_family": "Debian",
    "osmajorrelease": 12,
    "roles": ["web", "db"],
    "mydict": {"k": "v", "n": {"x": 1}},
    "num": 5,
    "flag": False,
    "emptyl": [],
    "nonestr": None,
    "nested": [{"a": "b"}],
    "fqdn": "web01.example.com",
    "host": "web01",
    "domain": "example.com",
    "localhost": "web01",
    "nodename": "web01",
    "ipv4": ["127.0.0.1", "192.0.2.2"],
    "ipv6": ["::1"],
    "saltversion": "3007.17",
    "serialnumber": "ABCDEFGH",
    "shell": "/bin/sh",
}
PILLAR = {
    "foo": {"bar": "baz", "lst": [1, 2], "nested": {"deep": 1}},
    "roles": ["web", "db"],
    "apps": {"a": 1},
}
OPTS = {
    "id": "web01.example.com",
    "myopt": {"o": 1},
    "foo": {"bar": "fromopts"},
    "hash_type": "sha256",
    "nodegroups": {"webs": "web* and G@os:Debian", "others": ["x", "y"]},
}


@pytest.fixture
def loader():
    import copy

    return minion_mods(copy.deepcopy(OPTS), copy.deepcopy(GRAINS), copy.deepcopy(PILLAR))
