"""briny against Salt's recorded answers for the Debian modules (tests/golden/debian).

The cases apply ``pkgrepo``, ``debconf``, ``alternatives``, ``locale``,
``timezone`` and ``service`` states to this host as root, in salt-golden.py's
convention (``run`` = live, ``test`` = test=True, ``low`` = show_low_sls),
with APT_CONFIG pointing apt-get and apt-key at an empty sandbox
(tests/golden/debian/sandbox.py) as when they were recorded. Each case puts
the host back as it ends; a :class:`~tests.integration.debianhost.HostGuard`
around each run restores anything left over and fails the test if the host
changed. Re-record with ``python3 dev/record_debian_golden.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import goldenlib  # put on sys.path by conftest.py
import pytest

from .debianhost import HostGuard
from .test_golden import _check

DEBIAN = goldenlib.GOLDEN / "debian"
sys.path.insert(0, str(DEBIAN))
from sandbox import apt_sandbox  # noqa: E402 - found on the path set just above

CASES = DEBIAN / "cases"
EXPECTED = DEBIAN / "expected"
_TOOLS = ("update-alternatives", "debconf-get-selections", "locale-gen", "apt-get", "systemctl", "gpg")

pytestmark = [
    pytest.mark.host,
    pytest.mark.skipif(
        os.name != "posix" or os.geteuid() != 0 or any(shutil.which(t) is None for t in _TOOLS),
        reason=f"needs root on a Debian host with {', '.join(_TOOLS)}",
    ),
]

# Deliberate differences (the state modules' docstrings say why); xfail(strict=True).
KNOWN_GAPS = {
    # Salt 3007 in offline mode masks the unit, then fails every masked/unmasked state with
    # "Cannot run in offline mode. Failed to get information on unit ..."; briny reads the mask link.
    "debian/service_masking/run",
}


def _params():
    out = []
    for case in goldenlib.requisite_cases(CASES):
        for kind in goldenlib.REQUISITE_RUNS:
            test_id = f"debian/{case}/{kind}"
            marks = [pytest.mark.xfail(strict=True, reason="KNOWN_GAPS")] if test_id in KNOWN_GAPS else []
            out.append(pytest.param(case, kind, id=test_id, marks=marks))
    return out


@pytest.mark.parametrize("case,kind", _params())
def test_debian_golden(case, kind, briny_call, tmp_path, monkeypatch) -> None:
    rec = json.loads((EXPECTED / f"{case}.json").read_text())
    for key, value in apt_sandbox(tmp_path / "apt").items():
        monkeypatch.setenv(key, value)
    work = tmp_path / "work"
    work.mkdir()
    conf, sandbox = goldenlib.build_requisite_case(work, CASES)
    with HostGuard() as guard:
        p = briny_call(conf, goldenlib.REQUISITE_RUNS[kind](case), cwd=work)
        left = guard.differences()
    assert not left, f"the {case} case left the host changed: {left}"
    data = goldenlib.mask(goldenlib.parse_output(p.stdout, p.stderr), [(str(sandbox), "@SANDBOX@")])
    _check(rec[kind], p.returncode, data, disk=goldenlib.snapshot(sandbox), stderr=p.stderr)


def test_debian_goldens_exist() -> None:
    missing = [c for c in goldenlib.requisite_cases(CASES) if not (EXPECTED / f"{c}.json").exists()]
    assert not missing, f"no golden for {missing}: run python3 dev/record_debian_golden.py"
