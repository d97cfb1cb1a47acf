"""End-to-end acceptance of issue 6: a highstate across a fleet of real daemons on 127.0.0.1.

One ``briny-master`` and three ``briny-minion`` processes with different
grains (``os_family`` overridden in the minion config, a ``role`` grain, and
``out``: the folder under the minion's root where its states write). The
tree, written here as the master's ``file_roots`` and ``pillar_roots``, has
``file.managed`` from ``salt://`` with Jinja, pillar-dependent values,
grains-dependent includes (top file by grain, ``{% if grains['role'] ==
'web' %}include:``), and states with ``fire_event: True`` and with a custom
tag. Asserted: the files on every minion's disk, the returns in the job
cache (``briny-run jobs.lookup_jid``), the ``salt/state_result/...`` events
on the master bus (exactly one per ``fire_event`` state per minion, custom
tags too), ``state.apply test=True`` (diffs shown, nothing changed), a
second highstate refused while one runs, progress events, the
``--state-output``/``--state-verbose`` pass-through, and a minion that
forges another minion's id in an event tag.
"""

from __future__ import annotations

import os
import pty
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from briny.common import crypto

from .support import Fleet, RawPeer, events_until, jid_from, returned, script

pytestmark = pytest.mark.slow

IDS = ("web1", "web2", "db1")
GRAINS = {
    "web1": {"role": "web", "os_family": "Debian"},
    "web2": {"role": "web", "os_family": "RedHat"},
    "db1": {"role": "db", "os_family": "Debian"},
}

STATES = {
    "top.sls": """\
        base:
          '*':
            - common
          'os_family:Debian':
            - match: grain
            - family.debian
          'G@os_family:RedHat':
            - match: compound
            - family.redhat
        """,
    "common/init.sls": """\
        {% if grains['role'] == 'web' %}
        include:
          - web
        {% endif %}
        motd:
          file.managed:
            - name: {{ grains['out'] }}/motd
            - source: salt://common/files/motd.j2
            - template: jinja
            - makedirs: True
            - context:
                greeting: {{ pillar['greeting'] }}
            - fire_event: True
        marker:
          test.succeed_with_changes:
            - fire_event: custom/marker/done
        quiet:
          test.succeed_without_changes: []
        """,
    "common/files/motd.j2": """\
        {{ greeting }} from {{ grains['id'] }} ({{ grains['os_family'] }}, role {{ grains['role'] }})
        db password: {{ pillar.get('db_password', 'none') }}
        """,
    "web.sls": """\
        web-conf:
          file.managed:
            - name: {{ grains['out'] }}/web.conf
            - contents: port={{ pillar['web_port'] }}
            - makedirs: True
            - fire_event: web/configured
        """,
    "family/debian.sls": """\
        family:
          file.managed:
            - name: {{ grains['out'] }}/family
            - contents: apt
            - makedirs: True
        """,
    "family/redhat.sls": """\
        family:
          file.managed:
            - name: {{ grains['out'] }}/family
            - contents: dnf
            - makedirs: True
        """,
    "slow.sls": """\
        hold:
          cmd.run:
            - name: touch {{ grains['out'] }}/started; while [ ! -e {{ grains['out'] }}/stop ]; do sleep 0.05; done
            - timeout: 60
        """,
    "paced.sls": """\
        {% for i in range(4) %}
        pace{{ i }}:
          cmd.run:
            - name: sleep 0.3
        {% endfor %}
        """,
    "five.sls": """\
        {% for i in range(5) %}
        step{{ i }}:
          test.succeed_with_changes: []
        {% endfor %}
        """,
}

PILLAR = {
    "top.sls": """\
        base:
          '*':
            - common
          'role:db':
            - match: grain
            - db
        """,
    "common.sls": """\
        greeting: hello-{{ grains['id'] }}
        web_port: {{ 8080 if grains['os_family'] == 'Debian' else 9090 }}
        """,
    "db.sls": "db_password: s3cret\n",
}

