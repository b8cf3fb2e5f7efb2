"""Figures: matplotlib objects rendered by the Agg canvas (never pyplot, so no global state and nothing to
leak), embedded as base64 PNG. Width 10 in at 90 dpi (900 px) reads well on a laptop screen.

The PNGs are stored with a palette of at most 256 colours (:func:`compact_png`): a report's figures hold a dozen
line and fill colours plus the anti-aliased shades between them and the white background, which a 256-colour
palette keeps to within a few levels (largest difference 15 of 255 on one channel of an edge pixel, mean 1.1, on
the UR10e report's largest figure); the files are three times smaller than Agg's 32-bit RGBA (the UR10e report with
its 68 figures: 14.7 MB -> 4.6 MB; the other real-robot reports 1.3-2.4 MB -> 0.4-0.8 MB), and another 11 % smaller
written with zlib's best compression (``optimize``).

Noisy data lines (measured torque, residuals, spectra) are drawn without anti-aliasing: a one-pixel line through
a thousand noisy samples otherwise paints every pixel column in a dozen shades, which is a third of a figure's
file and nothing the eye sees. With one figure per run for every joint's torque, the UR10e report of 22 runs is
1.8 MB (issue 33: at most 2 MB).

A figure is drawn once on its Agg canvas and its RGBA buffer quantised directly (:func:`figure_png`): the bytes
of ``savefig`` then :func:`compact_png`, without the 32-bit PNG in between, and with the titles that matplotlib's
automatic placement would leave at the top of their axes held there (:func:`_hold_titles`). Building the report:
the demo's 26 % less CPU time, the UR10e report's 14 % (benchmarks/bench_report_figures.py).

Every series is drawn through at most :data:`MAX_POINTS` points taken from every row: :func:`thin_indices` keeps
each bucket's extremes (a time series' envelope, spikes included), :func:`log_peak_indices` each log-frequency
interval's peak (a spectrum on log axes)."""

from __future__ import annotations

import base64
import html
import io
from contextlib import contextmanager

import numpy as np
from markupsafe import Markup

WIDTH_IN = 10.0
DPI = 90
#: at most this many points per drawn series (:func:`thin_indices`)
MAX_POINTS = 2000
#: joints per figure: one figure per group keeps every panel tall enough to read
GROUP = 3

STYLE = {
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "svg.hashsalt": "robid",
}

MEASURED = "#1d232b"
PREDICTED = "#d1495b"
BAND = "#f2a2ab"
NOMINAL = "#2e86ab"
IDENTIFIED = "#d1495b"
DATA = "#6c757d"
HELD_OUT = "#f4a261"  # data of the validation runs, which did not shape the estimate


@contextmanager
def style():
    import matplotlib

    with matplotlib.rc_context(STYLE):
        yield


