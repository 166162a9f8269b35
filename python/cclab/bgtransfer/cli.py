"""The `cclab bg` commands: serve, fetch, status (registered by cclab.cli); the service's
verbs (daemon, add, jobs, pause, resume, cancel, watch) are in daemon_cli.py."""
from __future__ import annotations

import argparse

from .units import parse_amount


def _rate(what: str):
    def parse(text: str) -> float:
        try:
            return parse_amount(text, what=what, rate=True)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def _cmd_serve(args: argparse.Namespace) -> int:
    from .server import ServeOptions, serve_forever

    if args.fail_every < 0 or args.drop_every < 0:
        raise ValueError("bg serve: --fail-every and --drop-every take a count >= 0")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise ValueError("bg serve: give --tls-cert and --tls-key together")
    opts = ServeOptions(rate=args.rate, conn_rate=args.conn_rate, fail_every=args.fail_every,
                        drop_every=args.drop_every, ignore_range=args.ignore_range, tls_cert=args.tls_cert,
                        tls_key=args.tls_key)
    return serve_forever(args.dir, args.host, args.port, opts)


def register(sub: argparse._SubParsersAction) -> None:
    """Add `cclab bg ...` to the command line's subcommands."""
    bg = sub.add_parser("bg", help="background transfers on a real network: fetch files under access control "
                                   "(FAIRBAT), their journal, a test file server")
    bsub = bg.add_subparsers(dest="bg_command", metavar="ACTION", required=True)

    s = bsub.add_parser("serve", help="serve the files of a folder over HTTP with byte ranges (tests and demos)")
    s.add_argument("dir", help="the folder to serve")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port, printed)")
    s.add_argument("--rate", type=_rate("--rate"), default=None, metavar="R",
                   help="total rate limit over all connections, bytes/s (10M = 10^7 B/s; 8Mbit = 10^6 B/s)")
    s.add_argument("--conn-rate", type=_rate("--conn-rate"), default=None, metavar="R",
                   help="rate limit of each connection, bytes/s")
    s.add_argument("--fail-every", type=int, default=0, metavar="N", help="fault injection: every N-th GET gets a 503")
    s.add_argument("--drop-every", type=int, default=0, metavar="N",
                   help="fault injection: every N-th GET's connection is closed after half the body")
    s.add_argument("--ignore-range", action="store_true", help="fault injection: ignore Range (always 200)")
    s.add_argument("--tls-cert", default=None, metavar="PEM", help="serve https with this certificate (chain)")
    s.add_argument("--tls-key", default=None, metavar="PEM", help="the certificate's private key")
    s.set_defaults(func=_cmd_serve)
    _register_fetch(bsub)
    from .daemon_cli import register as register_service

    register_service(bsub)


def _cmd_fetch(args: argparse.Namespace) -> int:
    import sys

    from . import fetch
    from .units import human_bytes

    res = fetch(args.sources, args.dest, policy=args.policy, params=args.param, chunk_size=args.chunk_size,
                demand=args.demand, within=args.within, retries=args.retries, timeout=args.timeout,
                overwrite=args.overwrite, progress=not args.quiet, max_active=args.max_active, ca_file=args.ca_file)
    if args.trace:
        import csv

        with open(args.trace, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["t_s", "limit", "active", "waiting"])
            w.writerows(res.limit_trace)
    if args.json:
        import json
        from dataclasses import asdict

        print(json.dumps({"status": res.status, "policy": res.policy, "elapsed_s": res.elapsed,
                          "bytes_fetched": res.bytes_fetched, "max_active": res.max_active,
                          "averages": res.averages, "params": res.params,
                          "files": [asdict(f) for f in res.files]}, indent=2))
    else:
        done = sum(f.state in ("done", "skipped") for f in res.files)
        rate = res.bytes_fetched / res.elapsed if res.elapsed > 0 else 0.0
        line = (f"{done}/{len(res.files)} files done, {human_bytes(res.bytes_fetched)} fetched in "
                f"{res.elapsed:.1f} s ({human_bytes(rate)}/s), policy {res.policy}, at most {res.max_active} "
                f"chunks at once")
        if res.averages:
            line += f", mean limit {res.averages['limit']:.2f}, mean active {res.averages['active']:.2f}"
        print(line)
    for f in res.failed:
        print(f"cclab: error: {f.name}: {f.error}", file=sys.stderr)
    return res.status


def _cmd_status(args: argparse.Namespace) -> int:
    from .status import print_status

    return print_status(args.dest, as_json=args.json)


def _register_fetch(bsub) -> None:
    from .engine import DEFAULT_MAX_ACTIVE, DEFAULT_RETRIES, DEFAULT_TIMEOUT

    f = bsub.add_parser("fetch", help="download files into a folder, at most m(t) chunks at once "
                                      "(FAIRBAT by default), journaled and resumable")
    f.add_argument("sources", nargs="+", metavar="URL|MANIFEST",
                   help="http(s) URLs, or manifest files (TOML/JSON: url, optional size, sha256, name)")
    f.add_argument("-d", "--dest", required=True, help="destination folder (its journal: DEST/.cclab-bg/)")
    f.add_argument("--policy", default="fairbat", metavar="P",
                   help="fairbat (default), static:N, rate (rate tracking) or unlimited (vanilla)")
    f.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a controller parameter (e.g. tau=20, period=30, m0=2; docs/protocols.md)")
    f.add_argument("--chunk-size", default="3MB", metavar="SIZE",
                   help="bytes per chunk (byte range); default 3MB, the papers' mean micro-flow size")
    g = f.add_mutually_exclusive_group()
    g.add_argument("--demand", type=_rate("--demand"), default=None, metavar="RATE",
                   help="offered load of the background in bytes/s, e.g. 375k or 3Mbit (the papers' C·rho_b): "
                        "chunks are released to the controller at this rate")
    g.add_argument("--within", type=float, default=None, metavar="SECONDS",
                   help="release the backlog evenly over this many seconds (demand = bytes / SECONDS)")
    f.add_argument("--retries", type=int, default=DEFAULT_RETRIES,
                   help=f"retries of a chunk after transient failures (default {DEFAULT_RETRIES})")
    f.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds to connect and between reads (default {DEFAULT_TIMEOUT:g})")
    f.add_argument("--max-active", type=int, default=DEFAULT_MAX_ACTIVE,
                   help=f"cap on simultaneous connections, any policy (default {DEFAULT_MAX_ACTIVE})")
    f.add_argument("--overwrite", action="store_true", help="replace existing files whose checksum differs")
    f.add_argument("--ca-file", default=None, metavar="PEM",
                   help="certificate authorities to trust for https URLs (default: the system's)")
    f.add_argument("--trace", default=None, metavar="CSV",
                   help="write the controller's trace: t_s, limit, active, waiting at every change")
    f.add_argument("--json", action="store_true", help="print the outcome as JSON")
    f.add_argument("--quiet", action="store_true", help="no progress bars")
    f.set_defaults(func=_cmd_fetch)

    s = bsub.add_parser("status", help="what the journal of a destination folder says: per-file state, "
                                       "bytes done, rate, failures")
    s.add_argument("dest", help="destination folder of `cclab bg fetch`")
    s.add_argument("--json", action="store_true", help="as JSON")
    s.set_defaults(func=_cmd_status)
