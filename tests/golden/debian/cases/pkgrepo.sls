# pkgrepo.managed / absent on throwaway files /etc/apt/sources.list.d/brinygolden*.list
# and keys /etc/apt/keyrings/brinygolden*; the last state removes them. Recorded
# and replayed with APT_CONFIG pointing apt-get and apt-key at an empty sandbox
# (tests/golden/debian/README.md), so refreshes touch no network and no keyring.
{% set repo = 'file:/nonexistent/brinygolden' %}
{% set list = '/etc/apt/sources.list.d/brinygolden.list' %}
existing:
  file.managed:
    - name: {{ list }}
    - contents: |
        # a comment that stays
        deb http://example.invalid/other brinygolden main

added:
  pkgrepo.managed:
    - name: deb {{ repo }} brinygolden main
    - file: {{ list }}
    - refresh: False
added_again:
  pkgrepo.managed:
    - name: deb {{ repo }} brinygolden main
    - file: {{ list }}
    - refresh: False
more_comps:
  pkgrepo.managed:
    - name: deb {{ repo }} brinygolden main
    - comps: main,contrib
    - file: {{ list }}
    - refresh: False
more_comps_again:
  pkgrepo.managed:
    - name: deb {{ repo }} brinygolden main
    - comps: main,contrib
    - file: {{ list }}
    - refresh: False
one_arch:
  pkgrepo.managed:
    - name: deb {{ repo }} brinygolden main
    - comps: main,contrib
    - architectures: amd64
    - file: {{ list }}
    - refresh: False
one_arch_in_the_name:
  pkgrepo.managed:
    - name: deb [arch=amd64] {{ repo }} brinygolden main contrib
    - file: {{ list }}
    - refresh: False
disabled:
  pkgrepo.managed:
    - name: deb [arch=amd64] {{ repo }} brinygolden main contrib
    - comps: main,contrib  # Salt orders components as a set without it
    - file: {{ list }}
    - disabled: True
    - refresh: False
not_enabled:
  pkgrepo.managed:
    - name: deb [arch=amd64] {{ repo }} brinygolden main contrib
    - comps: main,contrib  # Salt orders components as a set without it
    - file: {{ list }}
    - enabled: False
    - refresh: False
with_comments:
  pkgrepo.managed:
    - name: deb [arch=amd64] {{ repo }} brinygolden main contrib
    - comps: main,contrib  # Salt orders components as a set without it
    - file: {{ list }}
    - comments:
      - managed by
      - the golden case
    - refresh: False
with_comments_again:
  pkgrepo.managed:
    - name: deb [arch=amd64] {{ repo }} brinygolden main contrib
    - comps: main,contrib  # Salt orders components as a set without it
    - file: {{ list }}
    - comments:
      - managed by
      - the golden case
    - refresh: False
show_list:
  cmd.run:
    - name: cat {{ list }}
absent_other_arch:
  pkgrepo.absent:
    - name: deb [arch=i386] {{ repo }} brinygolden main contrib
absent_unknown:
  pkgrepo.absent:
    - name: deb http://example.invalid/nowhere brinygolden main
absent_one_comp:
  pkgrepo.absent:
    - name: deb [arch=amd64] {{ repo }} brinygolden main
show_list_again:
  cmd.run:
    - name: cat {{ list }}
clean_file:
  pkgrepo.managed:
    - name: deb {{ repo }} brinygolden main
    - file: {{ list }}
    - clean_file: True
    - refresh: False
clean_file_again:
  pkgrepo.managed:
    - name: deb {{ repo }} brinygolden main
    - file: {{ list }}
    - clean_file: True
    - refresh: False
show_cleaned:
  cmd.run:
    - name: cat {{ list }}
signed:
  pkgrepo.managed:
    - name: deb [signed-by=/etc/apt/keyrings/brinygolden.gpg] {{ repo }} signed main
    - file: /etc/apt/sources.list.d/brinygolden-signed.list
    - key_url: salt://files/brinygolden.asc
    - aptkey: False
signed_again:
  pkgrepo.managed:
    - name: deb [signed-by=/etc/apt/keyrings/brinygolden.gpg] {{ repo }} signed main
    - file: /etc/apt/sources.list.d/brinygolden-signed.list
    - key_url: salt://files/brinygolden.asc
    - aptkey: False
show_key:
  cmd.run:
    - name: stat -c '%n %a' /etc/apt/keyrings/brinygolden.gpg && file -b /etc/apt/keyrings/brinygolden.gpg | cut -d, -f1
signed_gone_with_key:
  pkgrepo.absent:
    - name: deb [signed-by=/etc/apt/keyrings/brinygolden.gpg] {{ repo }} signed main
    - keyid: 872FA09EAC20A6C8
    - aptkey: False
key_gone:
  cmd.run:
    - name: test ! -e /etc/apt/keyrings/brinygolden.gpg
not_an_entry:
  pkgrepo.managed:
    - name: deb
    - refresh: False
no_dist:
  pkgrepo.managed:
    - name: deb http://example.invalid/x
    - refresh: False
not_a_type:
  pkgrepo.managed:
    - name: foo bar baz qux
    - refresh: False
unclosed_options:
  pkgrepo.managed:
    - name: deb [arch=amd64 http://example.invalid/x brinygolden main
    - refresh: False
enabled_and_disabled:
  pkgrepo.managed:
    - name: deb http://example.invalid/x brinygolden main
    - enabled: True
    - disabled: False
repo_argument:
  pkgrepo.managed:
    - name: deb http://example.invalid/x brinygolden main
    - repo: deb http://example.invalid/x brinygolden main
no_signed_by_without_apt_key:
  pkgrepo.managed:
    - name: deb http://example.invalid/y brinygolden main
    - aptkey: False
    - refresh: False
keyserver_unreachable:
  pkgrepo.managed:
    - name: deb [signed-by=/etc/apt/keyrings/brinygolden-ks.gpg] http://example.invalid/z brinygolden main
    - keyid: 0123456789ABCDEF
    - keyserver: hkp://127.0.0.1:1
    - aptkey: False
    - refresh: False
ppa_on_debian:
  pkgrepo.managed:
    - ppa: brinygolden/nothing
    - refresh: False
gone:
  pkgrepo.absent:
    - name: deb {{ repo }} brinygolden main
gone_again:
  pkgrepo.absent:
    - name: deb {{ repo }} brinygolden main
cleanup:
  cmd.run:
    - name: rm -f /etc/apt/sources.list.d/brinygolden*.list /etc/apt/keyrings/brinygolden*
