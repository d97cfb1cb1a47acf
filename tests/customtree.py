"""A custom execution module and state module written as users write them for Salt (``_modules``,
``_states`` of a state tree), shared by the tests of when briny loads them."""

from __future__ import annotations

CUSTOM_MODULES = {
    "_modules/greet.py": """
    def hello(who):
        return f"hello {who} from {__grains__['id']}"
    """,
    "_states/marker.py": """
    import os

    def present(name, who):
        ret = {"name": name, "result": True, "changes": {}, "comment": "already there"}
        if os.path.exists(name):
            return ret
        if __opts__["test"]:
            ret.update(result=None, comment="would write")
            return ret
        with open(name, "w") as fh:
            fh.write(__salt__["greet.hello"](who))
        ret.update(changes={"new": name}, comment="written")
        return ret
    """,
}
