"""The `cclab bg` commands: serve, fetch, status (registered by cclab.cli)."""
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
    opts = ServeOptions(rate=args.rate, conn_rate=args.conn_rate, fail_every=args.fail_every,
                        drop_every=args.drop_every, ignore_range=args.ignore_range)
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
    s.set_defaults(func=_cmd_serve)
