"""briny against Salt 3007 on the system-file states: ini, sysctl, host, mount, ssh_known_hosts.

The cases in tests/golden/files/cases (salt-golden.py's convention, plus a
``NAME.minion`` config fragment where a case needs a config key) run live,
in test mode and through show_low_sls, each in a fresh sandbox, exactly as
the reference recorded them in tests/golden/files/expected
(``dev/record_sandbox_golden.py tests/golden/files/cases tests/golden/files/expected``).
They do real work on this host (files in the sandbox, tmpfs mounts that the
case unmounts again, the sysctl values the host already has), so they need
root and carry the ``host`` marker.

DELIBERATE lists the runs where briny differs from Salt on purpose (each
module's docstring says why); they run as strict xfails, so a golden that
starts matching is noticed.
"""

from __future__ import annotations

import os
import pathlib

import goldenlib  # put on sys.path by conftest.py
import pytest

from .test_golden import _check

CORPUS = pathlib.Path(goldenlib.GOLDEN) / "files"
CASES, EXPECTED = CORPUS / "cases", CORPUS / "expected"

DELIBERATE: dict[str, str] = {
    "ini_differs/run": "sections_present works, empty keys are reported, no empty file is made (states/ini_manage.py)",
    "ini_differs/test": "a removed key with an empty value is reported (states/ini_manage.py)",
    "host_differs/run": "only the changed line is rewritten; an invalid address is refused (states/host.py)",
    "host_differs/test": "an invalid address is refused (states/host.py)",
    "known_hosts_differs/run": "key/fingerprint/enc checked live too; no key is no key (states/ssh_known_hosts.py)",
    "mount_differs/run": "a remount names the options that changed; no fstab: a failure, no traceback (states/mount.py)",
    "mount_differs/test": "no fstab: a failure, no traceback (states/mount.py)",
    "known_hosts_differs/test": "the port/hash check holds in test mode; no key is no key (states/ssh_known_hosts.py)",
}

# Host values a case relies on (it sets them to these, so it must find them so).
REQUIRES: dict[str, dict[str, str]] = {
    "sysctl_states": {"kernel.msgmax": "8192", "kernel.msgmnb": "16384", "net.ipv4.ping_group_range": "1\t0"},
}

pytestmark = [
    pytest.mark.host,
    pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="the cases do host work as root"),
]


def _params():
    out = []
    for case in goldenlib.requisite_cases(CASES):
        for kind in goldenlib.REQUISITE_RUNS:
            test_id = f"{case}/{kind}"
            marks = [pytest.mark.xfail(strict=True, reason=DELIBERATE[test_id])] if test_id in DELIBERATE else []
            out.append(pytest.param(case, kind, id=test_id, marks=marks))
    return out


@pytest.mark.parametrize("case,kind", _params())
def test_files_golden(case, kind, briny_call, tmp_path):
    for key, value in REQUIRES.get(case, {}).items():
        found = pathlib.Path("/proc/sys", key.replace(".", "/"))
        if not found.exists() or found.read_text().strip() != value:
            pytest.skip(f"this host's {key} is not {value!r}: the case would change it")
    rec = goldenlib.sandbox_expected(EXPECTED, case)[kind]
    work = tmp_path / "work"
    work.mkdir()
    conf, sandbox = goldenlib.build_requisite_case(work, CASES, case=case)
    p = briny_call(conf, goldenlib.REQUISITE_RUNS[kind](case), cwd=work)
    data = goldenlib.mask(goldenlib.parse_output(p.stdout, p.stderr), [(str(sandbox), "@SANDBOX@")])
    _check(rec, p.returncode, data, disk=goldenlib.snapshot(sandbox), stderr=p.stderr)


def test_every_case_has_a_golden():
    missing = [c for c in goldenlib.requisite_cases(CASES) if not (EXPECTED / f"{c}.json").exists()]
    assert not missing, f"no golden for {missing}: run dev/record_sandbox_golden.py"


def test_deliberate_entries_name_real_tests():
    ids = {p.id for p in _params()}
    assert not sorted(set(DELIBERATE) - ids)
