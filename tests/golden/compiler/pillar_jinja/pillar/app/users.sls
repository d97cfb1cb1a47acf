app:
  users:
    zed:
      shell: /bin/zsh
    amy: {}
