"""Target matchers: does a minion match a target expression?

Pure functions, no I/O. Used by the top-file compiler (which SLS apply to a
minion), by the master's targeting (``briny -G/-E/-L/-C``) and by the
``match`` execution module. They run wherever those run: master and minion.

Semantics are Salt 3007's:

- ``glob``: :func:`fnmatch.fnmatchcase` on the minion id (case-sensitive).
- ``pcre``: :func:`re.match` on the minion id (anchored at the start only).
- ``list``: the id is one of a comma-separated string or a list (exact).
- ``grain`` / ``pillar``: ``key:sub:pattern``; the value at the longest
  existing key path is matched case-insensitively (glob, or regex with
  ``*_pcre``); lists match if any member matches; a dict matches if the
  pattern is one of its keys (``*`` means "the key exists and is not empty").
- ``ipcidr``: an address or a network against the ``ipv4`` / ``ipv6`` grains.
- ``compound``: words joined by ``and``/``or``/``not`` and ``(`` ``)`` (as
  separate words), with ``G@ P@ I@ J@ L@ E@ S@ N@`` prefixes and plain globs.
  ``A not B`` means ``A and not B``, as in Salt.

Where Salt logs an error and quietly answers False (malformed compound
expression, bad regex, bad CIDR, unknown nodegroup), these functions raise
:class:`SaltInvocationError` with a message naming the problem; the ``match``
execution module turns that back into False for Salt's CLI behaviour.
"""

from __future__ import annotations

import copy

import fnmatch
import functools
import ipaddress
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .dictupdate import update
from .exceptions import SaltInvocationError
from .traverse import DEFAULT_DELIM, traverse

log = logging.getLogger(__name__)

# Engine letter, optional one-character delimiter (G P I J only), '@', pattern.
_TARGET_RE = re.compile(r"^(?:(?P<engine>[GPIJLNSER])(?P<delimiter>(?<=[GPIJ]).)?@)?(?P<pattern>.+)$", re.S)
_OPERATORS = ("and", "or", "not", "(", ")")


@functools.lru_cache(maxsize=4096)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise SaltInvocationError(f"Invalid regular expression {pattern!r} in target: {exc}") from None


@functools.lru_cache(maxsize=4096)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern), re.S)


# -- simple matchers ---------------------------------------------------------


def glob_match(tgt: Any, minion_id: str) -> bool:
    """Shell-style glob on the minion id (case-sensitive, like Salt on POSIX)."""
    if not isinstance(tgt, str):
        return False
    return _glob_regex(tgt).match(minion_id) is not None


def pcre_match(tgt: str, minion_id: str) -> bool:
    """Regex on the minion id, anchored at the start (``re.match``)."""
    return _regex(str(tgt)).match(minion_id) is not None


def list_match(tgt: str | Iterable[str], minion_id: str) -> bool:
    """The minion id is one of ``tgt`` (comma-separated string or a list)."""
    if isinstance(tgt, str):
        return minion_id in tgt.split(",")
    try:
        return minion_id in list(tgt)
    except TypeError:
        return False


def _match_value(target: Any, pattern: str, regex: bool, exact: bool) -> bool:
    target_s = str(target).lower()
    pattern_s = str(pattern).lower()
    if regex:
        return _regex(pattern_s).match(target_s) is not None
    if exact:
        return target_s == pattern_s
    return _glob_regex(pattern_s).match(target_s) is not None


def _dict_match(target: Mapping[str, Any], pattern: str, regex: bool, exact: bool, delimiter: str) -> bool:
    wildcard = pattern.startswith("*" + delimiter)
    if wildcard:
        pattern = pattern[2:]
    if pattern == "*" or pattern in target:
        return True
    if subdict_match(target, pattern, delimiter, regex, exact):
        return True
    if wildcard:
        for val in target.values():
            if isinstance(val, Mapping):
                if _dict_match(val, pattern, regex, exact, delimiter):
                    return True
            elif isinstance(val, list):
                if any(_match_value(item, pattern, regex, exact) for item in val):
                    return True
            elif _match_value(val, pattern, regex, exact):
                return True
    return False


