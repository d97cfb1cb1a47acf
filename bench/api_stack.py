#!/usr/bin/env python3
"""Which HTTP stack for briny-api: requests/s and Server-Sent Events/s of each candidate.

usage: bench/api_stack.py [--requests 4000] [--concurrency 16] [--events 50000]

Each server runs in its own process on 127.0.0.1 and answers two routes the API's shape needs:
``POST /`` (a JSON body parsed, a small JSON answer, as a lowstate call without the master) and
``GET /events`` (``--events`` SSE messages of one bus event each, as fast as the client reads).
The client (aiohttp, one process) keeps ``--concurrency`` keep-alive requests in flight.
Candidates: aiohttp (asyncio, what briny-api uses), Starlette on uvicorn (asyncio; when
installed), the standard library's ThreadingHTTPServer (threads), and CherryPy, Salt's
``rest_cherrypy`` stack (run with the reference Salt's Python, /tmp/saltref, when present).
The numbers go to docs/API.md ("Why aiohttp").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
import time

EVENT = json.dumps({"tag": "salt/job/20261128120000000000/ret/m1",
                    "data": {"id": "m1", "return": True, "retcode": 0, "fun": "test.ping", "success": True,
                             "jid": "20261128120000000000", "_stamp": "2026-11-28T12:00:00.000000"}})  # fmt: skip

SERVERS = {
    "aiohttp": (
        sys.executable,
        """
        import json, sys
        from aiohttp import web
        EVENT = sys.argv[2]; N = int(sys.argv[3])
        async def post(request):
            data = await request.json()
            return web.json_response({"return": [{"m1": True, "n": len(data)}]})
        async def events(request):
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await resp.prepare(request)
            await resp.write(b"retry: 400\\n\\n")
            line = ("tag: x\\ndata: " + EVENT + "\\n\\n").encode()
            for _ in range(N):
                await resp.write(line)
            return resp
        app = web.Application()
        app.router.add_post("/", post)
        app.router.add_get("/events", events)
        web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
    """,
    ),
    "starlette+uvicorn": (
        sys.executable,
        """
        import sys, uvicorn
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse, StreamingResponse
        from starlette.routing import Route
        EVENT = sys.argv[2]; N = int(sys.argv[3])
        async def post(request):
            data = await request.json()
            return JSONResponse({"return": [{"m1": True, "n": len(data)}]})
        async def gen():
            yield b"retry: 400\\n\\n"
            line = ("tag: x\\ndata: " + EVENT + "\\n\\n").encode()
            for _ in range(N):
                yield line
        async def events(request):
            return StreamingResponse(gen(), media_type="text/event-stream")
        app = Starlette(routes=[Route("/", post, methods=["POST"]), Route("/events", events)])
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error", access_log=False)
    """,
    ),
    "stdlib-threads": (
        sys.executable,
        """
        import json, sys
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        EVENT = sys.argv[2]; N = int(sys.argv[3])
        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def do_POST(self):
                data = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                body = json.dumps({"return": [{"m1": True, "n": len(data)}]}).encode()
                self.send_response(200); self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
            def do_GET(self):
                self.send_response(200); self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close"); self.end_headers()
                self.wfile.write(b"retry: 400\\n\\n")
                line = ("tag: x\\ndata: " + EVENT + "\\n\\n").encode()
                for _ in range(N):
                    self.wfile.write(line)
                self.close_connection = True
        ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """,
    ),
    "cherrypy (Salt's)": (
        "/tmp/saltref/bin/python",  # noqa: S108 - the reference Salt's venv
        """
        import json, sys, cherrypy
        EVENT = sys.argv[2]; N = int(sys.argv[3])
        class Root:
            @cherrypy.expose
            @cherrypy.tools.json_in()
            @cherrypy.tools.json_out()
            def index(self):
                return {"return": [{"m1": True, "n": len(cherrypy.request.json)}]}
            @cherrypy.expose
            def events(self):
                cherrypy.response.headers["Content-Type"] = "text/event-stream"
                line = "tag: x\\ndata: " + EVENT + "\\n\\n"
                def gen():
                    yield "retry: 400\\n\\n"
                    for _ in range(N):
                        yield line
                return gen()
            events._cp_config = {"response.stream": True}
        cherrypy.config.update({"server.socket_host": "127.0.0.1", "server.socket_port": int(sys.argv[1]),
                                "log.screen": False, "engine.autoreload.on": False, "server.thread_pool": 100})
        cherrypy.quickstart(Root())
    """,
    ),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def measure(port: int, requests: int, concurrency: int, events: int) -> tuple[float, float]:
    import aiohttp

    body = [{"client": "local", "tgt": "*", "fun": "test.ping"}]
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        deadline = time.monotonic() + 30
        while True:
            try:
                async with session.post(f"http://127.0.0.1:{port}/", json=body) as r:
                    await r.read()
                    break
            except aiohttp.ClientError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
        left = requests

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                async with session.post(f"http://127.0.0.1:{port}/", json=body) as r:
                    assert r.status == 200
                    await r.read()

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        rps = requests / (time.perf_counter() - start)
        start = time.perf_counter()
        seen = 0
        async with session.get(f"http://127.0.0.1:{port}/events", timeout=aiohttp.ClientTimeout(total=300)) as r:
            async for line in r.content:
                if line.startswith(b"data: "):
                    seen += 1
        assert seen == events, (seen, events)
        eps = events / (time.perf_counter() - start)
    return rps, eps


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=4000)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--events", type=int, default=50000)
    ns = p.parse_args()
    print(f"{'stack':<20} {'POST / req/s':>13} {'SSE events/s':>13}")
    for name, (python, code) in SERVERS.items():
        if not os.path.exists(python):
            print(f"{name:<20} {'(not installed)':>13}")
            continue
        port = free_port()
        proc = subprocess.Popen([python, "-c", textwrap.dedent(code), str(port), EVENT, str(ns.events)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        try:
            rps, eps = asyncio.run(measure(port, ns.requests, ns.concurrency, ns.events))
            print(f"{name:<20} {rps:>13.0f} {eps:>13.0f}")
        except Exception as exc:  # noqa: BLE001 - a candidate that fails is reported, the others still run
            err = proc.stderr.read(2000).decode() if proc.poll() is not None and proc.stderr else ""
            print(f"{name:<20} failed: {exc!r} {err}")
        finally:
            proc.terminate()
            proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
