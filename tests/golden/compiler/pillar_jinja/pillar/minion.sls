minion_only: yes-{{ opts['id'] }}
app:
  ports:
    https: 8443
