"""Shared by the golden recorder (dev/record_golden.py, runs Salt) and the
golden harness (tests/integration/test_golden.py, runs briny).

Both sides must build the same state tree, the same minion config, the same
command lines, and mask the output the same way, so all of that lives here.
Standard library + PyYAML only; nothing here imports briny or Salt.

Two corpora:

compiler/<case>/        one state tree per case
    top.sls, *.sls, files/ ...  -> file_roots base      (masked as @TREE@)
    envs/<env>/...              -> file_roots <env>     (@TREE@-<env>)
    pillar/...                  -> pillar_roots base    (@PILLAR@)
    case.yaml                   optional:
        sls:    [names]         show_sls / show_low_sls are recorded for each
        pillar: {...}           passed as pillar=<json> on every call
        grains: {...}           static grains in the minion config
        config: {...}           more minion config keys (state_auto_order, ...)
        calls:  [[fun, arg...]] extra calls (e.g. [state.sls, x, test=True])
        setup:  [[fun, arg...]] calls run (not recorded) in the same work directory
                                before each recorded call (e.g. [saltutil.sync_states])
        top:    false           skip the top-file calls (show_top, show_highstate,
                                show_lowstate) for cases without a top file
    expected.json               what Salt returned: {"calls": [{"args", "rc", "data"}]}

requisites/cases/            salt-golden.py's convention: NAME.sls or NAME/init.sls,
                             the whole folder is the tree, @SANDBOX@ replaced
requisites/expected/NAME.json  {"run"|"test"|"low": {"rc", "data", "disk"}}
"""

from __future__ import annotations

import fnmatch
import json
import os
import pathlib
import re
import shutil
import subprocess
import time

import yaml

GOLDEN = pathlib.Path(__file__).resolve().parent
COMPILER = GOLDEN / "compiler"
REQ_CASES = GOLDEN / "requisites" / "cases"
REQ_EXPECTED = GOLDEN / "requisites" / "expected"

# Files of a compiler case that are not part of its base state tree.
RESERVED = {"case.yaml", "expected.json", "pillar", "envs"}

VOLATILE = {"pid", "start_time", "duration"}
_TIME = re.compile(r"\b\d{2}:\d{2}:\d{2}\.\d+\b")


# ---------------------------------------------------------------- masking


