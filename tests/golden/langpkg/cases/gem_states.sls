{#- gem states on this sandbox's gems only: gem_bin is a wrapper (lib/mkgem.sh) that
    runs the host's gem with the sandbox's GEM_HOME and gemrc (install --local from
    gems/pkgs); nothing reaches the network or the host's gems. -#}
{%- set sb = '@SANDBOX@' %}
{%- do salt['cmd.run']('/bin/sh ' ~ salt['cp.cache_file']('salt://lib/mkgem.sh') ~ ' ' ~ sb) %}
{%- set gem = sb ~ '/gems/bin/gem' %}
{%- set repo = 'file://' ~ sb ~ '/gems/repo/' %}
install_one:
  gem.installed:
    - name: brinytoy
    - version: '1.0'
    - gem_bin: {{ gem }}
already:
  gem.installed:
    - name: brinytoy
    - gem_bin: {{ gem }}
    - require:
      - gem: install_one
meets_requirement:
  gem.installed:
    - name: brinytoy
    - version: '>=1.0'
    - gem_bin: {{ gem }}
    - require:
      - gem: already
second_version:
  gem.installed:
    - name: brinytoy
    - version: '2.0'
    - gem_bin: {{ gem }}
    - require:
      - gem: meets_requirement
same_version_again:
  gem.installed:
    - name: brinytoy
    - version: '1.0'
    - gem_bin: {{ gem }}
    - require:
      - gem: second_version
pre_release:
  gem.installed:
    - name: brinytoy
    - version: '3.0.pre1'
    - pre_releases: True
    - gem_bin: {{ gem }}
    - require:
      - gem: same_version_again
with_docs_proxy_source:
  gem.installed:
    - name: brinyother
    - rdoc: True
    - ri: True
    - proxy: http://127.0.0.1:9
    - source: {{ repo }}
    - gem_bin: {{ gem }}
unknown_ruby:
  gem.installed:
    - name: brinyother
    - ruby: nosuchruby-9.9
    - gem_bin: {{ gem }}
    - require:
      - gem: with_docs_proxy_source
remove_old:
  gem.removed:
    - name: brinyold
    - gem_bin: {{ gem }}
    - require:
      - gem: unknown_ruby
remove_absent:
  gem.removed:
    - name: brinynothing
    - gem_bin: {{ gem }}
