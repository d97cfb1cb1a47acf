"""The renderer pipeline: shebangs, yaml/json/py renderers, error context."""

import pytest

from briny.common.exceptions import RenderError
from briny.common.state.render import pipeline, render_text
from briny.common.state.stages import error_context


def test_pipeline_as_salt_reads_it(caplog):
    assert pipeline("jinja|json", {}) == [("jinja", ""), ("json", "")]
    assert pipeline(" jinja | yaml ", {}) == [("jinja", ""), ("yaml", "")]
    assert pipeline("yaml_jinja", {}) == [("jinja", ""), ("yaml", "")]  # Salt's old single-word name
    assert pipeline("py", {}) == [("py", "")]
    assert pipeline("jinja|yaml", {"renderer_blacklist": ["jinja"]}) == [("yaml", "")]
    assert 'The renderer "jinja" is disallowed by configuration and will be skipped.' in caplog.text
    assert pipeline("jinja|yaml", {"renderer_whitelist": ["yaml"]}) == [("yaml", "")]
    assert pipeline("pydsl|stateconf -ps", {}) == [("pydsl", ""), ("stateconf", "-ps")]


def test_an_unknown_renderer_renders_nothing_as_in_salt(make_env, caplog):
    """Salt logs it and the file renders to nothing (tests/golden/renderers: unknown_renderer)."""
    assert pipeline("jinja|nosuch", {}) == []
    assert 'The renderer "jinja|nosuch" is not available' in caplog.text
    env = make_env({}, renderer="yaml")
    assert render_text("#!jinja|nosuch\na:\n  test.nop\n", env=env, saltenv="base") == {}
    assert (
        render_text("#!jinja|yaml\na: 1\n", env=make_env({}, renderer_blacklist=["jinja", "yaml"]), saltenv="base")
        == {}
    )


def test_a_text_renderer_after_a_data_one_is_an_error(make_env):
    with pytest.raises(RenderError, match='The renderer "jinja" takes text, and the renderer before it in "yaml'):
        render_text("#!yaml | jinja\na: 1\n", env=make_env({}), saltenv="base")


def test_yaml_json_and_py_renderers(make_env):
    env = make_env({}, renderer="yaml")
    assert render_text("#!yaml\na: 1\n", env=env, saltenv="base") == {"a": 1}
    assert render_text('#!json\n{"a": [1, 2]}\n', env=env, saltenv="base") == {"a": [1, 2]}
    py = "#!py\ndef run():\n    return {'x': {'test.nop': [{'n': __grains__.get('os')}]}}\n"
    env.grains["os"] = "Debian"
    assert render_text(py, env=env, saltenv="base", sls="p") == {"x": {"test.nop": [{"n": "Debian"}]}}


def test_empty_and_whitespace_files_render_to_nothing(make_env):
    env = make_env({}, renderer="yaml")
    assert render_text("", env=env, saltenv="base") == {}
    assert render_text("  \n\n", env=env, saltenv="base") == {}
    assert render_text("# only a comment\n", env=env, saltenv="base") == {}


@pytest.mark.parametrize(
    "text,message",
    [
        ("#!py\nx = 1\n", "The #!py renderer needs a run() function returning the state data"),
        ("#!py\ndef run():\n    raise ValueError('boom')\n", "ValueError: boom"),
        ("#!json\n{bad json", "Could not parse JSON"),
        ("a:\n\tb: 1\n", "found character that cannot start any token; line 2"),
        ("{{a: 1}: 2}\n", "found unacceptable key"),
    ],
)
def test_render_errors_are_render_errors(make_env, text, message):
    env = make_env({}, renderer="yaml")
    with pytest.raises(RenderError) as err:
        render_text(text, env=env, saltenv="base", sls="s")
    assert message in str(err.value)


def test_error_context_marks_the_line():
    text = "\n".join(f"line{i}" for i in range(1, 21))
    ctx = error_context(text, 10)
    assert ctx.splitlines() == [
        "---",
        "[...]",
        "line5",
        "line6",
        "line7",
        "line8",
        "line9",
        "line10    <======================",
        "line11",
        "line12",
        "line13",
        "line14",
        "line15",
        "[...]",
        "---",
    ]
