"""The `cclab` command line.

Every failure is one message on stderr (``cclab: error: ...``; CCLAB_DEBUG=1 shows
the traceback) and an exit status: 0 success; 1 the work failed (a simulation or
other error while running, or a reproduction that disagrees with its paper);
2 bad input (a usage error, an invalid scenario or --set, a run refused by its
limits, an unusable --out folder), always before any simulation. A closed output
pipe (``cclab run F --json | head``) is not an error: cclab stops writing and
exits 0.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

DESCRIPTION = ("Packet- and flow-level simulation of congestion control for mixed traffic: run and check "
               "scenarios, reproduce the papers' figures, sweep parameters.")
EPILOG = ("exit status: 0 success; 1 the work failed (simulation error, a reproduction disagreeing with its "
          "paper); 2 bad input (usage, invalid scenario or --set, limits exceeded, unusable --out), found "
          "before any simulation. Errors are one line on stderr; CCLAB_DEBUG=1 shows the traceback. "
          "See docs/cli.md.")


class CliError(Exception):
    """An error to print as ``cclab: error: ...`` with exit status 2."""


def _scenario(args: argparse.Namespace) -> tuple[dict, Path]:
    """The scenario file with its --set overrides applied, and the folder its relative
    file names are looked up in."""
    from .scenario import apply_overrides, load_scenario, parse_override

    structure, base = load_scenario(Path(args.file))
    return apply_overrides(structure, [parse_override(s) for s in args.set]), base


def _cmd_run(args: argparse.Namespace) -> int:
    from . import __version__

    structure, base = _scenario(args)
    dest = None
    if args.out:  # checked and locked first; the engine then validates the scenario, both before simulating
        from .outdir import Destination

        dest = Destination(args.out)
    try:
        from . import api

        warned = []

        def warn(warnings: list) -> None:  # before the run ends, if it shows a progress bar
            for w in warnings:
                print(f"cclab: warning: {w}", file=sys.stderr)
            warned.append(True)

        result = api._run_structure(structure, base, args.seed, progress=not args.json and not args.quiet, warn=warn)
        if not warned:
            warn(result.warnings)
        if dest is not None:
            from .inspect.plots import plot_completion_or_throughput

            t0 = time.monotonic()
            rows = len(result.flows) + len(result.series) + len(result.arrivals)
            if not args.quiet and rows > 2_000_000:  # about 2 s of Parquet and plotting: say so
                print(f"cclab: writing {rows:,} rows into {dest.path} ...", file=sys.stderr)
            with dest.writing() as tmp:
                result.write_files(tmp, command=["cclab", *args.argv])
                plot_completion_or_throughput(result, tmp / "completion-vs-size.png")
            if not args.quiet and time.monotonic() - t0 > 2:
                print(f"cclab: wrote {dest.path} in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    finally:
        if dest is not None:
            dest.release()
    if args.json:
        import json

        from .api import json_safe

        print(json.dumps(json_safe(result.summary), indent=2, sort_keys=True))
    else:
        from .summary import print_summary

        print_summary(result)
        if dest is not None:
            files = ", ".join(sorted(f.name for f in dest.path.iterdir()))
            print(f"\nwrote {args.out}/: {files} (cclab {__version__})")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .scenario import to_json
    from .validation import validate_text

    structure, base = _scenario(args)
    info = validate_text(to_json(structure), base, args.seed)
    if args.json:
        import json

        print(json.dumps(info, indent=2, sort_keys=True))
    else:
        from .describe import describe

        print(describe(info))
        print("valid")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .experiments import catalogue

    if args.list or not (args.name or args.all):
        rows = catalogue.entries()
        if not rows:
            print("no reproductions registered")
            return 0
        width = max(len(e.name) for e in rows)
        for e in rows:
            print(f"{e.name:<{width}}  {e.figure:<10} {e.title}  [{e.paper}]")
        return 0
    if args.all and args.name:
        raise CliError("give a reproduction's name or --all, not both")
    try:
        entries = catalogue.entries() if args.all else [catalogue.get(args.name)]
    except KeyError as exc:
        raise CliError(exc.args[0]) from None
    out = Path(args.out)
    if args.ablate is not None:
        return _ablate(entries, args, out)
    status_code = 0
    for entry in entries:
        try:
            outcome, paths = entry.run(quick=not args.full, out=out, seed=args.seed, progress=not args.quiet,
                                       store=args.store, cluster=args.cluster, workers=args.workers)
        except Exception as exc:
            if not args.all or os.environ.get("CCLAB_DEBUG"):
                raise
            catalogue.write_failure(entry, exc, out, quick=not args.full)
            print(f"{entry.name}: FAILED — {exc.__class__.__name__}: {exc}")
            status_code = 1
            continue
        status = {True: "agrees", False: "DISAGREES", None: "shown"}[outcome.agrees]
        print(f"{entry.name}: {status} — {outcome.verdict}")
        if not args.all:
            for kind in ("csv", "png", "md"):
                print(f"  wrote {paths[kind]}")
        if outcome.agrees is False:
            status_code = 1
    if args.all:
        from .reproduction_page import write_report

        page = write_report(out)
        print(f"wrote {page}")
    return status_code


ABLATE_HELP = ("run the entry's declared ablation: the entry as declared, then each level of each FACTOR "
               "(default: every factor) alone; writes NAME-ablation.md and .csv")


def _ablate(entries, args: argparse.Namespace, out: Path) -> int:
    from .experiments.ablation import run_ablation

    if args.all:
        raise CliError("--ablate runs one entry's ablation: give its name, not --all")
    entry = entries[0]
    if entry.ablation is None:
        raise CliError(f"{entry.name} declares no ablation")
    names = [f.name for f in entry.ablation.factors]
    unknown = [f for f in args.ablate if f not in names]
    if unknown:
        raise CliError(f"--ablate: {entry.name} has no factor {unknown[0]!r}; its factors: {', '.join(names)}")
    _, md = run_ablation(entry, entry.ablation, quick=not args.full, out=out, seed=args.seed,
                         progress=not args.quiet, store=args.store, cluster=args.cluster, workers=args.workers,
                         only=args.ablate)
    print(f"wrote {md} and {md.with_suffix('.csv')}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .reproduction_page import write_report

    page = write_report(Path(args.dir), Path(args.out) if args.out else None)
    print(f"wrote {page}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .sweeps import Sweep, sweep
    from .sweeps.console import print_sweep

    sw = Sweep.from_file(args.file)
    if args.name:
        sw.name = args.name
    res = sweep(sw, store=args.store, cluster=args.cluster, workers=args.workers, progress=not args.quiet,
                retry_failed=args.retry_failed, dry_run=args.dry_run)
    out = Path(args.out) if args.out else Path("results/sweeps") / sw.name
    return print_sweep(res, out=None if args.dry_run else out, metrics=args.metrics, plot=args.plot,
                       x=args.x, hue=args.hue, dry_run=args.dry_run)


def _cmd_store(args: argparse.Namespace) -> int:
    from .sweeps import console

    return console.store_command(args)


def _executor_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", default=None, help="the result store (default: $CCLAB_STORE or results/store)")
    p.add_argument("--cluster", default=None, metavar="SPEC",
                   help="tcp://HOST:8786 (a dask scheduler), local:N (a dask LocalCluster of N workers) "
                        "or serial; default: a local process pool")
    p.add_argument("--workers", type=int, default=None, help="local pool size (default: every core)")


def _plot_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plot", default=None, metavar="METRIC",
                   help="also plot METRIC's mean and 95%% CI against --x (PNG in --out)")
    p.add_argument("--x", default=None, help="parameter on the plot's x axis (default: the first)")
    p.add_argument("--hue", default=None, help="parameter drawn as separate lines (default: the second)")


def _scenario_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="scenario TOML file")
    p.add_argument("--seed", type=int, default=None, help="override the scenario's seed")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key, e.g. links[0].rate=20Mbps, traffic[1].cc.target=25ms, "
                        "limits.wall_time=2h (value read as TOML, else as a string; repeatable)")


def _add_run(sub) -> None:
    """`cclab run`: a scenario file in the packet-level simulator."""
    r = sub.add_parser("run", help="run a scenario file in the packet-level simulator",
                       description="Run a scenario file in the packet-level simulator and print its summary.",
                       epilog=EPILOG)
    _scenario_options(r)
    r.add_argument("--out", default=None, metavar="DIR",
                   help="write the run into folder DIR (checked and locked before simulating, replaced whole): "
                        "flows/links/series Parquet, summary, scenario, config and run JSON, plot")
    r.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(func=_cmd_run)


def _add_validate(sub) -> None:
    """`cclab validate`: a scenario checked, not run."""
    v = sub.add_parser("validate", help="check a scenario without running it: topology, routes, load, estimate",
                       description="Check a scenario without running it; print the resolved topology, the "
                                   "routes, each link's offered load and what the run would need (events, "
                                   "memory, wall time). Exit status 0 if valid, 2 if not.", epilog=EPILOG)
    _scenario_options(v)
    v.add_argument("--json", action="store_true",
                   help="print cclab.validate()'s result (canonical config, estimate, warnings) and the "
                        "offered load as JSON")
    v.set_defaults(func=_cmd_validate)


def _add_reproduce(sub) -> None:
    """`cclab reproduce`: a figure of one of the papers."""
    q = sub.add_parser("reproduce", help="reproduce a figure of one of the papers",
                       description="Reproduce a figure of one of the papers: CSV, PNG and a Markdown verdict. "
                                   "Exit status 1 if a reproduction disagrees with its paper or fails.",
                       epilog=EPILOG)
    q.add_argument("name", nargs="?", help="catalogue entry (see --list)")
    q.add_argument("--list", action="store_true", help="list the catalogue")
    q.add_argument("--all", action="store_true", help="every entry, then the HTML report (index.html in --out)")
    size = q.add_mutually_exclusive_group()
    size.add_argument("--full", action="store_true", help="the paper's size (long; its runs go through the sweep store)")
    size.add_argument("--quick", action="store_true", help="the reduced size that runs in minutes (the default)")
    q.add_argument("--out", default="results/reproduce", help="output folder (default: results/reproduce)")
    q.add_argument("--seed", type=int, default=1, help="base seed (default 1)")
    q.add_argument("--ablate", nargs="*", metavar="FACTOR", default=None, help=ABLATE_HELP)
    _executor_options(q)
    q.add_argument("--quiet", action="store_true", help="no progress bars")
    q.set_defaults(func=_cmd_reproduce)


def _add_report(sub) -> None:
    """`cclab report`: the HTML page of every reproduction."""
    h = sub.add_parser("report", help="write the HTML page of every reproduction (plot, verdict, paper values, runtime)")
    h.add_argument("dir", nargs="?", default="results/reproduce",
                   help="folder of `cclab reproduce` outputs (default: results/reproduce)")
    h.add_argument("--out", default=None, help="the HTML file (default: DIR/index.html)")
    h.set_defaults(func=_cmd_report)


def _add_sweep(sub) -> None:
    """`cclab sweep`: a sweep file through the result store."""
    w = sub.add_parser("sweep", help="run a sweep file: a scenario over a grid of overrides and seeds, "
                                     "cached in the result store")
    w.add_argument("file", help="sweep file (TOML; see docs/sweeps.md)")
    _executor_options(w)
    w.add_argument("--name", default=None, help="the sweep's name in the store (default: the file's `name`)")
    w.add_argument("--out", default=None, help="folder for runs.csv, table.csv and plots "
                                               "(default: results/sweeps/NAME)")
    w.add_argument("--metrics", default=None,
                   help="comma-separated metrics to print (default: per-class completion time and throughput, "
                        "link utilization and drop rate)")
    _plot_options(w)
    w.add_argument("--retry-failed", action="store_true", help="run again the runs whose failure is stored")
    w.add_argument("--dry-run", action="store_true", help="validate every run and count what is stored; run nothing")
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    w.set_defaults(func=_cmd_sweep)


def _add_store(sub) -> None:
    """`cclab store`: ls, show, gc and verify the result store."""
    s = sub.add_parser("store", help="inspect and prune the result store: ls, show, gc, verify")
    ssub = s.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    s_ls = ssub.add_parser("ls", help="list recorded sweeps (with --runs: the newest runs)")
    s_ls.add_argument("--runs", type=int, nargs="?", const=20, default=None, metavar="N",
                      help="list the N newest runs instead (default 20)")
    s_show = ssub.add_parser("show", help="one run (by key prefix) or one sweep (by name)")
    s_show.add_argument("what", help="a run's key (a unique prefix is enough) or a sweep's name")
    s_show.add_argument("--out", default=None, help="with a sweep: write runs.csv, table.csv and the plot here "
                        "(default with --plot: results/sweeps/NAME)")
    _plot_options(s_show)
    s_gc = ssub.add_parser("gc", help="remove interrupted writes and orphans; optionally prune runs")
    s_gc.add_argument("--failed", action="store_true", help="also remove failed runs")
    s_gc.add_argument("--stale", action="store_true", help="also remove runs of another engine results version")
    s_gc.add_argument("--forget", action="append", default=[], metavar="SWEEP",
                      help="forget a sweep's definition (its runs stay unless --unreferenced)")
    s_gc.add_argument("--unreferenced", action="store_true", help="also remove runs no recorded sweep refers to")
    s_gc.add_argument("--older-than", type=float, default=None, metavar="DAYS", help="also remove older runs")
    s_gc.add_argument("--dry-run", action="store_true", help="say what would be removed")
    ssub.add_parser("verify", help="check every stored run's files against the digests in the index")
    for sp in (s_ls, s_show, s_gc) + tuple(ssub.choices[c] for c in ("verify",)):
        sp.add_argument("--store", default=None, help="the result store (default: $CCLAB_STORE or results/store)")
    s.set_defaults(func=_cmd_store)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `cclab` command."""
    from . import __version__

    p = argparse.ArgumentParser(prog="cclab", description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"cclab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for add in (_add_run, _add_validate, _add_reproduce, _add_report, _add_sweep, _add_store):
        add(sub)

    from .bgtransfer.cli import register as register_bg
    from .inspect import register as register_inspect  # show, plot, compare, scenarios

    register_inspect(sub)
    register_bg(sub)

    from .testbed.cli import register as register_testbed

    register_testbed(sub)
    return p


def _bad_input(exc: BaseException) -> bool:
    """Whether an error is the user's input (exit status 2) rather than a failure of
    the work (1): a scenario, --set, --out or usage error, an unknown name or file."""
    if isinstance(exc, (CliError, ValueError, LookupError, FileNotFoundError, NotADirectoryError,
                        IsADirectoryError)):
        return True
    store = sys.modules.get("cclab.sweeps.store")  # its errors name a run or sweep the user asked for
    return store is not None and isinstance(exc, store.StoreError)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `cclab` script; returns the exit status (see the module's doc)."""
    try:
        try:
            parser = build_parser()
            args = parser.parse_args(argv)
            args.argv = list(sys.argv[1:] if argv is None else argv)
            if not getattr(args, "func", None):
                parser.print_help()
                code = 2
            else:
                code = args.func(args)
        except SystemExit as exc:  # argparse: --help, --version (0) and usage errors (2)
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        sys.stdout.flush()  # here, not at exit, so that a closed pipe is caught below
        return code
    except BrokenPipeError:  # `cclab ... | head`: the reader has gone, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("cclab: interrupted", file=sys.stderr)
        return 130
    except BaseException as exc:  # every error becomes one line, never a traceback (a Rust panic too)
        if os.environ.get("CCLAB_DEBUG"):
            raise
        msg = str(exc) or exc.__class__.__name__
        print(f"cclab: error: {msg}", file=sys.stderr)
        return 2 if _bad_input(exc) else 1


if __name__ == "__main__":
    sys.exit(main())
