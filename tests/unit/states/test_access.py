"""The accessors of the loader's dunders the state modules share (states/_access.py): one owner,
and each call's test mode and environment reach them through it."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# name -> the body every copy had
ACCESSORS = {
    "_salt": "return __salt__[fun]",
    "_testing": "return bool(__opts__.get('test'))",
    "_env": "return str(globals().get('__env__') or 'base')",
}


def test_no_state_module_defines_its_own_copy():
    copies = []
    for path in sorted((ROOT / "states").glob("*.py")):
        if path.name == "_access.py":
            continue
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.FunctionDef) and node.name in ACCESSORS:
                if ast.unparse(node.body[-1]) == ACCESSORS[node.name]:
                    copies.append(f"states/{path.name}:{node.lineno} {node.name}")
    assert copies == []


def test_a_state_call_sees_its_test_mode_and_environment_through_it(tmp_path):
    """``test=True`` and ``saltenv`` of one call reach a state module's accessors (here
    ``archive``'s, through the private sibling) as they reached its own copies."""
    from briny.common import loader

    opts = {"id": "m1", "file_client": "local", "file_roots": {"base": [str(tmp_path)]}, "cachedir": str(tmp_path)}
    states = loader.states(opts, loader.minion_mods(opts, {}, {}))
    archive = states.module("archive")
    assert archive is not None and archive._env() == "base"
    assert states.inject("archive", {"__env__": "prod"})
    assert archive._env() == "prod"
    with states.testing(True):
        assert archive._testing() is True
    assert archive._testing() is False
