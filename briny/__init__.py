"""briny: run Salt state trees unchanged.

The code lives in the top-level folders of the repository, installed as
sub-packages of this one:

- ``briny.common``  (common/)  config, wire, loader, renderers, compiler, engine
- ``briny.states``  (states/)  state modules, reached through ``__salt__``
- ``briny.minion``  (minion/)  minion daemon, grains, briny-call, execution modules
- ``briny.master``  (master/)  master daemon, file server, pillar, job cache, CLIs
"""

__version__ = "0.1.0"
# What ``saltversioninfo`` and ``test.version`` report: the Salt release whose
# behaviour briny follows.
SALT_COMPAT_VERSION = "3007.17"
SALT_COMPAT_VERSIONINFO = [3007, 17]