def subdict_match(
    data: Mapping[str, Any], expr: str, delimiter: str = DEFAULT_DELIM, regex: bool = False, exact: bool = False
) -> bool:
    """Salt's ``key:path:pattern`` match on nested data, longest key first."""
    splits = expr.split(delimiter)
    if len(splits) == 1:
        return False
    for idx in range(len(splits) - 1, 0, -1):
        key = delimiter.join(splits[:idx])
        if key == "*":
            matchstr, value = expr, data
        else:
            matchstr = delimiter.join(splits[idx:])
            value = traverse(data, key, {}, delimiter)
        if isinstance(value, Mapping):
            if not value:
                continue
            if _dict_match(value, matchstr, regex, exact, delimiter):
                return True
            continue
        if isinstance(value, (list, tuple)):
            for member in value:
                if isinstance(member, Mapping) and _dict_match(member, matchstr, regex, exact, delimiter):
                    return True
                if _match_value(member, matchstr, regex, exact):
                    return True
            continue
        if _match_value(value, matchstr, regex, exact):
            return True
    return False


def _data_match(
    kind: str, tgt: str, data: Mapping[str, Any] | None, delimiter: str, regex: bool = False, exact: bool = False
) -> bool:
    if not isinstance(tgt, str) or delimiter not in tgt:
        log.error("Got insufficient arguments for %s match statement: %r", kind, tgt)
        return False
    return subdict_match(data or {}, tgt, delimiter, regex, exact)


def grain_match(tgt: str, grains: Mapping[str, Any] | None, delimiter: str = DEFAULT_DELIM) -> bool:
    """``key:pattern`` glob on grains (``G@``)."""
    return _data_match("grains", tgt, grains, delimiter)


def grain_pcre_match(tgt: str, grains: Mapping[str, Any] | None, delimiter: str = DEFAULT_DELIM) -> bool:
    """``key:regex`` on grains (``P@``)."""
    return _data_match("grains", tgt, grains, delimiter, regex=True)


def pillar_match(tgt: str, pillar: Mapping[str, Any] | None, delimiter: str = DEFAULT_DELIM) -> bool:
    """``key:pattern`` glob on pillar (``I@``)."""
    return _data_match("pillar", tgt, pillar, delimiter)


def pillar_pcre_match(tgt: str, pillar: Mapping[str, Any] | None, delimiter: str = DEFAULT_DELIM) -> bool:
    """``key:regex`` on pillar (``J@``)."""
    return _data_match("pillar", tgt, pillar, delimiter, regex=True)


def pillar_exact_match(tgt: str, pillar: Mapping[str, Any] | None, delimiter: str = DEFAULT_DELIM) -> bool:
    """``key:value`` exact (case-insensitive) on pillar."""
    return _data_match("pillar", tgt, pillar, delimiter, exact=True)


