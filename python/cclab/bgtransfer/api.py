"""The daemon's local API: JSON over HTTP on a Unix socket (aiohttp.web).

The socket file is created mode 0600 in a folder of mode 0700, and every connection's
peer credentials (SO_PEERCRED, Linux unix(7)) are checked: a process of another user
gets 403 even if the file's mode was widened. Nothing listens on a network address.

    GET  /v1/jobs                 every job (state, bytes, rate, ETA, the host's limit), hosts
    POST /v1/jobs                 add a job: {"urls": [...], "dest": "/abs/folder", ...}
    POST /v1/jobs/ID/pause|resume|cancel
    GET  /v1/jobs/ID              one job

Bad input: 400 {"error": "field: why"}; an unknown job: 404.
"""
from __future__ import annotations

import json
import os
import socket
import struct

from aiohttp import web

from .jobs import JobError, NoJob

VERBS = ("pause", "resume", "cancel")


def peer_uid(request: web.Request) -> int | None:
    """The uid of the process at the other end of the request's Unix socket."""
    sock = request.transport.get_extra_info("socket") if request.transport is not None else None
    if sock is None or sock.family != socket.AF_UNIX:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return uid


def make_app(service, uid: int | None = None) -> web.Application:
    """The application over ``service`` (the daemon: add, jobs, job, act); only the user
    ``uid`` (default: the daemon's own) is served."""
    allowed = os.getuid() if uid is None else uid

    @web.middleware
    async def credentials(request: web.Request, handler):
        who = peer_uid(request)
        if who != allowed:
            return web.json_response({"error": f"refused: peer uid {who} is not the daemon's user {allowed}"},
                                     status=403)
        try:
            return await handler(request)
        except JobError as exc:
            return web.json_response({"error": str(exc)}, status=400)
        except NoJob as exc:
            return web.json_response({"error": f"no job {exc.args[0]}"}, status=404)

    async def list_jobs(request: web.Request) -> web.Response:
        return web.json_response(service.jobs())

    async def add(request: web.Request) -> web.Response:
        try:
            raw = json.loads(await request.text())
        except ValueError as exc:
            raise JobError(f"body: not JSON: {exc}") from None
        return web.json_response(service.add(raw), status=201)

    def job_id(request: web.Request) -> int:
        text = request.match_info["id"]
        if not text.isdigit():
            raise JobError(f"job: expected a job number, got {text!r}")
        return int(text)

    async def one(request: web.Request) -> web.Response:
        return web.json_response(service.job(job_id(request)))

    async def act(request: web.Request) -> web.Response:
        verb = request.match_info["verb"]
        if verb not in VERBS:
            raise JobError(f"action: expected one of {', '.join(VERBS)}, got {verb!r}")
        return web.json_response(await service.act(job_id(request), verb))

    app = web.Application(middlewares=[credentials], client_max_size=1 << 20)
    app.router.add_get("/v1/jobs", list_jobs)
    app.router.add_post("/v1/jobs", add)
    app.router.add_get("/v1/jobs/{id}", one)
    app.router.add_post("/v1/jobs/{id}/{verb}", act)
    return app


async def listen(app: web.Application, path: str) -> web.AppRunner:
    """Serve ``app`` on a Unix socket at ``path``: folder 0700, socket 0600 (created under
    umask 0177, so that it is never wider, then chmod'ed)."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if os.path.exists(path):
        os.unlink(path)  # a socket left by a killed daemon (the caller holds the daemon lock)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    old = os.umask(0o177)
    try:
        await web.UnixSite(runner, path).start()
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    return runner
