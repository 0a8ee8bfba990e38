# Build, test and check the reproduction book.
#
#   make                 create .venv, execute every notebook with papermill (NB_JOBS=2 at a time), build the HTML book
#                        and its PDF (_build/html/fdp-book.pdf; `make pdf` alone reprints it)
#   make test            ruff, then the test-suite (with the doctests) without the browser check
#   make run NB=<name> PARAMS="-p key value ..." [PROFILE=paper] [SCHEDULER=tcp://host:8786]
#   make run NB=<name> HELP=1   (the chapter's parameters from notebooks/schema/<name>.yaml: the book's values, the values
#                        each takes, their meaning and the paper's values; nothing is run)
#                        execute one notebook with extra parameters into _build/runs/<name>-<tag>/ and render
#                        that run as a page (its path is printed last; RUN=<tag> names the folder)
#                        (PROFILE=paper: notebooks/params/<name>.paper.yaml, the papers' trial counts;
#                        repetitions on that Dask cluster with SCHEDULER)
#   make verify          compare every recorded number with the paper (fails on unexplained mismatches)
#   make bench           run benchmarks/bench_*.py
#   make check-book      render every page of _build/html in headless Chromium
#   make mathjax         refresh the bundled MathJax from the npm registry (maintainers only)
#   make lock            re-resolve requirements.lock (exact versions, hashes) from pyproject.toml
#                        and mirror it in environment.yml (maintainers; needs the package index)
#   make clean           remove _build, book/executed, data/results
#   make distclean       clean, and remove .venv
#
# Only python3 (3.11, as requirements.lock) and make are needed; everything else goes into .venv.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EXTRAS := plot,experiments,book,test,check,cluster
comma := ,

