"""``briny-api``: Salt's REST API (``salt-api`` with ``rest_cherrypy``) for a briny master.

Runs on the master host, in its own process (:mod:`briny.master.api.daemon`), as the master's
user. It reaches the master only through what the CLIs use: the operator IPC
(:class:`briny.master.clientapi.MasterClient`), the master event bus
(:class:`briny.common.event.EventListener`), the runners (:mod:`briny.master.runners`) and the
wheel (:mod:`briny.master.wheel`). Modules: :mod:`.settings` (the ``rest_cherrypy`` keys),
:mod:`.eauth` (``external_auth`` back ends: ``pam``, ``file``), :mod:`.acl` (what a user may
run), :mod:`.tokens` (the token store), :mod:`.lowstate` (the ``local`` / ``runner`` / ``wheel``
clients), :mod:`.web` (the HTTP answers: bodies, content types, errors), :mod:`.app` (the
routes) and :mod:`.events` (``GET /events``). ``docs/API.md`` documents the whole.
"""
