"""The stateconf renderer (common/state/render_stateconf.py) and its no-op state module
(states/stateconf.py): the settings, options and refusals the goldens of
tests/golden/renderers do not reach."""

from __future__ import annotations

import pytest

from briny.common.exceptions import RenderCodeError, RenderError
from briny.common.state.highstate import HighStateBuilder
from briny.common.state.render import render_text
from briny.states import stateconf as stateconf_state


def render(make_env, text: str, sls: str = "a.b", **opts: object) -> dict:
    return render_text(text, env=make_env({}, **opts), saltenv="base", sls=sls)


def test_ids_settings_and_generated_states(make_env):
    text = (
        "#!stateconf -s yaml . jinja\n"
        ".params:\n  stateconf.set:\n    - port: 80\n"
        "# --- end of state config ---\n"
        ".web:\n  test.nop:\n    - port: {{ params.port }}\n    - dir: {{ sls_dir }}\n"
        "..x::far:\n  test.nop\n"
        "include:\n  - .c\n  - base: ..d\n  - base: plain\nexclude:\n  - sls: .e\n  - id: keep\n"
    )
    high = render(make_env, text)
    assert high["a.b::web"] == {"test.nop": [{"name": "web"}, {"port": 80}, {"dir": "a"}]}
    assert high["x::far"] == {"test.nop": [{"name": ".x::far"}]}  # Salt's reading of ``..x::far``
    # ``- base: plain`` stays (Salt 3007 empties that dict and then crashes: docs/FIDELITY.md)
    assert high["include"] == [{"base": "a.c"}, {"base": "d"}, {"base": "plain"}]
    assert high["exclude"] == [{"sls": "a.e"}, {"id": "keep"}]
    assert high["a.b::start"] == {"stateconf.set": [{"require_in": [{"stateconf": "a.b::params"}]}]}
    assert high["a.b::goal"]["stateconf.set"][0]["require"][-1] == {"stateconf": "a.b::start"}


def test_settings_keys_from_the_config(make_env):
    text = (
        "#!stateconf -G yaml . jinja\n"
        "conf:\n  stateconf.context:\n    - word: hi\n"
        "## END\n"
        "said:\n  test.nop:\n    - word: {{ conf.word }}\n"
    )
    high = render(make_env, text, stateconf_end_marker="## END", stateconf_state_func="stateconf.context")
    assert high == {"conf": {"stateconf.context": [{"word": "hi"}]}, "said": {"test.nop": [{"word": "hi"}]}}
    high = render(make_env, "#!stateconf yaml . jinja\nx: test.nop\n", stateconf_goal_state="done")
    assert high == {"x": {"test.nop": []}, "done": {"stateconf.set": [{"require": [{"test": "x"}]}]}}


def test_goal_requires_only_this_files_states_and_extend_reaches_later_files(make_env):
    files = {
        "main.sls": "#!stateconf yaml . jinja\ninclude:\n  - lib\n"
        "extend:\n  lib::p:\n    stateconf.set:\n      - v: 2\n      - require:\n        - test: here\n"
        "here:\n  test.nop\n",
        "lib.sls": "#!stateconf -o yaml . jinja\n.p:\n  stateconf.set:\n    - v: 1\n"
        "# --- end of state config ---\n.use:\n  test.nop:\n    - v: {{ p.v }}\n    - r: {{ p.require }}\n",
    }
    high, errors = HighStateBuilder(make_env(files)).render_highstate({"base": ["main"]})
    assert errors == []
    assert high["lib::use"]["test"][:3] == [{"name": "use"}, {"v": 2}, {"r": [{"test": "here"}]}]
    assert high["main::goal"]["stateconf"][0] == {"require": [{"test": "here"}]}


@pytest.mark.parametrize(
    "text,message",
    [
        ("#!stateconf yaml\na: test.nop\n", "^Invalid use of stateconf.py renderer!\nUsage: "),
        ("#!stateconf nosuch . jinja\na: test.nop\n", "^Renderer: 'nosuch' is not available!$"),
        ("#!stateconf yaml . nosuch\na: test.nop\n", "^Renderer: 'nosuch' is not available!$"),
        ("#!stateconf -o json . jinja\n{}\n", "^Implicit ordering is only supported if the yaml renderer is used!$"),
        ("#!stateconf -p\na: test.nop\n", "^High data is not a dictionary and is invalid$"),
        ("#!yaml|stateconf yaml . jinja\na: test.nop\n", "takes text here; with -p it takes the high data"),
        ("#!stateconf -s\n.start:\n  test.nop\n", r"^Can't generate start state\(.start\)! The same state id"),
        ("#!stateconf\n.goal:\n  test.nop\n", r"^Can't generate goal state\(.goal\)! The same state id"),
        ("#!stateconf\n.x:\n  test.nop\na.b::x:\n  test.nop\n", r"^Can't rename state id\(.x\) into a.b::x because"),
        (
            "#!stateconf -o\n.a:\n  test.nop\n.b:\n  test.nop:\n    - require_in:\n      - test: .a\n",
            r"^State\(.b:test\) can't require_in/watch_in/listen_in/onchanges_in/onfail_in a state\(.a:test\) "
            "defined before it!$",
        ),
        ("#!stateconf\ninclude:\n  - ....up\n", "^Attempted relative include goes beyond top level package$"),
        ("#!stateconf\n- a\n- b\n", "^High data is not a dictionary and is invalid$"),
        ("#!stateconf\na:\n  test.nop: 5\n", "^State 'a' in SLS 'a.b' is not formed as a list$"),
        ("#!stateconf\na:\n  test.nop:\n    - {}\n", "^sls preprocessing/rendering failed!$"),
    ],
)
def test_bad_input_is_refused_in_salts_words(make_env, text, message):
    with pytest.raises(RenderError, match=message):
        render(make_env, text)


def test_an_unknown_option_is_a_render_error_as_in_salt(make_env):
    with pytest.raises(RenderCodeError, match="^option -x not recognized$"):
        render(make_env, "#!stateconf -x\na: test.nop\n")


def test_the_state_functions_do_nothing_and_succeed():
    want = {"name": "n", "result": True, "changes": {}, "comment": ""}
    assert stateconf_state.set("n", slsmod="<module>", require=[]) == want
    assert stateconf_state.context("n", word=1) == want
