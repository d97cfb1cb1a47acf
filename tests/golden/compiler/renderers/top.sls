base:
  '*':
    - plainyaml
    - jsonfile
    - pyfile
    - explicit
    - imports
