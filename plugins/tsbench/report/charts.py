"""Charts as inline SVG text (matplotlib's SVG backend, no pyplot, no files).

Deterministic: a fixed ``svg.hashsalt`` and no date in the metadata, so the same figures give the same
bytes. Every ``id`` in a chart is prefixed with the chart's own key, so several charts can live in one
HTML document without their ids (clip paths, glyphs, markers) colliding. A target keeps its colour in
every chart and every run (its declared ``Target.colour``, ``tsbench.targets.registry.target_colour``).

matplotlib styles SVG elements with CSS (``style="fill: …"`` and a ``*{…}`` rule). Inline in HTML,
WeasyPrint's HTML cascade reads every ``style`` attribute and warns once per SVG-only declaration
(``fill``, ``stroke``, ``text-anchor``…): hundreds of warnings per report. The charts therefore carry
the same declarations as SVG presentation attributes, which only SVG renderers read
(``presentation_attributes``); the drawing is unchanged.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from typing import Literal

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

INK = "#222222"
GRID = "#dddddd"
MUTED = "#777777"
RC = {
    "svg.hashsalt": "tsbench-report",
    "svg.fonttype": "none",  # text stays text: small, searchable in the PDF, laid out by the page's font
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.edgecolor": "#999999",
    "axes.labelcolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "axes.titlesize": 10,
}
ASPECT = 'preserveAspectRatio="xMinYMin meet"'
FONT_STACK = "'DejaVu Sans', 'Liberation Sans', Arial, sans-serif"
_ID_REFERENCE = re.compile(r'(\bid="|href="#|url\(#)([^")]+)')
_STYLED_TAG = re.compile(r'(<[A-Za-z][^<>]*?)\sstyle="([^"]*)"([^<>]*?)(/?>)')
_ATTRIBUTE = re.compile(r'\s([\w:-]+)="[^"]*"')
_DEFAULT_RULE = re.compile(r'\s*<defs>\s*<style type="text/css">\*\{([^{}]*)\}</style>\s*</defs>')


def _svg(fig: Figure, key: str) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context(RC):
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight", pad_inches=0.15)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]  # drop the XML declaration and DOCTYPE: inline in HTML
    text = _ID_REFERENCE.sub(lambda m: f"{m.group(1)}{key}-{m.group(2)}", text)
    text = presentation_attributes(text.replace("font-family: 'DejaVu Sans'", f"font-family: {FONT_STACK}"))
    # The size comes from CSS (width 100 %, height from the viewBox's ratio), so the chart scales
    # with the page; the drawn pt size is dropped.
    text = re.sub(
        r'<svg([^>]*?) width="[\d.]+pt" height="[\d.]+pt"',
        lambda m: f'<svg{m.group(1)} class="chart" role="img" aria-label="{key}" {ASPECT}',
        text,
        count=1,
    )
    return text.strip()


def _declarations(css: str) -> list[tuple[str, str]]:
    """``"fill: #fff; stroke-width: 0.8"`` → ``[("fill", "#fff"), ("stroke-width", "0.8")]``."""
    pairs = (part.split(":", 1) for part in css.split(";") if ":" in part)
    return [(name.strip(), value.strip()) for name, value in pairs]


def _as_attributes(pairs: list[tuple[str, str]]) -> str:
    return "".join(f' {name}="{value}"' for name, value in pairs)


def _restyle_tag(tag: re.Match[str]) -> str:
    """One start tag (``_STYLED_TAG``): its ``style`` declarations become attributes, replacing
    attributes of the same name."""
    before, css, after, close = tag.groups()
    pairs = _declarations(css)
    names = {name for name, _ in pairs}
    kept = _ATTRIBUTE.sub(lambda a: "" if a.group(1) in names else a.group(0), before + after)
    return kept + _as_attributes(pairs) + close


def presentation_attributes(svg: str) -> str:
    """matplotlib's SVG with its CSS turned into presentation attributes, the same drawing.

    Every ``style="a: b"`` becomes ``a="b"`` on its element. The ``*{…}`` default rule (stroke
    line join and cap) goes onto the root ``<svg>`` and is inherited: matplotlib sets those two
    only on elements without children (paths, marker uses and their marker path with the same
    values), so an element gets its own value, else the default, as under the ``*`` rule.
    """
    default = _DEFAULT_RULE.search(svg)
    if default is not None:
        root = _as_attributes(_declarations(default.group(1)))
        svg = svg[: default.start()] + svg[default.end() :]
        svg = svg.replace("<svg ", f"<svg{root} ", 1)
    return _STYLED_TAG.sub(_restyle_tag, svg)


def _human(value: float, _position: float | None = None) -> str:
    if value == 0:
        return "0"
    for suffix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def _style(ax: object, axis: str = "y") -> None:
    ax.grid(axis=axis, color=GRID, linewidth=0.6)  # type: ignore[attr-defined]
    ax.set_axisbelow(True)  # type: ignore[attr-defined]
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)  # type: ignore[attr-defined]


def _finished(
    fig: Figure,
    ax: Axes,
    key: str,
    *,
    title: str | None = None,
    legend: Literal["right", "above"] | None = "right",
    columns: int = 1,
    grid: Literal["x", "y"] = "y",
) -> str:
    """The tail every chart shares, called inside its ``rc_context``: ``title`` left above the axes
    (None: none), the legend right of the axes or ``above`` them in ``columns`` (None: none), the
    grid along ``grid``, then the figure as SVG (``_svg``)."""
    if title is not None:
        ax.set_title(title, loc="left", color=INK)
    if legend == "right":
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    elif legend == "above":
        ax.legend(ncols=columns, frameon=False, loc="lower left", bbox_to_anchor=(0, 1.0))
    _style(ax, grid)
    return _svg(fig, key)


def bar_chart(
    key: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    colours: Sequence[str],
    unit: str,
    notes: Sequence[str] = (),
    value_text: Sequence[str] = (),
) -> str:
    """Horizontal bars, one per target, the value written at the end of each bar. A ``None`` value
    draws no bar and writes its note (e.g. "failed in load") instead."""
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(7.0, 0.45 * len(labels) + 0.7))
        ax = fig.add_subplot()
        positions = list(range(len(labels)))[::-1]
        drawn = [v or 0.0 for v in values]
        ax.barh(positions, drawn, color=list(colours), height=0.6)
        top = max(drawn, default=0.0) or 1.0
        for index, (pos, value) in enumerate(zip(positions, values, strict=True)):
            if value is None:
                note = notes[index] if index < len(notes) else "no figure"
                ax.text(top * 0.01, pos, note, va="center", ha="left", color=MUTED, fontstyle="italic")
            else:
                text = value_text[index] if index < len(value_text) else _human(value)
                ax.text(value + top * 0.01, pos, text, va="center", ha="left", color=INK)
        ax.set_yticks(positions, list(labels))
        ax.set_xlim(0, top * 1.18)
        ax.xaxis.set_major_formatter(FuncFormatter(_human))
        ax.set_xlabel(unit)
        return _finished(fig, ax, key, legend=None, grid="x")


def grouped_bars(
    key: str,
    groups: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    colours: Mapping[str, str],
    unit: str,
    rotate: bool = True,
) -> str:
    """Vertical bars grouped per query type, one bar per target (missing values leave a gap).
    A log scale is used when the values span more than a factor of 30."""
    series = {label: values for label, values in series.items() if any(values)}  # nothing to draw: no legend
    present = [v for values in series.values() for v in values if v]
    log = bool(present) and max(present) / min(present) > 30
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(7.4, 2.9) if rotate else (7.0, 2.4))
        ax = fig.add_subplot()
        count = max(len(series), 1)
        width = 0.8 / count
        for index, (label, values) in enumerate(series.items()):
            xs = [g + (index - (count - 1) / 2) * width for g in range(len(groups))]
            pairs = [(x, v) for x, v in zip(xs, values, strict=True) if v]
            if pairs:
                ax.bar(
                    [p[0] for p in pairs],
                    [p[1] for p in pairs],
                    width=width,
                    color=colours[label],
                    label=label,
                )
            else:
                ax.bar([], [], color=colours[label], label=label)
        if log:
            ax.set_yscale("log")
            # from the decade below the smallest value, so the smallest bar is visibly a bar
            ax.set_ylim(bottom=10 ** math.floor(math.log10(min(present))))
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(_human))
        if rotate:
            ax.set_xticks(range(len(groups)), list(groups), rotation=40, ha="right", rotation_mode="anchor")
        else:
            ax.set_xticks(range(len(groups)), list(groups))
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set_ylabel(unit + (" (log scale)" if log else ""))
        return _finished(fig, ax, key, legend="above", columns=min(count, 4))


def trend_chart(
    key: str,
    runs: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    colours: Mapping[str, str],
    title: str,
    unit: str,
    xlabel: str = "",
    changes: Sequence[tuple[int, str]] = (),
) -> str:
    """One line per target over the runs (oldest left); a missing value breaks the line.
    ``changes``: (run index, series label) of each detected change, drawn as a dashed line in the
    series' colour just before that run (the first of the new level)."""
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(7.0, 2.3))
        ax = fig.add_subplot()
        xs = list(range(len(runs)))
        for label, values in series.items():
            ys = [math.nan if v is None else v for v in values]
            ax.plot(xs, ys, marker="o", markersize=4, linewidth=1.6, color=colours[label], label=label)
        for index, label in changes:
            ax.axvline(index - 0.5, color=colours.get(label, INK), linestyle="--", linewidth=1.2)
        if xlabel:
            ax.set_xticks(xs, list(runs))
            ax.set_xlabel(xlabel)
        else:
            ax.set_xticks(xs, list(runs), rotation=30, ha="right", rotation_mode="anchor")
        if len(xs) == 1:
            ax.set_xlim(-0.5, 0.5)
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(FuncFormatter(_human))
        ax.set_ylabel(unit)
        return _finished(fig, ax, key, title=title)


