"""The `cclab bg` verbs of the service: daemon, add, jobs, pause, resume, cancel, watch."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from .units import human_bytes


def _client(args):
    from .client import Client
    from .daemon import default_socket

    return Client(args.socket or default_socket())


def _call(fn, *a, **kw):
    """A client call; the daemon's 400/404 are bad input (exit 2), no daemon is a failure (1)."""
    from .client import DaemonError

    try:
        return fn(*a, **kw)
    except DaemonError as exc:
        if exc.status in (400, 404):
            raise ValueError(str(exc)) from None
        raise RuntimeError(str(exc)) from None


def _cmd_daemon(args: argparse.Namespace) -> int:
    from .daemon import Daemon, Options, default_socket, default_state_dir
    from .policy import parse_policy
    from .units import parse_amount

    if args.max_active < 1:
        raise ValueError(f"--max-active: expected a whole number >= 1, got {args.max_active}")
    if args.retries < 0:
        raise ValueError(f"--retries: expected a whole number >= 0, got {args.retries}")
    if not args.check_every > 0:
        raise ValueError(f"--check-every: expected a positive number of seconds, got {args.check_every}")
    if not args.timeout > 0:
        raise ValueError(f"--timeout: expected a positive number of seconds, got {args.timeout}")
    base, cap = args.backoff
    if not 0 < base <= cap:
        raise ValueError(f"--backoff: expected 0 < BASE <= CAP, got {base} {cap}")
    if args.check is not None:
        import shlex

        try:
            if not shlex.split(args.check):
                raise ValueError
        except ValueError:
            raise ValueError(f"--check: expected a command line, got {args.check!r}") from None
    opts = Options(state=Path(args.state) if args.state else default_state_dir(),
                   socket=Path(args.socket) if args.socket else default_socket(),
                   policy=parse_policy(args.policy, args.param),
                   chunk_size=int(parse_amount(args.chunk_size, what="--chunk-size", rate=False)),
                   retries=args.retries, timeout=args.timeout, backoff=(base, cap), max_active=args.max_active,
                   max_rate=parse_amount(args.max_rate, what="--max-rate", rate=True) if args.max_rate else None,
                   check=args.check, check_every=args.check_every, quiet=args.quiet)
    return Daemon(opts).run()


def _cmd_add(args: argparse.Namespace) -> int:
    spec = {"urls": args.urls, "dest": os.path.abspath(args.dest), "priority": args.priority}
    for key in ("names", "not_before", "window", "max_rate", "size", "sha256", "on_complete", "on_error"):
        val = getattr(args, key)
        if val not in (None, []):
            spec[key] = val
    if args.shell:
        spec["shell"] = True
    job = _call(_client(args).add, **spec)
    if args.json:
        print(json.dumps(job, indent=2))
    else:
        print(f"job {job['id']}: queued, {len(job['urls'])} file(s) into {job['dest']}, priority {job['priority']}")
    return 0


def _eta(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:.0f}s" if s < 120 else f"{s / 60:.0f}m" if s < 7200 else f"{s / 3600:.1f}h"


def format_jobs(jobs: list[dict]) -> list[str]:
    lines = [f"{'job':>4} {'state':<9} {'priority':<10} {'done':>9} {'size':>9} {'rate':>10} {'ETA':>5} "
             f"{'limit':>5}  note"]
    for j in jobs:
        size = human_bytes(j["size"]) if j["size"] is not None else "?"
        rate = f"{human_bytes(j['rate_Bps'])}/s" if j["rate_Bps"] else "-"
        limit = f"{j['limit']:.2f}" if j["limit"] is not None else "-"
        n = j["active_chunks"]
        note = j["error"] or j["held"] or (f"{n} chunk{'s' if n > 1 else ''} in flight" if n else "")
        lines.append(f"{j['id']:>4} {j['state']:<9} {j['priority']:<10} {human_bytes(j['bytes_done']):>9} "
                     f"{size:>9} {rate:>10} {_eta(j['eta_s']):>5} {limit:>5}  {note[:100]}")
    return lines


def _cmd_jobs(args: argparse.Namespace) -> int:
    data = _call(_client(args).jobs)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print("\n".join(format_jobs(data["jobs"])))
    hosts = ", ".join(f"{h['host']}: {h['policy']} limit {h['limit']:.2f}"
                      + (" (idle)" if h["idle"] else f", {h['active']} active, {h['waiting']} waiting")
                      if h["limit"] is not None else f"{h['host']}: {h['policy']}" for h in data["hosts"])
    print(f"{len(data['jobs'])} jobs; transfer check: {'yes' if data['allowed'] else 'no'}"
          + (f"; hosts: {hosts}" if hosts else ""))
    return 0


def _cmd_act(args: argparse.Namespace) -> int:
    job = _call(_client(args).act, args.job, args.bg_command)
    print(f"job {job['id']}: {job['state']}")
    return 0


