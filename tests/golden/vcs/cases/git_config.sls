{%- import 'lib/remote.jinja' as r with context %}
{%- set repo = '@SANDBOX@/cfg' %}
{%- do salt['cmd.run']('set -e; export ' ~ r.git_env() ~ '; if [ ! -d ' ~ repo ~ ' ]; then git init -q ' ~ repo ~ '; cd ' ~ repo ~ '; '
  ~ 'git config preset.key x; git config preset.change old; git config --add multi.val a; git config --add multi.val b; '
  ~ 'git config --add multi.val2 x1; git config --add multi.val2 y1; git config --add multi.val2 x2; git config --add multi.keep k1; git config --add multi.keep k2; fi', python_shell=True) %}
set_new:
  git.config_set:
    - name: user.name
    - value: Jane Doe
    - repo: {{ repo }}
set_same:
  git.config_set:
    - name: preset.key
    - value: x
    - repo: {{ repo }}
set_change:
  git.config_set:
    - name: preset.change
    - value: 42
    - repo: {{ repo }}
set_multi:
  git.config_set:
    - name: multi.new
    - multivar:
      - one
      - 2
    - repo: {{ repo }}
set_multi_same:
  git.config_set:
    - name: multi.val
    - multivar: a,b
    - repo: {{ repo }}
unset_multi_noall:
  git.config_unset:
    - name: multi.keep
    - repo: {{ repo }}
unset_value_regex:
  git.config_unset:
    - name: multi.val2
    - value_regex: '^x'
    - all: True
    - repo: {{ repo }}
unset_value_regex_noall:
  git.config_unset:
    - name: multi.keep
    - value_regex: 'k'
    - repo: {{ repo }}
unset_absent:
  git.config_unset:
    - name: nothing.here
    - repo: {{ repo }}
err_no_repo:
  git.config_set:
    - name: a.b
    - value: c
err_both:
  git.config_set:
    - name: a.b
    - value: c
    - multivar: [d]
    - repo: {{ repo }}
err_kwarg:
  git.config_set:
    - name: a.b
    - value: c
    - bogus: 1
    - repo: {{ repo }}
err_unset_no_repo:
  git.config_unset:
    - name: a.b
err_not_a_repo:
  git.config_set:
    - name: a.b
    - value: c
    - repo: @SANDBOX@
