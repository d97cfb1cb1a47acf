def managed(name, **kwargs):
    return {"name": name, "result": True, "changes": {}, "comment": "ran"}
