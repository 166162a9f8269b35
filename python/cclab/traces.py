"""Traces of a run: ``[trace]`` in a scenario (``trace=`` in ``cclab.run``), read
into ``Result.traces`` (docs/engine.md, "Traces").

Four long tables, units in the names, and a libpcap capture per captured link:

* ``flows``: ``time_s``, ``flow``, ``variable``, ``value`` — each traced flow's
  variables on every change (or every ``interval``): ``cwnd_bytes``,
  ``in_flight_bytes``, ``srtt_s``, ... and its controller's own
  (``ledbat.queuing_delay_s``).
* ``packets``: ``time_s``, ``flow``, ``event``, ``seq``, ``end``, ``link`` — the
  traced flows' packets at their endpoints (sent, resent, ACKs and SACK blocks
  back, congestion marks) and their drops on any link.
* ``links``: ``time_s``, ``link``, ``event``, ``flow``, ``seq``, ``size_bytes``,
  ``ack``, ``queue_packets``, ``queue_bytes``, ``wait_s`` — every packet offered
  to a traced link (enqueue, mark, drop) and its departure from the queue.
* ``access``: ``time_s``, ``class``, ``variable``, ``value`` — traced access
  controllers' limit and files on every change.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

#: The tables, as written in a saved run's ``traces/`` folder.
TABLES = ("flows", "packets", "links", "access")


# The tables are built with copy=False: the engine's columns become the frame's own
# (pandas would otherwise copy every column of a kind into one block, a second copy
# of millions of rows).


def _categorical(codes, names) -> pd.Categorical:
    return pd.Categorical.from_codes(np.asarray(codes, dtype=np.int32), categories=list(names))


def _variables(raw: dict, entity: str, entity_names: list | None = None) -> pd.DataFrame:
    ent = raw["entity"]
    return pd.DataFrame({
        "time_s": raw["time"],
        entity: _categorical(ent, entity_names) if entity_names is not None else ent.astype(np.int64),
        "variable": _categorical(raw["variable"], raw["variable_names"]),
        "value": raw["value"],
    }, copy=False)


def _packets(raw: dict, link_names: list) -> pd.DataFrame:
    link = np.asarray(raw["link"], dtype=np.int64)
    link = np.where(link == 2**32 - 1, -1, link)  # -1: no link (an endpoint's event)
    return pd.DataFrame({
        "time_s": raw["time"],
        "flow": raw["flow"].astype(np.int64),
        "event": _categorical(raw["event"], raw["event_names"]),
        "seq": raw["seq"].astype(np.int64),
        "end": raw["end"].astype(np.int64),
        "link": _categorical(link, link_names),
    }, copy=False)


def _links(raw: dict, link_names: list) -> pd.DataFrame:
    return pd.DataFrame({
        "time_s": raw["time"],
        "link": _categorical(raw["link"], link_names),
        "event": _categorical(raw["event"], raw["event_names"]),
        "flow": raw["flow"].astype(np.int64),
        "seq": raw["seq"].astype(np.int64),
        "size_bytes": raw["size"].astype(np.int64),
        "ack": raw["ack"],
        "queue_packets": raw["queue_packets"].astype(np.int64),
        "queue_bytes": raw["queue_bytes"].astype(np.int64),
        "wait_s": raw["wait"],
    }, copy=False)


def pcap_name(link: str) -> str:
    """The file name of a link's capture: its name with ``->`` as ``-to-`` and any
    other character outside ``[A-Za-z0-9._-]`` as ``_``, then ``.pcap``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", str(link).replace("->", "-to-")) + ".pcap"


@dataclass
class Traces:
    """What a run traced; every table empty (and ``pcap`` {}) without ``[trace]``.

    pcap: link name -> the libpcap file's bytes (``write_pcap`` or ``save`` writes them).
    """

    flows: pd.DataFrame = field(default_factory=pd.DataFrame)
    packets: pd.DataFrame = field(default_factory=pd.DataFrame)
    links: pd.DataFrame = field(default_factory=pd.DataFrame)
    access: pd.DataFrame = field(default_factory=pd.DataFrame)
    pcap: dict = field(default_factory=dict)

    @classmethod
    def from_raw(cls, raw: dict | None, link_names: list, class_names: list) -> "Traces":
        """The tables of the engine's columns (``_core``'s ``traces``)."""
        if not raw:
            return cls()
        return cls(flows=_variables(raw["flows"], "flow"), packets=_packets(raw["packets"], link_names),
                   links=_links(raw["links"], link_names),
                   access=_variables(raw["access"], "class", class_names),
                   pcap={link_names[l]: bytes(b) for l, b in raw["pcap"]})

    def __bool__(self) -> bool:
        return bool(self.pcap) or any(len(getattr(self, t)) for t in TABLES)

    def __repr__(self) -> str:
        rows = ", ".join(f"{t} {len(getattr(self, t)):,}" for t in TABLES)
        caps = ", ".join(f"{k} ({len(v):,} bytes)" for k, v in self.pcap.items()) or "none"
        return f"<cclab.Traces rows: {rows}; pcap: {caps}>"

    def flow(self, flow: int) -> pd.DataFrame:
        """Flow ``flow``'s variables as a wide table: one row per instant it
        recorded, one column per variable, each state carried forward until it
        changes (the samples, ``rtt_sample_s`` and ``owd_sample_s``, are not)."""
        f = self.flows[self.flows["flow"] == flow]
        if f.empty:
            return pd.DataFrame(index=pd.Index([], name="time_s", dtype=float))
        wide = f.pivot_table(index="time_s", columns="variable", values="value", aggfunc="last", observed=True)
        wide.columns = [str(c) for c in wide.columns]
        states = [c for c in wide.columns if not c.endswith("_sample_s")]
        wide[states] = wide[states].ffill()
        return wide

    def write(self, out: Path) -> list[str]:
        """Write the tables (Parquet) and captures into folder ``out``; returns the file names."""
        out.mkdir(parents=True, exist_ok=True)
        names = []
        for t in TABLES:
            df = getattr(self, t)
            if len(df):
                df.to_parquet(out / f"{t}.parquet", index=False)
                names.append(f"{t}.parquet")
        names += [p.name for p in self.write_pcap(out)]
        return names

    @classmethod
    def read(cls, folder: Path, link_names: list) -> "Traces":
        """The traces a saved run's ``traces/`` folder holds (empty without one)."""
        if not folder.is_dir():
            return cls()
        tables = {t: pd.read_parquet(folder / f"{t}.parquet") for t in TABLES if (folder / f"{t}.parquet").is_file()}
        by_file = {pcap_name(l): l for l in link_names}
        pcap = {by_file.get(p.name, p.stem): p.read_bytes() for p in sorted(folder.glob("*.pcap"))}
        return cls(**tables, pcap=pcap)

    def write_pcap(self, folder) -> list[Path]:
        """Write each captured link's libpcap file into ``folder`` (``pcap_name``; a
        name that two links would share gets a ``_`` more); returns the paths."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths: list[Path] = []
        for link, data in self.pcap.items():
            name = pcap_name(link)
            while any(p.name == name for p in paths):
                name = name[:-len(".pcap")] + "_.pcap"
            paths.append(folder / name)
            paths[-1].write_bytes(data)
        return paths
