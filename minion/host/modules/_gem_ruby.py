"""Running ``gem`` for the ``gem`` execution module (a private sibling of ``gem.py``, which imports
it): the ``gem`` on the PATH, a ``gem_bin``, or ``gem`` under RVM or rbenv for ``ruby``, found
where Salt 3007 looks for them.

- ``gem_bin`` given: that binary, ``ruby`` ignored.
- RVM, when ``/usr/local/rvm/bin/rvm`` (or ``~runas/.rvm/bin/rvm``) is executable: ``rvm RUBY
  do gem ...`` (``default`` without ``ruby``); ``runas`` defaults to the config key
  ``rvm.runas``.
- rbenv, when ``ROOT/bin/rbenv`` is executable, ROOT being the config key ``rbenv.root`` or
  ``/usr/local/rbenv`` (root) / ``~runas/.rbenv``: ``gem ...`` with ``ROOT/shims`` first on the
  PATH and ``RBENV_VERSION=RUBY``, then ``rbenv rehash`` (new executables get their shims).
- Otherwise the ``gem`` on the PATH; a ``ruby`` is then logged as a warning with Salt's words
  ("Use of argument ruby found, but neither rvm or rbenv is installed") and ignored.

Every command runs through ``cmd.run_all`` (``runas``, no shell). A failing one raises
:class:`CommandExecutionError` with gem's error output (Salt's RVM and rbenv paths return False
instead, which its callers then trip over).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

log = logging.getLogger(__name__)


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _rvm_bin(runas: Any) -> str | None:
    if runas:
        own = os.path.expanduser(f"~{runas}/.rvm/bin/rvm")
        if os.path.exists(own):
            return own if _salt("cmd.has_exec")(own) else None
    shared = "/usr/local/rvm/bin/rvm"
    return shared if _salt("cmd.has_exec")(shared) else None


def _rbenv_root(runas: Any) -> str:
    default = "/usr/local/rbenv" if runas in (None, "root") else f"~{runas}/.rbenv"
    return os.path.expanduser(str(_salt("config.option")("rbenv.root") or default))


def _run(cmdline: list[str], runas: Any, env: dict[str, str] | None = None) -> str:
    ret = _salt("cmd.run_all")(cmdline, runas=runas, env=env, python_shell=False)
    if ret["retcode"] != 0:
        err = str(ret.get("stderr") or "").strip() or str(ret.get("stdout") or "").strip()
        raise CommandExecutionError(err or f"{cmdline[0]} exited with status {ret['retcode']}")
    return str(ret["stdout"])


def _gem(command: list[str], ruby: Any = None, runas: Any = None, gem_bin: Any = None) -> str:
    """gem's standard output for ``gem COMMAND...`` (see the module docstring for which gem)."""
    cmdline = [str(gem_bin or "gem"), *command]
    if gem_bin is not None:
        return _run(cmdline, runas)
    rvm_runas = runas if runas is not None else _salt("config.option")("rvm.runas")
    rvm = _rvm_bin(rvm_runas)
    if rvm is not None:
        return _run([rvm, str(ruby or "default"), "do", *cmdline], rvm_runas)
    root = _rbenv_root(runas)
    rbenv = os.path.join(root, "bin", "rbenv")
    if _salt("cmd.has_exec")(rbenv):
        env = {"PATH": os.pathsep.join((os.path.join(root, "shims"), os.environ.get("PATH", "")))}
        if ruby:
            env["RBENV_VERSION"] = str(ruby)
        out = _run(cmdline, runas, env)
        _run([rbenv, "rehash"], runas, {"RBENV_ROOT": root})
        return out
    if ruby is not None:
        log.warning("Use of argument ruby found, but neither rvm or rbenv is installed")
    return _run(cmdline, runas)