def new_figure(height_in: float):
    """A figure that belongs to no pyplot state (garbage-collected; nothing to close). The layout is set with
    :func:`margins` (fixed margins in inches: constrained layout doubles the rendering time)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, height_in), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def margins(fig, left=0.85, right=0.15, top=0.35, bottom=0.55, hspace_in=0.45, wspace_in=0.75, rows=1, cols=1):
    """Fixed margins and gaps in inches, converted to the fractions subplots_adjust wants."""
    w, h = fig.get_size_inches()
    ax_h = max((h - top - bottom - hspace_in * (rows - 1)) / rows, 0.1)
    ax_w = max((w - left - right - wspace_in * (cols - 1)) / cols, 0.1)
    fig.subplots_adjust(
        left=left / w,
        right=1 - right / w,
        top=1 - top / h,
        bottom=bottom / h,
        hspace=hspace_in / ax_h,
        wspace=wspace_in / ax_w,
    )


def legend_on_top(fig, ax) -> None:
    """One legend for the whole figure, in its top margin (leave about 0.6 in there), not over the data."""
    handles, labels = ax.get_legend_handles_labels()
    h = fig.get_size_inches()[1]
    fig.legend(
        handles,
        labels,
        loc="upper center",
        ncols=len(labels),
        bbox_to_anchor=(0.5, 1 - 0.04 / h),
        frameon=False,
        markerscale=3,
    )


def light_log_axis(axis) -> None:
    """Major ticks only on a log axis (minor log ticks are slow to lay out and crowd small panels)."""
    from matplotlib.ticker import LogLocator, NullLocator

    axis.set_major_locator(LogLocator(numticks=6))
    axis.set_minor_locator(NullLocator())


def figure_html(fig, alt: str, caption: str | None = None) -> Markup:
    """``<figure>`` with the PNG inline (data URI) and a caption."""
    data = base64.b64encode(figure_png(fig)).decode("ascii")
    w, h = (int(round(v * DPI)) for v in fig.get_size_inches())
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return Markup(
        f'<figure><img src="data:image/png;base64,{data}" width="{w}" height="{h}" alt="{html.escape(alt)}">'
        f"{cap}</figure>"
    )


def figure_png(fig) -> bytes:
    """The palette PNG of a figure of :func:`new_figure`: the same pixels and bytes as ``fig.savefig`` (PNG) then
    :func:`compact_png`, drawn for less: the Agg canvas' RGBA buffer goes to :func:`compact_image` directly (no
    32-bit PNG encoded and decoded in between), and titles matplotlib would leave at the top of their axes are
    held there instead of placed by its automatic search (:func:`_hold_titles`). A figure with a layout engine
    (which savefig lays out first) or another resolution goes through savefig."""
    from PIL import Image

    if fig.get_layout_engine() is not None or fig.dpi != DPI:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
        return compact_png(buf.getvalue())
    held = _hold_titles(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    if not all(_title_stays(ax, renderer) for ax in held):  # rare: drawn again with matplotlib's own placement
        for ax, auto in held.items():
            ax._autotitlepos = auto
        fig.canvas.draw()
    rgba = Image.frombuffer("RGBA", fig.canvas.get_width_height(), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    return compact_image(rgba)


def _titles(ax) -> tuple:
    return tuple(t for t in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)) if t)


def _hold_titles(fig) -> dict:
    """Axes of ``fig`` whose titles are now held at y = 1 (axes coordinates), with their placement flag to restore.

    matplotlib places an axes' title automatically (``_AxesBase._update_title_position``, at every draw) unless
    its y was set: it measures every tick label of the y axis (about an eighth of a report's drawing time) only
    to see whether the axis' offset text ("1e-5" above the axis) or anything else above the axes would overlap
    the title, and leaves the title at y = 1 otherwise. Held here: plain 2-D axes with a title whose x axis is at
    the bottom (:func:`_x_axis_below`) and that have no twin, inset or aligned sibling (what else the search
    measures); whether the search would have moved the title is checked after the draw (:func:`_title_stays`)."""
    held = {}
    groups = getattr(fig, "_align_label_groups", {}).get("title")
    for ax in fig.axes:
        auto = getattr(ax, "_autotitlepos", False)  # None or True: automatic (matplotlib 3)
        twins = getattr(ax, "_twinned_axes", None)
        if (auto not in (None, True) or ax.name != "rectilinear" or not any(t.get_text() for t in _titles(ax))
                or ax.child_axes or twins is None or len(twins.get_siblings(ax)) > 1
                or (groups is not None and len(groups.get_siblings(ax)) > 1) or not _x_axis_below(ax)):
            continue
        held[ax] = auto
        ax._autotitlepos = False
        for title in _titles(ax):
            title.set_y(1.0)
    return held


def _x_axis_below(ax) -> bool:
    """Whether nothing of the x axis of ``ax`` (label, tick labels, offset text) is above the axes: the search
    measures the x axis unless its ticks are at the bottom only ("unknown" when its tick labels are hidden)."""
    x = ax.xaxis
    if x.get_label_position() != "bottom":
        return False
    if x.get_ticks_position() in ("bottom", "default"):
        return True
    return x.offset_text_position == "bottom" and not any(t.label2.get_visible() for t in (x.majorTicks[0],
                                                                                              x.minorTicks[0]))


def _title_stays(ax, renderer) -> bool:
    """Whether matplotlib's automatic placement would have left every title of ``ax`` (drawn) at y = 1: no offset
    text on the y axis, and every title's box above the top of the axes (a title with ``pad=0`` is not)."""
    offset = ax.yaxis.offsetText
    if offset.get_visible() and offset.get_text():
        return False
    top = ax.spines.get("outline", ax).get_window_extent().ymax
    return top < 0 or all(t.get_window_extent(renderer).ymin >= top for t in _titles(ax))


def compact_png(png: bytes) -> bytes:
    """:func:`compact_image` of the image in the PNG ``png`` (Agg's RGBA as savefig writes it)."""
    from PIL import Image

    return compact_image(Image.open(io.BytesIO(png)))


def compact_image(image) -> bytes:
    """The PIL image ``image`` (Agg's RGBA) flattened onto white and stored as PNG with an adaptive palette of at
    most 256 colours (octree quantisation, no dithering: deterministic, no noise added to flat areas); module
    docstring."""
    from PIL import Image

    if image.mode != "RGB":
        white = Image.new("RGB", image.size, "white")
        white.paste(image, mask=image.getchannel("A") if "A" in image.getbands() else None)
        image = white
    out = io.BytesIO()
    image.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(out, format="PNG",
                                                                                         optimize=True)
    return out.getvalue()


def joint_groups(dof: int, size: int = GROUP) -> list[list[int]]:
    """Joints split into figures of at most ``size``: 6 -> [0,1,2], [3,4,5]; 7 -> 3, 2, 2 (balanced)."""
    n = max(1, -(-dof // size))
    bounds = np.linspace(0, dof, n + 1).round().astype(int)
    return [list(range(bounds[i], bounds[i + 1])) for i in range(n) if bounds[i + 1] > bounds[i]]



def thin_indices(*series: np.ndarray, max_points: int = MAX_POINTS) -> np.ndarray:
    """Sorted indices of at most ``max_points`` samples of equally long ``series``, drawn from every row: the rows
    are cut into ``max_points / (2 * len(series))`` consecutive buckets and each bucket keeps, per series, the rows
    of its smallest and largest finite value -- a line drawn through them has the envelope of the line through
    every row (no spike lost), unlike every k-th row. A bucket without a finite value keeps its first row (a gap
    stays a gap). Every row when there are no more than ``max_points``."""
    n = len(series[0])
    if n <= max_points:
        return np.arange(n)
    buckets = max(1, max_points // (2 * len(series)))
    edges = np.linspace(0, n, buckets + 1).astype(int)
    keep = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        for y in series:
            part = np.asarray(y[lo:hi], dtype=float)
            finite = np.isfinite(part)
            if not finite.any():
                keep.append(lo)
                continue
            masked = np.where(finite, part, np.nan)
            keep += [lo + int(np.nanargmin(masked)), lo + int(np.nanargmax(masked))]
    return np.unique(np.asarray(keep, dtype=int))


def log_peak_indices(x: np.ndarray, y: np.ndarray, buckets: int = 150) -> np.ndarray:
    """Sorted indices of the largest finite ``y`` in each of ``buckets`` log-spaced intervals of ``x > 0``: a
    spectrum on log axes thinned to what a panel can show, every bin taking part (its peaks kept). Every index when
    there are no more than ``buckets``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.flatnonzero((x > 0) & np.isfinite(y))
    if ok.size <= buckets:
        return ok
    edges = np.geomspace(x[ok].min(), x[ok].max() * (1 + 1e-12), buckets + 1)
    which = np.searchsorted(edges, x[ok], side="right") - 1
    keep = {}
    for k, b in zip(ok, which, strict=True):
        if b not in keep or y[k] > y[keep[b]]:
            keep[b] = k
    return np.array(sorted(keep.values()), dtype=int)
