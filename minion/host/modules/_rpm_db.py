"""rpm's side of the RHEL-family ``pkg`` module (and of ``lowpkg``): rpm's version order, the
installed packages read with ``rpm -qa``, and the command runner (a private part of
:mod:`briny.minion.host.modules.yumpkg`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError


if TYPE_CHECKING:
    from briny.common.dunders import __context__, __grains__, __opts__, __salt__

__all__: list[str] = []

QUERY_TIMEOUT = 300
# the architectures a package name may end with (``name.arch``)
ARCHES = frozenset(
    "noarch x86_64 i386 i486 i586 i686 athlon aarch64 armv7hl armv7hnl armv6hl ppc64 ppc64le s390x s390 "
    "riscv64 ia64 src nosrc".split()
)
_SEP = "\x1f"
_QUERYFORMAT = _SEP.join(["%{NAME}", "%{EPOCH}", "%{VERSION}", "%{RELEASE}", "%{ARCH}", "%{INSTALLTIME}", "%{SIGMD5}"])
_CONTEXT = "pkg.list_pkgs"


def _run(cmd: list[str], timeout: int = QUERY_TIMEOUT, **kwargs: Any) -> dict[str, Any]:
    out: dict[str, Any] = __salt__["cmd.run_all"](
        cmd, python_shell=False, timeout=timeout, ignore_retcode=True, output_loglevel="trace", **kwargs
    )
    return out


def timeout(key: str, default: int) -> int:
    try:
        return int(__opts__.get(key, default))
    except (TypeError, ValueError):
        return default


def _segments(ver: str) -> list[str]:
    return re.findall(r"~|\^|[0-9]+|[a-zA-Z]+", ver)


def rpmvercmp(a: str, b: str) -> int:
    """rpm's order of two version (or release) strings: -1, 0 or 1."""
    if a == b:
        return 0
    sa, sb = _segments(a), _segments(b)
    while sa or sb:
        x = sa.pop(0) if sa else None
        y = sb.pop(0) if sb else None
        if x == "~" or y == "~":  # a tilde sorts before anything, even the end
            if x != y:
                return -1 if x == "~" else 1
            continue
        if x == "^" or y == "^":  # a caret sorts after the end but before anything else
            if x is None:
                return -1
            if y is None:
                return 1
            if x != y:
                return -1 if x == "^" else 1
            continue
        if x is None or y is None:
            return -1 if x is None else 1
        if x.isdigit() != y.isdigit():
            return 1 if x.isdigit() else -1
        if x.isdigit():
            xi, yi = int(x), int(y)
            if xi != yi:
                return -1 if xi < yi else 1
        elif x != y:
            return -1 if x < y else 1
    return 0


def split_evr(ver: str) -> tuple[str, str, str]:
    """(epoch, version, release) of ``[E:]V[-R]`` (epoch "0" when not given)."""
    epoch, _, rest = ver.rpartition(":") if ":" in ver else ("0", "", ver)
    version, _, release = rest.rpartition("-") if "-" in rest else (rest, "", "")
    return epoch or "0", version, release


def evr_cmp(a: str, b: str, ignore_epoch: bool = False) -> int:
    ea, va, ra = split_evr(a)
    eb, vb, rb = split_evr(b)
    if not ignore_epoch:
        c = rpmvercmp(ea, eb)
        if c:
            return c
    c = rpmvercmp(va, vb)
    if c or not ra or not rb:  # a version without release matches any release
        return c
    return rpmvercmp(ra, rb)


def installed(attrs: bool = False) -> dict[str, list[dict[str, Any]]]:
    """name -> its installed instances (version ``[E:]V-R``, arch, ...); a foreign-arch package
    is ``name.arch`` as Salt names it. Cached in ``__context__`` until a change."""
    cache: dict[str, list[dict[str, Any]]] | None = __context__.get(_CONTEXT)
    if cache is None:
        out = _run(["rpm", "-qa", "--nodigest", "--nosignature", "--queryformat", _QUERYFORMAT + "\\n"])
        if out["retcode"] != 0:
            raise CommandExecutionError(f"rpm -qa failed: {(out.get('stderr') or out.get('stdout') or '').strip()}")
        osarch = str(__grains__.get("osarch") or "x86_64")
        cache = {}
        for line in str(out["stdout"]).splitlines():
            parts = line.split(_SEP)
            if len(parts) != 7 or parts[0] == "gpg-pubkey":
                continue
            name, epoch, ver, rel, arch, itime, _ = parts
            epoch = "" if epoch == "(none)" else epoch
            key = (
                name
                if arch in ("noarch", osarch) or arch in ("i686", "i586") and osarch == "i386"
                else f"{name}.{arch}"
            )
            full = f"{epoch + ':' if epoch and epoch != '0' else ''}{ver}-{rel}"
            cache.setdefault(key, []).append(
                {
                    "version": ver,
                    "epoch": epoch or None,
                    "release": rel,
                    "arch": arch,
                    "install_date_time_t": int(itime) if itime.isdigit() else None,
                    "_full": full,
                }
            )
        __context__[_CONTEXT] = cache
    return cache


def forget() -> None:
    __context__.pop(_CONTEXT, None)


def versions_map() -> dict[str, str]:
    """name -> its installed version (several instances: the versions comma-joined, as Salt)."""
    return {n: ",".join(sorted((i["_full"] for i in inst), key=_sort_key)) for n, inst in sorted(installed().items())}


def _sort_key(ver: str) -> Any:
    import functools

    return functools.cmp_to_key(evr_cmp)(ver)
