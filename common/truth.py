"""Booleans from loosely typed values (YAML, the command line, a state's arguments), as Salt reads them.

Pure: data in, data out, the standard library only (state modules may import it:
tests/unit/test_imports.py, ``PURE_FOR_STATES``). Two meanings, as Salt has two:

- :func:`is_true`: Salt's ``salt.utils.data.is_true`` for an argument: a word among ``true``,
  ``yes``, ``1``, ``on`` (any case, spaces around) is true, another word false, anything else by
  Python's truth (``2`` and ``[1]`` are true);
- :func:`says_true`: a setting's value that must *say* true: ``True`` itself or one of those
  words (the number ``1`` too, as its text is ``1``); any other value, ``2`` or ``[1]`` included,
  is false (how Salt's ``pkgrepo`` / apt source options such as ``disabled`` are read).
"""

from __future__ import annotations

from typing import Any

TRUE_WORDS = frozenset({"true", "yes", "1", "on"})


def is_true(value: Any) -> bool:
    """True for a true word (:data:`TRUE_WORDS`), False for another word, else ``bool(value)``."""
    if isinstance(value, str):
        return value.strip().lower() in TRUE_WORDS
    return bool(value)


def says_true(value: Any) -> bool:
    """True only for ``True`` or a value whose text is a true word (see the module docstring)."""
    return value is True or str(value).strip().lower() in TRUE_WORDS
