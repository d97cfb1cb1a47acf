# ssh_auth for a user that does not exist (yet: an earlier state could create it),
# and with a salt:// source that is missing. Nothing is written: the user has no home.
present_nouser:
  ssh_auth.present:
    - name: AAAAB3NzaC1yc2EAAAADAQABAAABAQC7
    - user: briny-golden-nosuch-user
absent_nouser:
  ssh_auth.absent:
    - name: AAAAB3NzaC1yc2EAAAADAQABAAABAQC7
    - user: briny-golden-nosuch-user
present_nosource:
  ssh_auth.present:
    - user: briny-golden-nosuch-user
    - source: salt://files/missing.pub
absent_nosource:
  ssh_auth.absent:
    - name: x
    - user: briny-golden-nosuch-user
    - source: salt://files/missing.pub
present_source_nouser:
  ssh_auth.present:
    - user: briny-golden-nosuch-user
    - source: salt://files/k.pub
absent_source_nouser:
  ssh_auth.absent:
    - name: y
    - user: briny-golden-nosuch-user
    - source: salt://files/k.pub
