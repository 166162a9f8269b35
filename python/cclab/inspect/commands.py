"""The `cclab show`, `plot`, `compare` and `scenarios` commands. Registering them
imports nothing heavy: pandas and matplotlib load when a command runs."""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def _metadata_line(run, key: str) -> str | None:
    """run.json's ``key`` as one line (a command line's words joined), None when absent."""
    v = run.metadata.get(key)
    if v in (None, "", []):
        return None
    return " ".join(map(str, v)) if isinstance(v, list) else str(v)


def run_info(run) -> dict:
    """What a saved folder records about its run beyond the tables."""
    return {
        "path": str(run.path),
        "seed": run.metadata.get("seed", run.summary.get("seed")),
        "cclab_version": _metadata_line(run, "cclab_version"),
        "command": _metadata_line(run, "command"),
        "config_sha256": run.config_digest(),
    }


def _cmd_show(args: argparse.Namespace) -> int:
    from ..api import json_safe
    from ..summary import print_summary
    from .saved import load

    run = load(args.dir)
    info = run_info(run)
    if args.json:
        print(json.dumps({"summary": json_safe(run.summary), "run": info, "warnings": run.warnings},
                         indent=2, sort_keys=True))
        return 0
    print_summary(run)
    print(f"\nsaved in {info['path']}: seed {info['seed']} (effective), "
          f"cclab {info['cclab_version'] or 'version not recorded'}")
    if info["command"]:
        print(f"command: {info['command']}")
    if info["config_sha256"]:
        print(f"configuration sha256: {info['config_sha256']}")
    for w in run.warnings:
        print(f"warning: {w}")
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from .saved import load

    if args.flow is not None and args.link is not None:
        raise ValueError("give --flow or --link, not both")
    if (args.start is not None or args.end is not None) and args.flow is None and args.link is None:
        raise ValueError("--from and --to choose the time window of a --flow or --link figure")
    run = load(args.dir)
    if args.flow is not None or args.link is not None:
        from .traceplots import plot_flow, plot_link

        what = f"flow-{args.flow}" if args.flow is not None else f"link-{args.link}"
        out = Path(args.out) if args.out else run.path / f"{_file_part(what)}.png"
        if args.flow is not None:
            path = plot_flow(run, args.flow, out, args.start, args.end)
        else:
            path = plot_link(run, args.link, out, args.start, args.end)
        print(f"wrote {path}")
        return 0
    from .plots import plot_run

    out = Path(args.out) if args.out else run.path / "overview.png"
    path, notes = plot_run(run, out)
    for n in notes:
        print(f"note: {n}")
    print(f"wrote {path}")
    return 0


def _file_part(name: str) -> str:
    """A name as part of a file name (``a->b`` as ``a-to-b``, other odd characters as ``_``)."""
    import re

    return re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("->", "-to-"))


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import compare, format_comparison, require_bins
    from .saved import load

    a, b = load(args.a), load(args.b)
    c = compare(a, b, a_label=str(args.a), b_label=str(args.b))
    if args.out:
        require_bins(c)  # refuse before writing a plot with nothing in it
    if args.json:
        print(json.dumps(_nan_to_none(c), indent=2, allow_nan=False))
    else:
        print(format_comparison(c))
        if not any(c["ratio"].values()):
            print("\nno completion-time ratio: no size bin in common (see `cclab compare --help`)")
    if args.out:
        from .plots import plot_compare

        path = plot_compare(c, args.out)
        print(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _nan_to_none(x):
    """NaN and infinity as null (JSON has neither): a ratio_hi of null is an
    unbounded interval, ratio_lo and ratio_hi both null an unknown one."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _nan_to_none(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_nan_to_none(v) for v in x]
    return x


def _cmd_scenarios(args: argparse.Namespace) -> int:
    from .scenarios import entries, scenarios_dir, shown_path

    root = scenarios_dir()
    rows = entries(root)
    if args.json:
        print(json.dumps([{"paper": e.paper, "name": e.name, "path": str(e.path.resolve()),
                           "description": e.description, "command": e.command(shown_path(e.path))}
                          for e in rows], indent=2))
        return 0
    print(f"ready scenarios in {shown_path(root)}/ (one folder per paper):")
    paper = None
    for e in rows:
        if e.paper != paper:
            paper = e.paper
            print(f"\n{paper}/")
        print(f"  {e.name:<18} {e.description}")
        print(f"  {'':<18} $ {e.command(shown_path(e.path))}")
    return 0


def register(sub) -> None:
    """Add the commands to the `cclab` parser's subparsers."""
    s = sub.add_parser("show", help="print the summary of a saved run (a folder written by `cclab run --out`)")
    s.add_argument("dir", help="the saved run's folder")
    s.add_argument("--json", action="store_true",
                   help="print {summary, run: {seed, cclab_version, command, config_sha256}, warnings} as JSON")
    s.set_defaults(func=_cmd_show)

    p = sub.add_parser("plot", help="plot a saved run: queue, throughput, active flows and access controller "
                                    "over time; completion time vs size; with --flow or --link, its traces",
                       description="Plot a saved run (DIR/overview.png). With --flow ID: the traced flow's "
                                   "time-sequence graph (segments sent and resent, the ACK line, SACK blocks, "
                                   "drops and marks) over its window, RTT and controller state (DIR/flow-ID.png). "
                                   "With --link NAME: the traced link's queue at event resolution with its drops "
                                   "and marks, and each packet's wait (DIR/link-NAME.png). Traces come from "
                                   "[trace] in the scenario (docs/engine.md, \"Traces\").")
    p.add_argument("dir", help="the saved run's folder")
    p.add_argument("--out", default=None, help="the PNG to write (default: DIR/overview.png, DIR/flow-ID.png, "
                                               "DIR/link-NAME.png)")
    p.add_argument("--flow", type=int, default=None, metavar="ID", help="a traced flow's figure (its id in the flows table)")
    p.add_argument("--link", default=None, metavar="NAME", help="a traced link's figure")
    p.add_argument("--from", dest="start", type=float, default=None, metavar="S",
                   help="with --flow or --link: from this simulated time (s)")
    p.add_argument("--to", dest="end", type=float, default=None, metavar="S",
                   help="with --flow or --link: up to this simulated time (s)")
    p.set_defaults(func=_cmd_plot)

    c = sub.add_parser("compare", help="two saved runs side by side, and their completion-time ratio by size",
                       description="Print two saved runs side by side (per class: flows, mean, median and p95 "
                                   "completion time, throughput; per link: utilization, drops, queue) and, for "
                                   "each class in common, the ratio B/A of the mean completion time per size bin "
                                   "with a 95%% confidence interval. Size bins are log-spaced over both runs' "
                                   "sizes; a bin counts when it holds at least 5 finished flows in each run.")
    c.add_argument("a", help="the first saved run's folder (A)")
    c.add_argument("b", help="the second saved run's folder (B)")
    c.add_argument("--out", default=None, help="also write the ratio plot to this PNG (refused when no size bin "
                                               "is in common)")
    c.add_argument("--json", action="store_true", help="print the comparison as JSON")
    c.set_defaults(func=_cmd_compare)

    l = sub.add_parser("scenarios", help="list the ready scenarios shipped in scenarios/ and how to run each")
    l.add_argument("--json", action="store_true", help="print the list as JSON")
    l.set_defaults(func=_cmd_scenarios)
