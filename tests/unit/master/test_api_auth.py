"""briny-api's pieces without a master: the ACL (master/eauthacl.py), the token store
(master/api/tokens.py), the file eauth (master/api/eauth.py), the API settings and the
lowstate client check, each against the behaviour Salt documents."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from briny.common.exceptions import ApiError, ConfigError
from briny.master import eauthacl as acl
from briny.master.api import eauth, lowstate, settings, web
from briny.master.api.tokens import TokenStore

ACL = {
    "alice": [".*", "@runner", "@wheel", "@jobs"],
    "bob": [{"m1": ["test.ping"]}, {"web*": ["test.*", "disk.usage"]}],
    "ops%": ["cmd.run"],
    "*": ["test.version"],
    "carol": [{"@runner": ["manage.*"]}, {"@wheel": ["key.list_all"]}],
    "dave": ["@jobs"],
}


def opts(tmp: Path | None = None, **more: Any) -> dict[str, Any]:
    return {"external_auth": {"file": ACL}, "cachedir": str(tmp) if tmp else "/nonexistent", **more}


def test_perms_merge_user_groups_and_star() -> None:
    assert acl.perms_for(opts(), "file", "bob", ["ops"]) == [*ACL["bob"], "cmd.run"]
    assert acl.perms_for(opts(), "file", "eve") == ["test.version"]  # '*': any user the back end knows
    assert acl.perms_for(opts(), "file", "eve", ["ops"]) == ["test.version", "cmd.run"]
    assert acl.perms_for(opts(), "pam", "alice") is None  # no entry for that back end
    assert acl.perms_for({"external_auth": {"file": {"bob": ["x"]}}}, "file", "eve") is None


def test_local_acl_targets_and_globs() -> None:
    bob = ACL["bob"]
    assert acl.allows_local(bob, "test.ping", ["m1"])
    assert not acl.allows_local(bob, "test.ping", ["m1", "m2"])  # every targeted minion must be allowed
    assert not acl.allows_local(bob, "cmd.run", ["m1"])
    assert acl.allows_local(bob, "test.echo", ["web1", "web2"])
    assert acl.allows_local(bob, "disk.usage", ["web1"])
    assert not acl.allows_local(bob, "disk.usages", ["web1"])  # a full match, not a prefix
    assert acl.allows_local(ACL["alice"], "cmd.run", ["anything"])
    assert not acl.allows_local(ACL["dave"], "test.ping", ["m1"])  # @jobs gives no minion


def test_special_acls() -> None:
    assert acl.allows_special(ACL["alice"], "@runner", "jobs.list_jobs")
    assert acl.allows_special(ACL["carol"], "@runner", "manage.up")
    assert not acl.allows_special(ACL["carol"], "@runner", "jobs.list_jobs")
    assert acl.allows_special(ACL["carol"], "@wheel", "key.list_all")
    assert not acl.allows_special(ACL["carol"], "@wheel", "key.delete")
    assert acl.allows_special(ACL["dave"], "@runner", "jobs.lookup_jid")
    assert not acl.allows_special(ACL["dave"], "@runner", "manage.up")
    assert not acl.allows_special(ACL["bob"], "@wheel", "key.list_all")
    assert acl.sees_everything(ACL["alice"]) and not acl.sees_everything(ACL["bob"])


def test_argument_restrictions_allow_nothing_and_warn(caplog: pytest.LogCaptureFixture) -> None:
    perms = [{"m1": [{"test.echo": {"args": ["hi"]}}]}]
    assert not acl.allows_local(perms, "test.echo", ["m1"])
    assert "argument restrictions" in caplog.text


def test_tokens_random_private_and_expiring(tmp_path: Path) -> None:
    store = TokenStore(opts(tmp_path))
    a = store.create({"user": "alice", "eauth": "file", "perms": [".*"]}, 60)
    b = store.create({"user": "alice", "eauth": "file", "perms": [".*"]}, 60)
    assert a["token"] != b["token"] and len(a["token"]) == 40
    assert store.get(a["token"])["user"] == "alice"
    folder = tmp_path / "tokens"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    names = os.listdir(folder)
    assert a["token"] not in names and hashlib.sha256(a["token"].encode()).hexdigest() in names
    assert all(stat.S_IMODE((folder / n).stat().st_mode) == 0o600 for n in names)
    assert store.get("0" * 40) is None and store.get("../../etc/passwd") is None and store.get(None) is None
    # a record whose token differs from the one asked (a forged file under the right name) is refused
    path = folder / hashlib.sha256(b"f" * 40).hexdigest()
    path.write_text(json.dumps({"token": "e" * 40, "user": "mallory", "expire": time.time() + 60}))
    assert store.get("f" * 40) is None
    assert store.remove(a["token"]) and store.get(a["token"]) is None
    old = store.create({"user": "bob"}, 0.001)
    time.sleep(0.01)  # the token's lifetime passing, not synchronisation
    assert store.get(old["token"]) is None
    store.create({"user": "bob"}, -1)
    assert store.prune() == 1


def _file(tmp_path: Path, text: str, **options: Any) -> dict[str, Any]:
    path = tmp_path / "users"
    path.write_text(text)
    return {"filename": str(path), **options}


def test_file_eauth_text_and_hashes(tmp_path: Path) -> None:
    plain = _file(tmp_path, "# users\nalice:alice-pw\nbob:bob-pw\n")
    assert eauth.file_authenticate(plain, "alice", "alice-pw")
    assert not eauth.file_authenticate(plain, "alice", "bob-pw")
    assert not eauth.file_authenticate(plain, "nobody", "x")
    digest = hashlib.sha256(b"s3cret").hexdigest()
    hashed = _file(tmp_path, f"carol:{digest}\n", hashtype="sha256")
    assert eauth.file_authenticate(hashed, "carol", "s3cret") and not eauth.file_authenticate(hashed, "carol", "s3")
    sha = base64.b64encode(hashlib.sha1(b"pw1").digest()).decode()
    crypted = eauth.crypt("pw2", "$6$saltsalt$")
    assert crypted is not None
    ht = _file(tmp_path, f"dan:{{SHA}}{sha}\nerin:{crypted}\nfay:$apr1$x$y\n", filetype="htpasswd")
    assert eauth.file_authenticate(ht, "dan", "pw1") and not eauth.file_authenticate(ht, "dan", "pw2")
    assert eauth.file_authenticate(ht, "erin", "pw2") and not eauth.file_authenticate(ht, "erin", "pw1")
    assert not eauth.file_authenticate(ht, "fay", "anything")  # $apr1$: not supported, refused
    assert not eauth.authenticate({"external_auth": {"file": {"^filename": plain["filename"]}}}, "file", "alice", "")
    assert not eauth.file_authenticate({"filename": str(tmp_path / "missing")}, "alice", "alice-pw")


def test_settings(caplog: pytest.LogCaptureFixture) -> None:
    base = {"rest_cherrypy": {"port": 8000, "disable_ssl": True, "host": "127.0.0.1", "nosuch": 1},
            "netapi_enable_clients": ["local", "ssh"]}  # fmt: skip
    s = settings.load(base)
    assert (s.port, s.host, s.enabled_clients, s.token_expire) == (8000, "127.0.0.1", ["local", "ssh"], 43200.0)
    assert "nosuch" in caplog.text and "ssh" in caplog.text
    with pytest.raises(ConfigError, match="ssl_crt"):
        settings.load({"rest_cherrypy": {"port": 8000}})
    with pytest.raises(ConfigError, match="port"):
        settings.load({"rest_cherrypy": {"disable_ssl": True}})
    with pytest.raises(ConfigError, match="rest_cherrypy"):
        settings.load({})
    assert settings.load({"rest_tornado": {"port": 1, "disable_ssl": True}}).section == "rest_tornado"


def test_clients_checked_as_salt() -> None:
    enabled = ["local", "runner", "local_batch"]
    assert lowstate.check_client({"client": "local"}, enabled) == "local"
    for chunk, message in (
        ({"client": "nosuch"}, "Invalid client specified: 'nosuch'"),
        ({}, "Invalid client specified: 'None'"),
        ({"client": "wheel"}, "Client disabled: 'wheel'"),
        ({"client": "local_batch"}, "not supported by briny-api yet"),
    ):
        with pytest.raises(ApiError, match=message) as err:
            lowstate.check_client(chunk, enabled)
        assert err.value.status == 400


def test_accept_negotiation() -> None:
    assert web.out_type(None) == "application/json"
    assert web.out_type("*/*") == "application/json"
    assert web.out_type("application/x-yaml, application/json;q=0.5") == "application/x-yaml"
    assert web.out_type("text/html;q=0.9, application/json;q=0.1") == "application/json"
    with pytest.raises(ApiError) as err:
        web.out_type("text/html")
    assert err.value.status == 406
    with pytest.raises(ApiError, match="Lowstates must be a list"):
        web.lowstate("hello")
    assert web.lowstate({"client": "local"}) == [{"client": "local"}]


def test_events_visible_to_a_token() -> None:
    from briny.master.api.events import visible
    from briny.master.api.lowstate import Caller

    bob = Caller("bob", "file", ACL["bob"])
    carol = Caller("carol", "file", ACL["carol"])
    new = {"fun": "test.ping", "minions": ["m1"]}
    assert visible(bob, False, "salt/job/1/new", new)
    assert not visible(bob, False, "salt/job/1/new", {"fun": "test.ping", "minions": ["m1", "m2"]})
    assert visible(bob, False, "salt/job/1/ret/m1", {"fun": "test.ping", "id": "m1"})
    assert not visible(bob, False, "salt/job/1/ret/m1", {"fun": "cmd.run", "id": "m1"})
    assert not visible(bob, False, "salt/job/1/ret/m2", {"fun": "test.ping", "id": "m2"})
    assert not visible(bob, False, "salt/key", {"id": "m1", "act": "accept"})
    assert not visible(bob, False, "salt/netapi/hook/x", {"post": {}})
    assert visible(carol, False, "salt/run/1/ret", {"fun": "runner.manage.up"})
    assert not visible(carol, False, "salt/run/1/ret", {"fun": "runner.jobs.list_jobs"})
    assert visible(carol, False, "salt/wheel/1/new", {"fun": "wheel.key.list_all"})
    assert not visible(carol, False, "salt/wheel/1/new", {"fun": "wheel.key.delete"})
    assert visible(bob, True, "salt/key", {}) and not visible(bob, True, "salt/event/listener/ab", {})


def test_acl_targets_are_id_globs_and_a_compound_one_is_named(caplog: pytest.LogCaptureFixture) -> None:
    perms = [{"G@role:web": ["test.ping"]}, {"web* and G@os:Debian": ["test.*"]}, {"db*": ["test.ping"]}]
    with caplog.at_level("WARNING", logger="briny.master.eauthacl"):
        assert not acl.allows_local(perms, "test.ping", ["web1"])
        assert not acl.allows_local(perms, "test.ping", ["web2"])
        assert acl.allows_local(perms, "test.ping", ["db1"])
    named = [r.getMessage() for r in caplog.records if "not a minion-id glob" in r.getMessage()]
    assert len(named) == 2 and "'G@role:web'" in named[0] and "'web* and G@os:Debian'" in named[1], named
