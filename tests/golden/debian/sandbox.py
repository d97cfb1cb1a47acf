"""The APT sandbox the Debian golden cases run in (recording with Salt, replaying with briny).

``apt_sandbox(root)`` lays out an APT configuration under ``root`` and returns
the environment to run with: ``APT_CONFIG`` points ``apt-get update`` at no
sources (``Dir::Etc::SourceList`` /dev/null, an empty ``SourceParts``), its
lists and cache under ``root``, and ``apt-key`` at keyrings under ``root``. The
``pkgrepo`` cases still read and write ``/etc/apt/sources.list.d`` (Salt has
that path built in), but a refresh needs no network and no host keyring
changes. Standard library only.
"""

from __future__ import annotations

import os
import pathlib


def apt_sandbox(root: str | os.PathLike) -> dict[str, str]:
    root = pathlib.Path(root)
    for sub in ("parts", "lists/partial", "cache/archives/partial", "trusted.gpg.d"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    conf = root / "apt.conf"
    conf.write_text(
        'Dir::Etc::SourceList "/dev/null";\n'
        f'Dir::Etc::SourceParts "{root}/parts";\n'
        f'Dir::State::Lists "{root}/lists";\n'
        f'Dir::Cache "{root}/cache";\n'
        f'Dir::Etc::Trusted "{root}/trusted.gpg";\n'
        f'Dir::Etc::TrustedParts "{root}/trusted.gpg.d";\n'
    )
    return {"APT_CONFIG": str(conf)}
