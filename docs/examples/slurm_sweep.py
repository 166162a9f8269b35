"""A cclab sweep on a SLURM cluster through dask-jobqueue (see docs/sweeps.md).

Run it on the login node (or any machine that can submit jobs and reach the compute
nodes), in the Python environment the jobs will use; the result store stays on this
machine's disk, the workers only compute and send their runs back.

    pip install 'cclab[jobqueue]'     # or: pip install dask-jobqueue
    python docs/examples/slurm_sweep.py scenarios/sweeps/background-load.toml --jobs 4
    python docs/examples/slurm_sweep.py scenarios/sweeps/background-load.toml --print-job-script

For PBS / Torque use ``PBSCluster`` (same arguments, ``account`` becomes ``account``
and ``queue`` the PBS queue); for SGE ``SGECluster``; see dask-jobqueue's docs.
"""
from __future__ import annotations

import argparse
import sys

import cclab


def make_cluster(args):
    from dask_jobqueue import SLURMCluster

    return SLURMCluster(
        queue=args.queue,
        account=args.account,
        cores=args.cores,
        processes=args.cores,          # one single-threaded worker per core: a run holds its core
        memory=args.memory,            # per job, shared by its workers
        walltime=args.walltime,
        local_directory="$TMPDIR",     # dask's spill and scratch space on the node
        # the same environment, hence the same engine, on every node (a worker with another
        # engine results version refuses its runs rather than file them under wrong keys)
        job_script_prologue=[f"source {sys.prefix}/bin/activate"],
        job_extra_directives=["--output=dask-worker-%j.out"],
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweep", help="a sweep file (TOML)")
    ap.add_argument("--jobs", type=int, default=4, help="SLURM jobs to start (each runs --cores workers)")
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--memory", default="32GB")
    ap.add_argument("--walltime", default="04:00:00")
    ap.add_argument("--queue", default=None, help="SLURM partition")
    ap.add_argument("--account", default=None)
    ap.add_argument("--store", default=None, help="result store (default: $CCLAB_STORE or results/store)")
    ap.add_argument("--print-job-script", action="store_true", help="print the batch script and submit nothing")
    args = ap.parse_args(argv)
    cluster = make_cluster(args)
    if args.print_job_script:
        print(cluster.job_script())
        cluster.close()
        return 0
    from distributed import Client

    cluster.scale(jobs=args.jobs)      # or: cluster.adapt(minimum_jobs=1, maximum_jobs=args.jobs)
    with Client(cluster) as client:
        res = cclab.sweep(args.sweep, cluster=client, store=args.store)
    print(res)
    print(res.aggregate().to_string(index=False))
    cluster.close()
    return 0 if res.stats.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
