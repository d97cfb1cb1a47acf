{#- Where briny deliberately differs from Salt 3007 (states/mount.py): options
    are compared one by one, so a remount names the options that changed
    (Salt names the mount's size, or the last option it looked at). #}
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
