"""The access limit's trajectory at packet level, and what the background carried
(docs/protocols.md, "Access control": the measured table; static limits with --static).

    .venv/bin/python bench/access_trajectory.py NET K LOADS POLICY [--duration 30000] [--seed 1] [--access JSON]
    .venv/bin/python bench/access_trajectory.py fb1 3 '{"web": 0.3, "background": 0.6}' fairbat
    .venv/bin/python bench/access_trajectory.py fb1 3 '{"web": 0.3, "background": 0.6}' access --static 20,40,60,v

NET: bg1, bg2, bg3 (the background paper's one, two, three links), fb1, fb2 (FAIRBAT's);
K long-lived Reno flows; LOADS the classes' loads; POLICY as the reproductions name them
(fairbat, rate_tracking, access, vanilla, ...). Prints the time averages of the limit,
the active and the waiting chunks in 20 slices of the run with the bytes served over the
bytes arrived in each, then the same over the second half. --static runs the static
limits given (v: vanilla) over the run after a third of it, with the web delay.
"""
from __future__ import annotations

import argparse
import json
import time

import cclab
from cclab.experiments.paired import busy_average
from cclab.experiments.reproductions import background_runs as br

NETS = {"bg1": br.BG_ONE_LINK, "bg2": br.BG_TWO_LINKS, "bg3": br.BG_THREE_LINKS, "fb1": br.FAIRBAT_ONE_LINK,
        "fb2": br.FAIRBAT_TWO_LINKS}


def trajectory(net, k: int, loads: dict, policy: str, duration: float, seed: int, access: dict | None) -> None:
    sc = br.packet_scenario(net, policy, loads, k=k, duration=duration, warmup=1, access=access)
    sc["record"] = {"interval": "120s"}
    t = time.time()
    r = cclab.run(sc, seed=seed)
    print(f"wall {time.time() - t:.1f} s")
    s, bgc = r.series, net.background[0]
    lim, wait, act = (s[(s.metric == m) & (s.name == bgc)].set_index("time")["value"]
                      for m in ("access_limit", "access_waiting", "access_active"))
    bg = r.flows[r.flows["class"] == bgc]
    for i in range(20):
        t0, t1 = i * duration / 20, (i + 1) * duration / 20
        sel = (lim.index > t0) & (lim.index <= t1)
        arrived = bg[(bg.arrival >= t0) & (bg.arrival < t1)]["size"].sum()
        done = bg[(bg.finish >= t0) & (bg.finish < t1)]["size"].sum()
        print(f"{t0:7.0f} limit {lim[sel].mean():7.2f} active {act[sel].mean():6.2f} waiting {wait[sel].mean():7.1f} "
              f"served/arrived {done / max(arrived, 1):5.2f}")
    half = lim.index > duration / 2
    served = bg[bg.finish >= duration / 2]["size"].sum() / bg[bg.arrival >= duration / 2]["size"].sum()
    print(f"served/arrived (2nd half) {served:.3f} mean limit 2nd half {lim[half].mean():.2f} "
          f"sd {lim[half].std():.2f} active {act[act.index > duration / 2].mean():.1f}")


def static(net, k: int, loads: dict, duration: float, seed: int, limits: str) -> None:
    w = duration / 3
    for lim in limits.split(","):
        pol = "vanilla" if lim == "v" else "access"
        sc = br.packet_scenario(net, pol, loads, k=k, duration=duration, warmup=w,
                                access=None if lim == "v" else {"limit": float(lim)})
        r = cclab.run(sc, seed=seed)
        f = r.flows
        bg = f[f["class"].isin(net.background)]
        act = busy_average(bg["start"], bg["finish"], w, duration)
        wai = busy_average(bg["arrival"], bg["start"], w, duration)
        carried = sum(r.summary[f"{c}.throughput_bps"] for c in net.background) * (duration - w) / 8 \
            / bg[bg.arrival >= w]["size"].sum()
        web = f[f["class"].isin(net.web) & (f.arrival > w) & (f.arrival < duration - br.DRAIN) & f.finished]
        print(f"{lim} active {act:.1f} waiting {wai:.1f} carried/arrived {carried:.3f} "
              f"webdelay {web.completion_time.mean():.1f}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("net", choices=sorted(NETS))
    ap.add_argument("k", type=int)
    ap.add_argument("loads", type=json.loads)
    ap.add_argument("policy")
    ap.add_argument("--duration", type=float, default=30_000.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--access", type=json.loads, default=None, help="extra keys of the access table (JSON)")
    ap.add_argument("--static", default=None, help="static limits to run instead, e.g. 20,40,v")
    a = ap.parse_args()
    if a.static:
        static(NETS[a.net], a.k, a.loads, a.duration, a.seed, a.static)
    else:
        trajectory(NETS[a.net], a.k, a.loads, a.policy, a.duration, a.seed, a.access)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
