"""briny against Salt 3007's recorded answers for the git, pip and gem states.

Corpora in salt-golden.py's convention (see tests/golden/goldenlib.py):
``tests/golden/vcs/`` (git: local bare repositories made at render time, so
test=True runs see them too) and ``tests/golden/langpkg/`` (pip into a
virtualenv; gem through a gem_bin wrapper that keeps the gems in the sandbox and
installs --local, from gems the case builds with ``gem build``). Each case runs
live, with test=True and as show_low_sls, in a fresh sandbox, as Salt did.

The sandbox comparison leaves out git's own files (``.git/`` and
``*.git/``: the index and reflogs hold timestamps and inode numbers) and
the virtualenvs' and gem folders' contents (paths and compiled files);
the states' results and the checked-out files are compared whole.

Re-record (needs the reference Salt and runs it live, as root, on this host):

    python3 ../shared/tools/salt-golden.py tests/golden/vcs/cases tests/golden/vcs/expected
    PYTHONPATH=tests/golden:. python3 tests/integration/test_golden_vcs.py tests/golden/vcs/expected  # drop git internals
"""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

import goldenlib  # put on sys.path by conftest.py
from tests.integration.test_golden import _check  # the golden harness's comparison, reused

GOLDEN = goldenlib.GOLDEN
CORPORA = {"vcs": "git", "langpkg": "python3"}

# Deliberate differences from Salt, each a whole case (say why).
KNOWN_DIFFERENCES = {
    # Salt 3007's git.config_unset unsets the key, then raises KeyError (it looks the
    # removed key up in what is left); briny reports the change. See states/git.py.
    "vcs/git_config_unset_whole/run",
    # Salt 3007's git.detached takes an annotated tag's object SHA1 for the commit to check out and
    # compares a short SHA1 as a string, so it reports a change on every run; a SHA1 that names
    # nothing is a traceback. briny checks out the tag's commit, matches the abbreviation, and
    # fails that state with "Revision '...' does not exist". See states/git.py.
    "vcs/git_detached_resolve/run",
    "vcs/git_detached_resolve/test",
    # Salt's gem states turn every failing gem command into a traceback (an unknown gem, a
    # missing gem file, a broken or missing gem_bin); briny fails that state with gem's error.
    # See states/gem.py; test_gem_states.py checks briny's results.
    "langpkg/gem_errors/run",
    "langpkg/gem_errors/test",
    # Salt aborts the whole run for an argument gem.installed does not take (install_dir);
    # briny fails that state with Salt's words.
    "langpkg/gem_install_dir/run",
    "langpkg/gem_install_dir/test",
}


def _params():
    out = []
    for corpus, tool in CORPORA.items():
        root = GOLDEN / corpus / "cases"
        for case in goldenlib.requisite_cases(root):
            for kind in goldenlib.REQUISITE_RUNS:
                test_id = f"{corpus}/{case}/{kind}"
                needs = "gem" if case.startswith("gem_") else tool
                marks = [pytest.mark.skipif(shutil.which(needs) is None, reason=f"needs {needs}")]
                if test_id in KNOWN_DIFFERENCES:
                    marks.append(pytest.mark.xfail(strict=True, reason="KNOWN_DIFFERENCES in test_golden_vcs.py"))
                out.append(pytest.param(corpus, case, kind, id=test_id, marks=marks))
    return out


def _volatile(rel: str) -> bool:
    """git's own files, and what a virtualenv, a wheel folder or a gem home holds (paths, bytecode)."""
    parts = rel.split("/")
    if parts[0] in ("venv", "wheels", "gems") and len(parts) > 1:
        return True
    return any(p == ".git" or p.endswith(".git") for p in parts[:-1]) or parts[-1] == ".git"


def _disk(snapshot: dict) -> dict:
    return {k: v for k, v in snapshot.items() if not _volatile(k)}


@pytest.mark.host
@pytest.mark.parametrize("corpus,case,kind", _params())
def test_golden(corpus, case, kind, briny_call, tmp_path):
    rec = json.loads((GOLDEN / corpus / "expected" / f"{case}.json").read_text())[kind]
    work = tmp_path / "work"
    work.mkdir()
    conf, sandbox = goldenlib.build_requisite_case(work, GOLDEN / corpus / "cases")
    p = briny_call(conf, goldenlib.REQUISITE_RUNS[kind](case), cwd=work)
    data = goldenlib.mask(goldenlib.parse_output(p.stdout, p.stderr), [(str(sandbox), "@SANDBOX@")])
    expected = dict(rec, disk=_disk(rec["disk"]))
    _check(expected, p.returncode, data, disk=_disk(goldenlib.snapshot(sandbox)), stderr=p.stderr)


def test_goldens_exist():
    missing = [
        f"{corpus}/{case}"
        for corpus in CORPORA
        for case in goldenlib.requisite_cases(GOLDEN / corpus / "cases")
        if not (GOLDEN / corpus / "expected" / f"{case}.json").exists()
    ]
    assert not missing, f"no golden for {missing}: run ../shared/tools/salt-golden.py"


def test_known_differences_name_real_tests():
    ids = {p.id for p in _params()}
    assert not KNOWN_DIFFERENCES - ids, KNOWN_DIFFERENCES - ids


def test_volatile_paths() -> None:
    assert _volatile("head/.git/index") and _volatile("remote.git/HEAD") and _volatile("head/.git")
    assert not _volatile("head/a.txt") and not _volatile("head") and not _volatile("remote.git")
    assert _volatile("venv/bin/python") and not _volatile("venv")


if __name__ == "__main__":  # drop the volatile paths from freshly recorded goldens (see the docstring)
    import sys

    for path in pathlib.Path(sys.argv[1]).glob("*.json"):
        rec = json.loads(path.read_text())
        for run in rec.values():
            run["disk"] = _disk(run["disk"])
        path.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
