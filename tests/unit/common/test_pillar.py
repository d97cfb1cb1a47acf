"""What both sides share of pillar (``common/pillar.py``): Salt's refusal of a state run over
pillar errors, a ``pillar=`` override merged over a pillar, the opts a pillar render sees, and a
masterless render with a pillarenv and an override."""

from __future__ import annotations

from pathlib import Path

from briny.common import loader
from briny.common.pillar import (
    EX_PILLAR_FAILURE,
    PILLAR_FAILURE_HEADER,
    compile_local_pillar,
    pillar_errors,
    render_opts,
    with_override,
)


def test_pillar_errors_as_salt_refuses_a_run():
    assert pillar_errors({"a": 1}) is None
    assert pillar_errors({"_errors": []}) is None
    bad = {"a": 1, "_errors": ["Rendering SLS 'x' failed.", 7]}
    assert pillar_errors(bad) == [PILLAR_FAILURE_HEADER, "Rendering SLS 'x' failed.", "7"]
    assert PILLAR_FAILURE_HEADER == "Pillar failed to render with the following messages:"
    assert pillar_errors(bad, force=True) is None
    assert pillar_errors("not a map") is None
    assert EX_PILLAR_FAILURE == 5


def test_with_override_merges_over_a_copy():
    pillar = {"a": {"b": 1, "c": [1]}, "keep": True}
    merged = with_override(pillar, {"a": {"b": 2, "d": 3}})
    assert merged == {"a": {"b": 2, "c": [1], "d": 3}, "keep": True}
    assert pillar == {"a": {"b": 1, "c": [1]}, "keep": True}  # untouched
    merged["a"]["c"].append(2)
    assert pillar["a"]["c"] == [1]


def test_render_opts():
    opts = {"id": "m1", "saltenv": "dev", "state_top": ""}
    assert render_opts(opts, None) == {"id": "m1", "saltenv": None, "pillarenv": None, "state_top": "top.sls"}
    assert render_opts({"state_top": "mytop.sls"}, "prod")["saltenv"] == "prod"
    assert render_opts({"state_top": "mytop.sls"}, "prod")["state_top"] == "mytop.sls"
    assert opts == {"id": "m1", "saltenv": "dev", "state_top": ""}


def test_compile_local_pillar_with_pillarenv_and_override(tmp_path: Path):
    base, prod = tmp_path / "base", tmp_path / "prod"
    for root, value in ((base, "from-base"), (prod, "from-prod")):
        root.mkdir()
        (root / "top.sls").write_text(f"{root.name}:\n  '*':\n    - data\n")
        (root / "data.sls").write_text(f"where: {value}\nnested:\n  a: 1\n")
    opts = {"id": "m1", "pillar_roots": {"base": [str(base)], "prod": [str(prod)]}, "saltenv": "base"}
    salt = loader.minion_mods(opts, {}, {})
    assert compile_local_pillar(opts, {}, salt)["where"] == "from-prod"  # every env, base first
    assert compile_local_pillar({**opts, "pillarenv": "prod"}, {}, salt)["where"] == "from-prod"
    got = compile_local_pillar({**opts, "pillarenv": "base"}, {}, salt, {"nested": {"b": 2}})
    assert got["where"] == "from-base" and got["nested"] == {"a": 1, "b": 2}
