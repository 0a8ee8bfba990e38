"""The report page: every chapter's records counted by paper, the verdict, the introduction's headline numbers and
figure (all from the registry, ``results.load_all``: chapter -> its records)."""

from __future__ import annotations

from .. import page, plotting, results

#: Figures the page draws (each drawn once more outside the book's build), for the run-time estimate.
FIGURES = 1
#: The papers in book order, each with the pages that reproduce it; a record belongs to the paper its source names.
PAPERS = {"Kaissis et al. 2023a (ReRo)": ["rero_bounds", "rero_sampling_rate"],
          "Hayes et al. 2023": ["guo_comparison", "reconstruction_attacks"],
          "Kaissis et al. 2023b (RTM)": ["rtm_tradeoffs", "rtm_dpsgd", "rtm_auditing"],
          "Gomez et al. 2025 (GDP)": ["gdp_tables", "risk_report"]}
#: Each paper's page (book/papers/<name>.md), which includes its records table (``chapter_<name>.inc``)
PAPER_PAGES = dict(zip(PAPERS, ["kaissis2023_rero", "hayes2023_reconstruction", "kaissis2023_rtm", "gomez2025_gdp"]))


def by_paper(registry: dict) -> dict:
    """Every record under the paper its source names; a ValueError names the records that name none."""
    every = [r for recs in registry.values() for r in recs]
    nameless = [r["key"] for r in every if not any(r["source"].startswith(p) for p in PAPERS)]
    if nameless:
        raise ValueError(f"records whose source names none of the four papers (data/paper): {nameless}")
    return {p: [r for r in every if r["source"].startswith(p)] for p in PAPERS}


def summary_rows(registry: dict) -> tuple[list, list]:
    """(header, rows) of the records counted by page, grouped by paper: each paper's pages, then an italic row of
    their subtotals; a bold total row last."""
    rows, pages = [], []
    for paper, names in PAPERS.items():
        group = []
        for name in names:
            if not registry.get(name):
                continue
            recs, own = results.split_own(registry[name])  # our own checks are verified too, but counted apart
            st, st_own = [results.status_of(r) for r in recs], [results.status_of(r) for r in own]
            group.append([f"{{doc}}`{name}`", len(recs), sum(r["kind"] == "claim" for r in recs), st.count("match"),
                          st.count("set-up"), st.count("explained"), st.count("not compared"),
                          sum((st + st_own).count(s) for s in results.FAILING), len(own)])
        rows += group
        pages += group
        if len(group) > 1:
            rows.append([f"*subtotal: {paper}*"] + [f"*{sum(r[i] for r in group)}*" for i in range(1, len(group[0]))])
    total = [sum(r[i] for r in pages) for i in range(1, len(pages[0]))]
    return (["page (grouped by the paper it follows, as below)", "records", "claims", "match", "set-up", "explained",
             "not compared", "failing", "own checks"], rows + [["**all pages**"] + [f"**{v}**" for v in total]])


def _explained(records: list[dict]) -> list[dict]:
    return [r for r in results.split_own(records)[0] if results.status_of(r) == "explained"]


def cause_rows(papers: dict) -> tuple[list, list]:
    """(header, rows) of the explained deviations of each paper (``papers``: paper -> records) counted by cause
    (:data:`fdp_book.results.CAUSES`), with a total row."""
    counts = {paper: [r.get("cause") for r in _explained(recs)] for paper, recs in papers.items()}
    rows = [[paper] + [c.count(cause) for cause in results.CAUSES] + [len(c)] for paper, c in counts.items()]
    total = [sum(r[i] for r in rows) for i in range(1, len(results.CAUSES) + 2)]
    return ["paper", *results.CAUSES, "explained"], rows + [["**all papers**"] + [f"**{v}**" for v in total]]


def verdict(registry: dict) -> str:
    """The page's opening sentence: how many numbers match, deviate with an explanation, are not compared or fail."""
    every = [r for recs in registry.values() for r in recs]
    total = [int(str(v).strip("*")) for v in summary_rows(registry)[1][-1][1:]]
    own = [r for r in every if results.own_check(r)]
    explained = _explained(every)
    return (f"{total[0]} numbers and claims of the four papers recomputed: **{total[2]} match**, {total[3]} reproduce a value "
            f"that our set-up was chosen to hit (not counted as matches), **{total[4]} deviate with an explanation** "
            f"({page.by_cause(explained)}; each on the {{doc}}`errata <../errata>` page), {total[5]} not compared, "
            + (f"**{total[6]} failing**." if total[6] else "**none failing**.")
            + (f" Besides, {page.own_outcome(own)}: statements we test beside the papers', listed apart in their sections."
               if own else "")
            + " The summary table below counts them by page, each page under the paper it follows; a page can also quote "
            "another paper (the sampling-rate page reproduces Hayes et al.'s Fig. 5a), and the introduction's Figure 1 and "
            "the paper pages count every record for the paper it quotes. Each section lists its records, and every row "
            "links to the figure or section that shows the number.")


def headline(registry: dict) -> dict:
    """The introduction's numbers: records, printed values, claims, matches, explained deviations, errata, own checks."""
    every = [r for recs in registry.values() for r in recs]
    paper = results.split_own(every)[0]
    state = [results.status_of(r) for r in paper]
    explained = _explained(every)
    return dict(n_records=f"{len(paper)}", n_printed=f"{sum(r['kind'] != 'claim' for r in paper)}",
                n_claims=f"{sum(r['kind'] == 'claim' for r in paper)}", n_match=f"{state.count('match')}",
                n_setup=f"{state.count('set-up')}", n_explained=f"{state.count('explained')}",
                n_by_cause=page.by_cause(explained), n_errata=f"{len(results.errata_labels())}", n_own=f"{len(every) - len(paper)}")


#: The headline figure's colour of each status and cause (explained deviations split by cause).
_CLASSES = (("match", "C2"), ("set-up", "#9ad0a0"), ("paper error", "C3"), ("paper ambiguity", "C1"),
            ("printed rounding", "#f2c14e"), ("our scaled-down set-up", "C0"), ("our definition or reading", "C4"),
            ("not compared", "0.7"))


def _class_of(rec: dict) -> str:
    status = results.status_of(rec)
    return rec.get("cause", "") if status == "explained" else status


def headline_figure(papers: dict):
    """The introduction's Figure 1: per paper (``papers``: paper -> records), a bar of its records by status."""
    statuses = {paper: [_class_of(r) for r in results.split_own(recs)[0]] for paper, recs in papers.items()}
    widest = max(len(st) for st in statuses.values())
    fig, (ax,) = plotting.column_figure(1, 1, row_height=3.0)
    for i, st in enumerate(statuses.values()):
        left = 0
        for s, color in _CLASSES:
            n = st.count(s)
            shown = any(s in other for other in statuses.values())  # no legend entry for an empty class
            ax.barh(i, n, left=left, color=color, label=s if i == 0 and shown else None)
            if n >= 0.03 * widest:  # a count on its bar only where the bar is wide enough to hold it
                ax.text(left + n / 2, i, str(n), ha="center", va="center", color="k" if color[0] in "#0" else "white")
            left += n
        failing = sum(st.count(s) for s in results.FAILING)
        if failing:
            ax.barh(i, failing, left=left, color="C3", label="failing")
    ax.set_yticks(range(len(papers)), list(papers))
    ax.invert_yaxis()
    ax.set(xlabel="recorded numbers and claims of the paper", xlim=(0, 1.04 * widest))
    ax.grid(axis="y", visible=False)
    plotting.legend(ax, loc="below")  # under the axis, in as many columns as fit the figure's width
    return fig