def mask(obj, replacements):
    """Drop volatile keys, replace the given (path, marker) pairs in every
    string (keys included) and mask HH:MM:SS.ffffff times, as salt-golden.py does."""
    if isinstance(obj, dict):
        return {mask(k, replacements): mask(v, replacements) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [mask(v, replacements) for v in obj]
    if isinstance(obj, str):
        for path, marker in replacements:
            obj = obj.replace(path, marker)
        return _TIME.sub("@TIME@", obj)
    return obj


_LOOP_NAMED = re.compile(r"^(Recursive requisite found): .+", re.S)


def without_loop_path(data):
    """briny's state results with the loop a "Recursive requisite found: a -> b -> a" comment
    names cut off, as Salt words it (a deliberate difference: briny says where the loop is)."""
    if not isinstance(data, dict):
        return data
    out = {}
    for tag, ret in data.items():
        if isinstance(ret, dict) and isinstance(ret.get("comment"), str):
            ret = {**ret, "comment": _LOOP_NAMED.sub(r"\1", ret["comment"])}
        out[tag] = ret
    return out


def parse_output(stdout, stderr):
    """The "local" value of `--out=json`, or the tail of the output when it is not JSON."""
    try:
        return json.loads(stdout).get("local")
    except (ValueError, AttributeError):
        return {"unparsed": (stdout + stderr)[-2000:]}


def record_call(salt_call, conf, args, cwd):
    """For the recorders: the reference ``salt-call --local -c CONF ARGS --out=json`` -> (exit status, data)."""
    p = subprocess.run(
        [salt_call, "--local", "-c", str(conf), *args, "--out=json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        check=False,
    )
    return p.returncode, parse_output(p.stdout, p.stderr)


def snapshot(root):
    """What a run left under the sandbox (salt-golden.py's format; the sandbox's own path in
    a file, an fstab entry say, is masked too)."""
    root = pathlib.Path(root)
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = ["link", os.readlink(p).replace(str(root), "@SANDBOX@")]
        elif p.is_dir():
            out[rel] = ["dir", oct(p.lstat().st_mode & 0o7777)]
        else:
            text = p.read_bytes().decode("utf-8", "replace").replace(str(root), "@SANDBOX@")
            out[rel] = ["file", oct(p.lstat().st_mode & 0o7777), text]
    return out


# ---------------------------------------------------------------- compiler corpus


def compiler_cases():
    return sorted(p.name for p in COMPILER.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def case_spec(case):
    path = COMPILER / case / "case.yaml"
    spec = yaml.safe_load(path.read_text()) if path.exists() else None
    return spec or {}


def compiler_calls(case):
    """The salt-call argument lists recorded for a compiler case, in order."""
    spec = case_spec(case)
    calls = []
    if spec.get("top", True):
        calls += [["state.show_top"], ["state.show_highstate"], ["state.show_lowstate"]]
    for sls in spec.get("sls", []):
        calls += [["state.show_sls", sls], ["state.show_low_sls", sls]]
    calls += [[str(a) for a in call] for call in spec.get("calls", [])]
    if "pillar" in spec:
        pillar = "pillar=" + json.dumps(spec["pillar"], sort_keys=True)
        calls = [call + [pillar] for call in calls]
    return calls


def compiler_setup(case):
    """The salt-call argument lists run, unrecorded, before each recorded call of a compiler case."""
    return [[str(a) for a in call] for call in case_spec(case).get("setup", [])]


def _copy_tree(src, dst, skip=()):
    dst.mkdir(parents=True, exist_ok=True)
    for p in sorted(src.iterdir()):
        if p.name in skip:
            continue
        if p.is_dir():
            shutil.copytree(p, dst / p.name, symlinks=True)
        else:
            shutil.copy2(p, dst / p.name)


def build_compiler_case(case, work):
    """Lay out the case under `work` (an empty directory): the trees and
    work/etc/minion. Returns (conf_dir, replacements for mask())."""
    work = pathlib.Path(work)
    src = COMPILER / case
    spec = case_spec(case)
    tree = work / "tree"
    _copy_tree(src, tree, skip=RESERVED)
    roots = {"base": [str(tree)]}
    if (src / "envs").is_dir():
        for env in sorted(p.name for p in (src / "envs").iterdir() if p.is_dir()):
            _copy_tree(src / "envs" / env, work / f"tree-{env}")
            roots[env] = [str(work / f"tree-{env}")]
    config = {
        "file_client": "local",
        "file_roots": roots,
        "root_dir": f"{work}/root",
        "cachedir": f"{work}/cache",
        "pki_dir": f"{work}/pki",
        "log_file": f"{work}/minion.log",
        "id": "golden",
    }
    if (src / "pillar").is_dir():
        _copy_tree(src / "pillar", work / "pillar")
        config["pillar_roots"] = {"base": [str(work / "pillar")]}
    if spec.get("grains"):
        config["grains"] = spec["grains"]
    config.update(spec.get("config") or {})
    conf = work / "etc"
    conf.mkdir()
    (conf / "minion").write_text(yaml.safe_dump(config, default_flow_style=False))
    replacements = [(str(tree), "@TREE@"), (str(work / "pillar"), "@PILLAR@"), (str(work), "@WORK@")]
    return conf, replacements


def compiler_expected(case):
    return json.loads((COMPILER / case / "expected.json").read_text())


# ---------------------------------------------------------------- requisite corpus


def requisite_cases(cases=REQ_CASES):
    """salt-golden.py's rule: each NAME.sls, and each folder with init.sls (of ``cases``, any
    folder of cases in that convention: requisites, vcs, postgres, files, ...)."""
    out = []
    for p in sorted(pathlib.Path(cases).iterdir()):
        if p.suffix == ".sls":
            out.append(p.stem)
        elif p.is_dir() and (p / "init.sls").exists():
            out.append(p.name)
    return out


REQUISITE_RUNS = {
    "run": lambda case: ["state.sls", case],
    "test": lambda case: ["state.sls", case, "test=True"],
    "low": lambda case: ["state.show_low_sls", case],
}


def build_requisite_case(work, cases=REQ_CASES, placeholders=(), case=None):
    """salt-golden.py's layout: work/{sandbox,srv,etc}; the whole cases folder
    is the tree with @SANDBOX@ (and each (marker, value) of ``placeholders``)
    replaced. A case's ``NAME.minion`` (YAML, replaced the same way) is appended
    to the minion config (salt-golden.py has no such file: such cases are
    recorded with dev/record_sandbox_golden.py). Returns (conf_dir, sandbox)."""
    work, cases = pathlib.Path(work), pathlib.Path(cases)
    sandbox, tree, conf = work / "sandbox", work / "srv", work / "etc"
    for d in (sandbox, tree, conf):
        d.mkdir()

    def fill(text):
        text = text.replace("@SANDBOX@", str(sandbox))
        for marker, value in placeholders:
            text = text.replace(marker, value)
        return text

    for p in cases.rglob("*"):
        if p.is_file():
            out = tree / p.relative_to(cases)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(fill(p.read_text()))
    extra = cases / f"{case}.minion"
    (conf / "minion").write_text(
        f"file_client: local\nfile_roots:\n  base:\n    - {tree}\nroot_dir: {work}/root\n"
        f"cachedir: {work}/cache\npki_dir: {work}/pki\nlog_file: {work}/minion.log\nid: golden\n"
        + (fill(extra.read_text()) if case and extra.is_file() else "")
    )
    return conf, sandbox


def requisite_expected(case):
    return sandbox_expected(REQ_EXPECTED, case)


def sandbox_expected(expected_dir, case):
    return json.loads((pathlib.Path(expected_dir) / f"{case}.json").read_text())


# ---------------------------------------------------------------- orchestrate corpus

ORCH = GOLDEN / "orchestrate"
_MASTER_ID = re.compile(r"^[\w.-]+_master$")
_JID = re.compile(r"\b\d{20}\b")
_MASTER_WORD = re.compile(r"[\w.-]+_master\b")
_DURATION = re.compile(r"(Duration: *)\d+(?:\.\d+)? ms|(Total run time: *)\d+(?:\.\d+)? m?s")


_MASTER_VALUE = re.compile(r"\A.+_master\Z")


def runner_shape(data, call):
    """A runner's ``--out=json`` data as ``tests/golden/runners`` keeps it: a master's id
    (``<host>_master``) answered whole is ``@MASTER@``; ``call["keep"]`` keeps only those keys of
    each minion's data (grains vary by host); ``call["doc"]`` keeps the functions whose names
    match its globs, each docstring ``@DOC@``."""
    if isinstance(data, str) and _MASTER_VALUE.match(data):
        return "@MASTER@"
    if "keep" in call and isinstance(data, dict):
        return {m: {k: v for k, v in d.items() if k in call["keep"]} for m, d in data.items()}
    if "doc" in call and isinstance(data, dict):
        return {
            k: "@DOC@" if isinstance(v, str) else v
            for k, v in sorted(data.items())
            if any(fnmatch.fnmatchcase(k, g) for g in call["doc"])
        }
    return data


def orch_mask(obj, work=None):
    """An orchestration's ``--out=json`` data as the golden keeps it: the master's id key
    (``<host>_master``) is ``@MASTER@``, jids ``@JID@``, the temporary folder ``@WORK@``, and
    what :func:`mask` does (volatile keys dropped, times ``@TIME@``)."""
    if isinstance(obj, dict):
        return {
            orch_mask(_MASTER_ID.sub("@MASTER@", k) if isinstance(k, str) else k, work): orch_mask(v, work)
            for k, v in obj.items()
            if k not in VOLATILE
        }
    if isinstance(obj, list):
        return [orch_mask(v, work) for v in obj]
    if isinstance(obj, str):
        if work:
            obj = obj.replace(work, "@WORK@")
        return _JID.sub("@JID@", _TIME.sub("@TIME@", obj))
    return obj


def orch_mask_text(text, work=None):
    """The highstate text of an orchestration, masked as :func:`orch_mask` masks data: the
    master's id (``<host>_master``) ``@MASTER@`` wherever it is, durations and run times
    ``@MS@`` (with the padding before a run time, which follows the number's width)."""
    if work:
        text = text.replace(work, "@WORK@")
    text = _MASTER_WORD.sub("@MASTER@", text)
    text = _DURATION.sub(lambda m: "Duration: @MS@" if m.group(1) else "Total run time: @MS@", text)
    return _JID.sub("@JID@", _TIME.sub("@TIME@", text))


# ---------------------------------------------------------------- functions corpus

FUNCTIONS = GOLDEN / "functions"
FUNCTIONS_TREE = FUNCTIONS / "tree"
FUNCTIONS_EXPECTED = FUNCTIONS / "expected"


def functions_cases():
    """{case: spec} of ``functions/calls.yaml``: each spec holds ``calls`` (salt-call argument
    lists run in order on one minion), and optionally ``files`` ({sandbox path: text} made
    before the first call; ``bin/*`` executable), ``minion`` (YAML appended to the minion
    config), ``path`` (put first in PATH) and ``needs`` (commands the case needs: ``[dig]``)."""
    return yaml.safe_load((FUNCTIONS / "calls.yaml").read_text())


def build_functions_case(work, case, http_port, dns_port=0):
    """The functions corpus's layout (salt-golden.py's, ``functions/tree`` as the state tree):
    ``@SANDBOX@``, ``@HTTP@`` (the local HTTP server's ``127.0.0.1:PORT``), ``@DNS@`` (the
    local DNS server's port) and ``@DIG@`` (the host's ``dig``) replaced in the tree, the calls,
    the files and the config fragment. Returns (conf_dir, sandbox, calls)."""
    spec = functions_cases()[case]
    work = pathlib.Path(work)
    sandbox = work / "sandbox"
    fills = [
        ("@SANDBOX@", str(sandbox)),
        ("@HTTP@", f"127.0.0.1:{http_port}"),
        ("@DNS@", str(dns_port)),
        ("@DIG@", shutil.which("dig") or "dig"),
    ]

    def fill(text):
        for marker, value in fills:
            text = text.replace(marker, value)
        return text

    conf, sandbox = build_requisite_case(work, FUNCTIONS_TREE, placeholders=fills[1:])
    if spec.get("minion"):
        with open(conf / "minion", "a", encoding="utf-8") as fh:
            fh.write(fill(spec["minion"]))
    for rel, text in (spec.get("files") or {}).items():
        path = sandbox / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fill(text))
    for rel in spec.get("files") or {}:
        if rel.startswith("bin/"):
            (sandbox / rel).chmod(0o755)
    calls = [[fill(str(a)) for a in call] for call in spec["calls"]]
    return conf, sandbox, calls


def functions_path(case, sandbox, path):
    """The PATH a case's calls run with: its ``path`` (``@SANDBOX@/bin``: commands the case
    makes, such as a ``shutdown`` that only writes down how it was called) before ``path``."""
    first = functions_cases()[case].get("path")
    return f"{first.replace('@SANDBOX@', str(sandbox))}:{path}" if first else path


def functions_mask(data, sandbox, http_port):
    """:func:`mask` plus the functions corpus's own: the sandbox ``@SANDBOX@``, the HTTP server's
    address ``@HTTP@`` and today's date (``YYYYMMDD``, as ``dnsutil.serial`` answers) ``@DATE@``."""
    today = time.strftime("%Y%m%d")
    data = mask(data, [(str(sandbox), "@SANDBOX@"), (f"127.0.0.1:{http_port}", "@HTTP@")])
    return _replace_all(data, today, "@DATE@")


def _replace_all(obj, old, new):
    if isinstance(obj, dict):
        return {_replace_all(k, old, new): _replace_all(v, old, new) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_replace_all(v, old, new) for v in obj]
    if isinstance(obj, str):
        return obj.replace(old, new)
    return obj


def functions_outcome(conf, sandbox, http_port):
    """What a case's calls left: the sandbox (but the case's own commands, ``bin/``) and the
    minion's grains file (``etc/grains``, where Salt persists ``grains.setval``), masked."""
    grains = pathlib.Path(conf) / "grains"
    disk = {k: v for k, v in snapshot(sandbox).items() if k != "bin" and not k.startswith("bin/")}  # the case's tools
    return {
        "disk": _replace_all(disk, time.strftime("%Y%m%d"), "@DATE@"),
        "grains_file": grains.read_text().replace(time.strftime("%Y%m%d"), "@DATE@") if grains.exists() else None,
    }


class _Pages:
    """The local HTTP server's answers (fixed, so that Salt's and briny's runs see the same bytes)."""

    GET = {
        "/hello.txt": (200, "text/plain", "hello\n"),
        "/data.json": (200, "application/json", '{"a": 1, "b": [1, 2]}\n'),
        "/data.yaml": (200, "application/x-yaml", "a: 1\nb: [1, 2]\n"),
        "/script.sh": (200, "text/plain", "#!/bin/sh\necho from http\n"),
    }


def serve_http():
    """Start the corpus's HTTP server on 127.0.0.1 (a free port): GET the pages of :class:`_Pages`
    (others 404), POST/PUT ``/echo`` answers the method, body and ``Content-Type`` it got.
    Returns (port, stop)."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, code, ctype, body):
            raw = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/query":
                return self._answer(200, "text/plain", f"query {self.path.partition('?')[2]}\n")
            self._answer(*_Pages.GET.get(path, (404, "text/plain", "no such page\n")))

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            if self.path != "/echo":
                return self._answer(405, "text/plain", "no\n")
            ctype = self.headers.get("Content-Type", "")
            self._answer(200, "text/plain", f"{self.command} {body} {ctype} {self.headers.get('X-Test', '')}\n")

        do_PUT = do_POST

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    worker = threading.Thread(target=server.serve_forever, daemon=True)
    worker.start()

    def stop():
        server.shutdown()
        server.server_close()
        worker.join(timeout=10)

    return server.server_address[1], stop


_LOG_LINE = re.compile(r"^\[(?:CRITICAL|ERROR|WARNING|INFO|DEBUG) *\].*\n?", re.M)


def without_log_lines(data):
    """An unparsed answer (``{"unparsed": text}``: what salt-call printed when it printed no JSON)
    without its log lines: the error it printed is the answer, what it logged on the way is not."""
    if isinstance(data, dict) and set(data) == {"unparsed"} and isinstance(data["unparsed"], str):
        return {"unparsed": _LOG_LINE.sub("", data["unparsed"])}
    return data


# ---------------------------------------------------------------- a tiny DNS server

DNS_ZONE = {
    ("www.test.example", 1): ["192.0.2.10"],
    ("www.test.example", 28): ["2001:db8::10"],
    ("test.example", 15): [(10, "mail.test.example."), (20, "mx2.test.example.")],
    ("mail.test.example", 1): ["192.0.2.25"],
    ("mx2.test.example", 1): ["192.0.2.26"],
    ("test.example", 2): ["ns1.test.example.", "ns2.test.example."],
    ("ns1.test.example", 1): ["192.0.2.53"],
    ("ns2.test.example", 1): ["192.0.2.54"],
    ("test.example", 16): ["v=spf1 ip4:192.0.2.0/24 include:_spf.test.example -all"],
    ("_spf.test.example", 16): ["v=spf1 ip4:198.51.100.0/24 ip6:2001:db8::/32 -all"],
}


def _dns_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def _dns_rdata(rtype, value):
    import ipaddress
    import struct

    if rtype in (1, 28):
        return ipaddress.ip_address(value).packed
    if rtype == 15:
        return struct.pack("!H", value[0]) + _dns_name(value[1])
    if rtype == 2:
        return _dns_name(value)
    return bytes([len(value)]) + value.encode()  # TXT: one string


def _dns_answer(query):
    """The answer to one DNS query (UDP payload) from :data:`DNS_ZONE`: its records, an empty
    answer for a known name and another type, NXDOMAIN for an unknown name."""
    import struct

    qid, _flags, qdcount = struct.unpack("!HHH", query[:6])
    pos, labels = 12, []
    while query[pos]:
        labels.append(query[pos + 1 : pos + 1 + query[pos]].decode().lower())
        pos += 1 + query[pos]
    qtype = struct.unpack("!H", query[pos + 1 : pos + 3])[0]
    question = query[12 : pos + 5]
    name = ".".join(labels)
    records = DNS_ZONE.get((name, qtype), [])
    known = any(n == name for n, _t in DNS_ZONE)
    rcode = 0 if known else 3
    body = b""
    for value in records:
        rdata = _dns_rdata(qtype, value)
        body += struct.pack("!HHHIH", 0xC00C, qtype, 1, 60, len(rdata)) + rdata
    header = struct.pack("!HHHHHH", qid, 0x8580 | rcode, 1 if qdcount else 0, len(records), 0, 0)
    return header + question + body


def serve_dns():
    """A DNS server on 127.0.0.1 (UDP, a free port) answering :data:`DNS_ZONE`. Returns (port, stop)."""
    import socket
    import threading

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)
    done = threading.Event()

    def serve():
        while not done.is_set():
            try:
                query, peer = sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                sock.sendto(_dns_answer(query), peer)
            except (IndexError, ValueError, OSError):
                continue

    worker = threading.Thread(target=serve, daemon=True)
    worker.start()

    def stop():
        done.set()
        worker.join(timeout=10)
        sock.close()

    return sock.getsockname()[1], stop


# ---------------------------------------------------------------- master-bus events

# Keys whose values vary from run to run: the golden keeps a marker of the same type.
_EVENT_VARYING = {"_stamp", "jid", "ts", "time", "pid", "pub", "start_time", "duration", "_seq", "local_jid"}
_EVENT_VARYING |= {"diskusage"}  # a beacon's reading of the host
# Keys whose whole value is the host's (a minion's grains, its environment): the golden keeps
# only that it is a dict (``@OPAQUE@`` as the only key).
EVENT_OPAQUE = {"grains", "environ"}
_STARTED = re.compile(r"^(Minion \S+ started at ).+$")


def _event_marker(key, value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, str):
        return f"@{key.strip('_').upper()}@"
    return value


def event_mask(obj, key=None):
    """One master-bus event (``{"tag", "data"}``) as the event golden keeps it: jids ``@JID@``
    (in the tag too), the master's id ``@MASTER@``, the values of the varying keys replaced by a
    marker of the same type (strings ``@KEY@``, numbers 0), a minion's grains and environment
    ``{"@OPAQUE@": true}``, and times ``@TIME@``."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in EVENT_OPAQUE and isinstance(v, dict):
                out[k] = {"@OPAQUE@": True}
            elif k in _EVENT_VARYING:
                out[k] = _event_marker(k, v) if not isinstance(v, (dict, list)) else event_mask(v, k)
            else:
                out[_JID.sub("@JID@", _MASTER_ID.sub("@MASTER@", k)) if isinstance(k, str) else k] = event_mask(v, k)
        return out
    if isinstance(obj, list):
        return [event_mask(v, key) for v in obj]
    if isinstance(obj, str):
        obj = _STARTED.sub(r"\1@CTIME@", obj)
        return _MASTER_ID.sub("@MASTER@", _JID.sub("@JID@", _TIME.sub("@TIME@", obj)))
    return obj


def event_shape(obj):
    """The shape two events are compared by: dicts by their keys, lists element by element,
    everything else by its type name (``@OPAQUE@`` dicts: any dict)."""
    if isinstance(obj, dict):
        if obj.get("@OPAQUE@") is True:
            return "dict"
        return {k: event_shape(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [event_shape(v) for v in obj]
    if isinstance(obj, bool):
        return "bool"
    if isinstance(obj, (int, float)):
        return "number"
    if obj is None:
        return "null"
    return "str"
