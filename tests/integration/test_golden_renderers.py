"""briny against Salt 3007's recorded answers for the pydsl and stateconf renderers (issue 10).

The corpus ``tests/golden/renderers/`` is in salt-golden.py's convention (see
tests/golden/goldenlib.py): each case runs live, with test=True and as show_low_sls, in a
fresh sandbox, as Salt did; results, exit status and what the run left in the sandbox are
compared whole (tests/integration/test_golden.py's comparison). Cases: pydsl (``state``,
requisites, ``include`` now and delayed, ``extend``, ``ordered``, a module ``include``
returns, piped through ``stateconf -ps``), stateconf (``-os``, ``sls_params`` and the end
marker, ``.`` ids, an ``extend`` of an included file's settings), and bad input (a pydsl file
that raises, one with a function never named, stateconf with bad YAML, a shebang stateconf
cannot split, an unknown renderer). ``lib/`` holds SLS the cases include.

Two values vary from run to run in Salt and briny alike and are compared masked: the path in
the repr of pydsl's module (the ``slsmod`` argument of ``_slsmod_<sls>``), and the traceback
Salt appends to a "render error" (briny's shows the SLS's own lines: checked apart).

Re-record (needs the reference Salt):

    python3 ../shared/tools/salt-golden.py tests/golden/renderers/cases tests/golden/renderers/expected
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import goldenlib  # put on sys.path by conftest.py
from tests.integration.test_golden import _check  # the golden harness's comparison, reused

CASES = goldenlib.GOLDEN / "renderers" / "cases"
EXPECTED = goldenlib.GOLDEN / "renderers" / "expected"
_MODULE = re.compile(r"^<module '([^']*)' from '.*'>$")


def _volatile(obj: Any) -> Any:
    """Mask what varies from run to run (see the module docstring)."""
    if isinstance(obj, dict):
        return {k: _volatile(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_volatile(v) for v in obj]
    if isinstance(obj, str):
        obj = _MODULE.sub(r"<module '\1' from '@FILE@'>", obj)
        return obj.split("\nTraceback (most recent call last):\n")[0]
    return obj


def _params() -> list:
    return [
        pytest.param(case, kind, id=f"{case}/{kind}")
        for case in goldenlib.requisite_cases(CASES)
        for kind in goldenlib.REQUISITE_RUNS
    ]


def _run(case: str, kind: str, briny_call, tmp_path) -> tuple[Any, Any, Any]:
    work = tmp_path / "work"
    work.mkdir()
    conf, sandbox = goldenlib.build_requisite_case(work, CASES)
    p = briny_call(conf, goldenlib.REQUISITE_RUNS[kind](case), cwd=work)
    data = goldenlib.mask(goldenlib.parse_output(p.stdout, p.stderr), [(str(sandbox), "@SANDBOX@")])
    return p, data, goldenlib.snapshot(sandbox)


@pytest.mark.parametrize("case,kind", _params())
def test_golden(case: str, kind: str, briny_call, tmp_path) -> None:
    rec = json.loads((EXPECTED / f"{case}.json").read_text())[kind]
    p, data, disk = _run(case, kind, briny_call, tmp_path)
    rec = {**rec, "data": _volatile(rec["data"])}
    _check(rec, p.returncode, _volatile(data), disk=disk, stderr=p.stderr)


def test_a_pydsl_error_shows_the_lines_of_the_sls(briny_call, tmp_path) -> None:
    p, data, _ = _run("pydsl_raise", "low", briny_call, tmp_path)
    assert p.returncode == 1
    (error,) = data
    head, _, trace = error.partition("\nTraceback (most recent call last):\n")
    assert head == "Rendering SLS pydsl_raise failed, render error: pydsl boom"
    assert re.search(r'File ".*pydsl_raise\.sls", line 3, in <module>', trace), trace
    assert trace.rstrip().endswith("ValueError: pydsl boom")


def test_goldens_exist() -> None:
    missing = [c for c in goldenlib.requisite_cases(CASES) if not (EXPECTED / f"{c}.json").exists()]
    assert not missing, f"no golden for {missing}: run ../shared/tools/salt-golden.py"
