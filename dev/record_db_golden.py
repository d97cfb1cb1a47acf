#!/usr/bin/env python3
"""Record what the reference Salt returns for the database golden cases.

    python3 dev/record_db_golden.py postgres|mysql [--salt-call PATH] [--driver-path DIR]

Starts a throwaway server (tests/pgserver.py, tests/mariadbserver.py), puts
its values in place of the placeholders in a copy of
tests/golden/<db>/cases/, runs ../shared/tools/salt-golden.py on that copy,
masks the values back and writes tests/golden/<db>/expected/. The server is
stopped by pid at the end. ``--driver-path`` puts a folder holding a MySQL
driver for Salt (PyMySQL) on its PYTHONPATH: the reference has none, and its
mysql modules do not load without one. A dev tool; the suite never runs it.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests import dbgolden

SALT_GOLDEN = ROOT.parent / "shared" / "tools" / "salt-golden.py"
if not SALT_GOLDEN.exists():
    SALT_GOLDEN = pathlib.Path("/work/shared/tools/salt-golden.py")


def start(db):
    if db == "postgres":
        from tests.pgserver import PgServer

        return PgServer.start()
    from tests.mariadbserver import MariaDBServer

    return MariaDBServer.start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db", choices=["postgres", "mysql"])
    ap.add_argument("--salt-call", default=os.path.join(tempfile.gettempdir(), "saltref", "bin", "salt-call"))
    ap.add_argument("--driver-path", default=None)
    a = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="db-golden-"))
    server = start(a.db)
    try:
        pairs = server.substitutions()
        cases = work / "cases"
        for p in dbgolden.cases_dir(a.db).rglob("*"):
            if p.is_file():
                out = cases / p.relative_to(dbgolden.cases_dir(a.db))
                out.parent.mkdir(parents=True, exist_ok=True)
                text = p.read_text()
                for marker, value in pairs:
                    text = text.replace(marker, value)
                out.write_text(text)
        env = dict(os.environ)
        if a.driver_path:
            env["PYTHONPATH"] = a.driver_path
        subprocess.run(
            [sys.executable, str(SALT_GOLDEN), str(cases), str(work / "out"), "--salt-call", a.salt_call],
            check=True,
            env=env,
        )
        dest = dbgolden.expected_dir(a.db)
        dest.mkdir(parents=True, exist_ok=True)
        for p in sorted((work / "out").glob("*.json")):
            data = dbgolden.unmask(json.loads(p.read_text()), pairs)
            (dest / p.name).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
            print("recorded", dest / p.name)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
