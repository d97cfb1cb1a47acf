{#- Where briny deliberately differs from Salt 3007 (states/mount.py): options
    are compared one by one, so a remount names the options that changed
    (Salt names the mount's size, or the last option it looked at); a missing
    fstab fails the state with Salt's intended words (Salt: a traceback). #}
{%- do salt['file.write']('@SANDBOX@/fstab', "# fstab") %}
mount_it:
  mount.mounted:
    - name: @SANDBOX@/mnt
    - device: tmpfs
    - fstype: tmpfs
    - opts: size=1m,mode=755
    - mkmnt: True
    - config: @SANDBOX@/fstab
remount:
  mount.mounted:
    - name: @SANDBOX@/mnt
    - device: tmpfs
    - fstype: tmpfs
    - opts: size=2m,mode=700,noexec
    - config: @SANDBOX@/fstab
unmount_it:
  mount.unmounted:
    - name: @SANDBOX@/mnt
    - persist: True
    - config: @SANDBOX@/fstab
bad_config:
  mount.fstab_present:
    - name: /dev/sdz1
    - fs_file: /x
    - fs_vfstype: ext4
    - mount: False
    - config: @SANDBOX@/nofstab
unmounted_bad:
  mount.mounted:
    - name: @SANDBOX@/nomnt
    - device: tmpfs
    - fstype: tmpfs
    - mount: False
    - mkmnt: True
    - config: @SANDBOX@/nofstab
