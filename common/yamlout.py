"""A YAML dumper that writes data the way Salt's ``yaml`` Jinja filter does.

Runs wherever templates render (the ``yaml``, ``yaml_encode``, ``yaml_dquote``,
``yaml_squote`` and ``dict_to_sls_yaml_params`` filters of
:mod:`briny.common.state.jinja_filters.text`). Observed Salt 3007 behaviour it follows:

- plain dicts are written with sorted keys, ordered mappings
  (``OrderedDict``, ``odict(...)``) keep their order;
- tuples and sets are written as lists, ``str``/``dict``/``list`` subclasses
  as their base type; nothing is ever written with a ``!!python`` tag;
- non-ASCII text is written as is (``allow_unicode``);
- scalar quoting helpers emit one double- or single-quoted scalar, never
  folded over several lines, with non-ASCII escaped (``"h\\xE9llo"``).
"""

from __future__ import annotations

import io
import sys
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import yaml
from yaml.emitter import Emitter
from yaml.nodes import ScalarNode
from yaml.representer import SafeRepresenter

if TYPE_CHECKING:  # the C dumper when libyaml is there: the same interface
    _BaseDumper = yaml.SafeDumper
else:
    _BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class SaltDumper(_BaseDumper):
    """Safe dumper: sorted dicts, ordered OrderedDicts, tuples/sets as lists."""


def _represent_ordered(dumper: Any, data: Mapping[Any, Any]) -> Any:
    return dumper.represent_mapping("tag:yaml.org,2002:map", list(data.items()))


def _represent_mapping(dumper: Any, data: Mapping[Any, Any]) -> Any:
    if isinstance(data, OrderedDict):
        return _represent_ordered(dumper, data)
    return dumper.represent_dict(dict(data))


def _represent_seq(dumper: Any, data: Any) -> Any:
    return dumper.represent_list(list(data))


def _represent_str(dumper: Any, data: str) -> Any:
    return dumper.represent_str(str(data))


def _represent_fallback(dumper: Any, data: Any) -> Any:
    # Anything else (Undefined, custom objects): write its text, as a string.
    return dumper.represent_str(str(data))


SaltDumper.add_representer(OrderedDict, _represent_ordered)
SaltDumper.add_representer(tuple, _represent_seq)
SaltDumper.add_representer(set, _represent_seq)
SaltDumper.add_representer(frozenset, _represent_seq)
SaltDumper.add_multi_representer(Mapping, _represent_mapping)  # type: ignore[type-abstract]  # every Mapping
SaltDumper.add_multi_representer(str, _represent_str)
SaltDumper.add_multi_representer(list, _represent_seq)
SaltDumper.add_multi_representer(tuple, _represent_seq)
SaltDumper.add_multi_representer(object, _represent_fallback)


def safe_dump(data: Any, default_flow_style: bool | None = False, **kwargs: Any) -> str:
    """``yaml.dump`` with :class:`SaltDumper`, unicode allowed."""
    kwargs.setdefault("allow_unicode", True)
    text: str = yaml.dump(data, Dumper=SaltDumper, default_flow_style=default_flow_style, **kwargs)  # no stream: a str
    return text


def double_quoted(text: Any) -> str:
    """``text`` as one double-quoted YAML scalar (non-ASCII escaped)."""
    stream = io.StringIO()
    emitter = Emitter(stream, width=sys.maxsize)
    emitter.write_double_quoted(str(text), split=False)
    return stream.getvalue()


def single_quoted(text: Any) -> str:
    """``text`` as one single-quoted YAML scalar."""
    stream = io.StringIO()
    emitter = Emitter(stream, width=sys.maxsize, allow_unicode=True)
    emitter.write_single_quoted(str(text), split=False)
    return stream.getvalue()


def encode_scalar(data: Any) -> str:
    """A scalar as YAML text: strings double-quoted, others in their plain form."""
    node = SafeRepresenter().represent_data(data)
    if not isinstance(node, ScalarNode):
        raise TypeError(f"yaml_encode() only works with YAML scalar data; failed for {type(data)}")
    if node.tag.rsplit(":", 1)[-1] == "str":
        return double_quoted(node.value)
    return str(node.value)
