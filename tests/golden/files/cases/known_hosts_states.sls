{#- ssh_known_hosts with a config file in the sandbox and no user, names not
    hashed (hashed names are random): add by key, a key already there (by key
    and by fingerprint), a new key type for a known host, a removal (ssh-keygen
    keeps known_hosts.old), a host already absent, a host that offers no keys,
    the argument checks Salt makes live. #}
{%- do salt['file.write']('@SANDBOX@/known_hosts', "# my hosts\nold.example ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDc59cyM8uEBSsyB+CcNAFEzxQK10TFaX6DXZlY3P1yIS0MQgjpKm9NqSCnVwq/mN454e5yXPJydA+ING6805LK3Xx8c4BMYtFGwxCcGoCW8d5STSDJ28dQPHLmXDw7D5yfE4GF1ebb4IqbNwgTcdxP/afOzxS0W6iHO84bTB/w8Q==\nstay.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs\nupd.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs") %}
add_key:
  ssh_known_hosts.present:
    - name: new.example
    - key: AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs
    - enc: ssh-ed25519
    - hash_known_hosts: False
    - config: @SANDBOX@/known_hosts
exists:
  ssh_known_hosts.present:
    - name: stay.example
    - key: AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs
    - enc: ssh-ed25519
    - hash_known_hosts: False
    - config: @SANDBOX@/known_hosts
fp_exists:
  ssh_known_hosts.present:
    - name: stay.example
    - fingerprint: b0:11:1b:30:5c:cb:f8:57:7d:f4:15:4e:72:38:62:46:a0:98:af:77:78:36:42:41:20:7d:30:98:00:de:dd:93
    - config: @SANDBOX@/known_hosts
new_type:
  ssh_known_hosts.present:
    - name: upd.example
    - key: AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBJhhq8AqadHKGe7rqVyZK0p5Rc0XfQV5/bUK73wv2g6CVmGEq7S5O8N0XpyEmg3R+c9kyMPyjjyUepHouJuNSGA=
    - enc: ecdsa-sha2-nistp256
    - hash_known_hosts: False
    - config: @SANDBOX@/known_hosts
on_port:
  ssh_known_hosts.present:
    - name: ported.example
    - port: 2222
    - key: AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs
    - enc: ssh-ed25519
    - hash_known_hosts: False
    - config: @SANDBOX@/known_hosts
gone:
  ssh_known_hosts.absent:
    - name: old.example
    - config: @SANDBOX@/known_hosts
gone_already:
  ssh_known_hosts.absent:
    - name: nothere.example
    - config: @SANDBOX@/known_hosts
no_server:
  ssh_known_hosts.present:
    - name: 127.0.0.1
    - port: 1
    - hash_known_hosts: False
    - timeout: 1
    - config: @SANDBOX@/known_hosts
relative:
  ssh_known_hosts.present:
    - name: rel.example
    - key: AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs
    - enc: ssh-ed25519
    - config: relative/known_hosts
relative_absent:
  ssh_known_hosts.absent:
    - name: rel.example
    - config: relative/known_hosts
