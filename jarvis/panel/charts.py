"""Charts drawn on the server as inline SVG (no script, no CDN, crisp at any zoom): the questions and the
answer rate over time, and the latency's spread. Every text in them is escaped; colours come from
presentation attributes (the page's Content-Security-Policy allows no inline style)."""
from __future__ import annotations

from markupsafe import Markup, escape

INK, MUTED, GRID = "#e6edf3", "#8b949e", "#30363d"
ASKED, ANSWERED, RATE = "#3b82f6", "#22c55e", "#f59e0b"


def _text(x: float, y: float, text: str, *, anchor: str = "middle", size: int = 11, fill: str = MUTED) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{fill}">'
            f"{escape(text)}</text>")


def answer_rate_chart(points: list[dict], unit: str, width: int = 720, height: int = 240) -> Markup:
    """Bars: questions and answered per bucket; line: the answer rate (right axis, 0-100 %)."""
    if not points:
        return Markup(f'<svg class="chart" viewBox="0 0 {width} 60" role="img" aria-label="no questions yet">'
                      f'{_text(width / 2, 34, "No questions in this window yet.", size=13)}</svg>')
    left, right, top, bottom = 40, 44, 16, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(max(p["questions"] for p in points), 1)
    scale = _nice(peak)
    slot = plot_w / len(points)
    bar = max(2.0, min(28.0, slot * 0.62))
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="questions and answer rate per {escape(unit)}">']
    for i in range(5):                                    # grid and both axes' labels
        y = top + plot_h * i / 4
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}" '
                     'stroke-width="1"/>')
        parts.append(_text(left - 6, y + 4, f"{round(scale * (4 - i) / 4):g}", anchor="end", size=10))
        parts.append(_text(width - right + 6, y + 4, f"{100 - 25 * i}%", anchor="start", size=10, fill=RATE))
    line = []
    every = max(1, round(len(points) / 12))
    for i, point in enumerate(points):
        cx = left + slot * (i + 0.5)
        for value, color, share in ((point["questions"], ASKED, 1.0), (point["answered"], ANSWERED, 0.55)):
            h = plot_h * value / scale
            w = bar * share
            if value:
                parts.append(f'<rect x="{cx - w / 2:.1f}" y="{top + plot_h - h:.1f}" width="{w:.1f}" '
                             f'height="{h:.1f}" rx="2" fill="{color}"><title>{escape(point["label"])}: '
                             f'{point["questions"]} asked, {point["answered"]} answered</title></rect>')
        if point["answer_rate"] is not None:
            line.append((cx, top + plot_h * (1 - point["answer_rate"])))
        if i % every == 0:
            parts.append(_text(cx, height - bottom + 16, point["label"], size=10))
    if len(line) > 1:
        path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(line))
        parts.append(f'<path d="{path}" fill="none" stroke="{RATE}" stroke-width="2.5" stroke-linejoin="round"/>')
    for x, y in line:
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{RATE}"/>')
    legend_y = height - 6
    for j, (label, color) in enumerate((("asked", ASKED), ("answered", ANSWERED), ("answer rate", RATE))):
        x = left + j * 110
        parts.append(f'<rect x="{x}" y="{legend_y - 9}" width="10" height="10" rx="2" fill="{color}"/>')
        parts.append(_text(x + 15, legend_y, label, anchor="start", size=11, fill=INK))
    parts.append("</svg>")
    return Markup("".join(parts))


def latency_chart(values: list[float], width: int = 340, height: int = 150) -> Markup:
    """How long answers took: a histogram of the latencies (seconds), p50 and p95 marked."""
    if not values:
        return Markup(f'<svg class="chart" viewBox="0 0 {width} 60" role="img" aria-label="no latencies">'
                      f'{_text(width / 2, 34, "No timings yet.", size=13)}</svg>')
    edges = [0.1, 0.25, 0.5, 1, 2, 5, 10, float("inf")]
    labels = ["<0.1", "0.25", "0.5", "1", "2", "5", "10", ">10"]
    counts = [0] * len(edges)
    for value in values:
        counts[next(i for i, edge in enumerate(edges) if value <= edge)] += 1
    left, top, bottom = 10, 12, 30
    plot_w, plot_h = width - 2 * left, height - top - bottom
    peak = max(counts)
    slot = plot_w / len(counts)
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="latency histogram">']
    for i, count in enumerate(counts):
        h = plot_h * count / peak if peak else 0
        x = left + slot * i + slot * 0.15
        if count:
            parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{slot * 0.7:.1f}" height="{h:.1f}" '
                         f'rx="2" fill="{ASKED}"><title>{count} answers up to {escape(labels[i])} s</title></rect>')
            parts.append(_text(x + slot * 0.35, top + plot_h - h - 3, str(count), size=10, fill=INK))
        parts.append(_text(x + slot * 0.35, height - bottom + 14, labels[i], size=10))
    parts.append(_text(width / 2, height - 3, "seconds", size=10))
    parts.append("</svg>")
    return Markup("".join(parts))


def _nice(peak: int) -> float:
    """A round axis maximum at or above ``peak``."""
    for step in (4, 8, 12, 20, 40, 60, 100, 200, 400, 1000, 2000, 4000, 10000):
        if peak <= step:
            return float(step)
    return float(peak)
