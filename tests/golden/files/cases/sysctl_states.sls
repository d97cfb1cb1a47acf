{#- sysctl.present with config in the sandbox, on kernel defaults only (the
    golden test skips when this host differs): a key the config lacks, one it
    has, a read-only key, one that does not exist (a new file in a new
    folder), a value with white space. #}
{%- do salt['file.write']('@SANDBOX@/sysctl.conf', "# comment\nkernel.msgmnb = 16384\n  # indented = x\nvm.other=1\n") %}
same:
  sysctl.present:
    - name: kernel.msgmax
    - value: 8192
    - config: @SANDBOX@/sysctl.conf
already:
  sysctl.present:
    - name: kernel.msgmnb
    - value: 16384
    - config: @SANDBOX@/sysctl.conf
readonly:
  sysctl.present:
    - name: kernel.osrelease
    - value: 1.2.3
    - config: @SANDBOX@/sysctl.conf
nosuch:
  sysctl.present:
    - name: kernel.brinynosuch
    - value: 1
    - config: @SANDBOX@/sysctl.d/new.conf
multi:
  sysctl.present:
    - name: net.ipv4.ping_group_range
    - value: 1 0
    - config: @SANDBOX@/sysctl.conf
