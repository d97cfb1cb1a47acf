"""Execution module ``gem``: Ruby gems through the ``gem`` command, as Salt 3007's ``gem`` module.

Functions, arguments and return values are Salt's: ``install``, ``uninstall``, ``update``,
``update_system``, ``version``, ``list`` (``{name: [versions]}``, newest first, a default gem's
version written ``default: 1.2.3``), ``list_upgrades``, ``sources_add``, ``sources_remove``,
``sources_list``. Each takes ``ruby`` (a Ruby of RVM or rbenv), ``runas`` (the user gem runs
as) and ``gem_bin`` (a gem binary to run instead); which gem runs, and how a failure is
reported, is ``_gem_ruby.py``'s (a private sibling this module imports): a gem that fails
raises :class:`CommandExecutionError` with its error output, and the calls that change
something return gem's standard output.

``install``'s options follow the RubyGems version: from RubyGems 3 on, ``--no-document``
unless both ``rdoc`` and ``ri`` and ``--prerelease`` for ``pre_releases`` (Salt tests the
version with ``^3\\.``, so a RubyGems 4 would get the old ``--no-rdoc``/``--no-ri``/``--pre``,
which it no longer knows; here any version from 3 on gets the new ones). ``update_system``
without a ``version`` runs ``gem update --system`` (Salt hands gem an empty argument).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from ._gem_ruby import _gem

log = logging.getLogger(__name__)

__func_alias__ = {"list_": "list"}


def _gems(gems: Any) -> list[str]:
    """Salt's ``gems``: a string of whitespace-separated names, or a list."""
    if isinstance(gems, str):
        return gems.split()
    if isinstance(gems, (list, tuple)):
        return [str(g) for g in gems]
    return [str(gems)]


def _has_rubygems_3(ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> bool:
    found = re.match(r"^(\d+)\.", str(version(ruby=ruby, runas=runas, gem_bin=gem_bin) or ""))
    return found is not None and int(found.group(1)) >= 3


def install(
    gems: Any,
    ruby: Any = None,
    gem_bin: Any = None,
    runas: Any = None,
    version: Any = None,
    rdoc: bool = False,
    ri: bool = False,
    pre_releases: bool = False,
    proxy: Any = None,
    source: Any = None,
) -> str:
    """``gem install GEMS`` (``--version``, documentation, pre-releases, ``-p PROXY``, ``--source``)."""
    options: list[str] = []
    if version:
        options += ["--version", str(version)]
    if _has_rubygems_3(ruby=ruby, runas=runas, gem_bin=gem_bin):
        if not rdoc or not ri:
            options.append("--no-document")
        if pre_releases:
            options.append("--prerelease")
    else:
        options += [] if rdoc else ["--no-rdoc"]
        options += [] if ri else ["--no-ri"]
        options += ["--pre"] if pre_releases else []
    if proxy:
        options += ["-p", str(proxy)]
    if source:
        options += ["--source", str(source)]
    return _gem(["install", *_gems(gems), *options], ruby, gem_bin=gem_bin, runas=runas)


def uninstall(gems: Any, ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> str:
    """``gem uninstall GEMS -a -x``: every version, and their executables."""
    return _gem(["uninstall", *_gems(gems), "-a", "-x"], ruby, gem_bin=gem_bin, runas=runas)


def update(gems: Any, ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> str:
    """``gem update GEMS``."""
    return _gem(["update", *_gems(gems)], ruby, gem_bin=gem_bin, runas=runas)


def update_system(version: Any = "", ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> str:
    """``gem update --system [VERSION]``: RubyGems itself."""
    command = ["update", "--system"] + ([str(version)] if version else [])
    return _gem(command, ruby, gem_bin=gem_bin, runas=runas)


def version(ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> Any:
    """The RubyGems version (``3.3.15``); ``{}`` when gem prints none, as Salt returns."""
    for line in _gem(["--version"], ruby, gem_bin=gem_bin, runas=runas).splitlines():
        if re.match(r"[.0-9]+", line):
            return line
    return {}


def list_(prefix: Any = "", ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> dict[str, list[str]]:
    """Installed gems (whose names match ``prefix``): ``{name: [versions]}``."""
    command = ["list"] + ([str(prefix)] if prefix else [])
    ret: dict[str, list[str]] = {}
    for line in _gem(command, ruby, gem_bin=gem_bin, runas=runas).splitlines():
        found = re.match(r"^([^ ]+) \((.+)\)", line)
        if found:
            ret[found.group(1)] = found.group(2).split(", ")
    return ret


def list_upgrades(ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> dict[str, str]:
    """Installed gems a newer version exists for (``gem outdated``): ``{name: newest version}``."""
    ret: dict[str, str] = {}
    for line in _gem(["outdated"], ruby, gem_bin=gem_bin, runas=runas).splitlines():
        found = re.search(r"(\S+) \(\S+ < (\S+)\)", line)
        if found:
            ret[found.group(1)] = found.group(2)
        elif line.strip():
            log.error("Can't parse line '%s'", line)
    return ret


def sources_add(source_uri: str, ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> str:
    """``gem sources --add URI`` (gem checks that it is a gem source first)."""
    return _gem(["sources", "--add", str(source_uri)], ruby, gem_bin=gem_bin, runas=runas)


def sources_remove(source_uri: str, ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> str:
    """``gem sources --remove URI``."""
    return _gem(["sources", "--remove", str(source_uri)], ruby, gem_bin=gem_bin, runas=runas)


def sources_list(ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> list[str]:
    """The configured gem sources (the lines after gem's ``*** CURRENT SOURCES ***`` header)."""
    return _gem(["sources"], ruby, gem_bin=gem_bin, runas=runas).splitlines()[2:]
