"""minion/host/modules: the execution modules (the loader's built-in folder)."""
