#!py

def run():
    config = {}
    for n in ("zeta", "alpha"):
        config["py-" + n] = {
            "test.nop": [
                {"minion": __grains__["id"]},
                {"sls": sls},
                {"env": saltenv},
                {"echo": __salt__["test.echo"](n)},
            ]
        }
    config["py-standard"] = {"test": ["nop", {"order": 3}]}
    return config
