"""``saltutil.runner`` in an orchestration (:class:`briny.master.orchestrate.MasterCalls`): the
runner's answer as Salt's ``saltutil.runner`` gives it to a template, Salt's wrapped answer for
the ``salt.runner`` states (``full_return``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from briny.common.exceptions import FunctionNotFound
from briny.master.orchestrate import MasterCalls


def test_a_template_gets_the_runners_answer_as_it_is(tmp_path: Path) -> None:
    calls = MasterCalls({"cachedir": str(tmp_path)}, user="root")
    assert calls.runner("test.arg", "a", arg=["b"], kwarg={"k": "v"}, x=1, __pub_user="root") == {
        "args": ["a", "b"],
        "kwargs": {"k": "v", "x": 1},
    }


def test_full_return_is_salts_wrapped_answer(tmp_path: Path) -> None:
    calls = MasterCalls({"cachedir": str(tmp_path)}, user="ops")
    out = calls.runner("test.arg", "a", full_return=True, k="v")
    assert set(out) == {"fun", "jid", "user", "fun_args", "return", "success"}
    assert (out["fun"], out["user"], out["success"]) == ("runner.test.arg", "ops", True)
    assert out["fun_args"] == ["a", {"k": "v", "__pub_user": "ops"}]
    assert out["return"] == {"args": ["a"], "kwargs": {"k": "v"}}
    assert out["jid"].isdigit() and len(out["jid"]) == 20


def test_a_missing_runner_fails_a_template_but_not_a_step(tmp_path: Path) -> None:
    calls = MasterCalls({"cachedir": str(tmp_path)})
    with pytest.raises(FunctionNotFound, match="nosuch.runner"):
        calls.runner("nosuch.runner")
    out = calls.runner("nosuch.runner", full_return=True)
    assert out["success"] is False and "nosuch.runner" in out["return"]
