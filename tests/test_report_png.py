"""The report's figures stored with a palette (robid.report._figures.compact_png): against Agg's own RGBA
rendering of the same figure, flattened onto white (the reference), every pixel within a few levels, the file at
least twice smaller, exact where the figure has few colours, and the same bytes every time."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from robid.report._figures import compact_png, new_figure, style


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
