__virtualname__ = "vn"


def __virtual__():
    return (False, "no vn here")


def managed(name, **kwargs):
    return {"name": name, "result": True, "changes": {}, "comment": "ran"}
