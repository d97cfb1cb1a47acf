import nosuchlib_xyz  # noqa: F401 - the import failing is the case


def managed(name, **kwargs):
    return {"name": name, "result": True, "changes": {}, "comment": "ran"}
