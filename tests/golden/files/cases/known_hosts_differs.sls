{#- Where briny deliberately differs from Salt 3007 (states/ssh_known_hosts.py):
    the argument checks hold live (Salt writes a line of type None), the port
    check holds in test mode, a key that is no key is refused. #}
{%- do salt['file.write']('@SANDBOX@/known_hosts', "stay.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs") %}
both:
  ssh_known_hosts.present:
    - name: both.example
    - key: AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs
    - fingerprint: aa:bb
    - config: @SANDBOX@/known_hosts
noenc:
  ssh_known_hosts.present:
    - name: noenc.example
    - key: AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs
    - config: @SANDBOX@/known_hosts
port_hash:
  ssh_known_hosts.present:
    - name: 127.0.0.1
    - port: 2222
    - config: @SANDBOX@/known_hosts
not_a_key:
  ssh_known_hosts.present:
    - name: bad.example
    - key: this-is-not-a-key
    - enc: ssh-ed25519
    - hash_known_hosts: False
    - config: @SANDBOX@/known_hosts
