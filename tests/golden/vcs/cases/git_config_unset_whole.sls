{#- Salt 3007 unsets these keys, then fails with a KeyError traceback (its
    config_unset indexes the keys left by the key just removed); briny reports
    the change (a deliberate difference, see states/git.py). -#}
{%- import 'lib/remote.jinja' as r with context %}
{%- set repo = '@SANDBOX@/cfg' %}
{%- do salt['cmd.run']('set -e; export ' ~ r.git_env() ~ '; if [ ! -d ' ~ repo ~ ' ]; then git init -q ' ~ repo ~ '; cd ' ~ repo ~ '; '
  ~ 'git config color.ui auto; git config color.diff always; git config push.default simple; fi', python_shell=True) %}
unset_whole:
  git.config_unset:
    - name: push.default
    - repo: {{ repo }}
unset_regex_all:
  git.config_unset:
    - name: 'color\..+'
    - all: True
    - repo: {{ repo }}
