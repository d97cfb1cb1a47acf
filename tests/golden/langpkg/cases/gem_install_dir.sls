{#- gem states on this sandbox's gems only: gem_bin is a wrapper (lib/mkgem.sh) that
    runs the host's gem with the sandbox's GEM_HOME and gemrc (install --local from
    gems/pkgs); nothing reaches the network or the host's gems. -#}
{%- set sb = '@SANDBOX@' %}
{%- do salt['cmd.run']('/bin/sh ' ~ salt['cp.cache_file']('salt://lib/mkgem.sh') ~ ' ' ~ sb) %}
{%- set gem = sb ~ '/gems/bin/gem' %}
{%- set repo = 'file://' ~ sb ~ '/gems/repo/' %}
err_install_dir:
  gem.installed:
    - name: brinyother
    - install_dir: {{ sb }}/gems/elsewhere
    - gem_bin: {{ gem }}
