"""Execution module ``ini``: read and edit ini files (Salt 3007's ``ini_manage``).

Functions, arguments and return values are Salt's: ``set_option`` (the
changes ``{key: {before, after}}``, a new section as ``{before: None,
after: {...}}``), ``get_option``, ``remove_option`` (the removed value or
None), ``get_section``, ``remove_section`` (the removed section or None),
``get_ini``. The format (comments, continuation lines, how a file is
written back) is described in :mod:`briny.minion.host.sysfiles.ini`.

A file is written only when something changed (Salt rewrites it on every
call), through a temporary file and a rename, keeping its owner and mode; a
missing file is created by ``set_option`` only. A file that cannot be read
fails the call (``Unable to open file 'F'. Exception: ...``) in test mode
too (Salt's states then carry on as if it were empty). ``remove_option``
with a ``section`` the file does not have removes nothing (Salt removes the
top-level option of that name).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from briny.minion.host.sysfiles import ini
from briny.minion.host.sysfiles.replace import read_text, replace_text

if TYPE_CHECKING:
    from briny.common.dunders import __salt_system_encoding__

__virtualname__ = "ini"


def _encoding(encoding: str | None) -> str:
    return encoding or __salt_system_encoding__


def _load(file_name: str, separator: str, encoding: str | None) -> tuple[ini.IniDoc, str | None]:
    try:
        text = read_text(str(file_name), _encoding(encoding))
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandExecutionError(f"Unable to open file '{file_name}'. Exception: {exc}") from None
    return ini.parse(text or "", separator), text


def _save(file_name: str, doc: ini.IniDoc, separator: str, encoding: str | None, no_spaces: bool = False) -> None:
    try:
        replace_text(str(file_name), ini.render(doc, separator, no_spaces), _encoding(encoding))
    except (OSError, UnicodeEncodeError) as exc:
        raise CommandExecutionError(f"Unable to write file '{file_name}'. Exception: {exc}") from None


def set_option(
    file_name: str,
    sections: dict[str, Any] | None = None,
    separator: str = "=",
    encoding: str | None = None,
    no_spaces: bool = False,
    **kwargs: Any,
) -> dict[str, Any]:
    """Set options (``{key: value}``) and sections (``{section: {key: value}}``); the changes."""
    doc, text = _load(file_name, separator, encoding)
    changes = ini.update(doc, sections or {}, separator)
    if changes or text is None:
        _save(file_name, doc, separator, encoding, no_spaces)
    return changes


def get_option(
    file_name: str, section: str | None, option: str, separator: str = "=", encoding: str | None = None, **kwargs: Any
) -> Any:
    """The value of ``option`` in ``section`` (the top part when empty), or None."""
    doc, _ = _load(file_name, separator, encoding)
    if section:
        found = doc.sections.get(str(section))
        return None if found is None else found.get(str(option))
    value = doc.top.get(str(option))
    if value is None and str(option) in doc.sections:
        return doc.sections[str(option)].as_dict()
    return value


def remove_option(
    file_name: str, section: str | None, option: str, separator: str = "=", encoding: str | None = None, **kwargs: Any
) -> str | None:
    """Remove ``option`` from ``section`` (the top part when empty); the removed value or None."""
    doc, _ = _load(file_name, separator, encoding)
    value = ini.remove_option(doc, None if section is None else str(section), str(option))
    if value is not None:
        _save(file_name, doc, separator, encoding)
    return value


def get_section(
    file_name: str, section: str, separator: str = "=", encoding: str | None = None, **kwargs: Any
) -> dict[str, str]:
    """The options of ``section`` (``{}`` when the file has no such section)."""
    doc, _ = _load(file_name, separator, encoding)
    found = doc.sections.get(str(section))
    return {} if found is None else found.as_dict()


def remove_section(
    file_name: str, section: str, separator: str = "=", encoding: str | None = None, **kwargs: Any
) -> dict[str, str] | None:
    """Remove ``section``; its options, or None when the file has no such section."""
    doc, _ = _load(file_name, separator, encoding)
    removed = ini.remove_section(doc, str(section))
    if removed is not None:
        _save(file_name, doc, separator, encoding)
    return removed


def get_ini(file_name: str, separator: str = "=", encoding: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """The whole file: top-level options, and each section as a dict of its options."""
    doc, _ = _load(file_name, separator, encoding)
    return doc.as_dict()