def ipcidr_match(tgt: str, grains: Mapping[str, Any] | None) -> bool:
    """An address (is it one of ours?) or a network (is one of ours in it?)."""
    target: Any
    try:
        target = ipaddress.ip_address(str(tgt).strip())
    except ValueError:
        try:
            target = ipaddress.ip_network(str(tgt).strip(), strict=False)
        except ValueError:
            raise SaltInvocationError(f"Invalid IP/CIDR target: {tgt}") from None
    addrs = (grains or {}).get(f"ipv{target.version}") or []
    if isinstance(target, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        return str(target) in addrs
    for addr in addrs:
        try:
            if ipaddress.ip_address(addr) in target:
                return True
        except ValueError:
            continue
    return False


# -- compound --------------------------------------------------------------


def parse_target(word: str) -> tuple[str | None, str | None, str]:
    """``G;@os;Debian`` -> (``G``, ``;``, ``os;Debian``); a plain word -> (None, None, word)."""
    m = _TARGET_RE.match(word)
    if not m:
        return None, None, word
    return m.group("engine"), m.group("delimiter"), m.group("pattern")


def _expand_nodegroup(name: str, nodegroups: Mapping[str, Any] | None, seen: tuple[str, ...] = ()) -> list[str]:
    if name in seen:
        raise SaltInvocationError(f"Failed nodegroup expansion: illegal nested nodegroup {name!r}")
    if not nodegroups or name not in nodegroups:
        raise SaltInvocationError(f"Failed nodegroup expansion: unknown nodegroup {name!r}")
    value = nodegroups[name]
    if isinstance(value, (list, tuple)):
        words = ["L@" + ",".join(str(v) for v in value)] if value else []
    else:
        words = str(value).split()
    out: list[str] = []
    for word in words:
        engine, _, pattern = parse_target(word)
        if engine == "N":
            out.extend(_expand_nodegroup(pattern, nodegroups, seen + (name,)))
        else:
            out.append(word)
    if not out:
        raise SaltInvocationError(f"Failed nodegroup expansion: nodegroup {name!r} is empty")
    return ["("] + out + [")"]


def _evaluate_word(
    engine: str | None,
    delim: str | None,
    pattern: str,
    word: str,
    minion_id: str,
    grains: Mapping[str, Any] | None,
    pillar: Mapping[str, Any] | None,
) -> bool:
    d = delim or DEFAULT_DELIM
    if engine is None:
        return glob_match(word, minion_id)
    if engine == "G":
        return grain_match(pattern, grains, d)
    if engine == "P":
        return grain_pcre_match(pattern, grains, d)
    if engine == "I":
        return pillar_match(pattern, pillar, d)
    if engine == "J":
        return pillar_pcre_match(pattern, pillar, d)
    if engine == "L":
        return list_match(pattern, minion_id)
    if engine == "E":
        return pcre_match(pattern, minion_id)
    if engine == "S":
        return ipcidr_match(pattern, grains)
    if engine == "R":
        raise SaltInvocationError(range_unavailable(word))
    raise SaltInvocationError(f"Unrecognized target engine {engine!r} in {word!r}")  # pragma: no cover


class _Parser:
    """Boolean grammar over tokens True/False/and/or/not/(/) with Python precedence."""

    def __init__(self, tokens: list[Any], tgt: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.tgt = tgt

    def fail(self, why: str) -> SaltInvocationError:
        return SaltInvocationError(f"Invalid compound target {self.tgt!r}: {why}")

    def peek(self) -> Any:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> Any:
        tok = self.peek()
        self.pos += 1
        return tok

    def parse(self) -> bool:
        if not self.tokens:
            raise self.fail("empty expression")
        value = self.or_expr()
        if self.pos < len(self.tokens):
            raise self.fail(f"unexpected {self._show(self.peek())!r} after a complete expression")
        return value

    def or_expr(self) -> bool:
        value = self.and_expr()
        while self.peek() == "or":
            self.take()
            right = self.and_expr()
            value = value or right
        return value

    def and_expr(self) -> bool:
        value = self.not_expr()
        while self.peek() == "and":
            self.take()
            right = self.not_expr()
            value = value and right
        return value

    def not_expr(self) -> bool:
        if self.peek() == "not":
            self.take()
            return not self.not_expr()
        return self.atom()

    def atom(self) -> bool:
        tok = self.take()
        if isinstance(tok, bool):
            return tok
        if tok == "(":
            if self.peek() == ")":
                raise self.fail("empty parentheses")
            value = self.or_expr()
            if self.take() != ")":
                raise self.fail("missing ')'")
            return value
        if tok is None:
            raise self.fail("expression ends where a target was expected")
        raise self.fail(f"{self._show(tok)!r} where a target was expected")

    @staticmethod
    def _show(tok: Any) -> str:
        return "<target>" if isinstance(tok, bool) else str(tok)


def compound_match(
    tgt: str,
    minion_id: str,
    grains: Mapping[str, Any] | None = None,
    pillar: Mapping[str, Any] | None = None,
    nodegroups: Mapping[str, Any] | None = None,
) -> bool:
    """Evaluate a compound target for one minion.

    Raises :class:`SaltInvocationError` for a malformed expression.
    """
    if not isinstance(tgt, str):
        raise SaltInvocationError(f"Compound target must be a string, not {type(tgt).__name__}")
    words = tgt.split()
    if not words:
        raise SaltInvocationError("Invalid compound target: empty expression")
    tokens: list[Any] = []
    while words:
        word = words.pop(0)
        if word in _OPERATORS:
            if tokens:
                if tokens[-1] == "(" and word in ("and", "or"):
                    raise SaltInvocationError(f"Invalid compound target {tgt!r}: operator {word!r} right after '('")
                if word == "not" and tokens[-1] not in ("and", "or", "("):
                    if tokens[-1] == "not":
                        raise SaltInvocationError(f"Invalid compound target {tgt!r}: 'not not' is not allowed")
                    tokens.append("and")  # "A not B" means "A and not B"
            elif word not in ("(", "not"):
                raise SaltInvocationError(f"Invalid compound target {tgt!r}: it begins with {word!r}")
            tokens.append(word)
            continue
        engine, delim, pattern = parse_target(word)
        if engine == "N":
            words[0:0] = _expand_nodegroup(pattern, nodegroups)
            continue
        tokens.append(_evaluate_word(engine, delim, pattern, word, minion_id, grains, pillar))
    return _Parser(tokens, tgt).parse()


# -- dispatch --------------------------------------------------------------


def match(
    tgt: Any,
    tgt_type: str,
    minion_id: str,
    grains: Mapping[str, Any] | None = None,
    pillar: Mapping[str, Any] | None = None,
    delimiter: str = DEFAULT_DELIM,
    nodegroups: Mapping[str, Any] | None = None,
) -> bool:
    """Does ``minion_id`` (with ``grains`` and ``pillar``) match ``tgt`` of ``tgt_type``?"""
    if tgt_type == "glob":
        return glob_match(tgt, minion_id)
    if tgt_type == "pcre":
        return pcre_match(tgt, minion_id)
    if tgt_type == "list":
        return list_match(tgt, minion_id)
    if tgt_type == "grain":
        return grain_match(tgt, grains, delimiter)
    if tgt_type == "grain_pcre":
        return grain_pcre_match(tgt, grains, delimiter)
    if tgt_type == "pillar":
        return pillar_match(tgt, pillar, delimiter)
    if tgt_type == "pillar_pcre":
        return pillar_pcre_match(tgt, pillar, delimiter)
    if tgt_type == "pillar_exact":
        return pillar_exact_match(tgt, pillar, delimiter)
    if tgt_type in ("ipcidr", "ipv4"):
        return ipcidr_match(tgt, grains)
    if tgt_type == "compound":
        return compound_match(tgt, minion_id, grains, pillar, nodegroups)
    if tgt_type == "nodegroup":
        return compound_match(f"N@{tgt}", minion_id, grains, pillar, nodegroups)
    if tgt_type == "range":
        raise SaltInvocationError(range_unavailable(tgt))
    raise SaltInvocationError(f"Unknown target type {tgt_type!r}")


def range_unavailable(expr: Any) -> str:
    """The refusal of a range target (``-R``, ``R@``): briny has no range server client. Salt 3007
    without ``seco.range`` logs ``Range matcher unavailable`` on the master and matches nothing."""
    return (
        f"Range matcher unavailable: briny has no range server support (Salt needs the seco.range "
        f"module and a range_server), so {str(expr)[:80]!r} cannot be expanded; target with a glob, "
        "-L, -G, -I, -C or a nodegroup instead"
    )


def filter_by(
    lookup_dict: Mapping[Any, Any],
    lookup: str,
    data: Mapping[str, Any],
    merge: Any,
    default: str = "default",
    base: str | None = None,
    delimiter: str = DEFAULT_DELIM,
) -> Any:
    """Salt's ``filter_by``: the entry of ``lookup_dict`` whose key (a glob) matches the
    value at ``lookup`` in ``data`` (a list value matches when any member does), else the
    ``default`` entry; merged over the ``base`` entry, with ``merge`` on top."""
    if not isinstance(lookup_dict, Mapping):
        raise SaltInvocationError(f"filter_by lookup_dict must be a dictionary, not {type(lookup_dict).__name__}")
    value = traverse(data, lookup, [], delimiter)
    ret = None
    for each in value if isinstance(value, list) else [value]:
        text = each if isinstance(each, str) else str(each)
        for key in lookup_dict:
            pattern = key if isinstance(key, str) else str(key)
            if fnmatch.fnmatchcase(text, pattern):
                ret = lookup_dict[key]
                break
        if ret is not None:
            break
    if ret is None:
        ret = lookup_dict.get(default)
    ret = copy.deepcopy(ret)
    if base and base in lookup_dict:
        base_values = lookup_dict[base]
        if ret is None:
            ret = copy.deepcopy(base_values)
        elif isinstance(base_values, Mapping):
            if not isinstance(ret, Mapping):
                raise SaltInvocationError("filter_by default and look-up values must both be dictionaries.")
            ret = update(copy.deepcopy(dict(base_values)), ret)
    if merge:
        if not isinstance(merge, Mapping):
            raise SaltInvocationError("filter_by merge argument must be a dictionary.")
        if ret is None:
            ret = copy.deepcopy(dict(merge))
        elif isinstance(ret, Mapping):
            ret = update(dict(ret), merge)
        else:
            raise SaltInvocationError(
                "filter_by merge argument needs a dictionary to merge into, "
                f"but the looked-up value is {type(ret).__name__}."
            )
    return ret
