{#- mount.fstab_present / fstab_absent on an fstab in the sandbox: a new entry,
    the same, a changed one, removed, removed again. #}
{%- do salt['file.write']('@SANDBOX@/fstab', "# fstab\n/dev/sdz1 /old ext4 defaults 0 0") %}
present_new:
  mount.fstab_present:
    - name: /dev/sdz9
    - fs_file: /data/
    - fs_vfstype: xfs
    - fs_mntops: noatime
    - mount: False
    - config: @SANDBOX@/fstab
present_same:
  mount.fstab_present:
    - name: /dev/sdz1
    - fs_file: /old
    - fs_vfstype: ext4
    - config: @SANDBOX@/fstab
present_change:
  mount.fstab_present:
    - name: /dev/sdz1
    - fs_file: /old
    - fs_vfstype: ext4
    - fs_mntops: ro
    - config: @SANDBOX@/fstab
absent_it:
  mount.fstab_absent:
    - name: /dev/sdz1
    - fs_file: /old
    - config: @SANDBOX@/fstab
absent_again:
  mount.fstab_absent:
    - name: /dev/sdz1
    - fs_file: /old
    - config: @SANDBOX@/fstab
