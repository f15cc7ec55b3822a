"""The book's figure style enforces legibility at the page width (and can fail)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from pdpkit import plotting as pp


def test_two_panels_fit_the_page_and_pass():
    fig, axes = pp.figure(1, 2)
    assert fig.get_figwidth() <= pp.PAGE_WIDTH_IN
    for ax in axes:
        ax.plot([0, 1], [0, 1], label="a line")
        ax.set(xlabel="x (units)", ylabel="y (units)")
    pp.legend_below(fig, axes)
    assert pp.smallest_font_pt(fig) >= pp.MIN_FONT_PT
    pp.show(fig)
    plt.close("all")


def test_three_panels_in_a_row_are_refused():
    with pytest.raises(ValueError, match="ncols"):
        pp.figure(1, 3)
    with pytest.raises(ValueError, match="width"):
        pp.figure(1, 1, width=pp.PAGE_WIDTH_IN * 1.5)


def test_small_text_and_wide_figures_fail_the_check():
    fig, ax = pp.figure()
    ax.text(0.5, 0.5, "tiny", fontsize=7)
    with pytest.raises(ValueError, match="pt"):
        pp.show(fig)
    wide = plt.figure(figsize=(12, 4))  # drawn without pp.figure: shrunk on the page
    wide.add_subplot().set_xlabel("x", fontsize=12)
    # the 12 pt label is shown at 12 * 6.8/12 = 6.8 pt once the figure is shrunk to the page
    assert pp.smallest_font_pt(wide) < pp.MIN_FONT_PT
    with pytest.raises(ValueError, match="page width"):
        pp.show(wide)
    plt.close("all")


def test_small_tick_labels_fail_before_the_figure_is_drawn():
    fig, ax = pp.figure()
    ax.plot([0, 1], [0, 1e-3])
    ax.tick_params(axis="y", labelsize=7)  # the labels have no text until a draw
    with pytest.raises(ValueError, match="7.0 pt"):
        pp.show(fig)
    fig2, ax2 = pp.figure()
    ax2.plot([0, 1], [0, 1e-3])
    assert pp.smallest_font_pt(fig2) >= pp.MIN_FONT_PT
    fig2.canvas.draw()  # drawing adds ticks: they copy the sizes checked before
    assert pp.smallest_font_pt(fig2) >= pp.MIN_FONT_PT
    plt.close("all")


def test_style_context_applies_the_palette():
    with pp.style():
        assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][0] == pp.PALETTE[0]


def test_table_is_a_frame_with_the_first_column_as_index():
    t = pp.table([("a", "1.00", 2), ("b", "3.00", 4)], ["name", "x", "n"])
    assert list(t.columns) == ["x", "n"] and t.index.name == "name"
    assert t.loc["b", "x"] == "3.00" and "<table" in t.to_html()
    with pytest.raises(ValueError, match=r"rows\[1\] has 2 cells for 3 columns"):
        pp.table([("a", 1, 2), ("b", 1)], ["name", "x", "n"])
    with pytest.raises(ValueError, match="at least one column"):
        pp.table([("a",)], ["name"])
