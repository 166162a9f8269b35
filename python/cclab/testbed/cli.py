"""The `cclab testbed` commands: run, clean (registered by cclab.cli)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _cmd_run(args: argparse.Namespace) -> int:
    from . import runner
    from .scenario import load

    sc = load(args.file, duration=args.duration, seeds=args.seeds)  # every error before any work
    out = Path(args.out) if args.out else Path("results") / "testbed" / sc.name.replace("/", "-")
    log = (lambda *a: print(*a, file=sys.stderr)) if args.json else print
    results = runner.run(sc, out, log=log)
    if args.json:
        print(json.dumps({k: v for k, v in results.items() if k not in ("interactive", "background")},
                         indent=1, default=float))
    else:
        print()
        print(runner.table(results))
        print(f"\nwrote {out}/results.json, table.txt, completion-vs-size.png")
    return 0


def _cmd_clean(args: argparse.Namespace) -> int:
    from .netns import clean_stale

    gone = clean_stale(everything=args.all)
    print("\n".join(f"removed {ns}" for ns in gone) if gone else "nothing to clean")
    return 0


def _seconds(text: str) -> float:
    from .scenario import ScenarioError, _duration_s

    try:
        return _duration_s(text if not text.replace(".", "", 1).isdigit() else text + "s", "--duration")
    except ScenarioError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:
    """Add `cclab testbed ...` to the command line's subcommands."""
    t = sub.add_parser("testbed", help="measure background policies on a Linux bottleneck (network namespaces, "
                                       "veth, tbf) beside the simulator's prediction (needs root)")
    tsub = t.add_subparsers(dest="testbed_command", metavar="ACTION", required=True)
    r = tsub.add_parser("run", help="run a testbed scenario: every policy, same interactive arrivals, "
                                    "and the simulator's prediction")
    r.add_argument("file", help="testbed scenario TOML (e.g. scenarios/testbed/single-link.toml)")
    r.add_argument("--duration", type=_seconds, default=None, metavar="S",
                   help="seconds of each measurement (default: [testbed] duration)")
    r.add_argument("--seeds", type=int, default=None, metavar="N", help="seeds per policy (default: [testbed] seeds)")
    r.add_argument("--out", default=None, metavar="DIR", help="output folder (default results/testbed/NAME)")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.set_defaults(func=_cmd_run)
    c = tsub.add_parser("clean", help="remove the namespaces of testbed runs whose process is gone")
    c.add_argument("--all", action="store_true", help="remove every testbed namespace, running or not")
    c.set_defaults(func=_cmd_clean)