def sweep_chart(
    key: str,
    xs: Sequence[float],
    series: Mapping[str, Sequence[float | None]],
    ranges: Mapping[str, Sequence[tuple[float, float] | None]],
    colours: Mapping[str, str],
    title: str,
    unit: str,
    xlabel: str,
) -> str:
    """A metric against a numeric swept axis, one line per target (median), the min–max of its
    repeats as error bars (``ranges``); the x axis is logarithmic when ``xs`` span ≥ 100×."""
    log_x = min(xs) > 0 and max(xs) / min(xs) >= 100
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(7.0, 2.5))
        ax = fig.add_subplot()
        for label, values in series.items():
            ys = [math.nan if v is None else v for v in values]
            ax.plot(xs, ys, marker="o", markersize=4, linewidth=1.6, color=colours[label], label=label)
            spans = [(x, y, r) for x, y, r in zip(xs, ys, ranges.get(label, ()), strict=False) if r]
            if spans:
                low = [y - r[0] for _, y, r in spans]
                high = [r[1] - y for _, y, r in spans]
                ax.errorbar(
                    [x for x, _, _ in spans],
                    [y for _, y, _ in spans],
                    yerr=[low, high],
                    fmt="none",
                    ecolor=colours[label],
                    capsize=3,
                    linewidth=1,
                )
        if log_x:
            ax.set_xscale("log")
        ax.set_xticks(list(xs), [_human(x) for x in xs])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(FuncFormatter(_human))
        ax.set_xlabel(xlabel + (" (log scale)" if log_x else ""))
        ax.set_ylabel(unit)
        return _finished(fig, ax, key, title=title)


