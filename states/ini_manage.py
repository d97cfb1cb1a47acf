"""The ``ini`` state module: options and sections of ini files (Salt 3007's ``ini_manage``).

Runs wherever states run; the file work goes through the ``ini`` execution
module. Results are Salt's (checked against the reference, live, test and
second runs): ``Changes take effect`` with the changes of
``ini.set_option`` / ``remove_option`` / ``remove_section``, ``No anomaly
detected`` when nothing changed; in test mode one line per key or section
(``Changed key K in section S.``, ``Unchanged key K.``, ``Removed section
S.``, ``Deleted key K.``, ``Key K does not exist.``, ``Created new section
S.``, ...) and no changes. ``strict: True`` removes the options and
sections the state does not name (comments stay).

Differences from Salt, on purpose (docs/SYSFILES.md): ``sections_present``
creates the sections (Salt 3007 fails with a ``TypeError``);
``options_absent`` removes the top-level key named by a scalar live as in
test mode, reports a removed key with an empty value, and creates no
missing file; ``sections_absent`` reports an empty section it removed; a
file that cannot be read or written fails the state with the module's
message (``Unable to open file ...``), in test mode too, never a
traceback; keys are compared as strings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from ._access import _salt, _testing

if TYPE_CHECKING:
    pass

__virtualname__ = "ini"


def _ret(name: str) -> dict[str, Any]:
    return {"name": name, "changes": {}, "result": True, "comment": "No anomaly detected"}


def _fail(ret: dict[str, Any], comment: str) -> dict[str, Any]:
    ret.update(result=False, comment=comment, changes={})
    return ret


def _is_section(body: Any) -> bool:
    return isinstance(body, dict)


def options_present(
    name: str,
    sections: dict[str, Any] | None = None,
    separator: str = "=",
    strict: bool = False,
    encoding: str | None = None,
    no_spaces: bool = False,
) -> dict[str, Any]:
    """Set options and sections of the ini file ``name``; with ``strict``, remove the others."""
    ret = _ret(name)
    if _testing():
        ret["comment"] = ""
    if sections is not None and not isinstance(sections, dict):
        return _fail(ret, f"sections must be a dictionary, not {type(sections).__name__}")
    common = {"file_name": name, "separator": separator, "encoding": encoding}
    changes: dict[str, Any] = {}
    try:
        if not sections:
            if not _testing():
                changes = _salt("ini.set_option")(sections=sections, no_spaces=no_spaces, **common)
        else:
            _present(ret, changes, sections, strict, no_spaces, common)
    except CommandExecutionError as exc:
        return _fail(ret, str(exc))
    for key, body in changes.items():
        if body:
            ret["comment"] = "Changes take effect"
            ret["changes"][key] = body
    return ret


def _present(
    ret: dict[str, Any],
    changes: dict[str, Any],
    sections: dict[str, Any],
    strict: bool,
    no_spaces: bool,
    common: dict[str, Any],
) -> None:
    test = _testing()
    options = {str(k): v for k, v in sections.items() if not _is_section(v)}
    current = _salt("ini.get_ini")(**common)
    cur_options = {k: v for k, v in current.items() if not _is_section(v)}
    cur_sections = {k: v for k, v in current.items() if _is_section(v)}

    def note(line: str, pending: bool = True) -> None:
        ret["comment"] += line + "\n"
        if pending:
            ret["result"] = None

    if test:
        for option, value in options.items():
            same = option in cur_options and str(cur_options[option]) == str(value)
            note(f"{'Unchanged' if same else 'Changed'} key {option}.", pending=not same)
    else:
        changes.update(_salt("ini.set_option")(sections=options, no_spaces=no_spaces, **common))
    if strict:
        for option in [k for k in cur_options if k not in options]:
            if test:
                note(f"Removed key {option}.")
            else:
                _salt("ini.remove_option")(section=None, option=option, **common)
                changes[option] = {"before": cur_options[option], "after": None}
        declared = {str(k) for k, v in sections.items() if _is_section(v)}
        for section in [k for k in cur_sections if k not in declared]:
            if test:
                note(f"Removed section {section}.")
            else:
                _salt("ini.remove_section")(section=section, **common)
                changes[section] = {"before": dict(cur_sections[section]), "after": None}
    for section, body in sections.items():
        if not _is_section(body):
            continue
        section = str(section)
        where = f" in section {section}" if section else ""
        keys = {str(k) for k in body}
        changes[section] = {}
        original = cur_sections.get(section, {})
        if strict:
            for key in [k for k in original if k not in keys]:
                if test:
                    note(f"Deleted key {key}{where}.")
                else:
                    _salt("ini.remove_option")(section=section, option=key, **common)
                    changes[section][key] = {"before": original[key], "after": None}
        if test:
            for key, value in body.items():
                same = str(value) == str(original.get(str(key), "#-#-"))
                note(f"{'Unchanged' if same else 'Changed'} key {key}{where}.", pending=not same)
            continue
        updated = _salt("ini.set_option")(sections={section: body}, no_spaces=no_spaces, **common)
        if updated:
            changes[section].update(updated[section])
        if not changes[section]:
            del changes[section]


def options_absent(
    name: str, sections: dict[str, Any] | None = None, separator: str = "=", encoding: str | None = None
) -> dict[str, Any]:
    """Remove options: ``{section: [key, ...]}``; ``{key: anything}`` for a top-level key."""
    ret = _ret(name)
    if sections is not None and not isinstance(sections, dict):
        return _fail(ret, f"sections must be a dictionary, not {type(sections).__name__}")
    common = {"file_name": name, "separator": separator, "encoding": encoding}
    try:
        if _testing():
            return _absent_test(ret, sections or {}, common)
        for section, keys in (sections or {}).items():
            section = str(section) if section is not None else None
            if not isinstance(keys, list):
                value = _salt("ini.remove_option")(section=None, option=section, **common)
                if value is not None:
                    ret["changes"][section] = value
                    ret["comment"] = "Changes take effect"
                continue
            for key in keys:
                value = _salt("ini.remove_option")(section=section, option=str(key), **common)
                if value is None:
                    continue
                ret["changes"].setdefault(section, {})[str(key)] = value
                ret["comment"] = "Changes take effect"
    except CommandExecutionError as exc:
        return _fail(ret, str(exc))
    return ret


def _absent_test(ret: dict[str, Any], sections: dict[str, Any], common: dict[str, Any]) -> dict[str, Any]:
    ret["comment"] = ""
    current = _salt("ini.get_ini")(**common)
    for name, keys in sections.items():
        section: str | None = name
        where = f" in section {section}" if section else ""
        if not isinstance(keys, list):  # a key of the top level (no section)
            keys, where, section = [name], "", None
        options = current.get(str(section), {}) if section else current
        for key in keys:
            value = options.get(str(key)) if isinstance(options, dict) else None
            if value is None or isinstance(value, dict):
                ret["comment"] += f"Key {key}{where} does not exist.\n"
                continue
            ret["comment"] += f"Deleted key {key}{where}.\n"
            ret["result"] = None
    if not ret["comment"]:
        ret["comment"] = "No changes detected."
    return ret


def _section_names(sections: Any) -> list[str]:
    if isinstance(sections, (dict, list, tuple)):
        return [str(k) for k in sections]
    return [str(sections)] if sections else []


def _sections_test(
    ret: dict[str, Any], sections: Any, common: dict[str, Any], there: str, missing: str, want: bool
) -> dict[str, Any]:
    """Test mode of ``sections_present`` (``want``) / ``sections_absent``: a line per section."""
    current = _salt("ini.get_ini")(**common)
    ret["comment"] = ""
    for section in _section_names(sections):
        exists = isinstance(current.get(section), dict)
        ret["comment"] += (there if exists else missing).format(section) + "\n"
        if exists != want:
            ret["result"] = None
    ret["comment"] = ret["comment"] or "No changes detected."
    return ret


def sections_present(
    name: str, sections: Any = None, separator: str = "=", encoding: str | None = None
) -> dict[str, Any]:
    """Make sure the (empty) sections exist; options are left to ``options_present``."""
    return _sections(name, sections, {"file_name": name, "separator": separator, "encoding": encoding}, True)


def sections_absent(
    name: str, sections: Any = None, separator: str = "=", encoding: str | None = None
) -> dict[str, Any]:
    """Remove whole sections (their options with them)."""
    return _sections(name, sections, {"file_name": name, "separator": separator, "encoding": encoding}, False)


def _sections(name: str, sections: Any, common: dict[str, Any], present: bool) -> dict[str, Any]:
    ret = _ret(name)
    try:
        if _testing():
            if present:
                return _sections_test(ret, sections, common, "Section unchanged {}.", "Created new section {}.", True)
            return _sections_test(ret, sections, common, "Deleted section {}.", "Section {} does not exist.", False)
        if present:
            wanted: dict[str, dict[str, Any]] = {section: {} for section in _section_names(sections)}
            ret["changes"] = _salt("ini.set_option")(sections=wanted, **common)
        else:
            for section in _section_names(sections):
                removed = _salt("ini.remove_section")(section=section, **common)
                if removed is not None:
                    ret["changes"][section] = removed
    except CommandExecutionError as exc:
        return _fail(ret, str(exc))
    if ret["changes"]:
        ret["comment"] = "Changes take effect"
    return ret
