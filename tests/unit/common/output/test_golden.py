"""Golden tests: briny's outputters against text captured from Salt 3007.

Each ``expected/NAME.json`` holds a return (taken from real ``salt-call
--local`` runs on small state trees, or generated) with the outputter, the
options and the colour setting; ``expected/NAME.txt`` is what the reference
Salt printed for it (without the final newline). Re-capture with
``/tmp/saltref/bin/python dev/output_golden.py capture``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from briny.common.output import render_output

EXPECTED = Path(__file__).parent / "expected"
CASES = sorted(EXPECTED.glob("*.json"))


def test_there_are_many_cases() -> None:
    assert len(CASES) > 100
    missing = [p.name for p in CASES if not p.with_suffix(".txt").exists()]
    assert not missing


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_matches_salt(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    with open(path.with_suffix(".txt"), encoding="utf-8", newline="") as fh:
        want = fh.read()  # keep "\r" in captured text as it is
    got = render_output(case["data"], case["out"], case["opts"], color=case["color"])
    if got != want:
        # Show the first differing line; a whole-text diff of escapes is unreadable.
        for num, (g, w) in enumerate(zip(got.splitlines(), want.splitlines()), 1):
            assert g == w, f"line {num} differs"
        assert got == want
