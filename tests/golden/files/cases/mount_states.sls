{#- mount.mounted / unmounted on tmpfs in the sandbox, fstab in the sandbox
    (its other lines kept): mount with mkmnt, mounted again, persist only
    (mount: False) on a folder and on a missing one, a missing folder without
    mkmnt, unmount with the entry purged, unmount of what is not mounted.
    Everything mounted is unmounted again before the run ends. #}
{%- do salt['file.write']('@SANDBOX@/fstab', "# static fstab\nproc /proc proc defaults 0 0\n\n/dev/sda1\t/\text4\terrors=remount-ro 0 1\nnot an entry") %}
{%- do salt['file.mkdir']('@SANDBOX@/exists') %}
mount_it:
  mount.mounted:
    - name: @SANDBOX@/mnt/
    - device: tmpfs
    - fstype: tmpfs
    - opts: size=1m,mode=755
    - mkmnt: True
    - dump: 1
    - config: @SANDBOX@/fstab
again:
  mount.mounted:
    - name: @SANDBOX@/mnt
    - device: tmpfs
    - fstype: tmpfs
    - opts:
      - size=1m
      - mode=755
    - dump: 1
    - config: @SANDBOX@/fstab
persist_only:
  mount.mounted:
    - name: @SANDBOX@/exists
    - device: /dev/brinynosuchdevice
    - fstype: ext4
    - opts: noatime,nofail
    - pass_num: 2
    - mount: False
    - config: @SANDBOX@/fstab
persist_only_mkmnt:
  mount.mounted:
    - name: @SANDBOX@/made
    - device: tmpfs
    - fstype: tmpfs
    - mount: False
    - mkmnt: True
    - persist: False
missing_dir:
  mount.mounted:
    - name: @SANDBOX@/nodir
    - device: tmpfs
    - fstype: tmpfs
    - config: @SANDBOX@/fstab
unmount_it:
  mount.unmounted:
    - name: @SANDBOX@/mnt
    - persist: True
    - config: @SANDBOX@/fstab
unmount_again:
  mount.unmounted:
    - name: @SANDBOX@/mnt
    - persist: True
    - config: @SANDBOX@/fstab
unmount_other_device:
  mount.unmounted:
    - name: @SANDBOX@/exists
    - device: /dev/other
    - persist: True
    - config: @SANDBOX@/fstab
