"""briny's ``pkg`` and ``pkgrepo`` states on a RHEL-family minion (Rocky 9 grains) against the
real dnf and rpm, in a throwaway installroot (tests/rpmrepo.py), compared with what Salt 3007
did on the same cases (tests/golden/dnf/, recorded by dev/record_dnf_golden.py): test=True
changes nothing, the first run makes the changes, the second reports none."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests import rpmrepo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "golden" / "dnf"))
import dnfcases

pytestmark = [pytest.mark.host, pytest.mark.slow]


@pytest.mark.parametrize("case", dnfcases.names())
def test_dnf_case_equals_salt(case: str, rpm_world: rpmrepo.RpmWorld, tmp_path: Path) -> None:
    briny_call = shutil.which("briny-call", path=str(Path(sys.executable).parent))
    assert briny_call
    got = dnfcases.comparable(dnfcases.run_case([briny_call], case, rpm_world, tmp_path))
    want = dnfcases.comparable(dnfcases.load(case))
    # test=True changed nothing: the host after it is the host before the first run
    assert got == want
    rpm_world.reset()


def test_every_case_has_a_golden() -> None:
    assert sorted(p.stem for p in dnfcases.EXPECTED.glob("*.json")) == dnfcases.names()
