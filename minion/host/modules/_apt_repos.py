"""Repositories and their keys for the apt ``pkg`` execution module (a private sibling of
``aptpkg.py``, which imports it): ``list_repos``, ``get_repo``, ``mod_repo``, ``del_repo`` and the
keys, with :mod:`briny.minion.host.aptrepo` and :mod:`briny.minion.host.aptkeys` doing the work (their
docstrings say where briny differs from Salt)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common.exceptions import SaltInvocationError
from briny.minion.host import aptkeys as _aptkeys
from briny.minion.host import aptrepo as _aptrepo
from briny.minion.host import aptsources as _aptsources

from ._apt_cmd import refresh_db

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __salt__


def _host() -> _aptrepo.Host:
    salt = __salt__
    return _aptrepo.Host(
        run=salt["cmd.run_all"],
        cache_file=lambda path, saltenv="base": salt["cp.cache_file"](path, saltenv),
        refresh=refresh_db,
        grains=__grains__,
    )


def list_repos(**kwargs: Any) -> dict[str, list[dict[str, Any]]]:
    """Every repo of ``/etc/apt/sources.list`` and ``sources.list.d`` (``*.list`` and
    deb822 ``*.sources``): ``{uri: [{type, uri, dist, comps, architectures, signedby,
    disabled, line, file}, ...]}``."""
    return _aptrepo.list_repos(kwargs.get("file"))


def get_repo(repo: str, **kwargs: Any) -> dict[str, Any]:
    """The configured repo a whole definition (``deb [opts] uri dist comps``) names, or ``{}``."""
    return _aptrepo.get_repo(_host(), repo, **kwargs)


def expand_repo_def(repo: str = "", **kwargs: Any) -> dict[str, Any]:
    """briny's: what ``repo`` would look like once configured with these arguments (the
    ``pkgrepo`` state compares it with ``get_repo``; Salt keeps this private)."""
    return _aptrepo.expand_repo_def(_host(), repo or kwargs.pop("name", ""), **kwargs)


def mod_repo(repo: str, saltenv: str = "base", aptkey: bool = True, **kwargs: Any) -> dict[str, Any]:
    """Add or change a repo (``comps``, ``architectures``, ``dist``, ``disabled``, ``file``,
    ``comments``, ``clean_file``, ``consolidate``, keys: ``key_url``, ``key_text``,
    ``keyid`` + ``keyserver``); then ``apt-get update`` unless ``refresh=False``."""
    return _aptrepo.mod_repo(_host(), repo, saltenv=saltenv, aptkey=aptkey, **kwargs)


def del_repo(repo: str, **kwargs: Any) -> str:
    """Remove a repo (a whole definition); a ``sources.list.d`` file left empty is deleted."""
    return _aptrepo.del_repo(_host(), repo, **kwargs)


def get_repo_keys(aptkey: bool = True, keydir: Any = None, **kwargs: Any) -> Any:
    """The keys APT trusts (``apt-key``, or the key files of ``keydir``): ``{keyid: {...}}``."""
    return _aptkeys.get_repo_keys(_host().run, aptkey=aptkey, keydir=keydir)


def add_repo_key(
    path: str | None = None,
    text: str | None = None,
    keyserver: str | None = None,
    keyid: str | None = None,
    **kwargs: Any,
) -> bool:
    """Add a repo key from a file (local or ``salt://``), text, or a keyserver (with ``keyid``);
    ``saltenv``, ``aptkey``, ``keydir`` and ``keyfile`` as in Salt."""
    host = _host()
    options = {k: kwargs[k] for k in ("saltenv", "aptkey", "keydir", "keyfile") if k in kwargs}
    return _aptkeys.add_repo_key(host.run, host.cache_file, path, text, keyserver, keyid, **options)


def del_repo_key(name: str | None = None, aptkey: bool = True, keydir: Any = None, **kwargs: Any) -> Any:
    """Remove the key ``keyid`` (its file in ``keydir``, or ``apt-key del``); returns the keyid."""
    if kwargs.get("keyid_ppa"):
        raise SaltInvocationError("keyid_ppa needs Launchpad, which briny does not query")
    if "keyid" not in kwargs:
        raise SaltInvocationError("keyid or keyid_ppa and PPA name must be passed")
    prefer = _aptsources.split_repo(name).signedby if name else ""
    return _aptkeys.del_repo_key(_host().run, str(kwargs["keyid"]), aptkey=aptkey, keydir=keydir, prefer=prefer)