# what each minion's files must hold after the highstate
EXPECTED = {
    "web1": {
        "motd": "hello-web1 from web1 (Debian, role web)\ndb password: none\n",
        "web.conf": "port=8080\n",
        "family": "apt\n",
    },
    "web2": {
        "motd": "hello-web2 from web2 (RedHat, role web)\ndb password: none\n",
        "web.conf": "port=9090\n",
        "family": "dnf\n",
    },
    "db1": {"motd": "hello-db1 from db1 (Debian, role db)\ndb password: s3cret\n", "family": "apt\n"},
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def out_dir(fleet: Fleet, minion_id: str) -> Path:
    return fleet.minions[minion_id].root / "out"


@pytest.fixture(scope="module")
def hfleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    fleet = Fleet(tmp_path_factory.mktemp("highstate"), IDS)
    try:
        for minion_id in IDS:  # the out grain needs the minion's root, known only now
            fleet.grains[minion_id] = {**GRAINS[minion_id], "out": str(fleet.root / minion_id / "out")}
            fleet.add_minion(minion_id)
        write(Path(fleet.master_opts["file_roots"]["base"][0]), STATES)
        write(Path(fleet.master_opts["pillar_roots"]["base"][0]), PILLAR)
        fleet.start()
        yield fleet
    finally:
        fleet.close()


def async_jid(fleet: Fleet, *args: str) -> str:
    res = fleet.briny("--async", *args)
    assert res.returncode == 0, res.stdout + res.stderr
    return jid_from(res.stdout)


# -- the acceptance run ----------------------------------------------------------------------------


def test_highstate_files_job_cache_and_state_result_events(hfleet: Fleet) -> None:
    with hfleet.listening("salt/*", "salt/probe") as listener:
        jid = async_jid(hfleet, "*", "state.apply")
        returns = hfleet.wait_returns(jid, IDS, timeout=60)
        # a later job's returns: each minion sent its state_result events before them
        after = hfleet.publish("*", "test.ping")
        got = events_until(listener, returned(after, IDS), timeout=60)
    events = [(tag, data) for tag, data in got if tag.startswith("salt/state_result/")]

    # the files on each minion's disk
    for minion_id, files in EXPECTED.items():
        out = out_dir(hfleet, minion_id)
        assert sorted(p.name for p in out.iterdir()) == sorted(files), minion_id
        for name, text in files.items():
            assert (out / name).read_text() == text, (minion_id, name)

    # the returns in the job cache: every state of each minion's own highstate, all good
    for minion_id in IDS:
        ret = returns[minion_id]
        assert isinstance(ret, dict), ret
        out = out_dir(hfleet, minion_id)
        ids = {r["__id__"] for r in ret.values()}
        web = {"web-conf"} if GRAINS[minion_id]["role"] == "web" else set()
        assert ids == {"motd", "marker", "quiet", "family"} | web, minion_id
        assert all(r["result"] is True for r in ret.values()), ret
        motd = ret[f"file_|-motd_|-{out}/motd_|-managed"]
        assert motd["changes"]["diff"] == "New file" and motd["__sls__"] == "common"
        assert sorted(r["__run_num__"] for r in ret.values()) == list(range(len(ret)))

    # one state_result event per fire_event state per minion, with the state's result
    seen: dict[str, dict[str, Any]] = {}
    for tag, data in events:
        assert tag not in seen, f"{tag} fired twice"
        seen[tag] = data
    expected_tags = set()
    for minion_id in IDS:
        out = out_dir(hfleet, minion_id)
        expected_tags |= {
            f"salt/state_result/{jid}/{minion_id}/{out}/motd",
            f"salt/state_result/{jid}/{minion_id}/custom/marker/done",
        }
        if GRAINS[minion_id]["role"] == "web":
            expected_tags.add(f"salt/state_result/{jid}/{minion_id}/web/configured")
    assert set(seen) == expected_tags
    for tag, data in seen.items():
        minion_id = tag.split("/")[3]
        # Salt's wrapper: the result is data['data']['ret'], the minion and the job beside it
        assert data["id"] == minion_id and data["jid"] == jid and data["_stamp"] and data["cmd"] == "_minion_event"
        ret = data["data"]["ret"]
        stored = returns[minion_id]
        key = next(k for k, v in stored.items() if v["__id__"] == ret["__id__"])
        assert ret == stored[key], tag  # the event carries the state's whole result
    marker = seen[f"salt/state_result/{jid}/web1/custom/marker/done"]["data"]["ret"]
    assert marker["name"] == "marker" and marker["changes"] and marker["result"] is True

    # the job's summary in the highstate outputter, through briny-run
    res = hfleet.run("jobs.lookup_jid", jid)
    assert res.returncode == 0 and "Succeeded: 5 (changed=" in res.stdout, res.stdout


def test_dry_run_shows_diffs_and_changes_nothing(hfleet: Fleet) -> None:
    if not (out_dir(hfleet, "web1") / "web.conf").exists():
        assert hfleet.briny("*", "state.apply").returncode == 0
    conf = out_dir(hfleet, "web1") / "web.conf"
    conf.write_text("port=1\n")
    (out_dir(hfleet, "db1") / "motd").unlink()
    before = {m: {p.name: p.read_text() for p in out_dir(hfleet, m).iterdir()} for m in IDS}
    res = hfleet.briny("*", "state.apply", "test=True")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "-port=1" in res.stdout and "+port=8080" in res.stdout  # the diff
    assert "The file " in res.stdout and "is set to be changed" in res.stdout
    assert f"{out_dir(hfleet, 'db1')}/motd" in res.stdout
    after = {m: {p.name: p.read_text() for p in out_dir(hfleet, m).iterdir()} for m in IDS}
    assert after == before
    # and the real run puts things right again
    assert hfleet.briny("*", "state.apply").returncode == 0
    assert conf.read_text() == "port=8080\n"
    assert (out_dir(hfleet, "db1") / "motd").read_text() == EXPECTED["db1"]["motd"]


# -- one highstate at a time -----------------------------------------------------------------------


def test_a_second_highstate_is_refused_while_one_runs(hfleet: Fleet) -> None:
    out = out_dir(hfleet, "db1")
    for name in ("started", "stop"):
        (out / name).unlink(missing_ok=True)
    first = async_jid(hfleet, "db1", "state.sls", "slow")
    try:
        hfleet.wait(lambda: (out / "started").exists(), 30, "the first state run to start")
        res = hfleet.briny("--static", "--out", "json", "db1", "state.apply")
        assert res.returncode == 1
        refused = res.json()["db1"]
        assert isinstance(refused, list) and len(refused) == 1, refused
        assert refused[0].startswith('The function "state.sls" is running as PID ')
        assert refused[0].endswith(f" with jid {first}")
        # other minions are not affected
        res = hfleet.briny("--static", "--out", "json", "web1", "state.sls", "five", "test=True")
        assert res.returncode == 0, res.stdout
    finally:
        (out / "stop").touch()
    ret = hfleet.wait_returns(first, ["db1"], timeout=60)["db1"]
    assert isinstance(ret, dict) and all(r["result"] is True for r in ret.values()), ret
    (out / "started").unlink(missing_ok=True)
    (out / "stop").unlink(missing_ok=True)


# -- progress events and the outputter options -----------------------------------------------------


def test_progress_events_one_per_state_with_salt_tags(hfleet: Fleet) -> None:
    with hfleet.listening("salt/job/*", "salt/job/probe") as listener:
        res = hfleet.briny("--progress", "--static", "--out", "json", "*", "state.sls", "five")
        assert res.returncode == 0, res.stdout + res.stderr
        new = events_until(listener, lambda got: any(tag.endswith("/new") for tag, _ in got))
        jid = new[-1][0].split("/")[2]
        # each minion sends its progress events before its return
        events = new + events_until(listener, returned(jid, IDS))
    prog = [(tag, data) for tag, data in events if "/prog/" in tag]
    assert len(prog) == 15
    for minion_id in IDS:
        mine = sorted((tag, data) for tag, data in prog if tag.split("/")[4] == minion_id)
        assert [t for t, _ in mine] == [f"salt/job/{jid}/prog/{minion_id}/{n}" for n in range(5)]
        for n, (_, wrapped) in enumerate(mine):
            assert wrapped["id"] == minion_id and wrapped["jid"] == jid
            data = wrapped["data"]
            assert data["len"] == 5
            assert data["ret"]["__run_num__"] == n and data["ret"]["result"] is True
            assert set(data["ret"]) <= {"result", "name", "__id__", "__sls__", "__run_num__", "duration"}
            assert data["done"] == n + 1 and data["failed"] == 0
    # without --progress (not a terminal) no progress event is sent: none before the returns
    with hfleet.listening("salt/job/*", "salt/job/probe") as listener:
        assert hfleet.briny("--static", "--out", "json", "*", "state.sls", "five").returncode == 0
        new = events_until(listener, lambda got: any(tag.endswith("/new") for tag, _ in got))
        quiet = new[-1][0].split("/")[2]
        got = new + events_until(listener, returned(quiet, IDS))
    assert [tag for tag, _ in got if "/prog/" in tag] == []


def test_state_output_and_state_verbose_reach_the_outputter(hfleet: Fleet) -> None:
    full = hfleet.briny("web1", "state.sls", "five")
    assert "----------" in full.stdout and "      ID: step0" in full.stdout, full.stdout
    terse = hfleet.briny("--state-output=terse", "web1", "state.sls", "five")
    assert "      ID: step0" not in terse.stdout
    assert "Name: step0 - Function: test.succeed_with_changes - Result: Changed" in terse.stdout, terse.stdout
    changes = hfleet.briny("--state-output=changes", "--state-verbose=false", "web1", "state.sls", "common")
    assert changes.returncode == 0
    assert "      ID: marker" in changes.stdout and "ID: quiet" not in changes.stdout, changes.stdout
    verbose = hfleet.briny("--state-output=changes", "web1", "state.sls", "common")
    assert "Name: quiet - Function: test.succeed_without_changes - Result: Clean" in verbose.stdout, verbose.stdout


def test_live_line_on_a_terminal_is_cleared_before_the_output(hfleet: Fleet) -> None:
    master_fd, slave_fd = pty.openpty()
    proc = subprocess.Popen(
        [*script("briny"), "-c", str(hfleet.master_conf), "web1", "state.sls", "paced"],
        stdin=subprocess.DEVNULL,
        stdout=slave_fd,
        stderr=subprocess.PIPE,
    )
    os.close(slave_fd)
    chunks: list[bytes] = []
    try:
        while True:
            try:
                data = os.read(master_fd, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(60) == 0
    finally:
        os.close(master_fd)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    assert "web1: 1/4 states, 0 failed" in text and "web1: 3/4 states, 0 failed" in text, text
    last_line = text.rindex("states, 0 failed")
    clear = text.index("\x1b[1F\x1b[J", last_line)  # the line is wiped before the output
    assert "Summary for web1" in text[clear:] and "states, 0 failed" not in text[clear:]


# -- a minion cannot speak for another one ---------------------------------------------------------


def test_an_event_claiming_another_minions_id_is_rewritten(hfleet: Fleet) -> None:
    rogue = RawPeer(hfleet.ret_port)
    key = crypto.generate_rsa()
    try:
        assert rogue.auth("rogue", key) == "pending"
        assert hfleet.key("-a", "rogue", "-y").returncode == 0
        assert rogue.auth("rogue", key) == "accepted"
        jid = "20990101000000000042"
        with hfleet.listening("salt/*", "salt/probe") as listener:
            forged = [f"salt/state_result/{jid}/web1/motd", f"salt/job/{jid}/prog/web1/0", "salt/minion/web1/start"]
            for tag in forged:
                reply = rogue.request(
                    "rogue", {"cmd": "event", "tag": tag, "data": {"id": "web1", "ret": {"result": True}}}
                )
                assert reply == {"ok": True}, (tag, reply)
            # master-only tags, and a return event for a job never sent to rogue, are refused outright
            for tag in (f"salt/job/{jid}/new", "salt/auth", "salt/key", f"salt/job/{jid}/ret/web1"):
                reply = rogue.request("rogue", {"cmd": "event", "tag": tag, "data": {}})
                assert reply is not None and "error" in reply, (tag, reply)
            # behind them, from the same peer: what was refused would have been fired before this
            assert rogue.request("rogue", {"cmd": "event", "tag": "salt/minion/rogue/done", "data": {}}) == {"ok": True}
            got = events_until(listener, lambda got: "salt/minion/rogue/done" in [tag for tag, _ in got])
        tags = [tag for tag, _ in got if "rogue" in tag or "web1" in tag]
        assert tags == [
            f"salt/state_result/{jid}/rogue/motd",
            f"salt/job/{jid}/prog/rogue/0",
            "salt/minion/rogue/start",
            "salt/minion/rogue/done",
        ]
        for tag, data in got:
            if tag in tags[:2]:
                assert data["id"] == "rogue", (tag, data)
        assert not any(tag in (f"salt/job/{jid}/new", f"salt/job/{jid}/ret/rogue") for tag, _ in got)
    finally:
        rogue.close()
        hfleet.key("-d", "rogue", "-y")
