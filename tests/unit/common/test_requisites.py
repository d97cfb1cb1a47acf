"""Requisite kinds, target matching and ordering."""

from __future__ import annotations

from briny.common.state.requisites import DependencyGraph, Ref, Req, TargetIndex, gen_tag


def low(id_: str, state: str = "test", fun: str = "nop", order: float = 10000, **kw) -> dict:
    d = {
        "state": state,
        "__id__": id_,
        "name": kw.pop("name", id_),
        "fun": fun,
        "__sls__": kw.pop("sls", "s"),
        "__env__": "base",
        "order": order,
    }
    d.update(kw)
    return d


def test_kinds_table() -> None:
    assert [r.key for r in Req][:4] == ["onfail", "onfail_any", "onfail_all", "require"]
    assert Req.REQUIRE.weight < Req.WATCH.weight < Req.PREREQ.weight
    assert Req.ONFAIL.is_any and Req.REQUIRE_ANY.is_any and not Req.REQUIRE.is_any
    assert Req.ONFAIL_ALL.is_all_onfail
    assert Req.WATCH.in_key == "watch_in" and Req.REQUIRE_ANY.in_key is None
    assert Req.from_key("onchanges_any") is Req.ONCHANGES_ANY


def test_ref_parse() -> None:
    assert Ref.parse("vim") == Ref("id", "vim")
    assert Ref.parse({"file.managed": "/x"}) == Ref("file", "/x")
    assert Ref.parse({"a": 1, "b": 2}) is None


def test_target_matching() -> None:
    chunks = [
        low("nginx", name="nginx-light"),
        low("nginx", state="cmd", fun="run", name="echo hi"),
        low("conf1", state="file", name="/etc/apache2/a.conf", sls="web"),
        low("conf2", state="file", name="/etc/apache2/b.conf", sls="web.sub", __sls_included_from__=["web"]),
        low("pkgs", name="p1", order=10001.0001),
        low("pkgs", name="p2", order=10001.0002),
    ]
    idx = TargetIndex(chunks)
    assert idx.find(Ref("test", "nginx")) == [0]
    assert idx.find(Ref("test", "nginx-light")) == [0]
    assert idx.find(Ref("id", "nginx")) == [0, 1]  # module-less: every module
    assert idx.find(Ref("file", "/etc/apache2/*")) == [2, 3]
    assert idx.find(Ref("sls", "web")) == [2, 3]  # includes what web included
    assert idx.find(Ref("sls", "web.*")) == [3]
    assert idx.find(Ref("test", "p2")) == [5]  # one `names` entry
    assert idx.find(Ref("test", "pkgs")) == [4, 5]  # the whole ID
    assert idx.find(Ref("test", "nothere")) is None


def test_prereq_requirers_come_from_the_prerequired_key() -> None:
    """A prereq target waits for the requirers its ``prerequired`` key names (the compiler writes
    it); a hand-made chunk without one has none, as a glob ``prereq`` leaves none in Salt."""
    chunks = [
        low("a", prereq=[{"test": "b"}]),
        low("b", prerequired=[{"test": "a"}, {"test": "gone"}]),
        low("c", prereq=["d*"]),
        low("d1"),
    ]
    graph = DependencyGraph(chunks)
    assert graph.deps[1].by_kind == {Req.PREREQUIRED: [0]}
    assert [(m.kind, m.ref) for m in graph.deps[1].missing] == [(Req.PREREQUIRED, Ref("test", "gone"))]
    assert graph.deps[0].by_kind == {Req.PREREQ: [1]} and graph.deps[3].by_kind == {}


def test_missing_targets_recorded() -> None:
    graph = DependencyGraph([low("a", require=[{"test": "nothere"}], watch=["gone"])])
    missing = graph.deps[0].missing
    assert [(m.kind, m.ref) for m in missing] == [(Req.REQUIRE, Ref("test", "nothere")), (Req.WATCH, Ref("id", "gone"))]


def test_gen_tag() -> None:
    assert gen_tag(low("x", name="y")) == "test_|-x_|-y_|-nop"


def test_graph_is_linear(monkeypatch) -> None:
    """One index lookup per requisite reference, whatever the size (no scan per requisite).
    Wall-clock growth is measured in bench/engine.py, not here."""
    lookups = []
    real_find = TargetIndex.find
    monkeypatch.setattr(TargetIndex, "find", lambda self, ref: lookups.append(ref) or real_find(self, ref))
    for n in (1000, 4000):
        lookups.clear()
        chunks = [
            low(
                f"s{i}",
                order=10000 + i,
                require=[{"test": f"s{i - 1}"}] if i else [],
                watch=[{"test": "s0"}] if i % 10 == 0 and i else [],
            )
            for i in range(n)
        ]
        graph = DependencyGraph(chunks)
        assert len(graph.deps) == n
        assert len(lookups) == (n - 1) + len(range(10, n, 10))
