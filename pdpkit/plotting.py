"""One figure style for the whole book, legible at the page width; tables as HTML.

Every chapter draws through this module: :func:`setup` once at the top (a
matplotlib style and 2× PNG output in notebooks), then :func:`figure` for each
figure and :func:`show` to finish it. The rules it enforces are the ones a
reader needs on a page that is about :data:`PAGE_WIDTH_IN` inches (≈ 680 CSS
pixels) wide:

* a figure is never wider than the page, so it is never shrunk: a 10 pt label is
  shown at 10 pt;
* at most two panels per row (more are a ``ValueError``: stack them);
* tick labels and legends at least 9 pt (:data:`MIN_FONT_PT`); :func:`show`
  checks every text of the figure and raises if one is smaller;
* one colour-blind-safe palette (:data:`PALETTE`, Okabe & Ito 2008) as the
  default colour cycle, and one marker list (:data:`MARKERS`) for series that must
  survive greyscale printing.

Notebook output is a PNG at twice the logical resolution whose display size is
the logical one (IPython's ``"retina"`` format; myst-nb keeps the width), so
lines stay sharp on high-density screens while nbval, which does not compare
images, stays deterministic.

Tables go through :func:`table`: rows of cells already formatted to the digits the
computation guarantees, returned as a ``pandas.DataFrame`` that the book renders as
an HTML table (and nbval compares as text).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = [
    "PAGE_WIDTH_IN",
    "MIN_FONT_PT",
    "PALETTE",
    "MARKERS",
    "RC",
    "setup",
    "style",
    "figure",
    "legend_below",
    "show",
    "smallest_font_pt",
    "table",
]

PAGE_WIDTH_IN = 6.6
"""Width of a figure that fills the text column, in inches at 100 dpi (660 CSS pixels of the ≈ 690 available)."""

MIN_FONT_PT = 9.0
"""Smallest font size (points, at the size the figure is shown) any text may have."""

PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermilion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow (fills only: too light for lines on white)
)
"""Okabe & Ito's colour-blind-safe palette, the default colour cycle."""

MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*")
"""Markers paired with :data:`PALETTE` for series that must survive greyscale."""

RC: dict[str, Any] = {
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "figure.figsize": (PAGE_WIDTH_IN, 3.6),
    "figure.constrained_layout.use": True,
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "figure.titlesize": 11,
    "axes.prop_cycle": mpl.cycler(color=PALETTE[:7]),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "legend.frameon": False,
    "image.cmap": "viridis",
    "mathtext.fontset": "dejavusans",
}
"""The rcParams of the book's style (applied by :func:`setup` or :func:`style`)."""


def setup() -> None:
    """Apply the book's style globally and, inside IPython, switch to 2× PNG output.

    Call once in a chapter's first code cell. Outside IPython only the style is
    applied (the module does not depend on IPython).
    """
    mpl.rcParams.update(RC)
    try:  # pragma: no cover - exercised by the chapters under nbval
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            from matplotlib_inline.backend_inline import set_matplotlib_formats

            shell.run_line_magic("matplotlib", "inline")
            mpl.rcParams.update(RC)  # the inline backend resets some rcParams
            set_matplotlib_formats("retina")
    except ImportError:
        pass


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Context manager applying the book's style temporarily (for scripts and tests)."""
    with mpl.rc_context(RC):
        yield


def figure(
    nrows: int = 1,
    ncols: int = 1,
    *,
    height: float | None = None,
    width: float | None = None,
    sharex: bool | str = False,
    sharey: bool | str = False,
    squeeze: bool = True,
    **subplot_kw: Any,
) -> tuple[Figure, Any]:
    """A figure sized for the page, with ``nrows × ncols`` panels (``ncols ≤ 2``).

    Parameters
    ----------
    nrows, ncols : int
        Panel grid. ``ncols`` above 2 is a ``ValueError``: more than two panels
        side by side cannot keep their labels legible at the page width.
    height : float, optional
        Figure height in inches (default 3.4 per row for one column, 3.0 per row for two).
    width : float, optional
        Figure width in inches, at most :data:`PAGE_WIDTH_IN` (the default for two
        columns; one-column figures default to 5.6 in so that they are not
        stretched).
    sharex, sharey, squeeze, **subplot_kw
        Passed to ``matplotlib.pyplot.subplots``.

    Returns
    -------
    (Figure, Axes or array of Axes)
    """
    if not isinstance(nrows, (int, np.integer)) or nrows < 1:
        raise ValueError(f"nrows must be a positive integer; got {nrows!r}")
    if not isinstance(ncols, (int, np.integer)) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer; got {ncols!r}")
    if ncols > 2:
        raise ValueError(f"ncols must be 1 or 2 (at most two panels per row; stack the rest); got {ncols}")
    if width is None:
        width = PAGE_WIDTH_IN if ncols == 2 else 5.6
    if not 0 < width <= PAGE_WIDTH_IN + 1e-9:
        raise ValueError(f"width must lie in (0, {PAGE_WIDTH_IN}] inches (the page width); got {width!r}")
    if height is None:
        height = (3.4 if ncols == 1 else 3.0) * nrows
    if not height > 0:
        raise ValueError(f"height must be > 0 inches; got {height!r}")
    with mpl.rc_context(RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), sharex=sharex, sharey=sharey,
                                 squeeze=squeeze, subplot_kw=subplot_kw or None)
    return fig, axes


