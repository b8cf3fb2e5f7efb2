"""The report's figures stored with a palette (robid.report._figures.compact_png): against Agg's own RGBA
rendering of the same figure, flattened onto white (the reference), every pixel within a few levels, the file at
least twice smaller, exact where the figure has few colours, and the same bytes every time. figure_png, the
report's cheaper way to the same file, gives the bytes of a plain savefig + compact_png."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from robid.report._figures import compact_png, figure_png, new_figure, style


def _rendered(antialiased: bool) -> bytes:
    rng = np.random.default_rng(0)
    with style():
        fig = new_figure(4.0)
        ax = fig.add_subplot()
        t = np.linspace(0, 10, 2500)
        ax.fill_between(t, np.sin(t) - 0.3, np.sin(t) + 0.3, color="#f2a2ab", antialiased=antialiased)
        ax.plot(t, np.sin(t) + 0.1 * rng.standard_normal(t.size), color="#1d232b", lw=0.8, antialiased=antialiased)
        ax.plot(t, np.sin(t), "--", color="#d1495b", antialiased=antialiased)
        ax.set_title("J1: NRMSE 10.7 %")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _rgb(png: bytes) -> np.ndarray:
    image = Image.open(io.BytesIO(png))
    if image.mode == "RGBA":
        white = Image.new("RGB", image.size, "white")
        white.paste(image, mask=image.getchannel("A"))
        image = white
    return np.asarray(image.convert("RGB"), dtype=float)


def test_palette_png_keeps_the_figure_and_is_smaller():
    original = _rendered(antialiased=True)
    compact = compact_png(original)
    assert Image.open(io.BytesIO(compact)).mode == "P"
    a, b = _rgb(original), _rgb(compact)
    assert a.shape == b.shape
    difference = np.abs(a - b)
    assert difference.max() <= 24 and difference.mean() < 2.0, (difference.max(), difference.mean())
    assert len(compact) < 0.5 * len(original), (len(compact), len(original))
    assert compact_png(original) == compact  # deterministic


def test_few_colours_are_kept_exactly():
    original = _rendered(antialiased=False)
    a = _rgb(original)
    if len(np.unique(a.reshape(-1, 3), axis=0)) <= 256:  # text is still anti-aliased: exact only when it fits
        assert np.array_equal(_rgb(compact_png(original)), a)
    # a flat image of a few colours is always exact
    flat = Image.new("RGBA", (90, 40), (255, 255, 255, 255))
    flat.paste((209, 73, 91, 255), (10, 10, 50, 30))
    buf = io.BytesIO()
    flat.save(buf, format="PNG")
    assert np.array_equal(_rgb(compact_png(buf.getvalue())), _rgb(buf.getvalue()))


def _figure(kind: str):
    """A small report-like figure: ``plain`` (left title, legend, shared x, the upper panel's tick labels hidden
    as in the torque figures), ``toplabels`` (tick labels above the axes: matplotlib lifts the title),
    ``offset`` (y values 1e-6 around 1: matplotlib writes an offset text above the y axis and lifts the left
    title over it), ``pad0`` (a title with pad=0, which matplotlib lifts clear of the axes), ``twin`` (a twinned
    axes), ``3d``."""
    rng = np.random.default_rng(1)
    t = np.linspace(0.0, 5.0, 400)
    fig = new_figure(3.0)
    if kind == "3d":
        ax = fig.add_subplot(projection="3d")
        ax.plot(np.sin(t), np.cos(t), t, "-o", ms=2)
        ax.set_title("t = 1 s", fontsize=8, pad=0)
        return fig
    ax = fig.add_subplot(2, 1, 1)
    axr = fig.add_subplot(2, 1, 2, sharex=ax)
    y = {"offset": 1.0 + 1e-6 * np.sin(t)}.get(kind, 40.0 * np.sin(t))
    ax.plot(t, y + 0.01 * rng.standard_normal(t.size) * (kind != "offset"), label="measured", antialiased=False)
    ax.plot(t, y, "--", label="predicted")
    ax.set_title("J1: NRMSE 3.2 %, 95 % in band", loc="left", pad=0 if kind == "pad0" else None)
    ax.tick_params(labelbottom=False, labeltop=kind == "toplabels")
    axr.plot(t, rng.standard_normal(t.size), lw=0.7)
    axr.set_title("residual")
    if kind == "twin":
        ax.twinx().plot(t, np.cos(t), color="C2")
    fig.legend(*ax.get_legend_handles_labels(), loc="upper center", ncols=2)
    return fig


@pytest.mark.parametrize("kind", ["plain", "toplabels", "offset", "pad0", "twin", "3d"])
def test_figure_png_is_savefig_then_palette(kind):
    """figure_png draws for less (no 32-bit PNG in between; titles held at the top where matplotlib's automatic
    placement leaves them) and must give the bytes of a plain savefig + compact_png of the same figure."""
    with style():
        reference = io.BytesIO()
        _figure(kind).savefig(reference, format="png", metadata={"Software": None})
        fig = _figure(kind)
        png = figure_png(fig)
    assert png == compact_png(reference.getvalue())
    title_y = fig.axes[0].title.get_position()[1]
    if kind in ("toplabels", "offset", "pad0"):  # matplotlib moved the title: the case the held placement must not miss
        assert title_y > 1.0
    elif kind == "plain":
        assert title_y == 1.0 and fig.axes[0]._autotitlepos is False  # the fast path was taken
