"""The pydsl renderer (common/state/render_pydsl.py): what the goldens of tests/golden/renderers do not
reach — the DSL's corners, its refusals, and the master's boundary for code renderers."""

from __future__ import annotations

import re

import pytest

from briny.common import loader
from briny.common.exceptions import RenderCodeError, RenderError
from briny.common.fileclient import LocalFileClient
from briny.common.state.highstate import HighStateBuilder
from briny.common.state.hostview import HostBoundary
from briny.common.state.render import render_text
from briny.common.state.stages import RenderEnv


def build(make_env, files: dict[str, str], *names: str):
    env = make_env(files)
    return HighStateBuilder(env).render_highstate({"base": list(names)})


def pydsl(make_env, body: str) -> dict:
    return render_text("#!pydsl\n" + body, env=make_env({}), saltenv="base", sls="s")


def test_declarations_as_salt_builds_them(make_env):
    high = pydsl(
        make_env,
        "a = state('a')\n"
        "a.test.require(test='b')\n"  # a requisite first: the function's name comes later
        "a.test.nop(x=1)\n"
        "assert a['test'] is a.test and a.test.nop is a.test.nop\n"
        "state('b').file('managed', '/tmp/f', mode='0644').watch(a.test)\n"
        "anon = state()\n"
        "anon.test.nop()\n"
        "assert str(anon).startswith('.') and str(a.test) == 'test'\n",
    )
    anon = next(k for k in high if k.startswith("."))
    assert re.fullmatch(r"\.[0-9a-f-]{36}", anon)
    assert high["a"] == {"test": ["nop", {"require": [{"test": "b"}]}, {"x": 1}]}
    assert high["b"] == {"file": ["managed", {"name": "/tmp/f"}, {"mode": "0644"}, {"watch": [{"test": "a"}]}]}
    assert high["_slsmod_s"] == {"stateconf": ["set", {"slsmod": "<module 's' from '<pydsl>'>"}]}
    assert list(high) == ["a", "b", anon, "_slsmod_s"]


def test_ordered_requires_the_function_made_before(make_env):
    high = pydsl(make_env, "__pydsl__.set(ordered=True)\nstate('a').test.nop()\nstate('b').test.nop()\n")
    assert high["b"]["test"] == ["nop", {"require": [{"test": "a"}]}]
    assert high["_slsmod_s"]["stateconf"][1] == {"require": [{"test": "b"}]}


@pytest.mark.parametrize(
    "body,error,message",
    [
        (
            "state('a').test.nop().require('pkg')\n",
            RenderCodeError,
            "Invalid a requisite reference declaration! pkg: None",
        ),
        ("state('a').test.nop()\nstate('a').test.other()\n", RenderCodeError, r"Multiple state functions\(other\)"),
        ("state('a').pkg\n", RenderCodeError, "No state function specified for module: pkg"),
        ("include('x')\n", RenderError, "PyDSL only works with a running high state!"),
        ("s = state('a')\ns.test.nop()\ns()\n", RenderError, r"running state\(a\) at render time is not supported"),
        ("def f():\n    pass\nstate().cmd.call(f)\n", RenderError, "cmd.call with a Python function is not supported"),
        ("f = state('a').test.nop()\nextend(f)\nextend(f)\n", RenderError, r"extend\(\) of state\(a\), which"),
        ("import nosuchmodule_x\n", RenderCodeError, "No module named 'nosuchmodule_x'"),
    ],
)
def test_misuse_is_a_render_error(make_env, body, error, message):
    with pytest.raises(error, match=message):
        pydsl(make_env, body)


def test_an_error_points_at_the_lines_of_the_file(make_env):
    body = "def helper():\n    return {}['missing']\n\nhelper()\n"
    with pytest.raises(RenderCodeError) as err:
        pydsl(make_env, body)
    text = str(err.value)
    assert text.startswith("'missing'\nTraceback (most recent call last):\n")
    assert 'File "<pydsl>", line 5, in <module>' in text and 'File "<pydsl>", line 3, in helper' in text
    assert text.endswith("KeyError: 'missing'")


