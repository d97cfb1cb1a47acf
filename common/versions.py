"""What briny is and which Salt it follows: ``--version``, ``--versions-report``, ``test.version``.

Runs everywhere (every command's parser, the ``test`` execution module, the
``manage`` runner). Pure: reads the package constants, the installed
dependencies' versions and the host's ``uname``/``os-release``; builds data
and text, prints nothing.

Shapes are Salt 3007's (checked against ``salt-call --versions-report`` and
``test.versions_information``): sections ``Salt Version``, ``Python
Version``, ``Dependency Versions``, ``System Versions``; a dependency that is
not installed is ``None`` in the data and ``Not Installed`` in the text, the
keys right-aligned to the longest key of the whole report plus two, the
sections separated by a line holding one space. briny adds ``briny: <its
version>`` under ``Salt Version`` and ``Salt`` names the Salt release whose
behaviour briny follows.
"""

from __future__ import annotations

import argparse
import platform
import sys
from typing import Any

from briny import SALT_COMPAT_VERSION, __version__

# (the name shown, the distribution to ask for its version): what briny runs on
DEPENDENCIES = (
    ("cryptography", "cryptography"),
    ("Jinja2", "Jinja2"),
    ("MarkupSafe", "MarkupSafe"),
    ("msgpack", "msgpack"),
    ("PyYAML", "PyYAML"),
    ("PyZMQ", "pyzmq"),
)


def version_string(prog: str = "briny") -> str:
    """``briny-call 0.1.0 (Salt 3007.17)``: what ``--version`` prints and ``test.version`` returns."""
    return f"{prog} {__version__} (Salt {SALT_COMPAT_VERSION})"


def _dist_version(dist: str) -> str | None:
    import importlib.metadata  # only for the versions report: every command's start-up skips it

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _zmq_version() -> str | None:
    try:
        import zmq
    except ImportError:
        return None
    return str(zmq.zmq_version())


def _os_release() -> dict[str, str]:
    try:
        with open("/etc/os-release", encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip().strip('"')
    return out


def versions_information() -> dict[str, dict[str, str | None]]:
    """The versions report as data (Salt's ``test.versions_information``)."""
    deps: dict[str, str | None] = {name: _dist_version(dist) for name, dist in DEPENDENCIES}
    deps["ZMQ"] = _zmq_version()
    uname = platform.uname()
    release = _os_release()
    dist = " ".join(p for p in (release.get("ID"), release.get("VERSION_ID"), release.get("VERSION_CODENAME")) if p)
    return {
        "Salt Version": {"Salt": SALT_COMPAT_VERSION, "briny": __version__},
        "Python Version": {"Python": sys.version.replace("\n", "")},
        "Dependency Versions": deps,
        "System Versions": {
            "dist": dist or None,
            "locale": sys.getdefaultencoding(),
            "machine": uname.machine,
            "release": uname.release,
            "system": uname.system,
            "version": release.get("PRETTY_NAME") or uname.version,
        },
    }


def versions_report(info: dict[str, dict[str, str | None]] | None = None) -> str:
    """The versions report as Salt prints it (``--versions-report``, ``test.versions_report``)."""
    info = versions_information() if info is None else info
    width = max((len(k) for items in info.values() for k in items), default=0) + 2
    lines: list[str] = []
    for section, items in info.items():
        lines.append(f"{section}:")
        for key, val in items.items():
            lines.append(f"{key:>{width}}: {'Not Installed' if val is None else val}")
        lines.append(" ")
    return "\n".join(lines)


class _VersionsReport(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        sys.stdout.write(versions_report() + "\n")
        parser.exit(0)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--version`` and ``-V/--versions-report`` on a command (each prints, exits 0, as Salt's)."""
    parser.add_argument("--version", action="version", version=version_string(parser.prog))
    parser.add_argument(
        "-V",
        "--versions-report",
        action=_VersionsReport,
        help="print the versions of briny, the Salt release it follows and its dependencies, and exit",
    )
