"""The master's minion keys: which minions it trusts, and the tables that hold their keys.

``store`` is the key store the master and ``briny-key`` use (:class:`~briny.master.keys.store.KeyStore`);
``table`` the interface of a key table, ``fs`` the folder table (Salt's ``pki_dir`` layout) and
``pg`` the PostgreSQL one; ``watch`` follows the accepted and rejected keys for the daemon.
"""
