"""The master's compile (master/compile.py) with the pydsl and stateconf renderers: stateconf
is data and runs on the master, giving what the minion gives; pydsl runs Python, so the master
never runs it: with ``state_compile: auto`` the minion compiles it, with ``master`` it is a
render error naming the renderer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.master.test_compile import Setup, write

STATECONF = (
    "#!stateconf -os yaml . jinja\n"
    ".params:\n  stateconf.set:\n    - word: {{ grains['id'] }}\n"
    "# --- end of state config ---\n"
    ".say:\n  test.nop:\n    - word: {{ params.word }}\n"
    ".after:\n  test.nop\n"
)


def pydsl(marker: Path) -> str:
    return (
        f"#!pydsl\nimport pathlib\npathlib.Path({str(marker)!r}).touch()\nstate('x').test.nop(who=__grains__['id'])\n"
    )


def test_stateconf_compiles_on_the_master_as_on_the_minion(tmp_path):
    s = Setup(tmp_path)
    write(s.states, {"sc.sls": STATECONF})
    s.fs.update()
    got = s.compile("web1", "state.sls", "sc")
    assert set(got) == {"chunks"}, got
    mine = s.on_minion("web1", ["sc"])
    assert not mine.errors and got["chunks"] == mine.chunks
    say = next(c for c in got["chunks"] if c["__id__"] == "sc::say")
    assert say["word"] == "web1" and say["require"] == [{"stateconf": "sc::params"}]
    assert s.compiler.fallbacks == 0


def test_pydsl_never_runs_on_the_master(tmp_path):
    marker = tmp_path / "ran"
    s = Setup(tmp_path)
    write(s.states, {"dsl.sls": pydsl(marker)})
    s.fs.update()
    assert s.compile("web1", "state.sls", "dsl") is None  # auto: the minion compiles it
    assert not marker.exists() and s.compiler.fallbacks == 1
    chunks = s.on_minion("web1", ["dsl"]).chunks
    assert marker.exists() and [c["__id__"] for c in chunks] == ["x", "_slsmod_dsl"]
    assert chunks[0]["who"] == "web1"


def test_pydsl_is_a_render_error_when_the_master_must_compile(tmp_path):
    marker = tmp_path / "ran"
    s = Setup(tmp_path, "master")
    write(s.states, {"dsl.sls": pydsl(marker)})
    s.fs.update()
    got = s.compile("web1", "state.sls", "dsl")
    assert got["retcode"] == 1 and not marker.exists()
    assert got["errors"][0].startswith(
        "Rendering SLS 'base:dsl' failed: The 'pydsl' renderer runs Python and is not run on the master"
    )


def stateconf_inner(marker: Path, args: str) -> str:
    """A stateconf file whose inner renderers (``args``: ``DATA . TEMPLATE``) include a code one,
    with a body that touches ``marker`` when that renderer runs it: ``#!py`` calls ``run()``,
    ``#!pydsl`` runs the module's own lines."""
    code = next(name for name in args.split() if name in ("py", "pydsl"))
    if code == "py":
        body = f"def run():\n    import pathlib\n    pathlib.Path({str(marker)!r}).touch()\n    return {{'x': {{'test.nop': []}}}}\n"
    else:
        body = f"import pathlib\npathlib.Path({str(marker)!r}).touch()\nstate('x').test.nop()\n"
    return f"#!stateconf {args}\n{body}"


@pytest.mark.parametrize("args", ["py . jinja", "yaml . py", "pydsl . jinja", "yaml . pydsl"])
def test_a_code_renderer_inside_stateconf_never_runs_on_the_master(tmp_path, args):
    """The master's code boundary holds for stateconf's own template and data renderers, not only
    for the shebang's: ``state_compile: master`` refuses, naming the inner renderer."""
    marker = tmp_path / "ran"
    s = Setup(tmp_path, "master")
    write(s.states, {"sc.sls": stateconf_inner(marker, args)})
    s.fs.update()
    got = s.compile("web1", "state.sls", "sc")
    assert not marker.exists(), "Python ran on the master"
    assert got["retcode"] == 1 and "renderer runs Python and is not run on the master" in got["errors"][0], got


def test_a_code_renderer_inside_stateconf_is_left_to_the_minion_in_auto_mode(tmp_path):
    marker = tmp_path / "ran"
    s = Setup(tmp_path)
    write(s.states, {"sc.sls": stateconf_inner(marker, "py . jinja")})
    s.fs.update()
    assert s.compile("web1", "state.sls", "sc") is None  # auto: the minion compiles it
    assert not marker.exists() and s.compiler.fallbacks == 1


def test_stateconf_inner_renderers_obey_the_renderer_whitelist(tmp_path):
    s = Setup(tmp_path, "master")
    s.opts["renderer_whitelist"] = ["jinja", "yaml", "stateconf"]
    write(s.states, {"sc.sls": '#!stateconf json . jinja\n{".x": {"test.nop": []}}\n'})
    s.fs.update()
    got = s.compile("web1", "state.sls", "sc")
    assert got["retcode"] == 1 and 'The renderer "json" is disallowed by configuration' in got["errors"][0], got