def test_data_from_a_renderer_before_it_is_refused(make_env):
    with pytest.raises(RenderError, match="takes the text of an SLS file"):
        render_text("#!yaml|pydsl\na: 1\n", env=make_env({}), saltenv="base", sls="s")


def test_include_renders_now_into_the_build_and_returns_pydsl_modules(make_env):
    files = {
        "top.sls": "base: {}\n",
        "main.sls": "#!pydsl\n"
        "one, two = include('plain', 'lib')\n"
        "assert one is None and two.VALUE == 7\n"
        "assert include('lib') is two\n"  # rendered already: not again, the same module
        "state('m').test.nop().require(test='p')\n",
        "plain.sls": "p:\n  test.nop\n",
        "lib.sls": "#!pydsl\nVALUE = 7\ninclude('plain')\nstate('l').test.nop()\n",  # rendered already: nothing
    }
    high, errors = build(make_env, files, "main")
    assert errors == []
    assert {k for k in high if not k.startswith("__")} == {"m", "p", "l", "_slsmod_main", "_slsmod_lib"}
    assert high["p"]["__sls__"] == "plain" and "__sls_included_from__" not in high["p"]
    assert high["m"]["test"][:2] == ["nop", {"require": [{"test": "p"}]}]


BACK = {
    "main.sls": "#!pydsl\nstate('m').test.nop()\ninclude('back')\n",
    "back.sls": "include:\n  - main\nb:\n  test.nop\n",
    "other.sls": "include:\n  - back\n",
}
CYCLE = {"main.sls": "#!pydsl\ninclude('lib')\n", "lib.sls": "#!pydsl\ninclude('main')\n"}


@pytest.mark.parametrize(
    "files,error",
    [
        (  # Salt's answer: tests/golden/renderers/cases/pydsl_include_back*.sls
            BACK,
            "Rendering SLS main failed, render error: Detected conflicting IDs, SLS IDs need to be globally "
            "unique.\n    The conflicting ID is '_slsmod_main' and is found in SLS 'None:None' and SLS 'base:main'",
        ),
        (  # Salt recurses until a RecursionError; briny refuses at once
            CYCLE,
            "Rendering SLS 'base:main' failed: Rendering SLS 'base:lib' failed: it includes main, which is still "
            "rendering: pydsl files that include each other make a cycle",
        ),
    ],
)
def test_a_file_included_back_while_it_renders_is_refused(make_env, files, error):
    assert build(make_env, files, "main")[1] == [error]


def test_a_pydsl_file_rendered_from_yaml_first_renders_once(make_env):
    high, errors = build(make_env, BACK, "other")
    assert errors == [] and {"m", "b", "_slsmod_main"} <= set(high)


def test_include_errors_fail_the_including_file(make_env):
    files = {"main.sls": "#!pydsl\ninclude('nosuch')\n"}
    high, errors = build(make_env, files, "main")
    assert high == {}
    assert errors == [
        "Rendering SLS 'base:main' failed: Specified SLS nosuch in saltenv base is not available on the "
        "salt master or through a configured fileserver"
    ]


def test_pydsl_is_a_code_renderer_the_master_refuses_unless_allowed(tmp_path):
    marker = tmp_path / "ran"
    text = f"#!pydsl\nimport pathlib\npathlib.Path({str(marker)!r}).touch()\nstate('a').test.nop()\n"
    env = RenderEnv(opts={"id": "m1"}, client=LocalFileClient({}), salt=loader.minion_mods({"id": "m1"}, {}, {}))
    env.boundary = HostBoundary("m1", "the states", lambda key: False, "", code_hint="set x to allow it")
    with pytest.raises(RenderError, match="The 'pydsl' renderer runs Python and is not run on the master"):
        render_text(text, env=env, saltenv="base", sls="p")
    assert not marker.exists() and env.boundary.needs == ["#!pydsl"]
    env.boundary.code_allowed = True
    assert render_text(text, env=env, saltenv="base", sls="p")["a"] == {"test": ["nop"]} and marker.exists()
