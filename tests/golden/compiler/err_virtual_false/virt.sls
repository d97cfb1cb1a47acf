declined-with-reason:
  sambadb.managed:
    - name: alice
declined-plain:
  plainno.managed:
    - name: bob
missing-module:
  nosuchmod.managed:
    - name: carol
fine:
  okmod.managed:
    - name: dave
missing-function:
  okmod.absent:
    - name: erin
import-failed:
  broken.managed:
    - name: frank
declined-by-virtualname:
  vn.managed:
    - name: grace
declined-by-file-name:
  vfile.managed:
    - name: heidi
