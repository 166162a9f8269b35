"""Where `tfcbr-vs-tfrc-rdtf`'s STF-st claim fails: the TCP flows' rates with TFCBR against
those with TFRC as the UDP protocol (load 0.3, 2,000-s runs with 100 s of warm-up, seeds
1-5 pooled, the entry's quick scenario), for cclab's TCP as the entry runs it and for the
ns-2.35 preset (`tcp.preset = "ns2"`, the papers' simulator's agent).

Prints the largest gap by which TFCBR's CDF lies above TFRC's, the rates where it exceeds
the two-sample Kolmogorov-Smirnov 95% band, the share of TFCBR's flows there, and
quantiles of both.

    .venv/bin/python bench/tfcbr_stf_tail.py

About 2 minutes on one core. docs/reproduction/tfcbr-packet.md shows its output.
"""
from __future__ import annotations

import numpy as np

import cclab
from cclab.experiments.reproductions import tfcbr_packet as T

SEEDS = range(1, 6)


def tcp_rates(protocol: str, preset: str | None, load: float = 0.3) -> np.ndarray:
    """Rates (bit/s) of the measured, finished short TCP flows of every seed."""
    out = []
    for seed in SEEDS:
        sc = T.udp_scenario(T.scenario(load, 2000.0, 100.0), protocol)
        if preset:
            sc["tcp"] = {"preset": preset}
        f = cclab.run(sc, seed=seed).flows
        w = f[(f["class"] == "web") & f["finished"] & ~f["warmup"]]
        out.append(w["size"].to_numpy(float) * 8 / w["completion_time"].to_numpy(float))
    return np.concatenate(out)


def compare(preset: str | None) -> list[str]:
    a, b = tcp_rates("tfrc", preset), tcp_rates("tfcbr", preset)
    t = np.unique(np.concatenate([a, b]))
    d = np.searchsorted(np.sort(b), t, side="right") / len(b) - np.searchsorted(np.sort(a), t, side="right") / len(a)
    band = T.KS95 * np.sqrt((len(a) + len(b)) / (len(a) * len(b)))
    above = d > band
    lo, hi = (t[above].min(), t[above].max()) if above.any() else (np.nan, np.nan)
    share = float(np.mean((b >= lo) & (b <= hi))) if above.any() else 0.0
    q = ", ".join(f"{np.quantile(a, p) / 1e3:.0f} / {np.quantile(b, p) / 1e3:.0f}" for p in (0.01, 0.1, 0.5, 0.9))
    return [f"| {preset or 'as the entry runs it'} | {len(a)} / {len(b)} | {d.max():.4f} | {band:.4f} | "
            f"{lo / 1e3:.0f}-{hi / 1e3:.0f} | {share:.3f} | {q} |"]


def main() -> None:
    print("| TCP | flows (TFRC / TFCBR) | largest gap | KS band | above the band (kbit/s) | TFCBR's flows there | "
          "1% / 10% / 50% / 90% quantiles, TFRC / TFCBR (kbit/s) |")
    print("|---|---|---|---|---|---|---|")
    for preset in (None, "ns2"):
        print(*compare(preset), sep="\n", flush=True)


if __name__ == "__main__":
    main()
