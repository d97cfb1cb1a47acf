"""Execution module ``disk``: block devices (Salt 3007's ``disk``, the part briny has so far).

``blkid`` (``{device: {LABEL, UUID, TYPE, ...}}`` from ``blkid``; ``{}``
when blkid finds nothing or fails), which ``mount.active`` and the ``mount``
states use to match devices named by ``UUID=`` / ``LABEL=``.
"""

from __future__ import annotations

from typing import Any

from briny.minion.sysfiles import fstab


def blkid(device: str | None = None, token: str | None = None, **kwargs: Any) -> dict[str, dict[str, str]]:
    """Attributes of block devices: all, ``device``'s, or those matching ``token`` (``LABEL=x``)."""
    cmd = ["blkid"]
    if device:
        cmd.append(device)
    elif token:
        cmd += ["-t", token]
    out = __salt__["cmd.run_all"](cmd, python_shell=False, ignore_retcode=True)  # type: ignore[name-defined]  # noqa: F821
    if out["retcode"]:
        return {}
    return fstab.blkid(str(out["stdout"]))
