"""The ``gem`` state module: Ruby gems installed or removed, and gem sources, as Salt 3007's.

Everything goes through the ``gem`` execution module (which gem runs: ``gem_bin``, RVM or
rbenv for ``ruby``, or the ``gem`` on the PATH; see ``minion/host/modules/_gem_ruby.py``). Comments,
changes (``{name: "Installed"}`` / ``{name: "Removed"}``) and result values are Salt's, checked
against the reference on gems built for the tests:

- ``gem.installed``: ``name`` (one gem), ``version`` (an exact version that must be among
  those installed, or ``>=``, ``>``, ``<=``, ``<`` and a version the newest installed one must
  meet; any other requirement, such as ``~> 1.2``, installs every time, as in Salt), ``ruby``,
  ``gem_bin``, ``user`` (gem runs as that user), ``rdoc``, ``ri``, ``pre_releases``,
  ``proxy``, ``source``. Test mode: ``The gem NAME would have been installed`` (result None,
  no changes), as Salt.
- ``gem.removed``: ``name`` (every version uninstalled), ``ruby``, ``user``, ``gem_bin``.
- ``gem.sources_add`` / ``gem.sources_remove``: a source URL of ``user``'s gem configuration
  (``ruby``, ``user``; no ``gem_bin``, as in Salt).

An argument a state does not take (``install_dir``, which Salt 3007's ``gem.installed`` does not
have either) fails that state with Salt's words, ``'install_dir' is an invalid keyword argument
for 'gem.installed'``; Salt aborts the whole run with them.

Deliberate differences from Salt 3007, where Salt's result is a traceback: a gem command that
fails (an unknown gem, a gem file that is not there, a broken or missing ``gem_bin``, a ``ruby``
rbenv does not have) fails that state with gem's error after Salt's words (``Could not install
gem.``, ``Could not remove gem.``, ... or ``Could not list gems.`` when the installed gems
cannot be read); ``version: '<=X'`` compares as written (Salt's pattern takes it for ``<``
and ``=X``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from briny.common.exceptions import CommandExecutionError

from ._state_args import _invalid_args
from ._access import _salt, _testing

if TYPE_CHECKING:
    pass


def _ret(name: str) -> dict[str, Any]:
    return {"name": name, "result": None, "comment": "", "changes": {}}


def _failed(ret: dict[str, Any], what: str, exc: Exception) -> dict[str, Any]:
    ret["result"] = False
    ret["comment"] = f"{what}\n\n{exc}" if str(exc) else what
    return ret


def _segments(version: str) -> list[int | str]:
    """A RubyGems version's segments: ``3.0.pre1`` -> ``[3, 0, "pre", 1]``."""
    return [int(p) if p.isdigit() else p for p in re.findall(r"[0-9]+|[a-z]+", version.lower())]


def _version_cmp(ver1: str, ver2: str) -> int:
    """-1, 0 or 1 as ``ver1`` is older than, the same as or newer than ``ver2``, as RubyGems
    orders them: numbers numerically, a letter segment (a pre-release) before any number,
    missing segments as 0 (``1.0`` is ``1``)."""
    left, right = _segments(ver1), _segments(ver2)
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else 0
        b = right[i] if i < len(right) else 0
        if a == b:
            continue
        if isinstance(a, int) and isinstance(b, int):
            return -1 if a < b else 1
        if isinstance(a, str) and isinstance(b, str):
            return -1 if a < b else 1
        return -1 if isinstance(a, str) else 1  # a letter segment (a pre-release) before a number
    return 0


_OPERATORS = {
    ">=": lambda c: c >= 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    "<": lambda c: c < 0,
}


def _meets(gems: dict[str, list[str]], name: str, version: Any) -> str | None:
    """Salt's comment when the installed ``name`` satisfies ``version`` already, else None."""
    if name not in gems:
        return None
    if version is None:
        return "Gem is already installed."
    version = str(version)
    found = re.match(r"(>=|<=|>|<)", version)
    if not found:
        return "Gem is already installed." if version in gems[name] else None
    installed = gems[name][0].replace("default: ", "").strip()
    wanted = version[found.end() :].strip()
    if _OPERATORS[found.group()](_version_cmp(installed, wanted)):
        return "Installed Gem meets version requirements."
    return None


