"""Unit tests for render_output: dispatch, colour choice and highstate rules.

The expected strings here were checked against the reference Salt 3007
(``dev/output_golden.py``); the golden suite covers whole outputs.
"""

from __future__ import annotations

import io
import json

import pytest

from briny.common import output
from briny.common.output import render_output
from briny.common.output.colors import COLORS_ON

GREEN, CYAN, RED, LYEL, LRED, END = (
    COLORS_ON[k] for k in ("GREEN", "CYAN", "RED", "LIGHT_YELLOW", "LIGHT_RED", "ENDC")
)


def _state(num: int, sid: str, result, changes=None, comment="ok", **extra) -> tuple[str, dict]:
    ret = {
        "name": sid,
        "result": result,
        "changes": changes or {},
        "comment": comment,
        "__run_num__": num,
        "__id__": sid,
        "__sls__": "s",
        "start_time": "10:00:00.000001",
        "duration": 1.5,
    }
    ret.update(extra)
    return f"test_|-{sid}_|-{sid}_|-nop", ret


def test_colour_table_is_salts() -> None:
    assert (GREEN, CYAN, RED, LYEL, LRED, END) == (
        "\x1b[0;32m",
        "\x1b[0;36m",
        "\x1b[0;31m",
        "\x1b[0;1;33m",
        "\x1b[0;1;31m",
        "\x1b[0;0m",
    )


def test_nested_plain_and_coloured() -> None:
    data = {"local": {"b": [1, "x"], "a": None}}
    assert render_output(data, None, {}, color=False) == (
        "local:\n    ----------\n    a:\n        None\n    b:\n        - 1\n        - x"
    )
    coloured = render_output(data, "nested", {}, color=True)
    assert coloured.splitlines()[0] == f"{CYAN}local{END}:"
    assert f"{LYEL}- 1{END}" in coloured and f"{GREEN}- x{END}" in coloured


def test_unknown_outputter_and_text_alias() -> None:
    data = {"local": "a\nb"}
    assert render_output(data, "nope", {}, color=False) == "local:\n    a\n    b"
    assert render_output(data, "text", {}) == "local: a\nlocal: b"
    assert render_output(data, "quiet", {}) == ""


def test_json_indent_options() -> None:
    data = {"local": {"b": 1, "a": [True]}}
    assert render_output(data, "json", {}) == json.dumps(data, indent=4)
    assert render_output(data, "json", {"output_indent": None}) == json.dumps(data, indent=4)
    assert render_output(data, "json", {"output_indent": -1}) == '{"local": {"b": 1, "a": [true]}}'
    assert render_output(data, "json", {"output_indent": "pretty"}).index('"a"') < 30


def test_colour_follows_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"local": True}
    monkeypatch.setattr(output, "_stdout_is_tty", lambda: True)
    assert "\x1b[" in render_output(data, None, {"color": True})
    assert "\x1b[" not in render_output(data, None, {"color": False})
    monkeypatch.setattr(output, "_stdout_is_tty", lambda: False)
    assert "\x1b[" not in render_output(data, None, {"color": True})
    assert "\x1b[" in render_output(data, None, {"force_color": True})
    assert "\x1b[" in render_output(data, None, {}, color=True)


def test_non_tty_stdout_means_no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert render_output({"local": True}, None, {"color": True}) == "local:\n    True"


def test_highstate_orders_by_run_num_and_summarises() -> None:
    ret = dict([_state(2, "third", False), _state(0, "first", True), _state(1, "second", None, {"x": 1})])
    text = render_output({"local": ret}, "highstate", {"state_output": "terse"}, color=False)
    lines = text.splitlines()
    assert lines[:4] == [
        "local:",
        "  Name: first - Function: test.nop - Result: Clean - Started: 10:00:00.000001 - Duration: 1.5 ms",
        "  Name: second - Function: test.nop - Result: Differs - Started: 10:00:00.000001 - Duration: 1.5 ms",
        "  Name: third - Function: test.nop - Result: Failed - Started: 10:00:00.000001 - Duration: 1.5 ms",
    ]
    assert lines[4:] == [
        "",
        "Summary for local",
        "------------",
        "Succeeded: 2 (unchanged=1, changed=1)",
        "Failed:    1",
        "------------",
        "Total states run:     3",
        "Total run time:   4.500 ms",
    ]


def test_highstate_full_block_layout() -> None:
    ret = dict([_state(0, "svc", True, {"diff": "--- a\n+++ b"}, comment="line 1\nline 2")])
    text = render_output({"local": ret}, "highstate", {}, color=False)
    assert text.splitlines()[:13] == [
        "local:",
        "----------",
        "          ID: svc",
        "    Function: test.nop",
        "      Result: True",
        "     Comment: line 1",
        "              line 2",
        "     Started: 10:00:00.000001",
        "    Duration: 1.5 ms",
        "     Changes:   ",
        "              ----------",
        "              diff:",
        "                  --- a",
    ]


def test_state_verbose_false_hides_clean_successes() -> None:
    ret = dict([_state(0, "clean", True), _state(1, "bad", False)])
    text = render_output({"local": ret}, "highstate", {"state_verbose": False}, color=False)
    assert "ID: clean" not in text and "ID: bad" in text
    assert "Succeeded: 1" in text  # hidden states still count


def test_compile_errors() -> None:
    text = render_output({"local": ["boom", "bang"]}, "highstate", {}, color=True)
    assert text == (
        f"{LRED}local:{END}\n    {LRED}Data failed to compile:{END}\n"
        f"{LRED}----------\n    boom{END}\n{LRED}----------\n    bang{END}"
    )


def test_highstate_with_plain_data() -> None:
    # A mapping without state entries: Salt prints an empty summary.
    text = render_output({"local": {"pid": 5, "retcode": 0}}, "highstate", {}, color=False)
    assert text.splitlines()[:4] == ["local:", "", "Summary for local", "-----------"]
    assert text.splitlines()[-2:] == ["Total states run:    0", "Total run time:  0.000 ms"]
    # Scalars print under the host; lists and other shapes go nested.
    assert render_output({"local": True}, "highstate", {}, color=False) == "local:\n    True"
    assert render_output([1, 2], "highstate", {}, color=False) == "- 1\n- 2"
    # A state entry missing its comment cannot be drawn: nested instead.
    broken = {"local": {"a_|-b_|-c_|-d": {"result": True}}}
    assert render_output(broken, "highstate", {}, color=False) == render_output(broken, "nested", {}, color=False)


def test_input_is_not_mutated() -> None:
    ret = dict([_state(0, "a", True, {"k": "v"}, warnings=["w"])])
    data = {"local": ret}
    before = json.dumps(data, sort_keys=True)
    for mode in ("full", "terse", "mixed_id"):
        render_output(data, "highstate", {"state_output": mode}, color=True)
    assert json.dumps(data, sort_keys=True) == before