PERCENTILES_SHOWN = (50.0, 90.0, 99.0, 99.9, 99.99, 100.0)


def percentile_chart(
    key: str,
    curves: Mapping[str, Sequence[tuple[float, float]]],
    colours: Mapping[str, str],
    title: str,
    line_ms: float | None = None,
) -> str:
    """Latency (ms, log scale) against percentile, one line per target, the x axis spread as
    HdrHistogram plots do (1 / (1 − p)); ``line_ms`` draws an objective as a dashed line."""
    ticks = [1 / (1 - p / 100) if p < 100 else 1e5 for p in PERCENTILES_SHOWN]
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(7.0, 2.5))
        ax = fig.add_subplot()
        for label, points in curves.items():
            xs = [1 / (1 - p / 100) if p < 100 else 1e5 for p, _ in points]
            ax.plot(
                xs,
                [v for _, v in points],
                marker="o",
                markersize=3,
                linewidth=1.6,
                color=colours[label],
                label=label,
            )
        if line_ms:
            ax.axhline(
                line_ms, color=MUTED, linestyle="--", linewidth=1, label=f"objective {_human(line_ms)} ms"
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(ticks, [f"p{p:g}" if p < 100 else "max" for p in PERCENTILES_SHOWN])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(_human))
        ax.set_ylabel("ms")
        return _finished(fig, ax, key, title=title)


def timeline_chart(
    key: str,
    series: Mapping[str, Sequence[tuple[float, float]]],
    colours: Mapping[str, str],
    title: str,
    unit: str,
) -> str:
    """A figure per second of a phase, one line per target."""
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(7.0, 2.2))
        ax = fig.add_subplot()
        for label, points in series.items():
            ax.plot(
                [x for x, _ in points],
                [y for _, y in points],
                linewidth=1.4,
                color=colours[label],
                label=label,
            )
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(FuncFormatter(_human))
        ax.set_xlabel("seconds into the phase")
        ax.set_ylabel(unit)
        return _finished(fig, ax, key, title=title)
