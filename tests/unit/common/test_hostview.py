"""What templates see of their host (common/state/hostview.py): ``salt`` is never the loader, on a
minion or on the master; a host boundary refuses and records what is not pure; ``opts`` views
keep the render's own objects out of sight and record reads of keys the master does not know."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from briny.common import loader
from briny.common.exceptions import FunctionNotFound, HostAccessError, RenderError, TemplateError
from briny.common.fileclient import LocalFileClient
from briny.common.state.hostview import HostBoundary, OptsView, SaltFunctions, template_salt
from briny.common.state.jinja import render_jinja
from briny.common.state.render import render_text
from briny.common.state.stages import RenderEnv


def minion_salt() -> SaltFunctions:
    return SaltFunctions(loader.minion_mods({"id": "m1", "test": False}, {"os": "Debian"}, {"k": "v"}))


def jinja(text: str, salt: object, boundary: HostBoundary | None = None) -> str:
    return render_jinja(
        text, {"salt": salt}, client=LocalFileClient({}), saltenv="base", tmplpath="t.sls", boundary=boundary
    )


def test_what_salt_offers_templates_on_a_minion():
    salt = minion_salt()
    assert salt["grains.get"]("os") == "Debian" and salt.grains.get("os") == "Debian"
    assert "test.ping" in salt and "nosuch.fun" not in salt and 7 not in salt
    assert salt.get("test.ping")() is True and salt.get("nosuch.fun", "dflt") == "dflt"
    assert "test.ping" in salt.keys()
    with pytest.raises(FunctionNotFound):
        salt["nosuch.fun"]
    # Salt 3007's template loader has no length and no iteration either
    with pytest.raises(TypeError):
        len(salt)  # type: ignore[arg-type]
    assert template_salt(salt) is salt
    assert isinstance(template_salt(loader.minion_mods({"id": "m"}, {}, {})), SaltFunctions)


@pytest.mark.parametrize(
    "expr",
    [
        "salt.module('cmd').run('touch MARK')",
        "salt.pack['__opts__']",
        "salt.reload()",
        "salt.list_modules()",
        "salt.missing_message('x')",
        "salt._loader",
        "salt._loader.module('cmd')",
        "'{0._loader}'.format(salt)",
        "'{0._loader}'|method_call('format', salt)",
        "salt.test.ping.__globals__",
        "salt['test.ping'].__globals__['__opts__']",
    ],
)
def test_templates_never_reach_the_loader_on_a_minion_either(tmp_path, expr):
    marker = tmp_path / "ran"
    raw = loader.minion_mods({"id": "m1"}, {}, {})  # as file.managed templates are given it
    for salt in (minion_salt(), raw):
        with pytest.raises(TemplateError):
            jinja("{{ " + expr.replace("MARK", str(marker)) + " }}", salt)
    assert not marker.exists()


def test_the_boundary_refuses_and_records(tmp_path):
    boundary = HostBoundary("web1", "the states", lambda key: key.startswith("grains."), "grains.*")
    salt = SaltFunctions(loader.minion_mods({"id": "web1"}, {"os": "Debian"}, {}), boundary)
    assert jinja("{{ salt.grains.get('os') }} {{ 'cmd.run' in salt }}", salt, boundary) == "Debian True"
    marker = tmp_path / "ran"
    with pytest.raises(
        TemplateError,
        match="'cmd.run' needs the minion's host and is not run on the master "
        "while rendering the states of minion 'web1'; templates rendered "
        "on the master may call only grains.*",
    ):
        jinja(f"{{{{ salt.cmd.run('touch {marker}') }}}}", salt, boundary)
    with pytest.raises(TemplateError, match="the 'which' filter needs the minion's host"):
        jinja("{{ 'sh'|which }}", salt, boundary)
    with pytest.raises(FunctionNotFound):
        salt["custom.fun"]  # a module only the minion has: recorded all the same
    assert not marker.exists()
    assert boundary.needs == ["cmd.run", "the 'which' filter", "custom.fun"]
    with pytest.raises(HostAccessError, match="the list of the minion's functions"):
        salt.keys()


def test_code_renderers_run_only_where_the_boundary_allows(tmp_path):
    marker = tmp_path / "ran"
    py = f"#!py\nimport pathlib\ndef run():\n    pathlib.Path({str(marker)!r}).touch()\n    return {{'a': 1}}\n"
    salt = loader.minion_mods({"id": "m1"}, {}, {})
    env = RenderEnv(opts={"id": "m1"}, client=LocalFileClient({}), salt=salt)
    assert render_text(py, env=env, saltenv="base", sls="p") == {"a": 1} and marker.exists()  # a minion
    marker.unlink()
    env.boundary = HostBoundary("m1", "the pillar", lambda key: False, "", code_hint="set x to allow it")
    with pytest.raises(
        RenderError,
        match="The 'py' renderer runs Python and is not run on the master while "
        "rendering the pillar of minion 'm1'; set x to allow it",
    ):
        render_text(py, env=env, saltenv="base", sls="p")
    assert not marker.exists() and env.boundary.needs == ["#!py"]
    env.boundary.code_allowed = True
    assert render_text(py, env=env, saltenv="base", sls="p") == {"a": 1} and marker.exists()


def test_opts_views_are_plain_data_copies():
    data = {"id": "m1", "nested": {"a": [1]}, "__role": "master", "__fileclient": object()}
    view = OptsView(data)
    for shown in (
        dict(view),
        {**view},
        view.copy(),
        copy.copy(view),
        copy.deepcopy(view),
        dict(view.items()),
        json.loads(json.dumps(view)),
    ):
        assert shown == {"id": "m1", "nested": {"a": [1]}} and type(shown) is dict
    assert "__role" not in view and "__fileclient" not in view and list(view) == ["id", "nested"]
    view["nested"]["a"].append(2)
    assert data["nested"]["a"] == [1]  # a deep copy: the caller's data is untouched


def test_opts_views_record_reads_the_master_cannot_answer():
    boundary = HostBoundary("m1", "the states", lambda key: True, "")
    grains = {"os": "Debian"}
    view = OptsView(
        {"id": "m1", "known": 1},
        boundary=boundary,
        unknown=lambda k: k not in ("id", "known", "grains"),
        shared={"grains": grains},
    )
    assert view["id"] == "m1" and view.get("known") == 1 and view["grains"] is grains
    assert boundary.needs == []
    assert view.get("pki_dir") is None and "root_dir" not in view
    with pytest.raises(KeyError):
        view["cachedir"]
    assert boundary.needs == ["opts['pki_dir']", "opts['root_dir']", "opts['cachedir']"]
    dict(view)
    assert boundary.needs[-1] == "opts['*']"
    quiet = HostBoundary("m1", "the states", lambda key: True, "")
    machinery = OptsView({"a": 1}, boundary=quiet, unknown=lambda k: k == "renderer", listing=False)
    dict(machinery), machinery.get("a"), machinery.get("renderer")
    assert quiet.needs == ["opts['renderer']"]


def test_a_namespace_is_not_a_function_and_answers_the_sandbox_itself(tmp_path: Path):
    salt = minion_salt()
    with pytest.raises(TypeError, match=r"salt.cmd is a module, not a function: call salt.cmd.<function>"):
        salt.cmd("x")
    boundary = HostBoundary("m1", "the states", lambda key: True, "")
    guarded = SaltFunctions(loader.minion_mods({"id": "m1"}, {}, {}), boundary)
    with pytest.raises(TemplateError, match="salt.cmd is a module, not a function"):
        jinja("{{ salt.cmd('x') }}", guarded, boundary)
    assert boundary.needs == []  # Jinja's own probes are not lookups


@pytest.mark.parametrize("attr", ["dirs", "kind", "pack"])
def test_the_loaders_attributes_are_not_there(attr):
    """No module of that name: undefined, as in Salt (and never the loader's own attribute)."""
    with pytest.raises(TemplateError) as err:
        jinja(f"{{{{ salt.{attr} }}}}", minion_salt())
    assert str(err.value).startswith(
        f"Jinja variable 'salt.utils.templates.AliasedLoader object' has no attribute '{attr}'"
    )


@pytest.mark.parametrize(
    ("call", "missing"),
    [
        ("salt['nosuchmod.fun']('a')", "'salt.utils.templates.AliasedLoader object' has no attribute 'nosuchmod.fun'"),
        ("salt['test.nosuch']()", "'salt.utils.templates.AliasedLoader object' has no attribute 'test.nosuch'"),
        ("salt.nosuchmod.fun('a')", "'salt.utils.templates.AliasedLoader object' has no attribute 'nosuchmod'"),
        ("salt.test.nosuch()", "'salt.loader.lazy.LoadedMod object' has no attribute 'nosuch'"),
    ],
)
def test_a_missing_function_is_named_in_salts_words_at_the_calling_line(call, missing):
    with pytest.raises(TemplateError) as err:
        jinja(f"a\n{{% set x = {call} %}}\nb", minion_salt())
    assert str(err.value).startswith(f"Jinja variable {missing}; line 2\n")
    assert f"{{% set x = {call} %}}    <======================" in str(err.value)


def test_a_module_only_the_minion_has_is_a_need_on_the_master():
    boundary = HostBoundary("web1", "the states", lambda key: True, "")
    salt = SaltFunctions(loader.minion_mods({"id": "web1"}, {}, {}), boundary)
    with pytest.raises(TemplateError, match="has no attribute 'mycustom'"):
        jinja("{{ salt.mycustom.fun() }}", salt, boundary)
    assert boundary.needs == ["salt.mycustom"]  # so that minion compiles for itself (auto)
