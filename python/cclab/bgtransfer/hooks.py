"""The commands the daemon runs: a job's --on-complete / --on-error hook, and the
"may I transfer now" check. Neither goes through a shell unless asked (a hook with
--shell): the command line is split with shlex and executed, so that `;`, `$`, `|`
and quotes in a job's fields are never interpreted."""
from __future__ import annotations

import asyncio
import os
import shlex


async def run_hook(cmd: str, shell: bool, env: dict) -> tuple[int, str]:
    """Run ``cmd`` (``/bin/sh -c`` if ``shell``) with ``env`` added to the daemon's
    environment, stdin closed; (exit status or -1, what happened, for the log)."""
    argv = ["/bin/sh", "-c", cmd] if shell else shlex.split(cmd)
    try:
        p = await asyncio.create_subprocess_exec(*argv, env={**os.environ, **env},
                                                 stdin=asyncio.subprocess.DEVNULL)
    except OSError as exc:
        return -1, f"{argv[0]!r} could not start: {exc}"
    rc = await p.wait()
    return rc, f"{argv[0]!r} exited with status {rc}"


async def run_check(cmd: str, limit: float) -> bool:
    """The transfer check (no shell): True if it exits 0 within ``limit`` seconds (a
    check still running then is killed and counts as no)."""
    try:
        p = await asyncio.create_subprocess_exec(*shlex.split(cmd), stdin=asyncio.subprocess.DEVNULL,
                                                 stdout=asyncio.subprocess.DEVNULL,
                                                 stderr=asyncio.subprocess.DEVNULL)
    except OSError:
        return False
    try:
        return await asyncio.wait_for(p.wait(), timeout=limit) == 0
    except asyncio.TimeoutError:
        p.kill()
        await p.wait()
        return False
