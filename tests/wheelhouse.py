"""A wheelhouse of briny's dependencies, repacked from the packages installed in this interpreter.

Lets the install test run ``deploy/install.sh --wheelhouse`` with no package index: the wheels
are built from the files pip installed here (each distribution's ``RECORD``), so the test needs
nothing tests/run.sh did not already install. Scripts (``../../bin``) and byte code are left
out; pip writes them again when it installs the wheel.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as md
import re
import zipfile
from pathlib import Path

from packaging.requirements import Requirement  # pytest's own dependency

SKIPPED = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"}


def _needed(requirements: list[str] | None) -> list[str]:
    """The names of the requirements this interpreter needs (markers evaluated, extras left out)."""
    needed = []
    for text in requirements or []:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            needed.append(req.name)
    return needed


def closure(root: str) -> list[md.Distribution]:
    """``root``'s installed requirements, and theirs (extras left out), without ``root``."""
    seen: dict[str, md.Distribution] = {}
    todo = _needed(md.requires(root))
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        dist = md.distribution(name)
        seen[key] = dist
        todo += _needed(dist.requires)
    return list(seen.values())


def repack(dist: md.Distribution, dest: Path) -> Path:
    """One installed distribution as a wheel in ``dest``."""
    files = [f for f in dist.files or [] if not str(f).startswith("..") and "__pycache__" not in f.parts]
    info = next(f for f in dist.files or [] if f.name == "WHEEL" and f.parent.name.endswith(".dist-info"))
    tag = next(
        line.split(":", 1)[1].strip()
        for line in Path(str(dist.locate_file(info))).read_text().splitlines()
        if line.startswith("Tag:")
    )
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    wheel = dest / f"{name}-{dist.version}-{tag}.whl"
    record: list[str] = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in files:
            if f.parent == info.parent and f.name in SKIPPED:
                continue
            data = Path(str(dist.locate_file(f))).read_bytes()
            zf.writestr(str(f), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{f},sha256={digest},{len(data)}")
        record.append(f"{info.parent}/RECORD,,")
        zf.writestr(f"{info.parent}/RECORD", "\n".join(record) + "\n")
    return wheel


def build(root: str, dest: Path) -> list[Path]:
    """Wheels of every installed dependency of ``root`` in ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    return [repack(dist, dest) for dist in closure(root)]
