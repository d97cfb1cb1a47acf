{#- mount.swap on a small swap file in the sandbox, recorded in the sandbox
    fstab; the file is made by the run and turned off and removed at its end. #}
{%- do salt['file.write']('@SANDBOX@/fstab', "# fstab") %}
make_swap:
  cmd.run:
    - name: dd if=/dev/zero of=@SANDBOX@/swapfile bs=1k count=64 status=none && chmod 600 @SANDBOX@/swapfile && mkswap -U clear @SANDBOX@/swapfile
swap_on:
  mount.swap:
    - name: @SANDBOX@/swapfile
    - config: @SANDBOX@/fstab
swap_again:
  mount.swap:
    - name: @SANDBOX@/swapfile
    - config: @SANDBOX@/fstab
swap_not_persisted:
  mount.swap:
    - name: @SANDBOX@/swapfile
    - persist: False
swap_off:
  cmd.run:
    - name: swapoff @SANDBOX@/swapfile && rm @SANDBOX@/swapfile
