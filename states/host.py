"""The ``host`` state module: entries of the hosts file (Salt 3007's ``host``).

Runs wherever states run; the file work goes through the ``hosts`` execution
module, which finds the file in the ``hosts.file`` config key (default
``/etc/hosts``). Results are Salt's, checked against the reference (live,
test and second runs): ``Added host N (IP)``, ``Set comment for host IP
(C)``, ``Removed host N (IP)``, ``Host N (IP) already present``, changes
``{"added": {ip: [name]}, "comment_added": {ip: [c]}, "removed": {ip:
[name]}}``; in test mode ``... would be added`` / ``would be removed`` with
the same changes (a comment alone leaves the result True, as in Salt); a
name still on another address without ``clean`` is a warning in Salt's
words. ``host.absent`` says ``Removed host N (IP)`` / ``Host N (IP) already
absent`` / ``... needs to be removed``; ``host.only`` ``successfully changed
IP from "old" to "new"`` / ``IP address IP already set to "new"`` / ``Would
change ...``.

Differences from Salt, on purpose: every address in ``ip`` is checked
before anything is written (``Invalid IP Address for N (IP)``; Salt checks
only addresses already in the file and writes any other string), and a host
name that is empty or holds white space or ``#`` is refused (Salt would
write a broken line); with several addresses the comment lines come in the
order of ``ip`` (Salt's order varies from run to run).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from ._access import _salt, _testing

if TYPE_CHECKING:
    pass


def _bad_name(name: Any) -> str:
    text = str(name)
    if not text or text != text.strip() or any(c.isspace() or c == "#" for c in text):
        return f"Invalid host name {text!r}: a name may not be empty or hold white space or '#'"
    return ""


def _addresses(ip: Any) -> list[str]:
    return [str(a) for a in (ip if isinstance(ip, list) else [ip])]


def present(name: str, ip: Any, comment: str = "", clean: bool = False) -> dict[str, Any]:
    """Make ``name`` an alias of each address in ``ip``; ``clean`` removes it from other addresses."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    try:
        return _present(ret, name, ip, comment, clean)
    except CommandExecutionError as exc:
        ret.update(result=False, comment=str(exc))
        return ret


def _present(ret: dict[str, Any], name: str, ip: Any, comment: str, clean: bool) -> dict[str, Any]:
    addrs = _addresses(ip)
    problems = [_bad_name(name)] + [f"Invalid IP Address for {name} ({a})" for a in addrs if not _valid_ip(a)]
    if any(problems):
        ret.update(result=False, comment="\n".join(p for p in problems if p))
        return ret
    hosts = _salt("hosts.list_hosts")()
    comments: list[str] = []
    to_add: list[str] = [a for a in addrs if a not in hosts]
    to_comment: list[str] = [a for a in addrs if a not in hosts] if comment else []
    to_remove: list[str] = []
    for addr, info in hosts.items():
        if not isinstance(info, dict):
            continue
        has_name = name in info.get("aliases", [])
        if addr not in addrs:
            if not has_name:
                continue
            if clean:
                to_remove.append(addr)
            else:
                ret.setdefault("warnings", []).append(
                    f"Host {name} present for IP address {addr}. To get rid of this warning, either run this "
                    f"state with 'clean' set to True to remove {name} from {addr}, or add {addr} to the 'ip' argument."
                )
        elif has_name:
            if comment and info.get("comment") != comment:
                to_comment.append(addr)
            else:
                comments.append(f"Host {name} ({addr}) already present")
        else:
            to_add.append(addr)
            if comment:
                to_comment.append(addr)
    steps = [
        # (addresses, change key, value, function(addr, value), would, done, failed, pending in test mode)
        (to_add, "added", name, "hosts.add_host", "Host {n} ({a}) would be added", "Added host {n} ({a})",
         "Failed to add host {n} ({a})", True),
        (to_comment, "comment_added", comment, "hosts.set_comment", "Comment for {a} ({c}) would be added",
         "Set comment for host {a} ({c})", "Failed to add comment for host {a} ({c})", False),
        (to_remove, "removed", name, "hosts.rm_host", "Host {n} ({a}) would be removed",
         "Removed host {n} ({a})", "Failed to remove host {n} ({a})", True),
    ]  # fmt: skip
    for addrs, key, value, fun, would, done, failed, pending in steps:
        for addr in addrs:
            words = {"n": name, "a": addr, "c": comment}
            if _testing():
                ret["result"] = None if pending else ret["result"]
                comments.append(would.format(**words))
            elif _salt(fun)(addr, value):
                comments.append(done.format(**words))
            else:
                ret["result"] = False
                comments.append(failed.format(**words))
                continue
            ret["changes"].setdefault(key, {}).setdefault(addr, []).append(value)
    ret["comment"] = "\n".join(comments)
    return ret


def _valid_ip(addr: str) -> bool:
    """An IPv4 or IPv6 address with an optional prefix length (Salt's ``validate.net.ip_addr``)."""
    host, _, mask = addr.partition("/")
    try:
        parsed = ipaddress.ip_address(host)
    except ValueError:
        return False
    return not mask or (mask.isdigit() and 1 <= int(mask) <= (32 if parsed.version == 4 else 128))


def absent(name: str, ip: Any) -> dict[str, Any]:
    """Make sure ``name`` is no alias of any address in ``ip``."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": None, "comment": ""}
    comments: list[str] = []
    try:
        _absent(ret, comments, name, ip)
    except CommandExecutionError as exc:
        comments.append(str(exc))
        ret["result"] = False
    ret["comment"] = "\n".join(comments)
    return ret


def _absent(ret: dict[str, Any], comments: list[str], name: str, ip: Any) -> None:
    for addr in _addresses(ip):
        if not _salt("hosts.has_pair")(addr, name):
            ret["result"] = True
            comments.append(f"Host {name} ({addr}) already absent")
        elif _testing():
            comments.append(f"Host {name} ({addr}) needs to be removed")
        elif _salt("hosts.rm_host")(addr, name):
            ret["changes"] = {"host": name}
            ret["result"] = True
            comments.append(f"Removed host {name} ({addr})")
        else:
            ret["result"] = False
            comments.append("Failed to remove host")


def only(name: str, hostnames: Any) -> dict[str, Any]:
    """Make ``hostnames`` (in this order) the only names of the address ``name``."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": None, "comment": ""}
    if isinstance(hostnames, str):
        hostnames = [hostnames]
    names = [str(h).strip() for h in hostnames or []]
    bad = [_bad_name(h) for h in names if _bad_name(h)]
    if not _valid_ip(str(name)) or bad:
        ret.update(result=False, comment="\n".join(bad or [f"Invalid IP Address {name}"]))
        return ret
    try:
        old = " ".join(_salt("hosts.get_alias")(name))
        new = " ".join(names)
        if old == new:
            ret.update(result=True, comment=f'IP address {name} already set to "{new}"')
            return ret
        if _testing():
            ret["comment"] = f'Would change {name} from "{old}" to "{new}"'
            return ret
        ret["result"] = _salt("hosts.set_host")(name, new)
    except CommandExecutionError as exc:
        ret.update(result=False, comment=str(exc))
        return ret
    if not ret["result"]:
        ret["comment"] = f'hosts.set_host failed to change {name} from "{old}" to "{new}"'
        return ret
    ret["comment"] = f'successfully changed {name} from "{old}" to "{new}"'
    ret["changes"] = {name: {"old": old, "new": new}}
    return ret
