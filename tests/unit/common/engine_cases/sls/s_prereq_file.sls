down:
  cmd.run:
    - name: echo down >> @SANDBOX@/log
    - prereq:
      - cmd: deploy
deploy:
  cmd.run:
    - name: echo deploy >> @SANDBOX@/log
    - creates: @SANDBOX@/deployed
