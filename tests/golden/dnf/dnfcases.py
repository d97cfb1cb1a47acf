"""The dnf golden cases, shared by the recorder (dev/record_dnf_golden.py, runs Salt's
salt-call) and the suite (tests/integration/test_dnf_golden.py, runs briny-call), so both run
the same trees with the same grains, in the same throwaway RPM world (tests/rpmrepo.py), and
mask the output the same way. Standard library only.

Each case: an SLS (``@REPOS@`` is the folder of the built repositories, ``@REPOSDIR@`` the
world's repo folder), packages installed (and repo files written) before it, and the record:
test=True, then live twice, each with what the rpm database and the repo folder hold after.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "expected"
GRAINS = {
    "os": "Rocky",
    "os_family": "RedHat",
    "osfullname": "Rocky Linux",
    "osrelease": "9.3",
    "osmajorrelease": 9,
    "osfinger": "Rocky Linux-9",
    "osarch": "x86_64",
    "cpuarch": "x86_64",
}
VOLATILE = {"pid", "start_time", "duration", "__run_num__", "__sls__", "__id__"}

CASES: dict[str, dict[str, Any]] = {
    "installed": {
        "sls": """
app:
  pkg.installed:
    - name: brinytest-app
lib_pinned:
  pkg.installed:
    - name: brinytest-lib
    - version: 1.0-1
hooks:
  pkg.installed:
    - pkgs:
      - brinytest-hook: '1.0'
""",
    },
    "installed_upgrade_version": {
        "setup": ["brinytest-lib-1.0"],
        "sls": """
lib:
  pkg.installed:
    - name: brinytest-lib
    - version: 2.0-1
""",
    },
    "latest": {
        "setup": ["brinytest-app-1.0", "brinytest-lib-1.0"],
        "sls": """
app:
  pkg.latest:
    - pkgs: [brinytest-app, brinytest-hook]
""",
    },
    "removed": {
        "setup": ["brinytest-app-1.0"],
        "sls": """
app:
  pkg.removed:
    - name: brinytest-app
gone:
  pkg.removed:
    - name: brinytest-never-installed
""",
    },
    "purged": {
        "setup": ["brinytest-hook"],
        "sls": """
hook:
  pkg.purged:
    - name: brinytest-hook
""",
    },
    "uptodate": {
        "setup": ["brinytest-app-1.0", "brinytest-lib-1.0"],
        "sls": """
everything:
  pkg.uptodate:
    - refresh: true
""",
    },
    "repo_then_pkg": {
        "sls": """
extra:
  pkgrepo.managed:
    - name: brinytest-extra
    - humanname: briny extra test repo
    - baseurl: file://@REPOS@/brinytest-extra
    - gpgcheck: 0
    - enabled: 1
    - basedir: @REPOSDIR@
other:
  pkg.installed:
    - name: brinytest-other
    - fromrepo: brinytest-extra
    - require:
      - pkgrepo: extra
""",
    },
    "repo_modify": {
        "repos": {
            "brinytest-extra.repo": "# kept header\\n[brinytest-extra]\\nname=x\\nbaseurl=file://@REPOS@/brinytest-extra\\n"
            "gpgcheck=0\\nenabled=0\\n# a note\\n"
        },
        "sls": """
extra:
  pkgrepo.managed:
    - name: brinytest-extra
    - humanname: renamed
    - baseurl: file://@REPOS@/brinytest-extra
    - gpgcheck: 0
    - basedir: @REPOSDIR@
""",
    },
    "repo_absent": {
        "repos": {
            "brinytest-extra.repo": "[brinytest-extra]\\nname=x\\nbaseurl=file://@REPOS@/brinytest-extra\\ngpgcheck=0\\n"
        },
        "sls": """
extra:
  pkgrepo.absent:
    - name: brinytest-extra
    - basedir: @REPOSDIR@
""",
    },
    "bad_input": {
        "sls": """
nope:
  pkg.installed:
    - name: brinytest-nope
badversion:
  pkg.installed:
    - name: brinytest-lib
    - version: 9.9-1
""",
    },
}


def _subst(text: str, world: Any) -> str:
    repos = str(next(iter(world.repos.values())).parent)
    return text.replace("@REPOS@", repos).replace("@REPOSDIR@", str(world.reposdir))


def mask(obj: Any, world: Any) -> Any:
    repos = str(next(iter(world.repos.values())).parent)
    if isinstance(obj, dict):
        return {mask(k, world): mask(v, world) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [mask(v, world) for v in obj]
    if isinstance(obj, str):
        s = obj.replace(str(world.reposdir), "@REPOSDIR@").replace(repos, "@REPOS@")
        s = re.sub(r"Last metadata expiration check: [^\n]*\n\s*", "", s)
        return re.sub(r"\b\d{2}:\d{2}:\d{2}\.\d+\b", "@TIME@", s)
    return obj


def _state(world: Any) -> dict[str, Any]:
    return {
        "rpm": world.rpm_qa(),
        "repos": {f.name: mask(f.read_text(), world) for f in sorted(world.reposdir.iterdir())},
    }


def run_case(call: list[str], name: str, world: Any, work: Path) -> dict[str, Any]:
    """Run one case with ``call`` (salt-call or briny-call, before ``--local``): its record."""
    case = CASES[name]
    tree, conf = work / "srv", work / "etc"
    tree.mkdir(parents=True, exist_ok=True)
    conf.mkdir(parents=True, exist_ok=True)
    (tree / f"{name}.sls").write_text(_subst(case["sls"], world))
    (conf / "minion").write_text(
        f"id: rocky\nfile_client: local\nfile_roots:\n  base: [{tree}]\nroot_dir: {work}/root\n"
        f"cachedir: {work}/cache\npki_dir: {work}/pki\nlog_file: {work}/minion.log\n"
        f"grains: {json.dumps(GRAINS)}\n"
    )
    world.reset()
    if case.get("setup"):
        done = world.dnf("install", *case["setup"])
        assert done.returncode == 0, done.stderr
    for fname, text in (case.get("repos") or {}).items():
        (world.reposdir / fname).write_text(_subst(text.replace("\\n", "\n"), world))
    record: dict[str, Any] = {}
    for step, extra in (("test", ["test=True"]), ("run", []), ("again", [])):
        p = subprocess.run(
            [*call, "--local", "-c", str(conf), "state.sls", name, *extra, "--out=json"],
            capture_output=True,
            text=True,
            timeout=600,
            env=world.env(),
            cwd=work,
        )
        try:
            data = json.loads(p.stdout).get("local")
        except json.JSONDecodeError:
            data = {"unparsed": p.stdout[-2000:], "stderr": p.stderr[-2000:]}
        record[step] = {"rc": p.returncode, "data": mask(data, world), "after": _state(world)}
    return record


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """What is compared of a record: per state, result / changes / comment; the host after."""
    out: dict[str, Any] = {}
    for step, one in record.items():
        data = one["data"]
        states = (
            {k: {f: v.get(f) for f in ("result", "changes", "comment")} for k, v in data.items()}
            if isinstance(data, dict) and all(isinstance(v, dict) for v in data.values())
            else data
        )
        out[step] = {"rc": one["rc"], "states": states, "after": one["after"]}
    return out


def load(name: str) -> dict[str, Any]:
    return json.loads((EXPECTED / f"{name}.json").read_text())


def save(name: str, record: dict[str, Any]) -> None:
    EXPECTED.mkdir(exist_ok=True)
    (EXPECTED / f"{name}.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


def names() -> list[str]:
    return sorted(CASES)
