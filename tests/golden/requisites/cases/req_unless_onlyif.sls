marker:
  file.managed:
    - name: @SANDBOX@/marker
    - contents: entry1

unless-both-true:
  cmd.run:
    - name: echo not shown
    - unless:
      - "true"
      - test -e @SANDBOX@/marker

unless-one-false:
  cmd.run:
    - name: echo unless one false
    - unless:
      - "true"
      - "false"

onlyif-true:
  cmd.run:
    - name: echo onlyif true
    - onlyif: "true"

onlyif-one-false:
  cmd.run:
    - name: echo not shown
    - onlyif:
      - "true"
      - "false"

onlyif-fun-grain:
  test.succeed_with_changes:
    - onlyif:
      - fun: match.glob
        tgt: 'gold*'

unless-fun-exists:
  test.succeed_with_changes:
    - unless:
      - fun: file.file_exists
        path: @SANDBOX@/marker

onlyif-fun-args:
  file.touch:
    - name: @SANDBOX@/touched
    - onlyif:
      - fun: test.echo
        args:
          - a truthy string

onlyif-fun-args-false:
  file.touch:
    - name: @SANDBOX@/not-touched
    - onlyif:
      - fun: match.glob
        args:
          - 'other*'

deploy_app:
  cmd.run:
    - names:
      - echo first_deploy_cmd
      - echo second_deploy_cmd
    - unless: "false"
