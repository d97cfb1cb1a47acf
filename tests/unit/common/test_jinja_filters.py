"""Salt's Jinja filters and tests (common/state/jinja_filters/, common/yamlout.py).

Every expected string below is what Salt 3007.17 rendered for the same
expression (``slsutil.renderer salt://f.txt default_renderer=jinja``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from briny.common.exceptions import TemplateError
from briny.common.fileclient import LocalFileClient
from briny.common.state.jinja import render_jinja

D = "{%- set d = {'b': 1, 'a': [1, 2, 'x'], 'c': {'d': None, 'e': True, 'f': 1.5}, 'u': 'héllo'} -%}"
S = '{%- set s = "it\'s a \\"test\\"" -%}'


def r(expr: str, tmp_path: Path | None = None) -> str:
    client = LocalFileClient({"base": [str(tmp_path or "/nonexistent")]})
    return render_jinja(D + S + expr, {"opts": {}, "saltenv": "base"}, client=client, saltenv="base")


REFERENCE = [
    # serializers
    ("{{ d|json }}", '{"a": [1, 2, "x"], "b": 1, "c": {"d": null, "e": true, "f": 1.5}, "u": "héllo"}'),
    ("{{ {'b':1,'a':2}|json(indent=2) }}", '{\n  "a": 2,\n  "b": 1\n}'),
    ("{{ {'b':1,'a':2}|json(sort_keys=False) }}", '{"b": 1, "a": 2}'),
    ("{{ odict([('z', 1), ('a', 2)])|json }}", '{"a": 2, "z": 1}'),
    ("{{ none|json }} {{ 'x'|json }} {{ 1.0|json }} {{ (1,2)|json }}", 'null "x" 1.0 [1, 2]'),
    ("{{ d|tojson }}", '{"b": 1, "a": [1, 2, "x"], "c": {"d": null, "e": true, "f": 1.5}, "u": "h\\u00e9llo"}'),
    ("{{ \"<a href='x'>&</a>\"|tojson }}", '"\\u003ca href=\\u0027x\\u0027\\u003e\\u0026\\u003c/a\\u003e"'),
    ("{{ {'b':1,'a':2}|tojson(2) }}", '{\n  "b": 1,\n  "a": 2\n}'),
    ("{{ d|yaml }}", "{a: [1, 2, x], b: 1, c: {d: null, e: true, f: 1.5}, u: héllo}"),
    ("{{ d|yaml(False) }}", "a:\n- 1\n- 2\n- x\nb: 1\nc:\n  d: null\n  e: true\n  f: 1.5\nu: héllo"),
    ("{{ 'abc'|yaml }} {{ 5|yaml }} {{ none|yaml }}", "abc 5 null"),
    ("{{ [1,'a b', 'yes', '1.0', '']|yaml }}", "[1, a b, 'yes', '1.0', '']"),
    (
        "{{ range(40)|list|yaml }}",
        "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,\n"
        "  23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39]",
    ),
    ("{{ {'z': 1, 'a': 'x'}|yaml }} {{ odict([('z', 1), ('a', 2)])|yaml }}", "{a: x, z: 1} {z: 1, a: 2}"),
    ("{{ odict([('z', {'b': 1, 'a': 2})])|yaml }}", "{z: {a: 2, b: 1}}"),
    (
        "{{ {'k': 'a: b', 'n': 'null', 't': 'true', 'e': '', 's': '~', 'd': '2020-01-01', 'm': 'x\ny',"
        " 'h': '#x', 'st': '*x'}|yaml }}",
        "{d: '2020-01-01', e: '', h: '#x', k: 'a: b', m: 'x\n\n    y', n: 'null', s: '~', st: '*x', t: 'true'}",
    ),
    ("{{ (1,2)|yaml }} {{ {'a': (1,2)}|yaml }} {{ 1.0|yaml }} {{ 1e20|yaml }}", "[1, 2] {a: [1, 2]} 1.0 1.0e+20"),
    (
        "{{ ('word ' * 30)|yaml }}",
        "'word word word word word word word word word word word word word word word word word\n"
        "  word word word word word word word word word word word word word '",
    ),
    ("{{ {'a': [{'b': 1, 'c': [1,2]}], 'e': {}}|yaml(False) }}", "a:\n- b: 1\n  c:\n  - 1\n  - 2\ne: {}"),
    ("{{ [1, [2, 3], {'a': 1}]|yaml(False) }}", "- 1\n- - 2\n  - 3\n- a: 1"),
    ("{{ d|python }}", "{'a': [1, 2, 'x'], 'b': 1, 'c': {'d': None, 'e': True, 'f': 1.5}, 'u': 'héllo'}"),
    ('{{ "{foo: it works, n: 1}"|load_yaml }}', "{'foo': 'it works', 'n': 1}"),
    ("{{ '{\"bar\": [1, 2]}'|load_json }} {{ 'abc'|load_text }}", "{'bar': [1, 2]} abc"),
    (
        "{{ {'a': 1, 'b': 'x y', 'c': [1,2], 'd': {'e': 'f'}}|dict_to_sls_yaml_params }}",
        "- a: 1\n- b: x y\n- c:\n  - 1\n  - 2\n- d:\n    e: f",
    ),
    ("{{ {'z': 1, 'a': 'x'}|dict_to_sls_yaml_params }}", "- z: 1\n- a: x"),
    ("{{ {'a': none, 'b': true, 'c': 'yes'}|dict_to_sls_yaml_params }}", "- a: null\n- b: true\n- c: 'yes'"),
    ("{{ {'a': [1, {'b': 2}]}|dict_to_sls_yaml_params(True) }}", "[{a: [1, {b: 2}]}]"),
    # YAML quoting
    ("{{ s|yaml_encode }}", '"it\'s a \\"test\\""'),
    (
        "{{ 'yes'|yaml_encode }} {{ 5|yaml_encode }} {{ none|yaml_encode }} {{ true|yaml_encode }} "
        "{{ 'héllo'|yaml_encode }} {{ 'a: b'|yaml_encode }}",
        '"yes" 5 null true "h\\xE9llo" "a: b"',
    ),
    (
        "{{ 'plain'|yaml_encode }} {{ 1.5|yaml_encode }} {{ 'multi\nline'|yaml_encode }} {{ ''|yaml_encode }}",
        '"plain" 1.5 "multi\\nline" ""',
    ),
    ("{{ ('word ' * 30)|yaml_encode }}", '"' + "word " * 30 + '"'),
    (
        "{{ s|yaml_dquote }} {{ 'héllo'|yaml_dquote }} {{ 'plain'|yaml_dquote }}",
        '"it\'s a \\"test\\"" "h\\xE9llo" "plain"',
    ),
    ("{{ s|yaml_squote }} {{ 'plain'|yaml_squote }} {{ \"a'b\"|yaml_squote }}", "'it''s a \"test\"' 'plain' 'a''b'"),
    ("{{ 'héllo'|yaml_squote }} {{ 'multi\nline'|yaml_squote }}", "'héllo' 'multi\n\nline'"),
    ("{{ ('word ' * 30)|yaml_squote }}", "'" + "word " * 30 + "'"),
    # strings, regexes, booleans, numbers
    ("{{ ['a','b','a','c','b']|unique }}", "['a', 'b', 'c']"),
    ("{{ [1, 2, 1, [1], [1]]|unique }} {{ [{'a':1},{'a':1}]|unique }}", "[1, 2, [1]] [{'a': 1}]"),
    (
        "{{ 'foo'|sequence }} {{ ['a']|sequence }} {{ {'k':1}|sequence }} {{ (1,2)|sequence }}",
        "['foo'] ['a'] {'k': 1} (1, 2)",
    ),
    (
        "{{ 'yes'|to_bool }} {{ 'no'|to_bool }} {{ 1|to_bool }} {{ 0|to_bool }} {{ []|to_bool }} "
        "{{ [1]|to_bool }} {{ none|to_bool }} {{ 'True'|to_bool }} {{ 1.5|to_bool }}",
        "True False True False False True False True False",
    ),
    (
        "{{ 'on'|to_bool }} {{ 'Y'|to_bool }} {{ {}|to_bool }} {{ -1|to_bool }} {{ '  yes'|to_bool }}",
        "False False False False False",
    ),
    (
        "{{ 'my text'|quote }} {{ 'simple'|quote }} {{ \"it's\"|quote }} {{ ''|quote }}",
        "'my text' simple 'it'\"'\"'s' ''",
    ),
    (
        "{{ 'abcd'|regex_match('^(.*)BC(.*)$', ignorecase=True) }} {{ 'abcd'|regex_match('x') }} "
        "{{ 'abcd'|regex_match('b') }} {{ 'abcd'|regex_match('a') }}",
        "('a', 'd') None None ('a',)",
    ),
    (
        "{{ 'abcd'|regex_search('b(c)') }} {{ 'abcd'|regex_search('bc') }} {{ 'abcd'|regex_search('x') }} "
        "{{ 'abcd'|regex_search('(?P<x>b)') }}",
        "('c',) ('bc',) None ('b',)",
    ),
    (
        "{{ 'lets replace spaces'|regex_replace('\\\\s+', '__') }} "
        "{{ 'ABC'|regex_replace('b', 'x', ignorecase=True) }} {{ 'abc'|regex_replace('(b)', '[\\\\1]') }}",
        "lets__replace__spaces AxC a[b]c",
    ),
    ("{{ 'https://example.com?foo=bar%20baz'|regex_escape }}", "https://example\\.com\\?foo=bar%20baz"),
    (
        "{{ '5'|to_num }} {{ '5.5'|to_num }} {{ 'x'|to_num }} {{ 7|to_num }} {{ '0x10'|to_num }} "
        "{{ '  5 '|to_num }} {{ '1e3'|to_num }} {{ '5'|str_to_num }}",
        "5 5.5 x 7 0x10 5 1000.0 5",
    ),
    ("{{ 'abc'|to_bytes }}", "b'abc'"),
    ("{{ 'fooBar'|to_snake_case }} {{ 'foo_bar'|to_camelcase }}", "foo_bar fooBar"),
    ("{{ 'a b'|contains_whitespace }} {{ 'ab'|substring_in_list(['xaby', 'z']) }}", "True True"),
    ("{{ '0x1f'|is_hex }} {{ 'zz'|is_hex }} {{ 'ff'|is_hex }}", "True False True"),
    ("{{ 'example'|uuid }}", "9ade8beb-355a-50d8-9011-1c99848a7719"),
    ("[{{ 'x'|skip }}]", "[]"),
    ("{{ 'a,b'|method_call('split', ',') }}", "['a', 'b']"),
    (
        "{{ '1K'|human_to_bytes }} {{ '1KB'|human_to_bytes }} {{ '2 MiB'|human_to_bytes }} {{ '10'|human_to_bytes }}",
        "1024 1024 2097152 10",
    ),
    ("{{ 'a'|check_whitelist_blacklist(whitelist=['a']) }}", "True"),
    # hashes and encodings
    ("{{ 'hello'|md5 }}", "5d41402abc4b2a76b9719d911017c592"),
    ("{{ 'hello'|sha1 }}", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"),
    ("{{ 'hello'|sha256 }}", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"),
    (
        "{{ 'hello'|sha512 }}",
        "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d9"
        "9ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043",
    ),
    ("{{ 'héllo'|md5 }}", "be50e8478cf24ff3595bc7307fb91b50"),
    (
        "{{ 'hello'|base64_encode }} {{ 'aGVsbG8='|base64_decode }} {{ 'héllo'|base64_encode }} "
        "{{ 'aMOpbGxv'|base64_decode }}",
        "aGVsbG8= hello aMOpbGxv héllo",
    ),
    ("{{ 'hello'|hmac('secret', 'x') }}", "False"),
    ("{{ (10|random_hash)|length }} {{ (5|random_str)|length }}", "32 5"),
    (
        "{{ 1500000000|strftime('%Y-%m-%d %H:%M') }} {{ 1500000000|strftime }} {{ 0|strftime('%Y') }} "
        "{{ '1500000000'|strftime('%H') }} {{ 1500000000.5|strftime('%S') }}",
        "2017-07-14 02:40 2017-07-14 1970 02 00",
    ),
    ("{{ 1500000000|date_format }} {{ 1500000000|date_format('%Y') }}", "2017-07-14 2017"),
    # lists and sets
    ("{{ [1]|is_list }} {{ 'a'|is_list }} {{ (1,2)|is_list }}", "True False False"),
    ("{{ [1]|is_iter }} {{ 'a'|is_iter }} {{ {}|is_iter }} {{ 5|is_iter }}", "True False True False"),
    (
        "{{ [1, 0, true, false]|exactly_n_true(2) }} {{ [1,1,1]|exactly_n_true(2) }} "
        "{{ [1, 0]|exactly_one_true }} {{ [1,1]|exactly_one_true }}",
        "True False True False",
    ),
    ("{{ [1,2,3,4]|avg }} {{ 5|avg }}", "2.5 5.0"),
    (
        "{{ [1,2,3,4]|union([2,4,6]) }} {{ [1,2,3,4]|intersect([2,4,6]) }} "
        "{{ [1,2,3,4]|difference([2,4,6]) }} {{ [1,2,3,4]|symmetric_difference([2,4,6]) }}",
        "[1, 2, 3, 4, 6] [2, 4] [1, 3] [1, 3, 6]",
    ),
    (
        "{{ [3,1,2]|min }} {{ [3,1,2]|max }} {{ ['b','A','c']|max }} {{ ['b','A','c']|min }} {{ 'abc'|max }}",
        "1 3 c A c",
    ),
    ("{{ [1,[2,[3,[4]]], []]|flatten }} {{ [1,[2,[3]]]|flatten(levels=1) }}", "[1, 2, 3, 4] [1, 2, [3]]"),
    (
        "{{ [1, none, 0, '', [none, []]]|flatten }} {{ [1, none, 0, '', [none, []]]|flatten(preserve_nulls=True) }}",
        "[1, 0, ''] [1, None, 0, '', None]",
    ),
    ("{{ ['b','A','c']|sorted_ignorecase }}", "['A', 'b', 'c']"),
    (
        "{{ [1,2,3]|combinations(2)|list }} {{ [1,2]|combinations_with_replacement(2)|list }}",
        "[(1, 2), (1, 3), (2, 3)] [(1, 1), (1, 2), (2, 2)]",
    ),
    ("{{ 'abc'|combinations(2)|list }}", "[('a', 'b'), ('a', 'c'), ('b', 'c')]"),
    ("{{ [1,2,3]|compare_lists([2,3,4]) }} {{ ['a']|compare_lists(['a']) }}", "{'new': [4], 'old': [1]} {}"),
    ("{{ {'a': {'x': 1}}|compare_dicts({'a': {'x': 2}}) }}", "{'a': {'old': {'x': 1}, 'new': {'x': 2}}}"),
    ("{{ {'a': 1, 'b': 2}|to_entries }}", "[{'key': 'a', 'value': 1}, {'key': 'b', 'value': 2}]"),
    ("{{ [{'key': 'a', 'value': 1}, {'name': 'b', 'value': 2}]|from_entries }}", "{'a': 1, 'b': 2}"),
    # nested data
    ("{{ {'a': {'b': [1, {'c': 'd'}]}}|traverse('a:b:1:c') }} {{ {'a': 1}|traverse('x:y', 'dflt') }}", "d dflt"),
    ("{{ {'a': {'b': 'c'}}|traverse('a/b', delimiter='/') }} {{ {'a':[1,2]}|traverse('a:5') }}", "c None"),
    ("{{ [{'a': 1}]|traverse('0:a') }} {{ {'a': {'b': 1}}|traverse('a:b:c', 'D') }}", "1 D"),
    ("{{ {'a': {'b': 1}}|set_dict_key_value('a:c', 2) }}", "{'a': {'b': 1, 'c': 2}}"),
    ("{{ {'a': {'l': [1]}}|append_dict_key_value('a:l', 2) }}", "{'a': {'l': [1, 2]}}"),
    ("{{ {'a': {'l': [1]}}|extend_dict_key_value('a:l', [2, 3]) }}", "{'a': {'l': [1, 2, 3]}}"),
    ("{{ {'a': {'d': {'x': 1}}}|update_dict_key_value('a:d', {'y': 2}) }}", "{'a': {'d': {'x': 1, 'y': 2}}}"),
    # paths and networks
    (
        "{{ '/etc'|path_join('salt', 'minion') }} {{ 'a'|path_join('/b') }} {{ 'a'|path_join('b', 'c') }} "
        "{{ '/a/'|path_join('/b/') }}",
        "/etc/salt/minion a/b a/b/c /a/b",
    ),
    ("{{ 'nonexistentzz'|which }}", "None"),
    (
        "{{ '1.2.3.4'|is_ip }} {{ 'x'|is_ip }} {{ '::1'|is_ip }} {{ '10.0.0.0/8'|is_ip }} {{ ' 1.2.3.4'|is_ip }}",
        "True False True True False",
    ),
    ("{{ '1.2.3.4'|is_ipv4 }} {{ '::1'|is_ipv4 }} {{ '::1'|is_ipv6 }}", "True False True"),
    (
        "{{ ['1.2.3.4', 'x', '::1', '10.0.0.0/8']|ipaddr }} {{ '1.2.3.4'|ipaddr }} {{ 'x'|ipaddr }}",
        "['1.2.3.4', '10.0.0.0/8', '::1'] 1.2.3.4 None",
    ),
    ("{{ ['::1', '1.2.3.4', 'fe80::1', '10.0.0.1']|ipaddr }}", "['1.2.3.4', '10.0.0.1', '::1', 'fe80::1']"),
    (
        "{{ ['1.2.3.4', 'x', '::1', '10.0.0.1/8']|ipv4 }} {{ '1.2.3.4'|ipv4 }} {{ ['1.2.3.4', 'x', '::1']|ipv6 }}",
        "['1.2.3.4', '10.0.0.1/8'] 1.2.3.4 ['::1']",
    ),
    (
        "{{ '10.0.0.1/8'|ipaddr }} {{ '::1'|ipwrap }} {{ '1.2.3.4'|ipwrap }} {{ '10.1.2.3/8'|ip_host }}",
        "10.0.0.1/8 [::1] 1.2.3.4 10.1.2.3/8",
    ),
    ("{{ '192.168.0.0/30'|network_hosts }} {{ '192.168.0.0/24'|network_size }}", "['192.168.0.1', '192.168.0.2'] 256"),
    # tests and Jinja's own filters left in place
    (
        "{{ 'abc' is match('a.c') }} {{ 'abc' is equalto('abc') }} {{ [1] is list }} {{ 'x' is list }}",
        "True True True False",
    ),
    ("{{ {'b':1,'a':2}|dictsort }}", "[('a', 2), ('b', 1)]"),
    ("{{ 'a\nb'|indent(2) }}", "a\n  b"),
]


@pytest.mark.parametrize("expr, expected", REFERENCE, ids=[e for e, _ in REFERENCE])
def test_filter_matches_reference(expr: str, expected: str) -> None:
    assert r(expr) == expected


def test_unhashable_free_set_results() -> None:
    # Strings are hashable: Salt returns sets (order unspecified).
    assert r("{{ ('abcab'|unique)|sort }}") == "['a', 'b', 'c']"
    assert r("{{ ('ab'|union('bc'))|sort }}") == "['a', 'b', 'c']"


def test_which_finds_sh() -> None:
    assert r("{{ 'sh'|which }}").endswith("/sh")


def test_load_yaml_keeps_salt_rules() -> None:
    # reference: timestamps stay strings, YAML 1.1 booleans, 0x hex ints
    out = r(
        '{% set y = "d: 2020-01-01\\nb: yes\\nx: 0x1F\\ne: 1e3" | load_yaml %}'
        "{% for k, v in y|dictsort %}{{ k }}={{ v }}:{{ v is string }} {% endfor %}"
    )
    assert out == "b=True:False d=2020-01-01:True e=1e3:True x=31:False "


def test_load_yaml_error_is_a_syntax_error() -> None:
    with pytest.raises(TemplateError) as info:
        r('{% set y = "a: 1\\na: 2" | load_yaml %}{{ y }}')
    assert str(info.value).startswith(
        "Jinja syntax error: Encountered error loading yaml: found conflicting ID 'a'\n---\n"
    )


def test_load_json_error() -> None:
    with pytest.raises(TemplateError, match="Unable to load json from {nope"):
        r("{{ '{nope'|load_json }}")


def test_yaml_encode_refuses_collections() -> None:
    with pytest.raises(TemplateError, match="yaml_encode\\(\\) only works with YAML scalar data"):
        r("{{ [1]|yaml_encode }}")


def test_unknown_filter_is_a_syntax_error() -> None:
    with pytest.raises(TemplateError, match="^Jinja syntax error: No filter named 'nosuch'."):
        r("{{ 1|nosuch }}")


# -- filters added for issue 10 (values from Salt 3007.17 on the same expressions) --------------

NEW = [
    (
        "{{ {'a': 'b', 'n': 1, 'l': ['x', 2, {'k': 'v'}]}|json_encode_dict }}",
        "{b'a': b'b', b'n': 1, b'l': [b'x', 2, {b'k': b'v'}]}",
    ),
    (
        "{{ {'a': 'b'}|json_decode_dict }} {{ ['a', 1, {'b': 'c'}]|json_encode_list }}",
        "{b'a': b'b'} [b'a', 1, {b'b': b'c'}]",
    ),
    ("{{ ['a', 1]|json_decode_list }}", "[b'a', 1]"),
    (
        (
            "{{ '+----+------+\\n| id | name |\\n+----+------+\\n|  1 | foo  |\\n|  2 | bar  |\\n+----+------+'"
            ".splitlines()|mysql_to_dict('id') }}"
        ),
        "{1: {'id': 1, 'name': 'foo'}, 2: {'id': 2, 'name': 'bar'}}",
    ),
    (
        "{{ 1040814000|strftime }} {{ 'AC:DE:48'|gen_mac|length }} {{ '52:54:00'|gen_mac|truncate(8, True, '') }}",
        "2002-12-25 17 52:54:00",
    ),
    ("{{ 'root'|get_uid }} {{ 'nosuchuser-briny'|get_uid }}", "0 None"),
]


@pytest.mark.parametrize("expr, expected", NEW, ids=[e for e, _ in NEW])
def test_new_filters_match_the_reference(expr: str, expected: str) -> None:
    assert r(expr) == expected


def test_strftime_of_nothing_is_now() -> None:
    import datetime

    before = datetime.datetime.now().strftime("%Y-%m-%d")
    assert r("{{ None|strftime }}") in (before, datetime.datetime.now().strftime("%Y-%m-%d"))


def test_the_file_filters_read_this_host(tmp_path: Path) -> None:
    (tmp_path / "text.txt").write_text("hello\n")
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "y.txt").write_text("x\n")
    t = str(tmp_path)
    out = r(
        f"{{{{ '{t}/bin.dat'|is_bin_file }}}} {{{{ '{t}/text.txt'|is_bin_file }}}} {{{{ '{t}/nope'|is_bin_file }}}} "
        f"{{{{ '{t}/empty.txt'|is_empty }}}} {{{{ '{t}/text.txt'|is_empty }}}} {{{{ '{t}/nope'|is_empty }}}} "
        f"{{{{ '{t}/text.txt'|is_text_file }}}} {{{{ '{t}/bin.dat'|is_text_file }}}} {{{{ '{t}/nope'|is_text_file }}}}"
    )
    assert out == "True False False True False False True False False"  # as Salt 3007 answers
    listed = [f"{t}", f"{t}/bin.dat", f"{t}/empty.txt", f"{t}/sub", f"{t}/sub/y.txt", f"{t}/text.txt"]
    assert r(f"{{{{ '{t}'|list_files }}}}") == str(listed)  # Salt's order varies; briny sorts
    assert r(f"{{{{ '{t}/text.txt'|list_files }}}}") == str([f"{t}/text.txt"])
    assert (
        r(f"{{{{ '{t}/text.txt'|file_hashsum }}}}")
        == "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
    )
    assert r(f"{{{{ '{t}/text.txt'|file_hashsum('md5') }}}}") == "b1946ac92492d2347c6235b4d2611184"
    with pytest.raises(TemplateError, match=f"^Jinja error: \\[Errno 2\\] No such file or directory: '{t}/nope'"):
        r(f"{{{{ '{t}/nope'|file_hashsum }}}}")
    with pytest.raises(TemplateError, match="^Jinja error: Invalid hash type: nohash"):
        r(f"{{{{ '{t}/text.txt'|file_hashsum('nohash') }}}}")


def test_http_query_answers_as_salt_with_no_server_and_with_one(tmp_path: Path) -> None:
    import http.server
    import socket
    import threading

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    assert r(f"{{{{ 'http://127.0.0.1:{closed}/x'|http_query }}}}") == "{'error': '[Errno 111] Connection refused'}"
    assert r(f"{{{{ 'http://127.0.0.1:{closed}/x'|http_query(status=True) }}}}") == (
        "{'status': 0, 'error': '[Errno 111] Connection refused'}"
    )
    (tmp_path / "d.json").write_text('{"k": "v"}\n')

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(tmp_path), **k)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    worker = threading.Thread(target=server.serve_forever, daemon=True)
    worker.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert r(f"{{{{ '{url}/d.json'|http_query }}}}") == "{'body': '{\"k\": \"v\"}\\n'}"
        got = r(f"{{{{ ('{url}/d.json'|http_query(status=True, decode=True, decode_type='json')).dict.k }}}}")
        assert got == "v"
        assert r(f"{{{{ ('{url}/missing'|http_query).status }}}} {{{{ ('{url}/missing'|http_query).error }}}}") == (
            "404 HTTP 404: File not found"
        )
    finally:
        server.shutdown()
        server.server_close()
        worker.join(timeout=10)


@pytest.mark.parametrize("url", ["file:///etc/hostname", "ftp://127.0.0.1:1/x", "/etc/hostname"])
def test_http_query_reads_http_only(url: str) -> None:
    """As Salt's: a local file or another scheme is refused, never read."""
    with pytest.raises(TemplateError, match=f"Unsupported url scheme: {url}"):
        r(f"{{{{ '{url}'|http_query }}}}")


@pytest.mark.parametrize(
    "expr",
    [
        "'/etc/hostname'|is_bin_file",
        "'/etc'|list_files",
        "'/etc/passwd'|file_hashsum",
        "'root'|get_uid",
        "'/etc/hostname'|is_empty",
        "'/etc/hostname'|is_text_file",
        "'http://127.0.0.1:1/'|http_query",
    ],
)
def test_host_reading_filters_are_refused_on_the_master(expr: str) -> None:
    from briny.common.state.hostview import HostBoundary

    boundary = HostBoundary("web1", "the states", lambda key: False, "")
    client = LocalFileClient({"base": ["/nonexistent"]})
    with pytest.raises(TemplateError, match="needs the minion's host"):
        render_jinja("{{ " + expr + " }}", {"opts": {}}, client=client, saltenv="base", boundary=boundary)
    name = expr.split("|")[1].split("(")[0]
    assert boundary.needs == [f"the '{name}' filter"]
