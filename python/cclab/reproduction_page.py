"""`cclab report`: one static HTML page of every reproduction.

It reads what `cclab reproduce` wrote into its output folder (``NAME.json`` records,
``NAME.png`` plots, ``NAME.csv`` data) and lists every catalogue entry, run or not:
its plot, verdict, the paper's values and our comparison (the entry's Markdown
details), size, wall time and the command that reproduces it. Plots are embedded,
so the page is one file a reader can open or send.
"""
from __future__ import annotations

import base64
import html
import json
import re
import time
from pathlib import Path

_STATUS_STYLE = {"agrees": ("agrees", "#1a7f37"), "DISAGREES": ("disagrees", "#cf222e"),
                 "shown": ("shown", "#57606a"), "failed": ("failed", "#9a6700"), "not run": ("not run", "#8c959f")}

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
padding:0 1em;color:#1f2328}
h1{font-size:1.6em;margin-bottom:.2em} h2{margin-top:2em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
.meta{color:#57606a;font-size:.9em} table{border-collapse:collapse;margin:.6em 0} td,th{border:1px solid #d0d7de;
padding:3px 8px;text-align:left;font-size:.92em} th{background:#f6f8fa}
.entry{border:1px solid #d0d7de;border-radius:6px;padding:.6em 1em;margin:1em 0}
.entry h3{margin:.2em 0} .badge{display:inline-block;color:#fff;border-radius:10px;padding:0 .6em;font-size:.85em;
margin-left:.4em;vertical-align:middle} img{max-width:100%;border:1px solid #eee}
code{background:#f6f8fa;padding:0 .25em;border-radius:3px} details{margin:.4em 0}
.verdict{font-weight:600}
"""


def _inline(text: str) -> str:
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    return out


def markdown(md: str) -> str:
    """The Markdown subset the catalogue writes (paragraphs, pipe tables, lists, headings,
    inline code and bold) as HTML."""
    blocks, cur = [], []
    for line in md.splitlines():
        if line.strip():
            cur.append(line)
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    out = []
    for b in blocks:
        if all(l.lstrip().startswith("|") for l in b):
            rows = [[c.strip() for c in l.strip().strip("|").split("|")] for l in b]
            body = [r for r in rows if not all(re.fullmatch(r":?-{2,}:?", c) for c in r if c)]
            head, rest = body[0], body[1:]
            out.append("<table><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in rest)
                       + "</table>")
        elif all(re.match(r"\s*[-*] ", l) for l in b):
            items = [_inline(re.sub(r"^\s*[-*] ", "", l)) for l in b]
            out.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
        elif b[0].startswith("#"):
            level = min(6, len(b[0]) - len(b[0].lstrip("#")) + 3)
            out.append(f"<h{level}>{_inline(b[0].lstrip('#').strip())}</h{level}>")
            if b[1:]:
                out.append(f"<p>{_inline(' '.join(b[1:]))}</p>")
        else:
            out.append(f"<p>{_inline(' '.join(l.strip() for l in b))}</p>")
    return "\n".join(out)


def _image(path: Path) -> str:
    if not path.is_file():
        return ""
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def write_report(folder: str | Path, out: str | Path | None = None) -> Path:
    """Write the HTML page of every catalogue entry from the outputs in ``folder``."""
    from . import __version__
    from .experiments import catalogue

    folder = Path(folder)
    out = Path(out) if out else folder / "index.html"
    entries = catalogue.entries()
    records = {}
    for e in entries:
        p = folder / f"{e.name}.json"
        if p.is_file():
            try:
                records[e.name] = json.loads(p.read_text())
            except json.JSONDecodeError:
                records[e.name] = {"status": "failed", "verdict": f"{p.name} is not valid JSON"}
    try:
        from .sweeps.store import engine_version

        engine = engine_version()
    except Exception:  # the compiled core is absent: the page is still written
        engine = "unknown"
    counts: dict[str, int] = {}
    for e in entries:
        st = records.get(e.name, {}).get("status", "not run")
        counts[st] = counts.get(st, 0) + 1
    papers: dict[str, list] = {}
    for e in entries:
        papers.setdefault(e.paper, []).append(e)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>cclab reproductions</title>"
             f"<style>{_CSS}</style></head><body>",
             "<h1>cclab: the state of every reproduction</h1>",
             f"<p class='meta'>cclab {html.escape(__version__)}, engine {html.escape(engine)}; page written "
             f"{time.strftime('%Y-%m-%d %H:%M')} from <code>{html.escape(str(folder))}</code>. "
             f"{len(entries)} entries; " + ", ".join(f"{html.escape(_STATUS_STYLE.get(s, (s,))[0])}: {n}"
                                                     for s, n in sorted(counts.items())) + ".</p>",
             "<table><tr><th>paper</th><th>entry</th><th>figure</th><th>status</th><th>size</th><th>wall time</th></tr>"]
    for paper, es in papers.items():
        for e in es:
            r = records.get(e.name, {})
            st = r.get("status", "not run")
            wall = r.get("wall_s")
            parts.append(f"<tr><td>{html.escape(paper)}</td><td><a href='#{e.name}'>{e.name}</a></td>"
                         f"<td>{html.escape(e.figure)}</td><td>{_badge(st)}</td><td>{html.escape(r.get('size', ''))}</td>"
                         f"<td>{'' if wall is None else f'{wall:.1f} s'}</td></tr>")
    parts.append("</table>")
    for paper, es in papers.items():
        parts.append(f"<h2>{html.escape(paper)}</h2>")
        for e in es:
            parts.append(_entry_html(e, records.get(e.name), folder))
    parts.append("</body></html>\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(parts))
    tmp.replace(out)
    return out


def _badge(status: str) -> str:
    label, color = _STATUS_STYLE.get(status, (status, "#57606a"))
    return f"<span class='badge' style='background:{color}'>{html.escape(label)}</span>"


def _entry_html(e, r: dict | None, folder: Path) -> str:
    head = (f"<div class='entry' id='{e.name}'><h3>{html.escape(e.name)}: {html.escape(e.title)}"
            f"{_badge(r.get('status', 'not run') if r else 'not run')}</h3>")
    if not r:
        cmd = f"cclab reproduce {e.name}"
        return head + (f"<p class='meta'>{html.escape(e.figure)}. Not run yet: <code>{cmd}</code> "
                       f"(quick: {html.escape(e.size_text(True) or 'reduced size')}; <code>--full</code>: "
                       f"{html.escape(e.size_text(False) or 'the paper size')}).</p></div>")
    wall = r.get("wall_s")
    meta = (f"{html.escape(e.figure)} · size {html.escape(r.get('size', '?'))}"
            + (f" ({html.escape(r['size_detail'])})" if r.get("size_detail") else "")
            + ("" if wall is None else f" · wall time {wall:.1f} s")
            + f" · seed {r.get('seed', '?')} · finished {html.escape(str(r.get('finished', '?')))}"
            + f" · <code>{html.escape(r.get('command', ''))}</code>")
    body = [head, f"<p class='meta'>{meta}</p>",
            f"<p class='verdict'>{html.escape(str(r.get('verdict', '')))}</p>"]
    if r.get("png"):
        body.append(_image(folder / r["png"]))
    if r.get("details"):
        body.append("<details open><summary>paper values and comparison</summary>"
                    + markdown(r["details"]) + "</details>")
    if r.get("csv") and (folder / r["csv"]).is_file():
        body.append(f"<p class='meta'>data: <a href='{html.escape(r['csv'])}'>{html.escape(r['csv'])}</a></p>")
    body.append("</div>")
    return "\n".join(body)
