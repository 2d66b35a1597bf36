#!/usr/bin/env python3
"""Renders a kiln Chrome-trace JSON (KILN_TRACE, Device::write_trace) as a small standalone
HTML timeline: one row per track (CPU threads, GPU queues), one box per complete event,
nested events stacked below their parent. For a quick look (and the README's picture) where
ui.perfetto.dev or chrome://tracing cannot be reached; it is not Perfetto.

Usage: python3 scripts/trace_html.py trace.json trace.html
"""
import html
import json
import sys


def main(src, dst):
    t = json.load(open(src))
    ev = t["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M"}
    spans = [e for e in ev if e.get("ph") == "X"]
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e["dur"] for e in spans)
    width, label_w, row_h = 1300, 170, 22
    scale = (width - label_w - 10) / max(t1 - t0, 1e-9)
    tracks = sorted({e["tid"] for e in spans})
    out, y = [], 30
    colors = {"record": "#7aa6d8", "submit": "#e0a458", "wait": "#b9b9b9"}
    palette = ["#5fb49c", "#d1495b", "#edae49", "#00798c", "#8d6a9f", "#66a182"]
    for tid in tracks:
        evs = sorted((e for e in spans if e["tid"] == tid), key=lambda e: (e["ts"], -e["dur"]))
        depth_end = []
        boxes = []
        for e in evs:
            d = 0
            while d < len(depth_end) and depth_end[d] > e["ts"] + 1e-6:
                d += 1
            if d == len(depth_end):
                depth_end.append(0)
            depth_end[d] = e["ts"] + e["dur"]
            # Nested events sit below the event that contains them.
            for k in range(d + 1, len(depth_end)):
                depth_end[k] = 0
            boxes.append((e, d))
        depth = max(1, len(depth_end))
        out.append(f'<text x="4" y="{y + 15}" class="l">{html.escape(names.get(tid, str(tid)))}</text>')
        for e, d in boxes:
            x = label_w + (e["ts"] - t0) * scale
            w = max(1.0, e["dur"] * scale)
            c = colors.get(e["name"], palette[sum(map(ord, e["name"])) % len(palette)])
            tip = f'{e["name"]} ({e["args"].get("label", "")}): {e["dur"]:.1f} us'
            out.append(
                f'<g><title>{html.escape(tip)}</title><rect x="{x:.1f}" y="{y + d * row_h}" '
                f'width="{w:.1f}" height="{row_h - 3}" fill="{c}"/>'
                + (f'<text x="{x + 3:.1f}" y="{y + d * row_h + 14}" class="b">{html.escape(e["name"])}</text>'
                   if w > 40 else "")
                + "</g>"
            )
        y += depth * row_h + 14
    ms = (t1 - t0) / 1000
    svg_h = y + 10
    page = f"""<!doctype html><meta charset="utf-8"><title>kiln trace</title>
<style>body{{font:13px sans-serif;margin:8px}} .l{{font:12px sans-serif}} .b{{font:11px sans-serif;fill:#111}}</style>
<div>kiln trace <b>{html.escape(src)}</b>: {len(spans)} events over {ms:.1f} ms
(rendered by scripts/trace_html.py; open the JSON in ui.perfetto.dev for the real viewer)</div>
<svg width="{width}" height="{svg_h}"><line x1="{label_w}" y1="22" x2="{width - 10}" y2="22" stroke="#999"/>
<text x="{label_w}" y="16" class="l">0 ms</text><text x="{width - 60}" y="16" class="l">{ms:.1f} ms</text>
{''.join(out)}</svg>"""
    open(dst, "w").write(page)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
