"""briny against Salt 3007's recorded answers on the fidelity cases of issue 10.

The corpus ``tests/golden/fidelity/`` is in salt-golden.py's convention (see
tests/golden/goldenlib.py): each case runs live, with test=True and as
show_low_sls, in a fresh sandbox, as Salt did; results, exit status and what
the run left in the sandbox are compared whole (tests/integration/test_golden.py's
comparison). The cases touch nothing outside their sandbox.

Re-record (needs the reference Salt):

    python3 ../shared/tools/salt-golden.py tests/golden/fidelity/cases tests/golden/fidelity/expected
"""

from __future__ import annotations

import json

import pytest

import goldenlib  # put on sys.path by conftest.py
from tests.integration.test_golden import _check  # the golden harness's comparison, reused

CASES = goldenlib.GOLDEN / "fidelity" / "cases"
EXPECTED = goldenlib.GOLDEN / "fidelity" / "expected"

# Deliberate differences from Salt, each a test id "<case>/<run|test|low>" or a whole case (say why).
KNOWN_DIFFERENCES: dict[str, str] = {
    "ssh_auth_user_later/run": "ssh_auth in a real run names the missing user, and absent with a missing source "
    "fails (Salt blames the home directory, and succeeds silently): states/ssh_auth.py",
    "recurse_patterns/test": "file.recurse in test mode: Salt lists the folders, then the files, each group in the "
    "order of a Python set (it changes from run to run); briny sorts each group (docs/FORMULAS.md)",
}


def _params() -> list:
    out = []
    for case in goldenlib.requisite_cases(CASES):
        for kind in goldenlib.REQUISITE_RUNS:
            test_id = f"{case}/{kind}"
            marks = []
            why = KNOWN_DIFFERENCES.get(test_id) or KNOWN_DIFFERENCES.get(case)
            if why:
                marks.append(pytest.mark.xfail(strict=True, reason=why))
            out.append(pytest.param(case, kind, id=test_id, marks=marks))
    return out


@pytest.mark.parametrize("case,kind", _params())
def test_golden(case: str, kind: str, briny_call, tmp_path) -> None:
    rec = json.loads((EXPECTED / f"{case}.json").read_text())[kind]
    work = tmp_path / "work"
    work.mkdir()
    conf, sandbox = goldenlib.build_requisite_case(work, CASES)
    p = briny_call(conf, goldenlib.REQUISITE_RUNS[kind](case), cwd=work)
    data = goldenlib.mask(goldenlib.parse_output(p.stdout, p.stderr), [(str(sandbox), "@SANDBOX@")])
    _check(rec, p.returncode, data, disk=goldenlib.snapshot(sandbox), stderr=p.stderr)


def test_goldens_exist() -> None:
    missing = [c for c in goldenlib.requisite_cases(CASES) if not (EXPECTED / f"{c}.json").exists()]
    assert not missing, f"no golden for {missing}: run ../shared/tools/salt-golden.py"


def test_known_differences_name_real_tests() -> None:
    ids = {p.id for p in _params()}
    cases = set(goldenlib.requisite_cases(CASES))
    assert not {k for k in KNOWN_DIFFERENCES if k not in ids and k not in cases}
