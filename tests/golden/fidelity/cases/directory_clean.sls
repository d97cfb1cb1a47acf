# file.directory clean: what it lists and in which order (in each folder its files, then its
# folders: the walk's order, not sorted; one entry per level so the order is the same on any file
# system). The folder is the state tree's own copy of files/cleanme (each run has a fresh one).
cleaned:
  file.directory:
    - name: @SANDBOX@/../srv/files/cleanme
    - clean: True
