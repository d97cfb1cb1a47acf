"""Salt's Jinja filters and tests, written for briny.

Runs wherever templates render; :mod:`briny.common.state.jinja` installs
:data:`FILTERS` and :data:`TESTS` into every environment it builds. Each
filter behaves as Salt 3007's filter of the same name was observed to behave
(outputs recorded in ``tests/unit/common/test_jinja_filters.py``). One module
per concept:

- :mod:`.text`: serializers, YAML quoting, strings and regular expressions,
  hashes and encodings, random values, dates;
- :mod:`.data`: lists and sets, comparisons, nested dicts, MySQL tables,
  byte encodings of nested data;
- :mod:`.host`: paths and what reads the host (files, users, ``which``);
- :mod:`.network`: IP addresses and networks, MAC addresses, HTTP.

Filters work on their arguments only, except those that read the host (its
files, users, ``PATH`` or network): they ask the environment's ``boundary``
first (:func:`.host.ask_host`), so on the master they are refused and never
read the master's own files for a minion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import data, host, network, text

FILTERS: dict[str, Callable[..., Any]] = {**text.FILTERS, **data.FILTERS, **host.FILTERS, **network.FILTERS}

TESTS: dict[str, Callable[..., Any]] = {
    "match": text.test_match,
    "equalto": lambda value, other: value == other,
    "list": data.is_list,
}