def _start(
    name: str, fun: str, kwargs: dict[str, Any], ruby: Any, gem_bin: Any, user: Any
) -> tuple[dict[str, Any], dict[str, list[str]] | None]:
    """(the result, the installed gems ``name`` matches), or (the failed result, None): an
    argument ``fun`` does not take, or gems that cannot be listed."""
    bad = _invalid_args(name, f"gem.{fun}", kwargs)
    if bad:
        return bad, None
    ret = _ret(name)
    try:
        return ret, _salt("gem.list")(name, ruby, gem_bin=gem_bin, runas=user)
    except CommandExecutionError as exc:
        return _failed(ret, "Could not list gems.", exc), None


def installed(
    name: str,
    ruby: Any = None,
    gem_bin: Any = None,
    user: Any = None,
    version: Any = None,
    rdoc: bool = False,
    ri: bool = False,
    pre_releases: bool = False,
    proxy: Any = None,
    source: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The gem ``name`` installed (at ``version``); see the module docstring."""
    ret, gems = _start(name, "installed", kwargs, ruby, gem_bin, user)
    if gems is None:
        return ret
    already = _meets(gems, name, version)
    if already:
        ret.update(result=True, comment=already)
        return ret
    if _testing():
        ret["comment"] = f"The gem {name} would have been installed"
        return ret
    try:
        _salt("gem.install")(
            name,
            ruby=ruby,
            gem_bin=gem_bin,
            runas=user,
            version=version,
            rdoc=rdoc,
            ri=ri,
            pre_releases=pre_releases,
            proxy=proxy,
            source=source,
        )
    except CommandExecutionError as exc:
        return _failed(ret, "Could not install gem.", exc)
    ret.update(result=True, comment="Gem was successfully installed")
    ret["changes"][name] = "Installed"
    return ret


def removed(name: str, ruby: Any = None, user: Any = None, gem_bin: Any = None, **kwargs: Any) -> dict[str, Any]:
    """The gem ``name`` not installed, in no version."""
    ret, gems = _start(name, "removed", kwargs, ruby, gem_bin, user)
    if gems is None:
        return ret
    if name not in gems:
        ret.update(result=True, comment="Gem is not installed.")
        return ret
    if _testing():
        ret["comment"] = f"The gem {name} would have been removed"
        return ret
    try:
        _salt("gem.uninstall")(name, ruby, gem_bin=gem_bin, runas=user)
    except CommandExecutionError as exc:
        return _failed(ret, "Could not remove gem.", exc)
    ret.update(result=True, comment="Gem was successfully removed.")
    ret["changes"][name] = "Removed"
    return ret


class _SourceWords(NamedTuple):
    """What a sources state says, in Salt's words."""

    fun: str
    already: str
    would: str
    failed: str
    done: str
    change: str


_ADD = _SourceWords(
    "sources_add",
    "Gem source is already added.",
    "The gem source {name} would have been added.",
    "Could not add gem source.",
    "Gem source was successfully added.",
    "Installed",
)
_REMOVE = _SourceWords(
    "sources_remove",
    "Gem source is already removed.",
    "The gem source would have been removed.",
    "Could not remove gem source.",
    "Gem source was successfully removed.",
    "Removed",
)


def _source(name: str, ruby: Any, user: Any, kwargs: dict[str, Any], words: _SourceWords) -> dict[str, Any]:
    bad = _invalid_args(name, f"gem.{words.fun}", kwargs)
    if bad:
        return bad
    ret = _ret(name)
    try:
        sources = _salt("gem.sources_list")(ruby, runas=user)
    except CommandExecutionError as exc:
        return _failed(ret, "Could not list gem sources.", exc)
    if (name in sources) == (words is _ADD):
        ret.update(result=True, comment=words.already)
        return ret
    if _testing():
        ret["comment"] = words.would.format(name=name)
        return ret
    try:
        _salt(f"gem.{words.fun}")(source_uri=name, ruby=ruby, runas=user)
    except CommandExecutionError as exc:
        return _failed(ret, words.failed, exc)
    ret.update(result=True, comment=words.done)
    ret["changes"][name] = words.change
    return ret


def sources_add(name: str, ruby: Any = None, user: Any = None, **kwargs: Any) -> dict[str, Any]:
    """The gem source URL ``name`` configured (for ``user``)."""
    return _source(name, ruby, user, kwargs, _ADD)


def sources_remove(name: str, ruby: Any = None, user: Any = None, **kwargs: Any) -> dict[str, Any]:
    """The gem source URL ``name`` not configured (for ``user``)."""
    return _source(name, ruby, user, kwargs, _REMOVE)
