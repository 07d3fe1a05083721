"""afd sweep: a design space (hardware, model, deployment and settings as axes) evaluated on Dask into
a labelled xarray Dataset, written as Zarr (:mod:`afdlib.sweep`)."""
from __future__ import annotations

import argparse

from afdlib.cli.options import bounded_int, dumps


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("sweep", help="a design-space sweep on Dask: every axis a hardware, model, deployment "
                              "or setting field; an xarray Dataset written as Zarr")
    p.add_argument("spec", help="the sweep's YAML: model, hardware, design (ep, afd, both), vary, fixed")
    p.add_argument("--out", required=True, help="result: a .zarr folder (or .nc where a NetCDF engine is installed)")
    p.add_argument("--workers", type=bounded_int("--workers", 1, 1024), default=None,
                   help="worker processes of a local Dask cluster (default min(2, cores))")
    p.add_argument("--scheduler", default=None, help="an existing Dask scheduler (tcp://host:port) instead")
    p.add_argument("--chunk", type=bounded_int("--chunk", 1, 10 ** 8), default=None,
                   help="grid points per task (default 100,000 for given deployments, 2,000 where one is searched)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)
    return p


WORKERS_PER_CORE = 2
"""Most local worker processes per core ``--workers`` starts (32 on 2 cores took 42 s to start for 2 points)."""


def run(args) -> int:
    import os
    import warnings

    from afdlib.errors import AfdError
    from afdlib.inputs.files import read_yaml
    from afdlib.sweep import cluster
    from afdlib.sweep.spec import parse
    if args.workers is not None and args.scheduler is not None:
        raise AfdError("give --workers (a local cluster) or --scheduler (an existing one), not both")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if args.workers is not None and args.workers > WORKERS_PER_CORE * cores:   # each a process of ~115 MB
        raise AfdError(f"--workers {args.workers} on {cores} core{'s' if cores > 1 else ''}: at most "
                       f"{WORKERS_PER_CORE * cores} (a worker is a process of its own, about 115 MB; more than the "
                       "cores only wait their turn)")
    spec = parse(read_yaml(args.spec))
    # zarr 3 warns that consolidated metadata (which xarray reads) is an extension, from its own I/O thread:
    # the writes' catch_warnings blocks do not always cover that thread's timing (an interrupted sweep
    # printed it), so this process ignores that one warning throughout
    warnings.filterwarnings("ignore", message="Consolidated metadata")
    doc = cluster.run(spec, args.out, args.workers, args.scheduler, args.chunk)   # a progress bar on stderr
    if args.json:
        print(dumps(doc))
    else:
        dims = " x ".join(f"{k} {v}" for k, v in doc["dims"].items())
        print(f"{doc['points']:,} points ({dims}) in {doc['seconds']:.1f} s on {doc['workers']} worker(s): {doc['out']}")
    return 0
