{#- gem states on this sandbox's gems only: gem_bin is a wrapper (lib/mkgem.sh) that
    runs the host's gem with the sandbox's GEM_HOME and gemrc (install --local from
    gems/pkgs); nothing reaches the network or the host's gems. -#}
{%- set sb = '@SANDBOX@' %}
{%- do salt['cmd.run']('/bin/sh ' ~ salt['cp.cache_file']('salt://lib/mkgem.sh') ~ ' ' ~ sb) %}
{%- set gem = sb ~ '/gems/bin/gem' %}
{%- set repo = 'file://' ~ sb ~ '/gems/repo/' %}
err_missing_gem:
  gem.installed:
    - name: brinynothing
    - gem_bin: {{ gem }}
err_missing_gem_file:
  gem.installed:
    - name: {{ sb }}/gems/pkgs/brinynothing-1.0.gem
    - gem_bin: {{ gem }}
err_broken_gem_bin:
  gem.installed:
    - name: brinytoy
    - gem_bin: {{ sb }}/gems/bin/broken-gem
err_no_gem_bin:
  gem.removed:
    - name: brinytoy
    - gem_bin: {{ sb }}/gems/bin/nosuchgem
