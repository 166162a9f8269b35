"""The `cclab` command line. Every failure becomes one clear message and a non-zero
exit status; no traceback reaches the user (set CCLAB_DEBUG=1 to see one)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


class CliError(Exception):
    """An error to print as ``cclab: error: ...`` with exit status 2."""


def _cmd_run(args: argparse.Namespace) -> int:
    from . import api
    from .report import print_summary, plot_completion_times

    result = api.run(args.file, seed=args.seed, progress=not args.json and not args.quiet)
    for w in result.warnings:
        print(f"cclab: warning: {w}", file=sys.stderr)
    if args.out:
        out = Path(args.out)
        result.save(out)
        png = plot_completion_times(result, out / "completion-vs-size.png")
    if args.json:
        import json

        print(json.dumps(api.json_safe(result.summary), indent=2, sort_keys=True))
    else:
        print_summary(result)
        if args.out:
            print(f"\nwrote {out}/flows.parquet, links.parquet, series.parquet, summary.json, {png.name}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .experiments import catalogue

    if args.list or not args.name:
        rows = catalogue.entries()
        if not rows:
            print("no reproductions registered")
            return 0
        width = max(len(e.name) for e in rows)
        for e in rows:
            print(f"{e.name:<{width}}  {e.figure:<10} {e.title}  [{e.paper}]")
        return 0
    try:
        entry = catalogue.get(args.name)
    except KeyError as exc:
        raise CliError(exc.args[0]) from None
    out = Path(args.out)
    outcome, paths = entry.run(quick=args.quick, out=out, seed=args.seed, progress=True)
    status = {True: "agrees", False: "DISAGREES", None: "shown"}[outcome.agrees]
    print(f"{entry.name}: {status} — {outcome.verdict}")
    for kind in ("csv", "png", "md"):
        print(f"  wrote {paths[kind]}")
    return 0 if outcome.agrees is not False else 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `cclab` command."""
    from . import __version__

    p = argparse.ArgumentParser(prog="cclab", description=__doc__.split("\n")[0])
    p.add_argument("--version", action="version", version=f"cclab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="run a scenario file in the packet-level simulator")
    r.add_argument("file", help="scenario TOML file")
    r.add_argument("--seed", type=int, default=None, help="override the scenario's seed")
    r.add_argument("--out", default=None, help="folder for flows/links/series Parquet, summary JSON and plot")
    r.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(func=_cmd_run)

    q = sub.add_parser("reproduce", help="reproduce a figure of one of the papers")
    q.add_argument("name", nargs="?", help="catalogue entry (see --list)")
    q.add_argument("--list", action="store_true", help="list the catalogue")
    q.add_argument("--quick", action="store_true", help="the reduced size that runs in minutes")
    q.add_argument("--out", default="results/reproduce", help="output folder (default: results/reproduce)")
    q.add_argument("--seed", type=int, default=1, help="base seed (default 1)")
    q.set_defaults(func=_cmd_reproduce)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `cclab` script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("cclab: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # every error becomes one line, never a traceback
        if os.environ.get("CCLAB_DEBUG"):
            raise
        msg = str(exc) or exc.__class__.__name__
        print(f"cclab: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
