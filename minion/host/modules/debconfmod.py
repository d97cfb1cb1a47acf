"""Execution module ``debconf``: answers to Debian's package configuration questions.

Runs on the managed host (minion / ``briny-call``) where Debian's
``debconf-utils`` is installed (``debconf-get-selections``,
``debconf-set-selections``), as Salt 3007's does:

- ``get_selections(fetchempty=True)``: ``{package: [[question, type, value], ...]}``;
- ``show(name)``: that list for one package, None when debconf knows none;
- ``set(package, question, type, value, *extra)``: pre-answer one question
  (extra words are joined to the value);
- ``set_file(path, saltenv)`` / ``set_template(path, template, context,
  defaults, saltenv)``: answers from a selections file (``salt://`` or local),
  rendered first with ``set_template``.

Differences from Salt, on purpose: answers are fed to
``debconf-set-selections`` on its standard input (no temporary file holding
passwords), and a line it refuses or skips (an unknown type, a parse error)
makes ``set`` / ``set_file`` return False with the reason logged (Salt
ignores its exit status and warnings and returns True).
"""

from __future__ import annotations

import logging
import shutil
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __salt__


log = logging.getLogger(__name__)

__virtualname__ = "debconf"
__func_alias__ = {"set_": "set"}


def __virtual__() -> Any:
    if __grains__.get("os_family") != "Debian":
        return (False, "The debconfmod module could not be loaded: unsupported OS family")
    if shutil.which("debconf-get-selections") is None:
        return (False, "The debconfmod module could not be loaded: debconf-utils is not installed.")
    return __virtualname__


def _parse(text: str, fetchempty: bool = True) -> dict[str, list[list[str]]]:
    """``debconf-get-selections`` output -> ``{package: [[question, type, value], ...]}``."""
    selections: dict[str, list[list[str]]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 3) if "\t" not in line else line.split("\t", 3)
        if len(parts) < 3:
            continue
        package, question, type_ = (p.strip() for p in parts[:3])
        value = parts[3] if len(parts) > 3 else ""
        if fetchempty or value:
            selections.setdefault(package, []).append([question, type_, value])
    return selections


def get_selections(fetchempty: bool = True, **kwargs: Any) -> dict[str, list[list[str]]]:
    """Every answer debconf holds: ``{package: [[question, type, value], ...]}``."""
    out = __salt__["cmd.run_all"](
        ["debconf-get-selections"], python_shell=False, output_loglevel="quiet", ignore_retcode=True
    )
    if out["retcode"] != 0:
        log.error("debconf-get-selections failed: %s", (out.get("stderr") or "").strip())
    return _parse(str(out.get("stdout", "")), fetchempty)


def show(name: str, **kwargs: Any) -> list[list[str]] | None:
    """The answers for one package, or None when debconf knows none."""
    return get_selections().get(str(name))


def _set_selections(text: str) -> bool:
    """Feed selections to ``debconf-set-selections``; False when it refused or skipped a line."""
    out = __salt__["cmd.run_all"](
        ["debconf-set-selections"], python_shell=False, stdin=text, output_loglevel="quiet", ignore_retcode=True
    )
    problems = [
        line
        for line in str(out.get("stderr", "")).splitlines()
        if line.startswith(("warning:", "error:")) or "skipping" in line
    ]
    if out["retcode"] != 0 or problems:
        log.error(
            "debconf-set-selections refused the answers (exit %s): %s",
            out["retcode"],
            " ".join(problems) or str(out.get("stderr", "")).strip(),
        )
        return False
    return True


def set_(package: str, question: str, type: str, value: Any, *extra: Any, **kwargs: Any) -> bool:
    """Pre-answer ``question`` of ``package`` (``type``: string, boolean, select, password, ...)."""
    if extra:
        value = " ".join(str(v) for v in (value, *extra))
    if "\n" in f"{package}{question}{type}{value}":
        log.error("debconf answers are one line each: %s %s has a line break", package, question)
        return False
    return _set_selections(f"{package} {question} {type} {value}\n")


def set_file(path: str, saltenv: str = "base", **kwargs: Any) -> bool:
    """Answers from a selections file (``salt://`` or a local path)."""
    local = __salt__["cp.cache_file"](path, saltenv)
    if not local:
        return False
    try:
        with open(str(local), encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        log.error("cannot read %s: %s", local, exc)
        return False
    return _set_selections(text)


def set_template(path: str, template: str, context: Any, defaults: Any, saltenv: str = "base", **kwargs: Any) -> bool:
    """Answers from a selections file rendered with ``template`` (jinja) first."""
    local = __salt__["cp.cache_file"](path, saltenv)
    if not local:
        return False
    with open(str(local), encoding="utf-8") as fh:
        text = fh.read()
    rendered = __salt__["file.apply_template_on_contents"](text, template, context or {}, defaults or {}, saltenv)
    return _set_selections(str(rendered))
