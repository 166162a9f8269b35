"""A client of the daemon's API (api.py): HTTP/1.1 over its Unix socket, JSON both ways."""
from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path


class DaemonError(Exception):
    """The daemon answered with an error (``status``: 400 bad input, 403, 404) or is not there (0)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.path)
        self.sock = s


class Client:
    def __init__(self, socket_path: str | Path, timeout: float = 30.0):
        self.path = str(socket_path)
        self.timeout = timeout

    def request(self, method: str, url: str, body: dict | None = None) -> dict:
        conn = _UnixConnection(self.path, self.timeout)
        try:
            try:
                conn.request(method, url, body=None if body is None else json.dumps(body),
                             headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                text = r.read().decode()
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                raise DaemonError(0, f"no daemon at {self.path} ({exc.strerror}): start it with "
                                     f"`cclab bg daemon`") from None
            except PermissionError as exc:
                raise DaemonError(0, f"{self.path}: {exc.strerror} (the socket belongs to another user)") from None
        finally:
            conn.close()
        data = json.loads(text) if text else {}
        if r.status >= 400:
            raise DaemonError(r.status, data.get("error", f"HTTP {r.status}"))
        return data

    def add(self, **spec) -> dict:
        return self.request("POST", "/v1/jobs", spec)

    def jobs(self) -> dict:
        return self.request("GET", "/v1/jobs")

    def job(self, job_id: int) -> dict:
        return self.request("GET", f"/v1/jobs/{job_id}")

    def act(self, job_id: int, verb: str) -> dict:
        return self.request("POST", f"/v1/jobs/{job_id}/{verb}")
