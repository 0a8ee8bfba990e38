"""How well each chapter's printed run-time estimate holds (issue 53, item 4: within a factor 1.5).

Every chapter prints "Estimated run time: about ..." before its heavy work (fdp_book.runtime). This script runs each
chapter's quick profile (notebooks/params/<name>.quick.yaml) once, one notebook at a time, in a scratch folder (the
book's pages and records are not touched), and prints the estimate, the notebook's own execution time (papermill's
duration: the kernel's start and imports included, as a user waits for them), their ratio and whether it lies within
the factor 1.5. About two minutes on 2 cores. Run with ``make bench`` (or ``python benchmarks/bench_estimates.py
NAME ...`` for some chapters; ``--profile book`` for the book's parameters, about 17 minutes; ``--profile paper`` for
the chapters that have a paper profile: ``rtm_auditing`` takes minutes, ``reconstruction_attacks`` days).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import papermill as pm
import yaml

ROOT = Path(__file__).resolve().parents[1]
FACTOR = 1.5
#: Pages that print no estimate: the reproduction report (it reads the others' records) and the practitioner's page.
WITHOUT_ESTIMATE = ("report", "your_run")
_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}


def printed_estimate(executed: dict) -> float | None:
    """Seconds of the first "Estimated run time: about N unit" line among the notebook's outputs."""
    for cell in executed["cells"]:
        for out in cell.get("outputs", []):
            text = out.get("text", "")
            text = "".join(text) if isinstance(text, list) else text
            m = re.search(r"Estimated run time: about ([\d.]+) (s|min|h)\b", text)
            if m:
                return float(m.group(1)) * _UNITS[m.group(2)]
    return None


def run(name: str, profile: str, folder: Path) -> tuple[float | None, float]:
    """(estimate, duration) in seconds of one run of notebook ``name`` with ``profile``'s parameters."""
    suffix = {"quick": "quick.yaml", "book": "yaml", "paper": "paper.yaml"}[profile]
    params = yaml.safe_load((ROOT / "notebooks" / "params" / f"{name}.{suffix}").read_text()) or {}
    out = folder / f"{name}.ipynb"
    os.environ["FDP_RESULTS_DIR"] = str(folder / "results")  # the kernel inherits it: the book's registry is untouched
    pm.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), parameters=params, kernel_name="python3",
                        cwd=str(ROOT / "notebooks"), progress_bar=False)
    executed = json.loads(out.read_text())
    return printed_estimate(executed), float(executed["metadata"]["papermill"]["duration"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="chapters (default: every chapter that prints an estimate)")
    parser.add_argument("--profile", choices=("quick", "book", "paper"), default="quick")
    args = parser.parse_args(argv)
    names = args.names or sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb") if p.stem not in WITHOUT_ESTIMATE
                                 and (args.profile != "paper" or (ROOT / "notebooks" / "params" / f"{p.stem}.paper.yaml").exists()))
    print(f"profile {args.profile}: estimate against the notebook's execution time (goal: within a factor {FACTOR:g})")
    print(f"{'chapter':24s} {'estimate (s)':>13s} {'actual (s)':>11s} {'actual/est.':>12s}  within")
    bad = 0
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            estimate, actual = run(name, args.profile, Path(scratch))
            ratio = actual / estimate if estimate else float("inf")
            ok = 1 / FACTOR <= ratio <= FACTOR
            bad += not ok
            shown = "-" if estimate is None else f"{estimate:.0f}"
            print(f"{name:24s} {shown:>13s} {actual:11.1f} {ratio:12.2f}  {'yes' if ok else 'NO'}", flush=True)
    print(f"{len(names) - bad} of {len(names)} within a factor {FACTOR:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