def legend_below(fig: Figure, axes: Axes | Sequence[Axes] | np.ndarray, *, ncol: int = 2, **kwargs: Any) -> Any:
    """One legend for all panels, centred below them (handles of every panel, deduplicated).

    Parameters
    ----------
    fig : Figure
        The matplotlib figure to draw into.
    axes : Axes | Sequence[Axes] | numpy.ndarray
        The panel(s) whose handles go into the legend.
    ncol : int, default 2
        Number of legend columns.
    """
    ax_list = list(np.atleast_1d(np.asarray(axes, dtype=object)).ravel())
    handles, labels, seen = [], [], set()
    for ax in ax_list:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in seen and not lab.startswith("_"):
                seen.add(lab)
                handles.append(h)
                labels.append(lab)
    return fig.legend(handles, labels, loc="outside lower center", ncol=ncol, **kwargs)


def smallest_font_pt(fig: Figure) -> float:
    """Smallest font size among the figure's visible texts, in points *as shown* on the page.

    A figure wider than the page is shrunk to :data:`PAGE_WIDTH_IN` when shown; the
    sizes are scaled by the same factor.

    Parameters
    ----------
    fig : Figure
        The matplotlib figure to draw into.
    """
    # every visible text, also those still empty: a tick label gets its text only when the figure is drawn,
    # but its size is set already (and ticks made at drawing time copy it), so no draw is needed here
    scale = min(1.0, PAGE_WIDTH_IN / fig.get_figwidth())
    sizes = [t.get_fontsize() for t in fig.findobj(mpl.text.Text) if t.get_visible()]
    return float(min(sizes) * scale) if sizes else float("inf")


def show(fig: Figure | None = None) -> None:
    """Check the figure's legibility and display it (``plt.show``).

    Raises ``ValueError`` if the figure is wider than the page or any visible
    text would be shown below :data:`MIN_FONT_PT`.

    Parameters
    ----------
    fig : Figure, optional
        The matplotlib figure to draw into.
    """
    fig = plt.gcf() if fig is None else fig
    if fig.get_figwidth() > PAGE_WIDTH_IN + 1e-9:
        raise ValueError(f"figure width {fig.get_figwidth():.2f} in exceeds the page width {PAGE_WIDTH_IN} in")
    smallest = smallest_font_pt(fig)
    if smallest < MIN_FONT_PT - 1e-9:
        raise ValueError(f"a text of {smallest:.1f} pt is below the legible minimum {MIN_FONT_PT} pt")
    plt.show()


def table(rows: Sequence[Sequence[Any]], columns: Sequence[str]) -> Any:
    """A table for the book: ``rows`` of formatted cells under ``columns``, the first column as index.

    Returns a ``pandas.DataFrame``; as the last expression of a cell (or through
    ``display``) it is shown as an HTML table. Format numbers before passing them
    (e.g. ``f"{x:.3f}"``): a printed digit must not depend on the last bit of a float.

    Parameters
    ----------
    rows : Sequence of Sequence
        One sequence of cells per row, each as long as ``columns``.
    columns : Sequence of str
        Column headers; the first names the index (the row labels).

    Raises
    ------
    ValueError
        If a row's length differs from the number of columns, or there are fewer than two columns.
    """
    import pandas as pd

    columns = [str(c) for c in columns]
    if len(columns) < 2:
        raise ValueError(f"columns must name the index and at least one column; got {columns}")
    rows = [list(r) for r in rows]
    for i, r in enumerate(rows):
        if len(r) != len(columns):
            raise ValueError(f"rows[{i}] has {len(r)} cells for {len(columns)} columns")
    return pd.DataFrame(rows, columns=columns).set_index(columns[0])
