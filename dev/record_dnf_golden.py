#!/usr/bin/env python3
"""Record what the reference Salt returns for the dnf golden cases (tests/golden/dnf/).

usage: python3 dev/record_dnf_golden.py [CASE...] [--salt-call PATH]

As root on a Debian host with rpm, rpmbuild, dnf and createrepo_c: builds the test RPMs and a
throwaway installroot (tests/rpmrepo.py; the host's packages are never touched: dnf and rpm
are reached through wrappers that add --installroot / --root), then runs Salt's salt-call on
each case with the Rocky 9 grains. docs/rhel-suse.md describes the set-up.
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "tests" / "golden" / "dnf"))
import dnfcases

from tests import rpmrepo

ap = argparse.ArgumentParser()
ap.add_argument("cases", nargs="*")
ap.add_argument("--salt-call", default=os.environ.get("SALTREF", "/tmp/saltref") + "/bin/salt-call")  # noqa: S108 - the reference install
args = ap.parse_args()
with tempfile.TemporaryDirectory(prefix="dnf-golden-") as tmp:
    where = Path(tmp)
    world = rpmrepo.make_world(where / "world", rpmrepo.build_repos(where / "build"))
    for name in args.cases or dnfcases.names():
        record = dnfcases.run_case([args.salt_call], name, world, where / "run" / name)
        dnfcases.save(name, record)
        print(name, {k: v["rc"] for k, v in record.items()})