# Inputs of every notebook: the library and the values transcribed from the papers.
SRC := $(shell find src/fdp src/fdp_book -name '*.py' 2>/dev/null) $(wildcard data/paper/*)

NOTEBOOKS := $(wildcard notebooks/*.ipynb)
NAMES := $(sort $(patsubst notebooks/%.ipynb,%,$(NOTEBOOKS)))
EXECUTED := $(patsubst notebooks/%.ipynb,book/executed/%.ipynb,$(NOTEBOOKS))
# The reproduction report reads data/results/*.json, written by all the other notebooks.
REPORT := book/executed/report.ipynb
OTHERS := $(filter-out $(REPORT),$(EXECUTED))
# Notebooks run NB_JOBS at a time (much of each runs on one core); the long ones start first.
NB_JOBS ?= 2
# a Dask scheduler for make run (the environment's FDP_DASK_SCHEDULER by default; empty: local cores)
SCHEDULER ?= $(FDP_DASK_SCHEDULER)
# Test workers of `make test` (pytest-xdist; each test file runs in one worker).
TEST_JOBS ?= 2
LONG_FIRST := rero_sampling_rate reconstruction_attacks rero_bounds
ORDERED := $(filter $(patsubst %,book/executed/%.ipynb,$(LONG_FIRST)),$(OTHERS)) \
	$(filter-out $(patsubst %,book/executed/%.ipynb,$(LONG_FIRST)),$(OTHERS)) $(filter $(REPORT),$(EXECUTED))

HTML := _build/html
PAPERMILL := $(PY) -m papermill --kernel python3 --cwd notebooks
ifneq ($(CI),)
PAPERMILL += --no-progress-bar
endif

# Browser used by `make check-book` (tests/book/test_browser.py reads CHROMIUM too).
CHROMIUM ?= $(firstword $(wildcard /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome /usr/bin/google-chrome-stable))
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: all book pdf notebooks venv lock test run verify bench check-book chromium poppler mathjax clean distclean help

all: book

help:
	@sed -n '3,19p' Makefile | sed 's/^# \{0,1\}//'

# --- the virtual environment -------------------------------------------------------------
# Exactly the versions of requirements.lock, each checked against its hashes (the lock is
# resolved for CPython 3.11 on Linux); then fdp itself, editable, with nothing else.
# Reinstalled whenever the lock or pyproject.toml changes.
LOCK := requirements.lock

venv: $(STAMP)

$(STAMP): pyproject.toml $(LOCK)
	@if [ ! -x $(PY) ]; then \
		$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "error: $(LOCK) is resolved for CPython 3.11, but $(PYTHON) is " + sys.version.split()[0] + ": run make PYTHON=python3.11")'; \
		echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); fi
	@$(PY) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "error: $(VENV) has Python " + sys.version.split()[0] + " but $(LOCK) is resolved for 3.11: make distclean, then make PYTHON=python3.11")'
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	@touch $@

# environment.yml (conda) mirrors the lock's pins.
define ENV_FROM_LOCK
import re, sys
pins = re.findall(r"^([A-Za-z0-9_.-]+==[^ \\]+)", open(sys.argv[1]).read(), flags=re.M)
head = """# Conda environment with exactly the versions of requirements.lock (written by `make lock`; do not edit).
# The Makefile does not use it (it installs the lock into .venv with pip, checking hashes); for conda users:
#   conda env create -f environment.yml && conda activate fdp
#   make VENV=$$CONDA_PREFIX ...   (or run papermill / jupyter-book / pytest directly)
name: fdp
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - pip:
"""
open(sys.argv[2], "w").write(head + "".join(f"      - {p}\n" for p in pins) + "      - -e .\n")
endef
export ENV_FROM_LOCK

lock:
	rm -rf _build/lock-venv
	$(PYTHON) -m venv _build/lock-venv
	_build/lock-venv/bin/python -m pip install --quiet "pip-tools==7.6.2"
	_build/lock-venv/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
		--no-emit-find-links $(foreach e,$(subst $(comma), ,$(EXTRAS)),--extra $(e)) --output-file $(LOCK) pyproject.toml
	$(PYTHON) -c "$$ENV_FROM_LOCK" $(LOCK) environment.yml
	rm -rf _build/lock-venv
	@echo "wrote $(LOCK) and environment.yml"

# --- notebooks -------------------------------------------------------------------------
# In the book, papermill's injected-parameters cell only repeats the parameters cell (the
# params file holds the paper's values, which are also the defaults): hide it.
define HIDE_INJECTED
import sys, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
for cell in nb.cells:
    tags = cell.metadata.get("tags", [])
    if "injected-parameters" in tags and "remove-cell" not in tags:
        cell.metadata["tags"] = tags + ["remove-cell"]
nbformat.write(nb, sys.argv[1])
endef
export HIDE_INJECTED
# papermill writes a temporary file that is moved into place only on success: a failed
# run leaves neither a partial notebook nor a stale one behind.
book/executed/%.ipynb: notebooks/%.ipynb notebooks/params/%.yaml notebooks/schema/%.yaml $(SRC) | $(STAMP)
	@mkdir -p $(@D)
	@rm -f $@
	@echo "executing notebooks/$*.ipynb with notebooks/params/$*.yaml"
	@tmp=$(@D)/.$*.tmp.ipynb; \
	if FDP_BOOK_BUILD=1 $(PAPERMILL) -f notebooks/params/$*.yaml notebooks/$*.ipynb $$tmp \
		&& $(PY) -c "$$HIDE_INJECTED" $$tmp; then \
		mv -f $$tmp $@; \
	else \
		rm -f $$tmp; echo "error: notebooks/$*.ipynb failed (see the traceback above)" >&2; exit 1; \
	fi

ifneq ($(filter $(REPORT),$(EXECUTED)),)
$(REPORT): $(OTHERS)
endif

notebooks: $(ORDERED)

# A notebook without a parameter file is an error that names the missing file.
notebooks/params/%.yaml:
	@echo "error: notebooks/$*.ipynb has no parameter file $@" >&2; exit 1

# --- the HTML book ---------------------------------------------------------------------
# After the build: how long each notebook ran (papermill's metadata), longest first.
define NOTEBOOK_TIMES
import json, pathlib
runs = {p.stem: json.loads(p.read_text()).get("metadata", {}).get("papermill", {}).get("duration")
        for p in sorted(pathlib.Path("book/executed").glob("*.ipynb"))}
runs = {name: t for name, t in runs.items() if t is not None}
print("notebook execution times:")
for name, t in sorted(runs.items(), key=lambda item: -item[1]):
    print(f"  {t:7.1f} s  {name}")
print(f"  {sum(runs.values()):7.1f} s  in all")
endef
export NOTEBOOK_TIMES

# Always a clean Sphinx build (incremental builds can leave stale sidebars); the notebooks
# above are only re-executed when their inputs change.
book: chromium | $(STAMP)
	@$(MAKE) --no-print-directory -j$(NB_JOBS) notebooks
	rm -rf $(HTML) $(SINGLE) _build/.doctrees _build/jupyter_execute
	$(VENV)/bin/jupyter-book build . -W -n --keep-going
	@test -f $(HTML)/index.html || { echo "error: jupyter-book wrote no $(HTML)/index.html" >&2; exit 1; }
	@$(MAKE) --no-print-directory pdf
	@$(PY) -c "$$NOTEBOOK_TIMES"
	@echo "book: $(HTML)/index.html and $(PDF)"

# The whole book as one PDF: the single-page HTML build (from the same doctrees, seconds) printed by
# Chromium once MathJax has typeset it (src/fdp_book/pdf.py: twice, so that the table of contents gives the page
# each chapter starts on; every page numbered in its footer).  Sphinx writes that page as book/intro.html with links relative
# to the root, so it is printed from a copy at the root, with every dropdown open (paper has no clicks;
# the print style hides the rerun boxes and code toggles).  The page must carry typeset formulas (no raw
# TeX in the PDF); the PDF is written to a temporary name and moved into place only when complete.
SINGLE := _build/singlehtml
PDF := $(HTML)/fdp-book.pdf
BROWSER = $(or $(CHROMIUM),/usr/bin/chromium) --headless=new --no-sandbox --disable-gpu --virtual-time-budget=120000
pdf: chromium poppler | $(STAMP)
	$(VENV)/bin/jupyter-book build . --builder singlehtml -W -n --keep-going
	sed 's/<details class="sd-sphinx-override sd-dropdown/<details open class="sd-sphinx-override sd-dropdown/g' \
		$(SINGLE)/book/intro.html > $(SINGLE)/whole-book.html
	@n=$$($(BROWSER) --dump-dom "file://$(CURDIR)/$(SINGLE)/whole-book.html" 2>/dev/null | grep -c "<mjx-container"); \
	if [ "$$n" -lt 100 ]; then echo "error: MathJax typeset $$n formulas in the single-page book" >&2; exit 1; fi
	@rm -f $(PDF) $(PDF).tmp
	CHROMIUM="$(or $(CHROMIUM),/usr/bin/chromium)" $(PY) -m fdp_book.pdf $(SINGLE)/whole-book.html $(PDF).tmp
	@test -s $(PDF).tmp || { echo "error: Chromium wrote no PDF" >&2; exit 1; }
	@mv -f $(PDF).tmp $(PDF)
	@echo "pdf: $(PDF) ($$(du -h $(PDF) | cut -f1))"

# --- one notebook with your own parameters ---------------------------------------------
# PARAMS holds papermill options.  A `-p NAME VALUE` whose VALUE is a YAML list or mapping
# ([...] or {...}) is passed as `-y "NAME: VALUE"` so that the notebook gets a list, not the
# string papermill's -p would give.  Before the notebook starts, every parameter the options set
# (-p, -r, -y and -f files alike) is checked against notebooks/schema/<name>.yaml
# (python -m fdp_book check): an unknown name or a bad value stops the run with one line
# (papermill itself only warns about unknown names).  HELP=1 prints the table and runs nothing.
# Results are written to a temporary folder and moved, with the notebook, into the run's folder
# only when the run succeeds: a failed run
# leaves the previous run's notebook and results untouched (a consistent pair) and nothing partial.
# The folder is _build/runs/<name>-<RUN>, RUN defaulting to a hash of PROFILE and the parameters PARAMS sets (in any order and spacing; a -f file by its content), so runs with
# other parameters sit side by side (and may run at the same time: the temporary names carry the tag).
# It holds <name>.ipynb, results/<name>.json and .csv, and the rerun's page,
# page/_build/html/<name>.html (fdp_book.rerun), whose path is printed last.  The report reads the
# book's registry, data/results (it records nothing).
NB_NAME := $(basename $(notdir $(NB)))
RUNS := _build/runs
export PARAMS
export RUN

run: | $(STAMP)
	@if [ -z "$(NB_NAME)" ]; then \
		echo 'usage: make run NB=<name> [PARAMS="-p key value ..."]' >&2; \
		echo 'notebooks: $(NAMES)' >&2; exit 2; fi
	@if [ ! -f notebooks/$(NB_NAME).ipynb ]; then \
		echo 'error: NB=$(NB) names no notebook (no notebooks/$(NB_NAME).ipynb)' >&2; \
		echo 'notebooks: $(NAMES)' >&2; exit 2; fi
ifneq ($(strip $(HELP)),)
	@$(PY) -m fdp_book params $(NB_NAME)
else
	@mkdir -p $(RUNS)
	@eval "set -- $${PARAMS:-}"; \
	args=(); canon=(); \
	if [ -n "$(PROFILE)" ]; then \
		if [ ! -f notebooks/params/$(NB_NAME).$(PROFILE).yaml ]; then \
			echo 'error: PROFILE=$(PROFILE): there is no notebooks/params/$(NB_NAME).$(PROFILE).yaml' >&2; \
			echo "profiles of $(NB_NAME): $$(ls notebooks/params/$(NB_NAME).*.yaml 2>/dev/null | sed 's|.*/$(NB_NAME)\.||; s|\.yaml$$||' | tr '\n' ' ')" >&2; exit 2; fi; \
		args+=(-f notebooks/params/$(NB_NAME).$(PROFILE).yaml); \
	elif [ -f notebooks/params/$(NB_NAME).yaml ]; then args+=(-f notebooks/params/$(NB_NAME).yaml); fi; \
	while [ $$# -gt 0 ]; do \
		case "$$1" in \
		-p|--parameters|-r|--parameters_raw) \
			if [ $$# -lt 3 ]; then echo "error: PARAMS: $$1 needs a name and a value" >&2; exit 2; fi; \
			case "$$1:$$3" in \
			-p:\[*|-p:\{*|--parameters:\[*|--parameters:\{*) args+=(-y "$$2: $$3");; \
			*) args+=("$$1" "$$2" "$$3");; \
			esac; \
			case "$$1" in -r|--parameters_raw) canon+=("r:$$2=$$3");; *) canon+=("p:$$2=$$3");; esac; \
			shift 3;; \
		-y|--yaml) \
			if [ $$# -lt 2 ]; then echo "error: PARAMS: $$1 needs 'name: value'" >&2; exit 2; fi; \
			args+=("$$1" "$$2"); canon+=("y:$$2"); shift 2;; \
		-f|--parameters_file) \
			if [ $$# -lt 2 ] || [ ! -f "$$2" ]; then echo "error: PARAMS: $$1 needs a YAML file that exists" >&2; exit 2; fi; \
			args+=("$$1" "$$2"); canon+=("f:$$(sha1sum < "$$2" | cut -c1-40)"); shift 2;; \
		*) args+=("$$1"); canon+=("$$1"); shift;; \
		esac; \
	done; \
	: "the tag hashes the parameters as set: the order of different names and the spacing of PARAMS do not matter, a -f file counts by its content"; \
	tag=$${RUN:-$$({ echo "$(PROFILE)"; printf '%s\n' "$${canon[@]}" | LC_ALL=C sort; } | sha1sum | cut -c1-8)}; \
	case "$$tag" in *[!A-Za-z0-9._-]*|.*|'') \
		echo "error: RUN='$$tag': a run's name is letters, digits, '.', '_' and '-' (not starting with '.')" >&2; exit 2;; esac; \
	dir="$(RUNS)/$(NB_NAME)-$$tag"; \
	echo "run: $$dir"; \
	: "every parameter the options set, checked against the notebook's schema before the notebook starts (unknown names too, also in a -f file)"; \
	$(PY) -m fdp_book check $(NB_NAME) "$${args[@]}" || exit 2; \
	tmp="$(RUNS)/.$(NB_NAME)-$$tag.tmp.ipynb"; tmpres="$(RUNS)/.$(NB_NAME)-$$tag.results.tmp"; \
	rm -rf "$$tmpres"; mkdir -p "$$tmpres"; \
	resdir="$(CURDIR)/$$tmpres"; \
	if [ "$(NB_NAME)" = report ]; then resdir="$(CURDIR)/data/results"; fi; \
	printf '%s ' executing notebooks/$(NB_NAME).ipynb "$${args[@]}"; echo; \
	: "the notebook says its estimated run time and each part as it starts: papermill's bar of cells would cut those lines"; \
	if FDP_RESULTS_DIR="$$resdir" FDP_DASK_SCHEDULER="$(SCHEDULER)" $(PAPERMILL) --no-progress-bar --stdout-file - --stderr-file - "$${args[@]}" notebooks/$(NB_NAME).ipynb "$$tmp"; then \
		mkdir -p "$$dir/results"; rm -f "$$dir/results/$(NB_NAME).json" "$$dir/results/$(NB_NAME).csv"; \
		if [ -f "$$tmpres/$(NB_NAME).json" ]; then mv -f "$$tmpres/$(NB_NAME).json" "$$dir/results/"; fi; \
		mv -f "$$tmp" "$$dir/$(NB_NAME).ipynb"; rm -rf "$$tmpres"; \
		echo "notebook: $$dir/$(NB_NAME).ipynb"; \
		$(PY) -m fdp_book page "$$dir/$(NB_NAME).ipynb" --results "$$dir/results" --out "$$dir/page" || exit 1; \
	else \
		rm -rf "$$tmp" "$$tmpres"; \
		echo "error: notebooks/$(NB_NAME).ipynb failed (see the traceback above); the previous run's notebook and results, if any, are left as they were" >&2; \
		exit 1; \
	fi
endif

# --- checks ----------------------------------------------------------------------------
test: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks book/_ext
	$(PY) -m pytest -q -m "not browser" -n $(TEST_JOBS) --dist loadfile

verify: $(STAMP)
	$(PY) -m fdp_book verify

bench: $(STAMP)
	@set -e; benches="$(wildcard benchmarks/bench_*.py)"; \
	if [ -z "$$benches" ]; then echo "no benchmarks/bench_*.py"; exit 0; fi; \
	for b in $$benches; do echo "== $$b"; $(PY) $$b; done

# Debian's chromium, installed if no Chromium or Chrome is found.
chromium:
	@if [ -z "$(CHROMIUM)" ]; then \
		echo "installing Debian's chromium"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q chromium; \
	fi

# pdftotext finds the page each chapter lands on, for the PDF's table of contents (src/fdp_book/pdf.py)
poppler:
	@command -v pdftotext >/dev/null || { echo "installing Debian's poppler-utils"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q poppler-utils; }

check-book: chromium $(STAMP)
	CHROMIUM="$(or $(CHROMIUM),/usr/bin/chromium)" $(PY) -m pytest -q -m browser tests/book/test_browser.py

# --- MathJax, bundled so that the book needs no network ---------------------------------
MATHJAX_VERSION ?= 3
mathjax:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	( cd "$$tmp" && npm pack --silent mathjax@$(MATHJAX_VERSION) >/dev/null ) && \
	tar -xzf "$$tmp"/mathjax-*.tgz -C "$$tmp" package/es5/tex-svg-full.js package/LICENSE package/package.json && \
	mkdir -p book/_static/mathjax && \
	cp "$$tmp"/package/es5/tex-svg-full.js "$$tmp"/package/LICENSE book/_static/mathjax/ && \
	echo "book/_static/mathjax: MathJax $$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$$tmp"/package/package.json)"

# --- cleaning --------------------------------------------------------------------------
clean:
	rm -rf _build book/executed data/results

distclean: clean
	rm -rf $(VENV)