def _cmd_watch(args: argparse.Namespace) -> int:
    """Reprint the jobs every --interval seconds until the watched ones have ended."""
    from .store import ENDED

    client = _client(args)
    tty = sys.stdout.isatty()
    while True:
        jobs = _call(client.jobs)["jobs"]
        if args.jobs:
            known = {j["id"] for j in jobs}
            missing = [i for i in args.jobs if i not in known]
            if missing:
                raise ValueError(f"watch: no job {missing[0]}")
            jobs = [j for j in jobs if j["id"] in args.jobs]
        shown = jobs if args.jobs else [j for j in jobs if j["state"] not in ENDED or
                                        (j["finished_at"] or 0) > time.time() - 60]
        if tty:
            print("\x1b[H\x1b[2J", end="")
        print("\n".join(format_jobs(shown)), flush=True)
        if all(j["state"] in ENDED for j in jobs):
            return 0 if all(j["state"] == "done" for j in jobs) else 1
        time.sleep(args.interval)


def register(bsub) -> None:
    """Add the service's verbs to `cclab bg`."""
    from .engine import DEFAULT_RETRIES, DEFAULT_TIMEOUT

    d = bsub.add_parser("daemon", help="the background-transfer service: a persistent job queue, a local API on "
                                       "a Unix socket, one FAIRBAT controller per host")
    d.add_argument("--state", default=None, metavar="DIR",
                   help="the queue's folder (default $XDG_STATE_HOME/cclab-bg or ~/.local/state/cclab-bg)")
    _socket_arg(d)
    d.add_argument("--policy", default="fairbat", metavar="P", help="fairbat (default), static:N, rate, unlimited")
    d.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="a controller parameter")
    d.add_argument("--chunk-size", default="3MB", metavar="SIZE", help="bytes per chunk (default 3MB)")
    d.add_argument("--max-active", type=int, default=64, help="cap on simultaneous connections (default 64)")
    d.add_argument("--max-rate", default=None, metavar="RATE", help="total rate cap of all jobs, bytes/s")
    d.add_argument("--retries", type=int, default=DEFAULT_RETRIES, help="retries of a chunk")
    d.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds to connect and between reads")
    d.add_argument("--backoff", type=float, nargs=2, default=(0.5, 30.0), metavar=("BASE", "CAP"),
                   help="exponential backoff of retries, seconds (default 0.5 30)")
    d.add_argument("--check", default=None, metavar="CMD",
                   help="\"may I transfer now\": a command (no shell) whose exit status 0 means yes")
    d.add_argument("--check-every", type=float, default=60.0, metavar="S", help="seconds between checks (60)")
    d.add_argument("--quiet", action="store_true", help="no log lines on stderr")
    d.set_defaults(func=_cmd_daemon)

    a = bsub.add_parser("add", help="queue a job with the daemon")
    a.add_argument("urls", nargs="+", metavar="URL", help="http(s) URLs of one host")
    a.add_argument("--dest", default=".", help="destination folder (default: the current one)")
    a.add_argument("--name", dest="names", action="append", default=[], metavar="NAME",
                   help="file name under DEST, one per URL in order (default: the URL's last segment)")
    a.add_argument("--priority", default="normal", help="foreground, high, normal (default) or low")
    a.add_argument("--not-before", default=None, metavar="TIME", help="earliest start: ISO 8601, +30m, epoch s")
    a.add_argument("--window", default=None, metavar="HH:MM-HH:MM", help="daily window, local time (22:00-06:00)")
    a.add_argument("--max-rate", default=None, metavar="RATE", help="this job's rate cap, bytes/s (1M, 8Mbit)")
    a.add_argument("--size", default=None, metavar="SIZE",
                   help="the bytes the job is expected to fetch (3MB): its chunks count as waiting from the add")
    a.add_argument("--sha256", default=None, metavar="HEX", help="the file's expected SHA-256 (one URL)")
    a.add_argument("--on-complete", default=None, metavar="CMD", help="run when the job is done (no shell)")
    a.add_argument("--on-error", default=None, metavar="CMD", help="run when the job fails (no shell)")
    a.add_argument("--shell", action="store_true", help="run --on-complete/--on-error with /bin/sh -c")
    a.add_argument("--json", action="store_true", help="print the job as JSON")
    _socket_arg(a)
    a.set_defaults(func=_cmd_add)

    j = bsub.add_parser("jobs", help="the daemon's jobs: state, bytes, rate, ETA, the controller's limit")
    j.add_argument("--json", action="store_true", help="as JSON")
    _socket_arg(j)
    j.set_defaults(func=_cmd_jobs)
    for verb in ("pause", "resume", "cancel"):
        v = bsub.add_parser(verb, help=f"{verb} a job")
        v.add_argument("job", type=int)
        _socket_arg(v)
        v.set_defaults(func=_cmd_act)
    w = bsub.add_parser("watch", help="live progress until the jobs end (exit 0 if all done, 1 if not)")
    w.add_argument("jobs", nargs="*", type=int, metavar="JOB", help="jobs to watch (default: all unfinished)")
    w.add_argument("--interval", type=float, default=1.0, help="seconds between updates (default 1)")
    _socket_arg(w)
    w.set_defaults(func=_cmd_watch)


def _socket_arg(p) -> None:
    p.add_argument("--socket", default=None, metavar="PATH",
                   help="the daemon's socket (default $CCLAB_BG_SOCKET, $XDG_RUNTIME_DIR/cclab-bg/daemon.sock, "
                        "or STATE/daemon.sock)")
