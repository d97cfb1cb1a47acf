"""YAML loading with Salt's semantics, for SLS files, top files and pillar.

Runs wherever SLS is rendered. Differences from PyYAML's safe loader, all of
which Salt state trees rely on:

- a key that appears twice in one mapping is an error ("found conflicting
  ID 'x'"), never a silent overwrite;
- an integer written with leading zeros (``mode: 0644``) loads as the
  decimal number with the zeros dropped (644), as Salt does;
- timestamps stay strings;
- ``<<`` merge keys merge, the mapping's own keys winning.

The C parser (libyaml) is used when PyYAML has it; only the construction of
Python objects runs in Python, with the cyclic collector paused (see
:mod:`gcpause`) so large files parse in linear time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from .gcpause import gc_paused

if TYPE_CHECKING:  # the C loader when libyaml is there: the same interface
    _Base = yaml.SafeLoader
else:
    _Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
# A plain scalar starting with none of these can only be a string in YAML 1.1
# (bools, nulls, numbers, timestamps, merge and value keys all start with one).
_MAYBE_TYPED = frozenset("yYnNtTfFoO-+.0123456789<~=")


class SlsLoader(_Base):
    """Safe loader with Salt's duplicate-key, octal and timestamp rules."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        # fast path for the common case; the full resolver for the rest
        if kind is ScalarNode:
            if value and (not implicit[0] or value[0] not in _MAYBE_TYPED):
                return STR_TAG
        elif kind is MappingNode:
            return MAP_TAG
        elif kind is SequenceNode:
            return SEQ_TAG
        tag: str = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]  # untyped in types-PyYAML
        return tag

    def build(self, node: Any) -> Any:
        """Python data for a composed node tree, without PyYAML's generator machinery.

        Same results as ``construct_document`` for the safe tags; aliases keep
        their identity; other tags fall back to the registered constructors.
        """
        memo: dict[int, Any] = {}

        def walk(n: Any) -> Any:
            tag = n.tag
            if type(n) is ScalarNode:
                if tag == STR_TAG:
                    return n.value
                return self.construct_object(n, deep=True)
            key = id(n)
            if key in memo:
                return memo[key]
            if type(n) is SequenceNode and tag == SEQ_TAG:
                out: list[Any] = []
                memo[key] = out
                out.extend(walk(item) for item in n.value)
                return out
            if type(n) is MappingNode and tag == MAP_TAG:
                self.flatten_mapping(n)
                mapping: dict[Any, Any] = {}
                memo[key] = mapping
                for key_node, value_node in n.value:
                    k = walk(key_node)
                    try:
                        hash(k)
                    except TypeError:
                        raise ConstructorError(
                            "while constructing a mapping",
                            n.start_mark,
                            f"found unacceptable key {key_node.value}",
                            key_node.start_mark,
                        ) from None
                    if k in mapping:
                        raise ConstructorError(
                            "while constructing a mapping",
                            n.start_mark,
                            f"found conflicting ID '{k}'",
                            key_node.start_mark,
                        )
                    mapping[k] = walk(value_node)
                return mapping
            return self.construct_object(n, deep=True)

        return walk(node)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, MappingNode):
            raise ConstructorError(None, None, f"expected a mapping node, but found {node.id}", node.start_mark)
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found unacceptable key {key_node.value}",
                    key_node.start_mark,
                ) from None
            if key in mapping:
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found conflicting ID '{key}'",
                    key_node.start_mark,
                )
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_yaml_map(self, node: Any) -> Any:
        data: dict[Any, Any] = {}
        yield data
        data.update(self.construct_mapping(node))

    def construct_scalar(self, node: Any) -> Any:
        if node.tag == "tag:yaml.org,2002:int":
            value = node.value
            if value != "0" and value.startswith("0") and not value.startswith(("0b", "0x")):
                node.value = value.lstrip("0") or "0"
        return super().construct_scalar(node)

    def flatten_mapping(self, node: Any) -> None:
        merged: list[Any] = []
        own: list[Any] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                if not isinstance(value_node, (MappingNode, SequenceNode)):
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"expected a mapping or list of mappings for merging, but found {value_node.id}",
                        value_node.start_mark,
                    )
                # later mappings in a merge list lose to earlier ones
                for sub in reversed(sources):
                    if not isinstance(sub, MappingNode):
                        raise ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"expected a mapping for merging, but found {sub.id}",
                            sub.start_mark,
                        )
                    self.flatten_mapping(sub)
                    merged.extend(sub.value)
            else:
                if key_node.tag == "tag:yaml.org,2002:value":
                    key_node.tag = "tag:yaml.org,2002:str"
                own.append((key_node, value_node))
        if merged:
            own_keys = {k.value for k, _ in own}
            seen: set[Any] = set()
            keep = []
            for k, v in reversed(merged):  # the earliest source wins among merged ones
                if k.value in own_keys or k.value in seen:
                    continue
                seen.add(k.value)
                keep.append((k, v))
            node.value = list(reversed(keep)) + own
        else:
            node.value = own


SlsLoader.add_constructor("tag:yaml.org,2002:map", SlsLoader.construct_yaml_map)
SlsLoader.add_constructor("tag:yaml.org,2002:omap", SlsLoader.construct_yaml_map)
SlsLoader.add_constructor("tag:yaml.org,2002:timestamp", SlsLoader.construct_scalar)


def load(text: str) -> Any:
    """Load one YAML document with Salt's rules (errors are PyYAML's)."""
    loader = SlsLoader(text)
    try:
        with gc_paused():
            node = loader.get_single_node()
            return None if node is None else loader.build(node)
    except RecursionError:
        raise ConstructorError(None, None, "the document is nested too deeply", None) from None
    finally:
        loader.dispose()
