"""Record what the reference Salt's core grains report for the os-release roots kept under
tests/golden/grains/roots/ (one folder per distribution, each holding the etc/ files that
distribution ships).

Run it with the reference's interpreter: ``/tmp/saltref/bin/python dev/record_os_grains_golden.py``.
Salt's ``salt.grains.core`` is imported unchanged; only its file reads are redirected: every
``/etc/...`` and ``/usr/lib/os-release`` path it opens or tests is looked up under the root
instead, the ``distro`` library it uses is pointed at the same root, and the ``lsb_release``
Python module is made unimportable (RHEL-family and SUSE hosts do not ship it). The goldens
(tests/golden/grains/NAME.json) hold the os grains the minion computes from those files.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ROOTS = HERE / "tests" / "golden" / "grains" / "roots"
OUT = HERE / "tests" / "golden" / "grains"
KEYS = (
    "os",
    "os_family",
    "osfullname",
    "osrelease",
    "osrelease_info",
    "osmajorrelease",
    "osfinger",
    "oscodename",
    "lsb_distrib_id",
    "lsb_distrib_release",
    "lsb_distrib_codename",
    "lsb_distrib_description",
)

sys.modules["lsb_release"] = None  # type: ignore[assignment]

import distro
import salt.grains.core as core

_real_open = builtins.open
_real_isfile = os.path.isfile
_root: Path | None = None


def _map(path: object) -> object:
    if _root is not None and isinstance(path, str) and (path.startswith("/etc/") or path == "/usr/lib/os-release"):
        return str(_root / path.lstrip("/"))
    return path


def _open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
    return _real_open(_map(file), *args, **kwargs)


def _isfile(path):  # type: ignore[no-untyped-def]
    return _real_isfile(_map(path))


builtins.open = _open
os.path.isfile = _isfile


def grains_for(root: Path) -> dict[str, object]:
    global _root
    _root = root
    distro._distro = distro.LinuxDistribution(root_dir=str(root))
    grains = core._linux_distribution_data()
    if grains.get("osrelease", ""):
        grains.update(core._osrelease_data(grains["os"], grains["osfullname"], grains["osrelease"]))
    _root = None
    return {k: list(v) if isinstance(v, tuple) else v for k, v in grains.items() if k in KEYS}


def main() -> None:
    # One process per root: distro and platform cache what they read.
    if len(sys.argv) == 2:
        print(json.dumps(grains_for(ROOTS / sys.argv[1]), sort_keys=True))
        return
    import subprocess

    for root in sorted(ROOTS.iterdir()):
        out = subprocess.run([sys.executable, __file__, root.name], check=True, capture_output=True, text=True)
        grains = json.loads(out.stdout)
        (OUT / f"{root.name}.json").write_text(json.dumps(grains, indent=2, sort_keys=True) + "\n")
        print(root.name, json.dumps(grains, sort_keys=True))


if __name__ == "__main__":
    main()
