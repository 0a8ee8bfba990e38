"""The command line, ``python -m fdp``, run as a user would (a subprocess with this interpreter)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpmath import erfinv, exp, mp, mpf, ncdf, sqrt
from scipy.stats import norm

from fdp import Mechanism, calibrate, formatting, risk
from fdp.accounting import accountants
from fdp.cli import main
from fdp.curves import gdp, mia, rero, tradeoff
from fdp.targets import Advantage, Epsilon, Mu
from references import answer_or_refusal, exact_mu_pure_dp, finite_tree, isf_mp, log_uniform, mu_at, one_step_add_tpr, one_step_mu_star, power_mp, run_cli

# Every subprocess of this module, started together (each one pays the interpreter and SciPy import).
CASES = {
    "gauss": ["rero", "--mechanism", "gaussian", "--mu", "2.0", "--kappa", "0.1", "--json"],
    "gauss_many": ["rero", "--mechanism", "gaussian", "--mu", "1.0", "--kappa", "0.5", "0.001", "0.2", "--json"],
    "bad_mu": ["rero", "--mechanism", "gaussian", "--mu", "-1", "--kappa", "0.1"],
    "bad_kappa": ["rero", "--mechanism", "gaussian", "--mu", "1.0", "--kappa", "1.5"],
    "bad_mechanism": ["rero", "--mechanism", "cauchy", "--mu", "1.0", "--kappa", "0.1"],
    "missing_kappa": ["rero", "--mechanism", "gaussian", "--mu", "1.0"],
}
BAD = {"bad_mu": "mu", "bad_kappa": "kappa", "bad_mechanism": "mechanism", "missing_kappa": "--kappa"}


def _start(args, **kw):
    return subprocess.Popen(
        [sys.executable, "-m", "fdp", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw
    )


def _finish(proc):
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    # another working directory and no FDP_RESULTS_DIR: the CLI must not depend on either
    cwd = tmp_path_factory.mktemp("cwd")
    env = {k: v for k, v in os.environ.items() if k != "FDP_RESULTS_DIR"}
    procs = {name: _start(args, cwd=cwd, env=env) for name, args in CASES.items()}
    return {name: _finish(p) for name, p in procs.items()}


def _json(run):
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert isinstance(out, dict)
    return out


def test_gaussian_json(runs):
    out = _json(runs["gauss"])
    assert out["mechanism"] == "gaussian"
    assert out["mu"] == 2.0
    assert out["kappa"] == [0.1]
    assert len(out["gamma"]) == 1 and len(out["rero_advantage"]) == 1
    expected = 1.0 - norm.cdf(norm.ppf(0.9) - 2.0)
    assert out["gamma"][0] == pytest.approx(expected, rel=1e-12)
    assert out["gamma"][0] == pytest.approx(float(rero.gamma(tradeoff.gaussian(2.0), 0.1)), rel=1e-15)
    assert out["rero_advantage"][0] == pytest.approx((expected - 0.1) / 0.9, rel=1e-12)


def test_several_kappas_in_order(runs):
    out = _json(runs["gauss_many"])
    kappas = [0.5, 0.001, 0.2]
    assert out["kappa"] == kappas
    assert len(out["gamma"]) == 3 and len(out["rero_advantage"]) == 3
    np.testing.assert_allclose(out["gamma"], [norm.sf(norm.isf(k) - 1.0) for k in kappas], rtol=1e-12)
    # the closed form rounded up past its bounded rounding error (tradeoff.gaussian_power_bounds), never below it
    assert np.all(np.array(out["gamma"]) >= rero.gamma(tradeoff.gaussian(1.0), kappas))
    assert out["gamma"] == tradeoff.gaussian_power_bounds(1.0, kappas)[1].tolist()
    np.testing.assert_allclose(out["rero_advantage"], [(g - k) / (1 - k) for g, k in zip(out["gamma"], kappas)], rtol=1e-12)


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_arguments_exit_2_with_one_line(runs, case):
    run = runs[case]
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert BAD[case] in lines[0]
    assert "Traceback" not in run.stderr


# ---------------------------------------------------------------------------------------------
# the same entry point in-process (argparse errors raise SystemExit(2))
# ---------------------------------------------------------------------------------------------


def _main(capsys, argv):
    from fdp.cli import main

    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_main_json_in_process(capsys):
    code, out, err = _main(capsys, ["rero", "--mechanism", "gaussian", "--mu", "0", "--kappa", "0.25", "--json"])
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["gamma"][0] == pytest.approx(0.25) and data["rero_advantage"][0] == pytest.approx(0.0, abs=1e-12)


def test_table_output(capsys):
    code, out, err = _main(capsys, ["rero", "--mechanism", "gaussian", "--mu", "2.0", "--kappa", "0.1", "0.2"])
    assert code == 0 and err == ""
    lines = out.strip().splitlines()
    assert lines[0].split() == ["kappa", "gamma", "rero_advantage"]
    rows = [[float(x) for x in line.split()] for line in lines[1:]]
    assert [r[0] for r in rows] == [0.1, 0.2]
    for k, g, a in rows:
        assert g == pytest.approx(norm.sf(norm.isf(k) - 2.0), rel=1e-5)
        assert a == pytest.approx((g - k) / (1 - k), rel=1e-5)


@pytest.mark.parametrize(
    "argv,name",
    [
        (["rero", "--mechanism", "gaussian", "--mu", "nan", "--kappa", "0.1"], "mu"),
        (["rero", "--mechanism", "laplace", "--mu", "-2", "--kappa", "0.25"], "mu"),
        (["rero", "--mechanism", "laplace", "--mu", "1.0", "--kappa", "0.1", "0", "--json"], "kappa"),
        (["rero", "--mechanism", "gaussian", "--mu", "1.0", "--kappa", "nan"], "kappa"),
        (["rero", "--mechanism", "gaussian", "--mu", "1.0", "--kappa", "abc"], "kappa"),
        (["rero", "--mechanism", "gaussian", "--kappa", "0.1"], "--mu"),
        (["rero", "--mu", "1.0", "--kappa", "0.1"], "--mechanism"),
        (["frobnicate"], "frobnicate"),
        ([], "command"),
    ],
)
def test_more_bad_arguments_in_process(capsys, argv, name):
    code, out, err = _main(capsys, argv)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert name in lines[0]


def test_laplace_json(capsys):
    mu = 1.5
    code, out, err = _main(capsys, ["rero", "--mechanism", "laplace", "--mu", "1.5", "--kappa", "0.01", "0.3", "--json"])
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["mechanism"] == "laplace" and data["mu"] == mu and data["kappa"] == [0.01, 0.3]
    # eq. (1): kappa = 0.01 < e^-mu / 2 -> gamma = kappa e^mu; kappa = 0.3 in the middle -> 1 - e^-mu / (4 kappa)
    np.testing.assert_allclose(data["gamma"], [0.01 * math.exp(mu), 1 - math.exp(-mu) / (4 * 0.3)], rtol=1e-12)
    # the upper end: above the curve's power by its margin, 4 u (4 + mu + |log kappa|), and the two roundings apart
    power = rero.gamma(tradeoff.laplace(mu), [0.01, 0.3])
    assert np.all(np.asarray(data["gamma"]) >= power)
    np.testing.assert_allclose(data["gamma"], power, rtol=8 * np.finfo(float).eps * (4 + mu + abs(math.log(0.01))))
    assert len(data["rero_advantage"]) == 2


def test_gdp_dpsgd_json(capsys):
    """De et al.'s eps = 8 CIFAR-10 run: the GDP paper prints mu = 1.57 with regret about 1e-3."""
    assert main(["gdp", "--noise-multiplier", "9.4", "--sampling-rate", str(16384 / 50000), "--steps", "2000",
                 "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"mu", "regret", "epsilon", "seconds"}
    assert round(out["mu"], 2) == 1.57 and 5e-4 < out["regret"] < 2e-3
    assert 7.0 < out["epsilon"] < 8.0
    # the default lattice (3e-4 here) is pessimistic and close: the certified interval of mu* from
    # pld.tradeoff_bracket is [1.566947, 1.566949] (benchmarks/bench_gdp.py recomputes it)
    assert out["discretization"] == 3e-4
    assert 1.566947 <= out["mu"] <= 1.566949 + 2e-5


def test_gdp_bad_dpsgd_parameter(capsys):
    assert main(["gdp", "--noise-multiplier", "1", "--sampling-rate", "1.5", "--steps", "10"]) == 2
    assert "--sampling-rate" in capsys.readouterr().err


@pytest.mark.parametrize("mechanism, mu", [("gaussian", None), ("laplace", None), ("randomized-response", None)])
def test_gdp_mechanism_json(capsys, mechanism, mu):
    delta = ["--delta", "1e-5"] if mechanism == "gaussian" else []  # pure eps-DP mechanisms take no --delta
    assert main(["gdp", "--mechanism", mechanism, "--epsilon", "1.0", *delta, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mu"] > 0 and out["regret"] >= 0
    if mechanism == "gaussian":
        assert out["regret"] == 0.0
    if mechanism == "randomized-response":  # GDP paper Fig. 5: regret 0.058
        assert round(out["regret"], 3) == 0.058


def test_gdp_bad_epsilon(capsys):
    assert main(["gdp", "--mechanism", "gaussian", "--epsilon", "-1"]) == 2
    assert "--epsilon" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["--mechanism", "laplace", "--mu", "1.5"],
        ["--mechanism", "gaussian", "--mu", "1", "--dimension", "30"],
        ["--mechanism", "subsampled-gaussian", "--mu", "1", "--sampling-rate", "0.3"],
        ["--mechanism", "subsampled-gaussian", "--mu", "0.2", "--steps", "30", "--sampling-rate", "0.4"],
    ],
)
def test_rtm_json(capsys, argv):
    """Lists j, j_inv, J, f_dp, one per alpha; RTM curves lie on or above the DP curve (RTM paper Lemma 6)."""
    alphas = [0.0, 0.001, 0.1, 0.5, 1.0]
    assert main(["rtm", *argv, "--alpha", *map(str, alphas), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("j", "j_inv", "J", "f_dp"):
        assert len(out[key]) == len(alphas)
    assert np.all(np.array(out["J"]) >= np.array(out["f_dp"]) - 1e-6)
    assert np.all(np.array(out["J"]) <= np.minimum(out["j"], out["j_inv"]) + 1e-6)


def test_rtm_bad_alpha(capsys):
    assert main(["rtm", "--mechanism", "gaussian", "--mu", "1", "--alpha", "1.5"]) == 2
    assert "--alpha" in capsys.readouterr().err


def test_report_json_and_markdown(capsys):
    argv = ["report", "--noise-multiplier", "2", "--sampling-rate", "0.05", "--steps", "200", "--discretization", "1e-3",
            "--fpr", "0.01", "--kappa", "0.01"]
    code, out, err = _main(capsys, argv + ["--json"])
    assert code == 0 and err == ""
    data = json.loads(out)
    assert set(data) == {"mechanism", "dp", "gdp", "mia", "rero", "rtm", "provenance", "warnings"}
    assert data["mia"]["tpr_upper"][0] == pytest.approx(data["rero"]["gamma_upper"][0], rel=1e-3)  # gamma = TPR
    assert data["rtm"]["dimension"] == 1 and data["rtm"]["tpr_upper"][0] < data["mia"]["tpr_upper"][0]
    code, out, err = _main(capsys, argv + ["--json", "--rtm-dimension", "50"])
    assert json.loads(out)["rtm"]["tpr_upper"][0] < data["rtm"]["tpr_upper"][0]
    code, out, err = _main(capsys, argv)
    assert code == 0 and out.startswith("# Privacy risk of DP-SGD") and "| 0.01 |" in out


@pytest.mark.parametrize("argv,name", [
    (["report", "--noise-multiplier", "0"], "--noise-multiplier"),
    (["report", "--noise-multiplier", "1", "--fpr", "2"], "--fpr"),
    (["report", "--noise-multiplier", "1", "--prior", "1"], "--prior"),
    (["report", "--noise-multiplier", "1", "--steps", "0"], "--steps"),
    (["report", "--sampling-rate", "0.1"], "--noise-multiplier"),
    (["report", "--noise-multiplier", "1", "--rtm-dimension", "0"], "--rtm-dimension"),
    (["report", "--mechanism", "randomized-response"], "--epsilon"),
    (["report", "--mechanism", "randomized-response", "--epsilon", "1", "--steps", "2"], "--steps"),
    (["report", "--mechanism", "randomized-response", "--epsilon", "-1"], "--epsilon"),
    (["report", "--noise-multiplier", "1", "--epsilon", "1"], "--epsilon"),
    (["report", "--mechanism", "laplace", "--noise-multiplier", "1", "--sampling-rate", "0.5"], "--sampling-rate"),
    (["report", "--mechanism", "laplace", "--noise-multiplier", "1", "--rtm-dimension", "2"], "--rtm-dimension"),
])
def test_report_bad_arguments(capsys, argv, name):
    code, out, err = _main(capsys, argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and name in err


def test_calibrate_json(capsys):
    code, out, err = _main(capsys, ["calibrate", "--sampling-rate", "0.05", "--steps", "100", "--advantage", "0.1",
                                    "--discretization", "1e-3", "--json"])
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["target"] == "advantage" and data["achieved_lower"] <= data["achieved"] <= 0.1
    assert data["noise_multiplier"] == pytest.approx(2.087, rel=2e-3)


@pytest.mark.parametrize("argv,name", [
    (["calibrate", "--steps", "10"], "exactly one target"),
    (["calibrate", "--steps", "10", "--mu", "1", "--advantage", "0.1"], "--advantage"),
    (["calibrate", "--steps", "10", "--tpr-at-fpr", "0.01", "0.1"], "--tpr-at-fpr"),
    (["calibrate", "--steps", "10", "--rero", "0.2"], "--kappa"),
    (["calibrate", "--steps", "10", "--rero", "0.05", "--kappa", "0.1"], "--rero"),
    (["calibrate", "--steps", "10", "--mu", "1", "--delta", "1e-5"], "--delta"),
    (["calibrate", "--steps", "0", "--mu", "1"], "--steps"),
    (["calibrate", "--steps", "10", "--epsilon", "-1"], "--epsilon"),
    (["calibrate", "--steps", "10", "--rtm-tpr-at-fpr", "0.01", "0.1"], "--rtm-tpr-at-fpr"),
    (["calibrate", "--advantage", "0.1"], "--noise-multiplier"),
    (["calibrate", "--steps", "10", "--noise-multiplier", "2", "--advantage", "0.1"], "not both"),
    (["calibrate", "--noise-multiplier", "2", "--advantage", "0.1", "--rtol", "0.1"], "--rtol"),
    (["calibrate", "--noise-multiplier", "-2", "--advantage", "0.1"], "--noise-multiplier"),
    (["calibrate", "--steps", "10", "--sampling-rate", "0.01", "--epsilon", "1", "--rtol", "2"], "--rtol"),
    (["calibrate", "--steps", "10", "--rtm-tpr-at-fpr", "0.5", "0.1", "--rtm-dimension", "0"], "--rtm-dimension"),
    (["calibrate", "--steps", "10", "--mu", "1", "--rtm-dimension", "2"], "--rtm-dimension"),
])
def test_calibrate_bad_arguments(capsys, argv, name):
    code, out, err = _main(capsys, argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and name in err


def test_report_other_mechanisms(capsys):
    """Randomized response and Laplace noise: the same report, with the readings each mechanism has."""
    code, out, err = _main(capsys, ["report", "--mechanism", "randomized-response", "--epsilon", "1", "--json"])
    data = json.loads(out)
    assert code == 0 and data["mechanism"] == {"randomized_response": True, "epsilon": 1.0}
    assert data["rtm"] is None and data["dp"]["epsilon_rdp"] is None and data["gdp"]["method"] == "closed form"
    code, out, err = _main(capsys, ["report", "--mechanism", "laplace", "--noise-multiplier", "2", "--steps", "3"])
    assert code == 0 and out.startswith("# Privacy risk of Laplace noise") and "Relaxed threat model" in out


def test_calibrate_steps_json(capsys):
    code, out, err = _main(capsys, ["calibrate", "--sampling-rate", "0.05", "--noise-multiplier", "2", "--advantage",
                                    "0.1", "--discretization", "1e-3", "--json"])
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["steps"] == calibrate.solve(Advantage(0.1), 0.05, noise_multiplier=2.0, discretization=1e-3).steps
    assert data["noise_multiplier"] == 2.0 and data["achieved"] <= 0.1


def test_report_figure(capsys, tmp_path):
    path = tmp_path / "run.svg"
    argv = ["report", "--noise-multiplier", "2", "--sampling-rate", "0.05", "--steps", "50", "--discretization", "1e-3"]
    code, out, err = _main(capsys, argv + ["--figure", str(path)])
    assert code == 0 and path.read_text().startswith("<?xml") and "trade-off curve" in path.read_text()
    code, out, err = _main(capsys, argv + ["--figure", str(tmp_path / "run.pdf")])
    assert code == 2 and "--figure" in err and out == ""


def test_the_old_method_alias_pld_is_refused_naming_the_choices(capsys):
    """One name per idea: 'pld' was the earlier name of 'bracket' and was still accepted beside it."""
    code, _, err = _main(capsys, ["rero", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10",
                                  "--method", "pld"])
    assert code == 2 and "--method" in err and "bracket" in err


# --- every default that --help prints is the one used ----------------------------------------------------------

#: For each (command, flag) whose --help states a default value: a run without the flag in which the flag applies.
#: Running it again with the flag set to the printed default must print the same JSON.
DEFAULT_RUNS = {
    ("rero", "--sampling-rate"): "rero --mechanism gaussian --noise-multiplier 2 --steps 2 --kappa 0.1",
    ("rero", "--steps"): "rero --mechanism gaussian --noise-multiplier 2 --kappa 0.1",
    ("rero", "--method"): "rero --mechanism gaussian --noise-multiplier 2 --sampling-rate 0.5 --steps 2 --kappa 0.1",
    ("rero", "--order"): "rero --mechanism gaussian --noise-multiplier 2 --sampling-rate 0.5 --steps 100 --kappa 0.1 "
                         "--method edgeworth",
    ("rero", "--samples"): "rero --mechanism gaussian --noise-multiplier 2 --sampling-rate 0.5 --steps 2 --kappa 0.1 "
                           "--method mc",
    ("rero", "--seed"): "rero --mechanism gaussian --noise-multiplier 2 --sampling-rate 0.5 --steps 2 --kappa 0.1 "
                        "--method mc --samples 100000",
    ("rtm", "--dimension"): "rtm --mechanism gaussian --mu 1 --alpha 0.1",
    ("rtm", "--steps"): "rtm --mechanism gaussian --mu 1 --alpha 0.1",
    ("rtm", "--sampling-rate"): "rtm --mechanism gaussian --mu 1 --steps 2 --alpha 0.1",
    ("rtm", "--release"): "rtm --mechanism gaussian --mu 1 --steps 2 --sampling-rate 0.5 --alpha 0.1",
    ("gdp", "--mechanism"): "gdp --noise-multiplier 2 --steps 4",
    ("gdp", "--sampling-rate"): "gdp --noise-multiplier 2 --steps 4",
    ("gdp", "--steps"): "gdp --noise-multiplier 2",
    ("gdp", "--delta"): "gdp --noise-multiplier 2 --steps 4",
    ("gdp", "--tail"): "gdp --noise-multiplier 2 --sampling-rate 0.5 --steps 4 --discretization 1e-3",
    ("report", "--mechanism"): "report --noise-multiplier 2",
    ("report", "--sampling-rate"): "report --noise-multiplier 2",
    ("report", "--steps"): "report --noise-multiplier 2",
    ("report", "--delta"): "report --noise-multiplier 2",
    ("report", "--kappa"): "report --noise-multiplier 2",
    ("report", "--fpr"): "report --noise-multiplier 2",
    ("report", "--prior"): "report --noise-multiplier 2",
    ("report", "--rtm-dimension"): "report --noise-multiplier 2",
    ("calibrate", "--sampling-rate"): "calibrate --steps 10 --mu 1",
    ("calibrate", "--delta"): "calibrate --steps 10 --epsilon 1",
    ("calibrate", "--rtm-dimension"): "calibrate --steps 2 --rtm-tpr-at-fpr 0.5 0.01 --discretization 1e-3",
    ("calibrate", "--rtol"): "calibrate --steps 10 --mu 1",
}


def _help_defaults():
    """(command, flag, value words) for every flag whose help states a default value (not a rule such as 'chosen')."""
    from fdp.cli import _build_parser

    parser = _build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    found = {}
    for command, sub in commands.items():
        for action in sub._actions:
            match = re.search(r"(?:\(|; )default ([^;),]+)", action.help or "")
            if not match or not action.option_strings:
                continue
            words = match.group(1).split(":")[0].split()
            if all(_is_value(w, action) for w in words):
                found[command, action.option_strings[0]] = words
    return found


def _is_value(word, action) -> bool:
    if action.choices is not None:
        return word in action.choices
    try:
        float(word)
    except ValueError:
        return False
    return True


def _without_seconds(obj):
    if isinstance(obj, dict):
        return {k: _without_seconds(v) for k, v in obj.items() if k != "seconds"}
    return [_without_seconds(v) for v in obj] if isinstance(obj, list) else obj


def test_every_default_in_help_has_a_run_that_checks_it():
    assert set(_help_defaults()) == set(DEFAULT_RUNS)


@pytest.mark.parametrize("command, flag", sorted(DEFAULT_RUNS))
def test_the_default_help_prints_is_the_one_used(command, flag, capsys):
    words = _help_defaults()[command, flag]
    base = DEFAULT_RUNS[command, flag].split() + ["--json"]
    outputs = []
    for argv in (base, base + [flag, *words]):
        assert main(argv) == 0
        outputs.append(_without_seconds(json.loads(capsys.readouterr().out)))
    assert outputs[0] == outputs[1], f"{command} {flag}: the run with {flag} {' '.join(words)} differs"


# --- one --mechanism vocabulary ----------------------------------------------------------------------------------


def test_every_command_takes_the_same_mechanism_choices():
    from fdp.cli import NOISE, _build_parser

    commands = next(a for a in _build_parser()._actions if a.dest == "command").choices
    for name in ("rero", "rtm", "gdp", "report"):
        action = next(a for a in commands[name]._actions if a.dest == "mechanism")
        assert tuple(action.choices) == tuple(NOISE), name


@pytest.mark.parametrize("plain, spelled", [
    ("rero --mechanism gaussian --noise-multiplier 1.0 --sampling-rate 0.5 --steps 3 --kappa 0.1",
     "rero --mechanism subsampled-gaussian --noise-multiplier 1.0 --sampling-rate 0.5 --steps 3 --kappa 0.1"),
    ("rero --mechanism laplace --mu 1.5 --kappa 0.1", "rero --mechanism subsampled-laplace --mu 1.5 --kappa 0.1"),
    ("gdp --noise-multiplier 2 --sampling-rate 0.5 --steps 4 --discretization 1e-3",
     "gdp --mechanism subsampled-gaussian --noise-multiplier 2 --sampling-rate 0.5 --steps 4 --discretization 1e-3"),
    ("rtm --mechanism gaussian --mu 0.5 --steps 3 --alpha 0.1", "rtm --mechanism subsampled-gaussian --mu 0.5 --steps 3 "
                                                                 "--alpha 0.1"),
    ("report --noise-multiplier 2", "report --mechanism subsampled-gaussian --noise-multiplier 2"),
])
def test_subsampled_spellings_mean_the_plain_noise_in_every_command(plain, spelled, capsys):
    outputs = []
    for argv in (plain, spelled):
        assert main(argv.split() + ["--json"]) == 0
        out = _without_seconds(json.loads(capsys.readouterr().out))
        out.pop("mechanism", None)
        outputs.append(out)
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("argv, words", [
    ("rero --mechanism randomized-response --mu 1 --kappa 0.1", "report --mechanism randomized-response"),
    ("rero --mechanism gaussian --kappa 0.1", "--mu (one step, closed form) or --noise-multiplier"),
    ("rero --mechanism gaussian --mu 1 --noise-multiplier 1 --kappa 0.1", "not both"),
    ("rero --mechanism gaussian --mu 1 --steps 3 --kappa 0.1", "--steps does not apply with --mu"),
    ("gdp --mechanism laplace --noise-multiplier 1", "report --mechanism laplace"),
    ("gdp --mechanism randomized-response --noise-multiplier 1", "give --epsilon"),
    ("gdp --epsilon 1 --noise-multiplier 1", "not both"),
    ("rtm --mechanism laplace --release averaged --mu 1 --alpha 0.1", "release 'averaged'"),
    ("rtm --mechanism randomized-response --mu 1 --alpha 0.1", "not randomized response"),
])
def test_a_mechanism_a_command_does_not_read_is_one_line_naming_what_to_do(argv, words, capsys):
    assert main(argv.split()) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_gdp_text_leaves_out_what_does_not_exist(capsys):
    # noise 0.05 over 10 full-batch steps: a closed form (no lattice spacing); its JSON keeps the spacing as null
    code, out, err = _main(capsys, ["gdp", "--noise-multiplier", "0.05", "--steps", "10"])
    assert code == 0 and "None" not in out and "discretization" not in out and "mu_lower" in out
    code, out, err = _main(capsys, ["gdp", "--noise-multiplier", "0.05", "--steps", "10", "--json"])
    assert code == 0 and json.loads(out)["discretization"] is None


# --- from test_edges_surfaces, round 2 and later break reviews (the report, calibrate and gdp surfaces) ------


@pytest.mark.parametrize("tail", [1e-30, 1e-100])
def test_mu_at_a_small_floor_is_at_least_the_exact_one_step_value(capsys, tail):
    """The symmetrised curve lies below the exact add curve, so mu(tail) of the add curve is a lower bound on
    mu*; the certified mu* was 0.519 at tail 1e-30 (truth >= 0.5725) before the powers were read."""
    code, out, _ = run_cli(capsys, ["gdp", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "1",
                                 "--tail", f"{tail!r}"])
    assert code == 0
    truth = mu_at(tail, one_step_add_tpr(tail, 0.01, 1.0))
    assert truth <= out["mu"] <= truth * (1 + 1e-6)
    assert out["alpha_floor"] == tail


@pytest.mark.parametrize("tail", ["0", "5e-324", "1e-301"])
def test_a_floor_below_the_lattice_is_answered_by_the_full_batch_bound(capsys, tail):
    """--tail 0 was refused ("no finite mu* holds at alpha = 0"), which is false: subsampling never lowers the curve
    below G_{sqrt(T)/sigma}, and the one-step add curve's mu(a) tends to 1/sigma as a -> 0 (0.873 at 1e-300), so
    sqrt(T)/sigma is the answer at floor 0; the lower end stays certified."""
    code, out, err = run_cli(capsys, ["gdp", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "1",
                                   "--tail", tail])
    assert code == 0 and "Traceback" not in err and "full-batch sqrt(steps)/sigma" in err
    assert out["mu"] == 1.0 and out["alpha_floor"] == float(tail)
    assert out["mu_lower"] <= mu_at(1e-300, one_step_add_tpr(1e-300, 0.01, 1.0)) <= out["mu"]


def test_tpr_upper_bound_at_tiny_fpr_is_at_least_the_exact_add_tpr(capsys):
    fpr = [1e-20, 1e-40, 1e-100]
    code, out, _ = run_cli(capsys, ["report", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "1",
                                 "--fpr", *map(repr, fpr)])
    assert code == 0
    for a, t in zip(fpr, out["mia"]["tpr_upper"]):
        exact = one_step_add_tpr(a, 0.01, 1.0)
        assert exact <= t <= exact * 1.001  # 7.24e-19 at 1e-20 (it was 0)


@pytest.mark.parametrize("argv, exact", [
    (["--mechanism", "randomized-response", "--epsilon", "1"], lambda a: math.e * a),
    (["--mechanism", "laplace", "--noise-multiplier", "1"], lambda a: math.e * a),  # f(a) = 1 - e a near 0
])
def test_closed_form_mechanisms_at_fpr_1e_20(capsys, argv, exact):
    code, out, _ = run_cli(capsys, ["report", *argv, "--fpr", "1e-20", "--kappa", "1e-20"])
    assert code == 0
    assert exact(1e-20) <= out["mia"]["tpr_upper"][0] <= exact(1e-20) * (1 + 1e-6)


def test_laplace_rtm_gamma_at_kappa_1e_20_is_cosh_1_kappa_without_warnings(capsys, recwarn):
    """The RTM curve of one Laplace step has gamma(kappa) = cosh(1) kappa near 0; it was [1e-20, 1e-20] with a
    numpy RuntimeWarning from 0 / 0."""
    code, out, err = run_cli(capsys, ["report", "--mechanism", "laplace", "--noise-multiplier", "1", "--fpr", "1e-20",
                                   "--kappa", "1e-20"])
    assert code == 0 and "RuntimeWarning" not in err
    low, up = out["rtm"]["gamma_lower"][0], out["rtm"]["gamma_upper"][0]
    assert low <= math.cosh(1.0) * 1e-20 <= up and up > 1.5e-20
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_report_at_noise_003_answers_with_closed_forms(capsys):
    """Full batch at noise 0.03 (33.3-GDP): every reading but the RTM's is a closed form; it used to fail."""
    code, out, err = run_cli(capsys, ["report", "--noise-multiplier", "0.03"])
    assert code == 0
    assert out["gdp"]["mu"] == pytest.approx(1 / 0.03, rel=1e-12)
    assert "relaxed-threat-model" in err or out["rtm"] is not None


def test_calibrate_a_billion_full_batch_steps_is_the_closed_form(capsys):
    """sigma = sqrt(T) / mu = 85,466 at T = 1e9 and mu 0.37: the noise search used to stop at 1e4."""
    code, out, _ = run_cli(capsys, ["calibrate", "--steps", "1000000000", "--mu", "0.37"])
    assert code == 0
    exact = math.sqrt(1e9) / 0.37
    assert exact <= out["noise_multiplier"] <= exact * (1 + 1e-3)


def test_steps_for_a_huge_full_batch_noise_is_the_closed_form(capsys):
    """The steps search stopped at 10^6 even where the answer (T = (mu sigma)^2 ~ 1e9) is a closed form."""
    code, out, _ = run_cli(capsys, ["calibrate", "--noise-multiplier", "85465", "--mu", "0.37"])
    assert code == 0
    assert out["steps"] == math.floor((0.37 * 85465) ** 2)


def test_library_noise_for_epsilon_at_delta_1e_300_matches_the_cli(capsys):
    """noise_multiplier_for (now solve(Epsilon)) refused (2, 1e-300) for 10 full-batch steps; the CLI answered 58.342."""
    noise = calibrate.solve(Epsilon(2.0, delta=1e-300), 1.0, steps=10, rtol=1e-6).noise_multiplier
    code, out, _ = run_cli(capsys, ["calibrate", "--steps", "10", "--epsilon", "2", "--delta", "1e-300", "--rtol", "1e-6"])
    assert code == 0
    assert noise == pytest.approx(out["noise_multiplier"], rel=2e-6)
    assert gdp.eps_from_mu_delta(math.sqrt(10) / noise, 1e-300) <= 2.0


def test_cli_tables_round_upper_ends_up_and_curve_values_down(capsys):
    """The rero and rtm tables printed 0.929974 for gamma = 0.92997428 and j = 0.993998 for 0.99399784 (round to
    nearest): upper ends are now rounded up, curve values (type-II errors) down."""
    code, out, _ = run_cli(capsys, ["rero", "--mechanism", "gaussian", "--mu", "2", "--kappa", "0.3"], json_out=False)
    assert code == 0
    row = out.strip().splitlines()[-1].split()
    assert float(row[1]) >= norm.cdf(norm.ppf(0.3) + 2.0) and row[1] == "0.929975"
    code, out, _ = run_cli(capsys, ["rtm", "--mechanism", "subsampled-gaussian", "--mu", "1", "--sampling-rate", "0.5",
                                 "--alpha", "0.001"], json_out=False)
    assert code == 0
    row = out.strip().splitlines()[-1].split()
    assert row[1] == "0.993997"  # j = 0.99399784...: printed below it, so 1 - j is not understated


def test_mu_of_a_tiny_epsilon_prints_no_negative_zero(capsys):
    code, out, _ = run_cli(capsys, ["gdp", "--mechanism", "randomized-response", "--epsilon", "1e-17"])
    assert code == 0 and math.copysign(1.0, out["mu"]) == 1.0
    assert formatting.upper(-0.0) == "0"


def test_calibrate_refuses_an_rtol_the_search_cannot_resolve(capsys):
    code, _, err = run_cli(capsys, ["calibrate", "--steps", "1", "--mu", "1", "--rtol", "1e-16"])
    assert code == 2 and "--rtol must be at least 1e-12" in err
    with pytest.raises(ValueError, match="rtol must be at least"):
        calibrate.solve(Mu(1.0), 1.0, steps=1, rtol=1e-13)


def test_calibrate_at_rtol_1e_12_meets_the_closed_form(capsys):
    code, out, _ = run_cli(capsys, ["calibrate", "--steps", "1", "--mu", "1", "--rtol", "1e-12"])
    assert code == 0 and 1.0 <= out["noise_multiplier"] <= 1.0 + 2e-12


@pytest.mark.parametrize("argv, exact_noise", [
    # one full-batch step: TPR at FPR 1e-30 = Phi(Phi^-1(1e-30) + 1 / sigma) = 1e-20 at sigma 0.4542
    (["--tpr-at-fpr", "1e-20", "1e-30"], 1.0 / (norm.isf(1e-30) - norm.isf(1e-20))),
    (["--rero", "1e-20", "--kappa", "1e-30"], 1.0 / (norm.isf(1e-30) - norm.isf(1e-20))),
    (["--epsilon", "5", "--delta", "1e-300"], 1.0 / gdp.mu_from_eps_delta(5.0, 1e-300)),
])
def test_calibrate_feasible_tiny_targets_of_one_full_batch_step(capsys, argv, exact_noise):
    code, out, _ = run_cli(capsys, ["calibrate", "--steps", "1", *argv])
    assert code == 0
    assert exact_noise <= out["noise_multiplier"] <= exact_noise * (1 + 1e-3) * (1 + 1e-9)


def test_calibrate_epsilon_at_delta_1e_100_falls_back_on_rdp(capsys):
    """The PLD accountant's epsilon is infinite at delta 1e-100 (its truncated tails); the RDP accountant answers,
    and the answer says so (it said that no noise below 1e4 works)."""
    code, out, err = run_cli(capsys, ["calibrate", "--sampling-rate", "0.01", "--steps", "100", "--epsilon", "5",
                                   "--delta", "1e-100"])
    assert code == 0 and "RDP accountant" in err
    assert accountants.epsilon(Mechanism("gaussian", out["noise_multiplier"], 0.01, 100), 1e-100, accountant="rdp") <= 5.0


def test_a_target_met_by_sampling_alone_is_noise_0_with_a_warning(capsys):
    code, out, err = run_cli(capsys, ["calibrate", "--sampling-rate", "1e-7", "--steps", "1", "--advantage",
                                   "0.999999"])
    assert code == 0 and out["noise_multiplier"] == 0.0 and "met at every noise multiplier" in err
    # not met by sampling alone: 100 steps at rate 0.05 take part with probability 0.994
    c = calibrate.solve(Advantage(0.1), 0.05, steps=100, discretization=1e-3)
    assert c.noise_multiplier > 1.0


@pytest.mark.parametrize("argv, flag", [
    (["gdp", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", str(2**64)], "--steps"),
    (["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--steps", str(2**64), "--kappa",
      "0.1"], "--steps"),
    (["rtm", "--mechanism", "gaussian", "--mu", "1", "--steps", str(2**64), "--alpha", "0.1"], "--steps"),
    (["report", "--noise-multiplier", "1", "--rtm-dimension", str(10**20)], "--rtm-dimension"),
])
def test_huge_counts_exit_2_naming_the_flag(capsys, argv, flag):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and flag in err and "Traceback" not in err


def test_figure_with_a_bare_svg_name_is_an_svg(tmp_path, capsys):
    path = tmp_path / ".svg"
    assert main(["report", "--mechanism", "randomized-response", "--epsilon", "600", "--figure", str(path)]) == 0
    capsys.readouterr()
    assert path.read_bytes().lstrip().startswith(b"<?xml") and not (tmp_path / ".svg.png").exists()


def test_randomized_response_at_a_large_delta_has_epsilon_0_without_warnings(capsys, recwarn):
    code, out, err = run_cli(capsys, ["report", "--mechanism", "randomized-response", "--epsilon", "1", "--delta", "0.9"])
    assert code == 0 and out["dp"]["epsilon_pld"] == 0.0 and "Warning" not in err
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_curve_that_is_0_is_answered_by_the_full_batch_bound(capsys):
    """Too far from private for the lattice (the certified curve is 0 above alpha = 0 in float64) was refused with
    "no finite mu* holds", which is false: the full batch's sqrt(T)/sigma bounds mu* (86.6 here; the break review's
    (1.17, 0.93, 3170) case, 48.1, was refused the same way)."""
    code, out, err = run_cli(capsys, ["report", "--noise-multiplier", "2", "--sampling-rate", "0.5", "--steps", "30000"])
    assert code == 0 and "pass tail" not in err and "full batch's sqrt(steps)/sigma" in err
    assert out["gdp"]["mu"] == Mechanism("gaussian", 2.0, 1.0, 30000).full_batch_mu
    assert out["mia"]["tpr_upper"] == list(mia.gaussian_membership_bounds(out["gdp"]["mu"], out["mia"]["fpr"],
                                                                          out["mia"]["prior"])[0])


def test_laplace_too_far_from_private_is_answered_by_the_composed_one_step_bound(capsys):
    code, out, err = run_cli(capsys, ["report", "--mechanism", "laplace", "--noise-multiplier", "1.603", "--steps", "7300"])
    assert code == 0 and out["gdp"]["mu"] >= math.sqrt(7300) * gdp.mu_laplace(1 / 1.603)


def test_calibrate_a_full_batch_mu_target_is_met_exactly(capsys):
    """`calibrate --steps 3 --mu 1` returned float(sqrt(3)), 1e-16 below the real sqrt(3): its mu is above 1."""
    from fractions import Fraction

    code, out, _ = run_cli(capsys, ["calibrate", "--steps", "3", "--mu", "1"])
    assert code == 0 and Fraction(out["noise_multiplier"]) ** 2 >= 3
    assert out["noise_multiplier"] <= math.sqrt(3) * (1 + 1e-15)


@pytest.mark.parametrize("argv", [
    ["--noise-multiplier", "1", "--steps", "1000000000000"],  # was 0.99994: 5.5e-17 of Q-mass lost per step
    ["--noise-multiplier", "0.01"],  # one step, effect size 100: was 1 - 2e-14 (a running sum's rounding)
])
def test_rtm_tpr_far_from_private_is_1(capsys, argv):
    """Both are 1 - 1e-800 or closer in truth: the RTM TPR bound at FPR 1e-300 must print 1."""
    code, out, _ = run_cli(capsys, ["report", *argv, "--fpr", "1e-300", "--kappa", "0.1"])
    assert code == 0 and out["rtm"]["tpr_upper"] == [1.0] and out["rtm"]["gamma_upper"] == [1.0]


def test_rtm_output_names_its_release_model(capsys):
    code, avg, _ = run_cli(capsys, ["rtm", "--mechanism", "gaussian", "--release", "averaged", "--mu", "0.1", "--steps", "100",
                                 "--alpha", "0.001"])
    code2, tensor, _ = run_cli(capsys, ["rtm", "--mechanism", "subsampled-gaussian", "--mu", "0.1", "--steps", "100",
                                     "--alpha", "0.001"])
    assert code == code2 == 0
    assert avg["release"].startswith("averaged") and tensor["release"].startswith("tensor")
    assert 1.0 - avg["j"][0] > 5 * (1.0 - tensor["j"][0])  # 0.0110 against 0.00131: two different adversaries


@pytest.mark.parametrize("argv, flag", [
    (["report", "--noise-multiplier", "1e300", "--sampling-rate", "0.5", "--steps", "1"], "--noise-multiplier"),
    (["gdp", "--noise-multiplier", "1e-300", "--sampling-rate", "0.5", "--steps", "1"], "--noise-multiplier"),
    (["report", "--noise-multiplier", "1", "--sampling-rate", "1e-300", "--steps", "1"], "--sampling-rate"),
    (["rtm", "--mechanism", "subsampled-gaussian", "--mu", "1e-300", "--sampling-rate", "0.5", "--alpha", "0.1"],
     "1/--mu"),
    (["report", "--noise-multiplier", "1", "--sampling-rate", "0.5", "--steps", "1", "--discretization", "710"], "--discretization"),
    (["gdp", "--noise-multiplier", "1", "--sampling-rate", "0.5", "--steps", "1", "--discretization", "101"], "--discretization"),
])
def test_out_of_range_mechanisms_exit_2_naming_the_parameter(capsys, argv, flag):
    """These traced back (ZeroDivisionError, OverflowError, ArithmeticError, dp_accounting's expm1 at spacing 710)."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and flag in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_calibrate_epsilon_at_a_large_delta_is_answered(capsys):
    """`--epsilon 0.1 --delta 0.05` died with 'math domain error' (epsilon 0 at large noise: log 0); the answer meets
    the target and a noise 0.2 % smaller misses it (closed form: eps_from_mu_delta of sqrt(steps)/sigma)."""
    code, out, _ = run_cli(capsys, ["calibrate", "--steps", "1", "--epsilon", "0.1", "--delta", "0.05"])
    assert code == 0 and out["achieved"] <= 0.1
    assert gdp.eps_from_mu_delta(1.0 / (out["noise_multiplier"] / 1.002), 0.05) > 0.1


def test_epsilon_beyond_700_is_a_number(capsys):
    """mu = 100 at delta 1e-5 needs eps 5,425.5 (the profile is computed in logs); it was null with a warning.  The
    exact profile (mpmath) at that eps is at most delta, and 0.1 % below it is above delta."""
    code, out, err = run_cli(capsys, ["gdp", "--noise-multiplier", "0.01"])
    assert code == 0 and not err
    eps = out["epsilon"]
    assert gdp._exact_gaussian_delta(eps, 100.0) <= 1e-5 < gdp._exact_gaussian_delta(eps * 0.999, 100.0)
    code, out, _ = run_cli(capsys, ["calibrate", "--steps", "1", "--epsilon", "700", "--delta", "1e-300"])
    assert code == 0 and out["achieved"] <= 700


def test_an_epsilon_target_met_by_sampling_alone_is_noise_0(capsys):
    """Rate 1e-10 over 10 steps: the record takes part with probability 1e-9 < delta, so epsilon is 0 at any noise
    (the search took a minute at ever smaller noise before)."""
    code, out, err = run_cli(capsys, ["calibrate", "--steps", "10", "--sampling-rate", "1e-10", "--epsilon", "1"])
    assert code == 0 and out["noise_multiplier"] == 0.0 and "met at every noise multiplier" in err


@pytest.mark.parametrize("eps", [1e-300, 1e-20, 1e-14, 1e-7, 0.01, 0.1, 5.0, 12.0, 50.0, 700.0])
def test_randomized_response_mu_and_mu_at_floor_are_upper_bounds(capsys, eps):
    """mu at the floors was Alg. 1 on the curve (0 at eps 1e-20, 2.3 % low at 1e-14) and the closed form one ulp low:
    both are at or above the exact mu now (the corner 1 / (1 + e^eps) lies above the floors up to eps ~ 9)."""
    code, out, _ = run_cli(capsys, ["report", "--mechanism", "randomized-response", "--epsilon", repr(eps)])
    exact = exact_mu_pure_dp(eps)
    assert code == 0 and out["gdp"]["mu"] >= exact
    corner = 1.0 / (1.0 + math.exp(min(eps, 700.0)))
    for floor, mu in out["gdp"]["mu_at_floor"].items():
        assert mu <= out["gdp"]["mu"] * (1 + 1e-15)
        if corner >= float(floor):
            assert mu >= exact


def test_a_bracket_within_an_ulp_of_the_identity_still_bounds_from_above(capsys):
    """One Laplace step of scale 1e8 at rate 1e-8 (loss ~1e-16): gamma at 1/2 is 1/2 + 5e-17, printed as exactly 0.5
    (rounded to nearest) with advantage 0; the upper end is now one ulp up."""
    code, out, _ = run_cli(capsys, ["rero", "--mechanism", "subsampled-laplace", "--noise-multiplier", "1e8",
                                 "--sampling-rate", "1e-8", "--steps", "1", "--kappa", "0.5", "1e-300"])
    assert code == 0 and out["gamma_upper"][0] > 0.5 and out["gamma_upper"][1] > 1e-300
    assert out["gamma_lower"][0] <= 0.5 + 5e-17 and all(a > 0 for a in out["rero_advantage"])


@pytest.mark.parametrize("argv, exact_noise", [
    (["--steps", "9", "--rero", "0.9999999", "--kappa", "0.999"], 1.42240410375099),
    (["--steps", "7", "--advantage", "0.999999"], 0.27043610481555),
    (["--steps", "5", "--tpr-at-fpr", "0.9999", "0.5"], 0.60125250486105),
])
def test_full_batch_calibration_interval_holds_the_exact_noise(capsys, argv, exact_noise):
    """(noise_lower, noise] must hold the exact smallest noise (mpmath, from the break review) and achieved_lower must
    not exceed the truth: both came from the closed form rounded to nearest, 1e-11 to 4e-8 on the wrong side."""
    code, out, _ = run_cli(capsys, ["calibrate", *argv, "--rtol", "1e-12"])
    assert code == 0 and out["noise_lower"] < exact_noise <= out["noise_multiplier"]
    assert out["achieved_lower"] < out["value"]


@pytest.mark.parametrize("argv", [
    ["gdp", "--noise-multiplier", "0.1", "--sampling-rate", "1e-20", "--steps", "1"],  # "f(a) and f(b) must have different signs"
    ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "0.002", "--sampling-rate", "0.5", "--steps", "1", "--kappa",
     "0.5"],  # the spacing coarsened to 2.57 was refused as a bad --discretization
    ["rtm", "--mechanism", "subsampled-gaussian", "--mu", "1", "--steps", "1000000000000", "--alpha", "0.5"],  # f_dp
])
def test_legal_extremes_are_answered(capsys, argv):
    code, out, err = run_cli(capsys, argv)
    assert code == 0 and "RuntimeWarning" not in err


def test_no_numpy_warning_from_dp_accounting_at_rate_1e_16(capsys):
    code, _, err = run_cli(capsys, ["gdp", "--noise-multiplier", "1", "--sampling-rate", "1e-16", "--steps", "1"])
    assert code == 0 and "RuntimeWarning" not in err


def test_full_batch_searches_are_not_capped_at_subsampled_limits(capsys):
    """Closed forms answer any noise or step count: noise sqrt(T)/mu = 1e12, T = (mu sigma)^2 = 10^12 and
    eps 5e17 were refused with the subsampled caps (1e8, 10^12 steps, eps 1e13)."""
    code, out, _ = run_cli(capsys, ["calibrate", "--steps", "1000000000000", "--mu", "1e-6"])
    assert code == 0 and out["noise_lower"] < 1e12 <= out["noise_multiplier"]
    code, out, _ = run_cli(capsys, ["calibrate", "--noise-multiplier", "1", "--mu", "1000000"])
    assert code == 0 and out["steps"] == 10**12
    code, out, _ = run_cli(capsys, ["gdp", "--noise-multiplier", "1e-3", "--steps", "1000000000000"])
    assert code == 0 and out["epsilon"] > 4.9e17


@pytest.mark.parametrize("mechanism, mu, kappa", [
    ("gaussian", 3.3, 1e-300), ("gaussian", 7.1506792190934885, 1e-250), ("gaussian", 0.0123, 1e-250),
    ("laplace", 2.7, 0.03), ("laplace", 0.37, 0.4), ("gaussian", 1.0, 0.1),
])
def test_rero_closed_forms_are_rounded_up(capsys, mechanism, mu, kappa):
    """`rero --mechanism gaussian --mu 3.3 --kappa 1e-300` printed 5.8962105874467e-250, 1.8e-13 below
    Phi(Phi^{-1}(kappa) + mu), as "certified"; Laplace 2.7 at 0.03 printed one float below 1 - e^-eps / (4 kappa)."""
    code, out, _ = run_cli(capsys, ["rero", "--mechanism", mechanism, "--mu", repr(mu), "--kappa", repr(kappa)])
    assert code == 0 and out["certified"]
    mp.dps = 60
    k = mpf(kappa)
    if mechanism == "gaussian":
        exact = ncdf(sqrt(2) * erfinv(2 * k - 1) + mpf(mu))
    else:  # the Laplace power at kappa (ReRo paper Sec. 3: the trade-off curve of Laplace noise)
        e = mpf(mu)
        exact = exp(e) * k if k < exp(-e) / 2 else (1 - exp(-e) / (4 * k) if k <= mpf(1) / 2 else 1 - exp(-e) * (1 - k))
    assert mpf(out["gamma"][0]) >= exact
    assert mpf(out["rero_advantage"][0]) >= (exact - k) / (1 - k)


@pytest.mark.parametrize("sigma, rate, tail", [(47.0, 0.77, 1e-250), (3.3, 3e-7, 1e-10), (47.0, 3e-7, 1e-10),
                                                (47.0, 0.77, 1e-20)])
def test_gdp_interval_contains_the_exact_one_step_mu(capsys, sigma, rate, tail):
    """`mu_lower` was read at alpha = 1 - 1.1e-16, where float64 cannot resolve 1 - alpha: 0.0984 above the
    exact 0.0176 at (47, 0.77, tail 1e-250), and 3.54e-7 against 2.71e-7 at (3.3, 3e-7)."""
    code, out, _ = run_cli(capsys, ["gdp", "--noise-multiplier", repr(sigma), "--sampling-rate", repr(rate), "--steps",
                                 "1", "--tail", repr(tail)])
    exact = one_step_mu_star(sigma, rate, tail)
    assert code == 0 and out["mu_lower"] <= exact * (1 + 1e-9) and exact <= out["mu"]
    wide = out["mu"] - out["mu_lower"] > risk.WARN_RELATIVE * out["mu"]
    assert any(w.startswith("mu* lies in [") for w in out["warnings"]) == wide


def test_calibrate_finds_a_tiny_mu_that_the_default_lattice_misses(capsys):
    """`calibrate --sampling-rate 3e-7 --steps 1 --mu 3e-7` said no noise works; noise 3.1 does (mu* 2.7e-7 at
    3.3).  The full batch's closed form caps the lattice's reading (subsampling only lowers mu*), so the first search
    meets the target and the refinement on finer lattices then finds the noise near 3.1; a spacing of 1e-9 finds
    it directly."""
    for extra in ([], ["--discretization", "1e-9"]):
        code, out, _ = run_cli(capsys, ["calibrate", "--sampling-rate", "3e-7", "--steps", "1", "--mu", "3e-7", *extra])
        assert code == 0 and out["noise_lower"] <= 3.3 and 2.9 <= out["noise_multiplier"] <= 5.0
        assert out["achieved"] <= 3e-7


@pytest.mark.parametrize("eps, delta", [(8.750933236387167, 2.3745584881809587e-06),
                                        (7.824179426408703e-12, 3.213727674272047e-20)])
def test_randomized_response_epsilon_at_delta_is_never_below_the_exact_one(capsys, eps, delta):
    """The break review found the JSON epsilon one rounding below eps + log1p(-delta (1 + e^-eps)) (mpmath)."""
    mp.dps = 50
    code, out, _ = run_cli(capsys, ["report", "--mechanism", "randomized-response", "--epsilon", repr(eps), "--delta",
                                 repr(delta)])
    exact = mpf(eps) + mp.log1p(-mpf(delta) * (1 + exp(-mpf(eps))))
    assert code == 0 and mpf(out["dp"]["epsilon_pld"]) >= exact and out["dp"]["epsilon_pld"] <= float(exact) * (1 + 1e-14)


@pytest.mark.parametrize("mu, alpha", [(9.501429911371172, 1.2489036114701718e-64), (1.0, 0.99999999999999),
                                       (0.01, 0.99999999999999), (5.0, 1.0 - 2.0**-53)])
def test_rtm_curve_values_are_never_above_the_exact_folded_normal_test(capsys, mu, alpha):
    """``rtm --mechanism gaussian`` printed j one rounding high where 1 - j is tiny (1 % of the TPR at alpha 1e-64)
    and 3e-15 relative high where j is tiny (alpha near 1): j = Phi(c - mu) - Phi(-c - mu), c = -Phi^-1(alpha / 2),
    computed in mpmath."""
    mp.dps = 120  # alpha - 1 must keep alpha's digits
    code, out, _ = run_cli(capsys, ["rtm", "--mechanism", "gaussian", "--mu", repr(mu), "--alpha", repr(alpha)])
    c = -sqrt(2) * erfinv(mpf(alpha) - 1)  # -Phi^-1(alpha / 2)
    exact = ncdf(c - mpf(mu)) - ncdf(-c - mpf(mu))
    assert code == 0 and mpf(out["j"][0]) <= exact
    assert float(exact) - out["j"][0] <= 1e-11 * float(exact) + 1e-15  # and not far below it


def test_the_rero_bracket_upper_end_is_above_the_exact_one_step_curve_with_a_tiny_kappa_in_the_list(capsys):
    """With kappa 1e-294 in the list the lattice is long, and its running sums lost up to 1.6e-13 relative: the
    certified upper end fell below the exact one-step add curve (1 - q) kappa + q Phi(Phi^-1(kappa) + 1/sigma)."""
    mp.dps = 350  # 2 kappa - 1 must keep kappa's digits
    sigma, q, kappas = 0.05050521609397473, 0.15796031926458204, [1.6773142794937584e-294, 0.146461740399346]
    code, out, _ = run_cli(capsys, ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", repr(sigma),
                                 "--sampling-rate", repr(q), "--steps", "1", "--kappa", *map(repr, kappas)])
    assert code == 0
    for k, up in zip(kappas, out["gamma_upper"]):
        exact = (1 - mpf(q)) * mpf(k) + mpf(q) * ncdf(sqrt(2) * erfinv(2 * mpf(k) - 1) + 1 / mpf(sigma))
        assert mpf(up) >= exact


@pytest.mark.parametrize("argv", [
    ["rero", "--mechanism", "subsampled-laplace", "--noise-multiplier", "0.001", "--method", "clt"],
    ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "0.01", "--method", "edgeworth"],
])
def test_approximations_far_from_private_exit_2_with_one_line(capsys, argv):
    """The cumulants' quadrature overflowed (OverflowError, ZeroDivisionError) and the command traced back."""
    code = main([*argv, "--sampling-rate", "0.5", "--steps", "10", "--kappa", "0.1"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1 and "--noise-multiplier" in err


def test_rtm_names_the_flag_that_sets_the_noise(capsys):
    code = main(["rtm", "--mechanism", "subsampled-gaussian", "--mu", "1e-320", "--steps", "2", "--sampling-rate", "0.5",
                 "--alpha", "0.1"])
    err = capsys.readouterr().err
    assert code == 2 and "--mu must lie in [1e-300, 100], got 1e-320" in err and "noise_multiplier" not in err
    code = main(["rtm", "--mechanism", "gaussian", "--mu", "50", "--sampling-rate", "0.5", "--steps", "1000", "--alpha", "0.1"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().endswith("use fewer --steps or more noise (a larger 1/--mu)")


@pytest.mark.parametrize("argv, words", [
    # an error about the effect size of a run given by --noise-multiplier named --mu, the other way to give it
    ("rero --mechanism laplace --kappa 0.1 --noise-multiplier 6e-309 --steps 4", "--noise-multiplier = 6e-309 over 4 steps"),
    ("calibrate --epsilon 1 --noise-multiplier 1 --sampling-rate 0.5", "--epsilon = 1.0 is not met even by one step"),
    ("calibrate --tpr-at-fpr 0.1 0.2 --steps 10", "--tpr-at-fpr (its TPR) must exceed --tpr-at-fpr (its FPR)"),
    ("gdp --noise-multiplier 1 --sampling-rate 0.01 --steps 100 --tail 0.6", "--tail must lie in [0, 0.5)"),
    ("gdp --noise-multiplier 1e300 --sampling-rate 0.5 --steps 1", "subsampled mechanism (--sampling-rate < 1)"),
    ("rtm --mechanism laplace --mu 1 --release averaged --steps 3 --alpha 0.1", "--release 'averaged'"),
    ("rtm --mechanism gaussian --mu 100 --dimension 100000 --steps 2 --alpha 0.1", "use a smaller --dimension"),
])
def test_every_parameter_a_message_names_is_spelled_as_its_flag(capsys, argv, words):
    """Found by the break review of the spelling: each message named the library's parameter (or a flag not given)."""
    code, _, err = run_cli(capsys, argv.split())
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    assert "--mu" not in err or argv.startswith("rtm")


def test_the_flags_are_not_spelled_after_the_command_returns(capsys):
    from fdp import Mechanism

    assert run_cli(capsys, ["gdp", "--noise-multiplier", "1", "--steps", "0"])[0] == 2
    with pytest.raises(ValueError, match=r"^steps must be an integer >= 1"):
        Mechanism("gaussian", 1.0, 0.5, 0)


def test_a_full_batch_beyond_double_precision_reads_gamma_1(capsys):
    """rero --noise-multiplier 6e-309 --steps 4 (no subsampling) said 'mu must be finite': the effect size
    sqrt(4)/6e-309 overflows, and the ReRo bound is 1 to every digit, certified."""
    code, out, _ = run_cli(capsys, "rero --mechanism gaussian --kappa 0.1 1e-300 --noise-multiplier 6e-309 --steps 4".split())
    assert code == 0 and out["gamma"] == [1.0, 1.0] and out["certified"]
    assert all(lo == np.nextafter(1.0, 0.0) for lo in out["gamma_lower"])


def test_calibrate_does_not_blame_flags_the_user_did_not_give(capsys):
    assert main(["calibrate", "--epsilon", "1", "--noise-multiplier", "5e-324"]) == 2
    err = capsys.readouterr().err
    assert "--mu" not in err and len(err.strip().splitlines()) == 1


def test_a_spacing_that_overflowed_is_refused_by_name_on_one_line(capsys):
    """This spacing overflowed ('a number overflowed double precision', no flag named); it is now refused by name."""
    argv = ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--sampling-rate", "0.5",
            "--steps", "2", "--kappa", "0.1", "--discretization", "5e-324"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("python -m fdp rero: error: --discretization must be at least 1e-300") and "\n" not in err


# --- from test_edges_round3, round 3 (subnormal levels, RTM curves near alpha = 1, calibration caps) ---------


#: The commands of the issue "True at the edges, round 3", each answered or refused in bounded time.
ISSUE_COMMANDS = [
    "report --noise-multiplier 3.3333333 --steps 1 --fpr 1e-320 5e-324 --json",
    "rero --mechanism subsampled-gaussian --noise-multiplier 3.3333333 --kappa 1e-320",
    "calibrate --steps 1 --tpr-at-fpr 1e-319 1e-320",
    "calibrate --steps 5 --rero 1e-312 --kappa 1e-320",
    "rtm --mechanism gaussian --mu 1e-3 --dimension 10000000 --alpha 0.999999",
    "rtm --mechanism laplace --mu 100 --alpha 0.999999999",
    "calibrate --steps 10 --sampling-rate 0.5 --tpr-at-fpr 1e-49 1e-50",
    "report --noise-multiplier 1e10 --steps 2",
    "report --noise-multiplier 1e6",
    "rtm --mechanism subsampled-gaussian --mu 1e-10 --steps 2 --alpha 0.1",
    "rtm --mechanism gaussian --mu 1 --steps 9007199254740992 --alpha 0.1",
    # (the issue's "calibrate --steps 100 --sampling-rate 1e-6 --epsilon 0.001" takes 26 s, was 139 s: its epsilon
    # evaluations keep one step under EPSILON_MAX_POINTS, tested below without the search)
    "rero --mechanism gaussian --mu 1e308 --kappa 0.1",
    "rtm --mechanism laplace --mu 1000 --alpha 0.1 0 1",
    "report --noise-multiplier 1e-300",
    # (the issue's "calibrate --steps 1000 --sampling-rate 0.01 --rtm-tpr-at-fpr 0.5 0.1 --rtm-dimension 1000000" now
    # answers in about 60 s, with a warning that its probes below the noise found left the RTM statistic's range: too
    # long for the suite; its raw warning came from privacy_loss.subsampled, tested below)
    "report --noise-multiplier 1e200",
    "report --mechanism laplace --noise-multiplier 1e300 --steps 5",
    "report --mechanism laplace --noise-multiplier 0.001 --steps 10",
    "rero --mechanism subsampled-laplace --noise-multiplier 1e50 --kappa 0.1",
    "gdp --noise-multiplier 1e-320",
    "calibrate --steps 10 --epsilon 1e-300",
    "calibrate --steps 10 --epsilon 1e300",
    "calibrate --epsilon 5e-324 --steps 4",
]

#: A line printed by Python's warnings module: "<file>.py:<line>: <Category>Warning: ..."
WARNING_LINE = re.compile(r"\.py:\d+: \w*Warning")


@pytest.mark.usefixtures("mpmath_50")
def test_tiny_fpr_and_prior_through_the_cli(capsys):
    code, out, _ = run_cli(capsys, ["report", "--noise-multiplier", "3.3333333", "--steps", "1", "--fpr", "1e-320", "5e-324"])
    mu = math.sqrt(1) / 3.3333333
    assert code == 0
    for fpr, tpr in zip(out["mia"]["fpr"], out["mia"]["tpr_upper"]):
        assert mpf(tpr) >= power_mp(mu, fpr) and tpr >= fpr
    code, out, _ = run_cli(capsys, ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "3.3333333",
                                 "--kappa", "1e-320"])
    exact = power_mp(mu, 1e-320)
    assert code == 0 and mpf(out["gamma_lower"][0]) <= exact <= mpf(out["gamma_upper"][0]) and out["rero_advantage"][0] >= 0


@pytest.mark.usefixtures("mpmath_50")
@pytest.mark.parametrize("argv, target", [(["--steps", "1", "--tpr-at-fpr", "1e-319", "1e-320"], (1e-319, 1e-320, 1)),
                                          (["--steps", "5", "--rero", "1e-312", "--kappa", "1e-320"], (1e-312, 1e-320, 5))])
def test_calibration_at_subnormal_levels_meets_its_target(capsys, argv, target):
    """It returned noise 1.6896 where 16.62 is needed (and 3.777 where the exact gamma is 5.88e-311)."""
    value, level, steps = target
    code, out, _ = run_cli(capsys, ["calibrate", *argv])
    noise = out["noise_multiplier"]
    assert code == 0 and power_mp(math.sqrt(steps) / noise, level) <= value
    assert power_mp(math.sqrt(steps) / (noise / (1 + 2 * out["rtol"])), level) > value  # not needlessly large


@pytest.mark.usefixtures("mpmath_50")
def test_rtm_curves_lie_on_or_above_the_dp_curve(capsys):
    """`rtm --mechanism subsampled-gaussian --mu 1e-10 --steps 2 --alpha 0.1` printed j = J = 0 while f_dp = 0.9."""
    code, out, _ = run_cli(capsys, ["rtm", "--mechanism", "subsampled-gaussian", "--mu", "1e-10", "--steps", "2",
                                 "--alpha", "0.1", "0.5"])
    assert code == 0
    for key in ("j", "j_inv", "J"):
        assert all(v >= f * (1 - 1e-12) for v, f in zip(out[key], out["f_dp"])), key
    assert out["J"][0] > 0.89


@pytest.mark.usefixtures("mpmath_50")
def test_refusals_name_the_parameter(capsys):
    code, _, err = run_cli(capsys, ["gdp", "--noise-multiplier", "1e-320"])
    assert code == 2 and err.count("\n") == 1 and "--noise-multiplier must be at least" in err
    code, _, err = run_cli(capsys, ["rero", "--mechanism", "gaussian", "--mu", "1", "--kappa", "0.5", "--kappa", "0.1"])
    assert code == 2 and "--kappa is given twice" in err
    code, _, err = run_cli(capsys, ["report", "--noise-multiplier", "1", "--noise-multiplier", "2"])
    assert code == 2 and "--noise-multiplier is given twice" in err
    m = Mechanism("gaussian", 1.0, 0.1, 3)
    for kappa in ([[0.1, 0.2]], None, "0.1"):
        with pytest.raises(ValueError, match="^kappa must"):
            risk.rero(m, kappa)
    with pytest.raises(ValueError, match="^rero_discretization must"):
        risk.report(m, rero_discretization=1e3)


@pytest.mark.usefixtures("mpmath_50")
@pytest.mark.parametrize("value", [5e-324, 1e-300, 1e300])
def test_epsilon_targets_at_the_ends_of_the_float_range(capsys, value):
    """1e-300 and 5e-324 were a 'math domain error'; 1e300 ran 500 evaluations and blamed an internal mu."""
    code, out, _ = run_cli(capsys, ["calibrate", "--steps", "10", "--epsilon", repr(value)])
    assert code == 0 and out["achieved"] <= value and out["evaluations"] < 100


@pytest.mark.usefixtures("mpmath_50")
def test_far_from_private_and_near_identity_mechanisms_are_read(capsys):
    """Noise 1e200 and Laplace 1e300 overflowed ('a number overflowed double precision', no flag named); the
    subsampled Laplace at 1e50 blamed --discretization; a Laplace scale of 1e7 reads eps 0 at delta 1e-5."""
    code, out, _ = run_cli(capsys, ["report", "--noise-multiplier", "1e200"])
    assert code == 0 and out["dp"]["epsilon_rdp"] == 0.0
    code, out, _ = run_cli(capsys, ["report", "--mechanism", "laplace", "--noise-multiplier", "1e300", "--steps", "5"])
    assert code == 0 and out["gdp"]["mu"] > 0.0 and out["dp"]["epsilon_pld"] == 0.0  # delta 1e-5 >= tanh(eps / 2)
    code, out, _ = run_cli(capsys, ["rero", "--mechanism", "subsampled-laplace", "--noise-multiplier", "1e50",
                                 "--kappa", "0.1"])
    assert code == 0 and out["gamma_lower"][0] <= 0.1 * math.exp(1e-50) <= out["gamma_upper"][0]


@pytest.mark.usefixtures("mpmath_50")
def test_every_command_of_the_issue_answers_or_refuses_in_bounded_time_without_raw_warnings():
    """Each command exits 0 or 2 within 120 s (two of the issue's list ran 449 s and 139 s; two are run here with fewer
    steps, the same code paths) and prints no line from the warnings module and no traceback."""
    for command in ISSUE_COMMANDS:
        done = subprocess.run([sys.executable, "-m", "fdp", *command.split()], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode in (0, 2), (command, done.stderr[-500:])
        assert not WARNING_LINE.search(done.stderr) and "Traceback" not in done.stderr, (command, done.stderr[-500:])


@pytest.mark.usefixtures("mpmath_50")
def test_a_spacing_below_1e_300_is_refused_by_name(capsys):
    """--discretization 5e-324 stopped with 'a number overflowed double precision', naming no flag."""
    code, _, err = run_cli(capsys, ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1",
                                 "--sampling-rate", "0.1", "--steps", "1", "--kappa", "0.1", "--discretization", "5e-324"])
    assert code == 2 and err.count("\n") == 1 and "--discretization must be at least 1e-300" in err


# --- from test_extremes, the first round (no silently wrong answers: extreme but legal inputs) ---------------


_KAPPA = st.one_of(log_uniform(1e-300, 0.5), log_uniform(1e-12, 0.5).map(lambda x: 1.0 - x))


@pytest.mark.parametrize("eps", [23.0, 24.0, 100.0, 700.0])
def test_randomized_response_mu_is_the_closed_form(capsys, eps):
    code, out, _ = run_cli(capsys, ["gdp", "--mechanism", "randomized-response", "--epsilon", str(eps)])
    assert code == 0 and finite_tree(out)
    with mpmath.workdps(50):
        p = 1 / (1 + mpmath.exp(eps))
    assert out["mu"] == pytest.approx(2 * isf_mp(p), rel=1e-9)  # GDP paper Prop. 6.1
    assert out["mu"] > 12.7 and out["alpha_floor"] == 0.0


@pytest.mark.parametrize("eps", [1.0, 50.0, 100.0, 700.0])
def test_laplace_mu_is_exact_and_above_the_fixed_point_bound(capsys, eps):
    code, out, _ = run_cli(capsys, ["gdp", "--mechanism", "laplace", "--epsilon", str(eps)])
    assert code == 0 and finite_tree(out)
    # eq. 21 at the curve's fixed point alpha = f(alpha) = e^{-eps/2} / 2 is a lower bound of mu*
    with mpmath.workdps(50):
        fixed = mpmath.exp(-eps / 2) / 2
    assert out["mu"] >= 2 * isf_mp(fixed) * (1 - 1e-9)
    assert out["mu"] > 0 and out["regret"] >= 0


@pytest.mark.parametrize("sigma, steps", [(0.05, 1), (0.075, 1), (1e-6, 1), (2.0, 400)])
def test_full_batch_dpsgd_is_exactly_gaussian(capsys, sigma, steps):
    code, out, err = run_cli(capsys, ["gdp", "--noise-multiplier", str(sigma), "--steps", str(steps)])
    assert code == 0 and finite_tree(out)
    assert out["mu"] == pytest.approx(np.sqrt(steps) / sigma, rel=1e-12) and out["regret"] == 0.0
    if sigma == 1e-6:  # eps at delta = 1e-5 is 5e11 (e^eps overflows, the profile in logs does not): printed
        eps = out["epsilon"]
        assert gdp._exact_gaussian_delta(eps, 1e6) <= 1e-5 < gdp._exact_gaussian_delta(eps * (1 - 1e-9), 1e6)


def test_full_batch_rero_is_the_gaussian_closed_form(capsys):
    argv = ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "2", "--steps", "16",
            "--kappa", "1e-300", "1e-6", "0.5"]
    code, out, _ = run_cli(capsys, argv)
    assert code == 0 and out["method"] == "closed form" and out["certified"] is True
    expected = norm.cdf(norm.ppf(np.array([1e-300, 1e-6, 0.5])) + 2.0)  # gamma = Phi(Phi^-1(kappa) + sqrt(N)/sigma)
    assert np.allclose(out["gamma"], expected, rtol=1e-9, atol=0)
    code, _, err = run_cli(capsys, [*argv, "--discretization", "1e-3"])
    assert code == 2 and "--discretization" in err


@pytest.mark.slow
def test_subsampled_mu_states_its_floor_and_never_falls_below_it(capsys):
    code, out, err = run_cli(capsys, ["gdp", "--noise-multiplier", "0.05", "--sampling-rate", "0.5", "--steps", "1"])
    assert code == 0 and finite_tree(out)
    assert out["alpha_floor"] == 1e-10 and err == ""  # the floor is a field of the output, not a warning
    # at alpha = 1e-10 the curve is about 1 - q = 0.5 (f_20 is 0 there): eq. 21 needs isf(1e-10) + isf(0.5)
    assert out["mu"] >= norm.isf(1e-10) - 1e-9


def test_mc_collapse_is_detected(capsys):
    argv = ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "0.5", "--sampling-rate", "0.5",
            "--steps", "50", "--kappa", "0.1", "--method", "mc", "--samples", "200000"]
    code, out, err = run_cli(capsys, argv)
    assert code == 0 and finite_tree(out)
    assert "collapsed" in err and out["warnings"] and out["certified"] is False
    assert out["ci_lower"] == [0.1] and out["ci_upper"] == [1.0]  # the trivially valid interval
    assert out["gamma"][0] >= 0.1 and out["rero_advantage"][0] >= 0.0


@pytest.mark.parametrize("samples", ["1", "50"])
def test_mc_needs_ten_kept_samples(capsys, samples):
    argv = ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--kappa", "0.1",
            "--method", "mc", "--samples", samples]
    code, _, err = run_cli(capsys, argv)
    assert code == 2 and "--samples" in err and ">= 100" in err


def test_laplace_and_eps_delta_at_huge_effect(capsys):
    for curve in (tradeoff.laplace(800.0), tradeoff.eps_delta(1e4, 0.0)):
        a = np.array([0.0, 1e-300, 0.5, 1.0])
        assert np.all(np.isfinite(curve(a))) and np.all(np.isfinite(curve.power(a)))
        assert curve(0.0) == 1.0 and curve.power(0.0) == 0.0
    code, out, _ = run_cli(capsys, ["rtm", "--mechanism", "laplace", "--mu", "800", "--alpha", "0", "0.5"])
    assert code == 0 and finite_tree(out) and out["f_dp"] == [1.0, 0.0]


def test_edgeworth_warns_deep_in_the_tail(capsys):
    argv = ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--sampling-rate", "0.01",
            "--steps", "1000", "--kappa", "1e-12", "0.1", "--method", "edgeworth"]
    code, out, err = run_cli(capsys, argv)
    assert code == 0 and out["certified"] is False
    err_est = out["error_estimate"]
    # at 1e-12 the series is 2x off (certified bracket 4.53e-11): the estimate says so
    assert err_est[0] > 0.5 * out["gamma"][0] and "kappa=1e-12" in err
    assert err_est[1] < 1e-3 * out["gamma"][1] and "kappa=0.1" not in err


def test_clt_warns_where_it_is_far_off(capsys):
    argv = ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "0.5", "--sampling-rate", "1e-5",
            "--steps", "1000000", "--kappa", "1e-7", "--method", "clt"]
    code, out, err = run_cli(capsys, argv)
    assert code == 0 and out["certified"] is False and out["warnings"] and "CLT" in err


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["gdp", "--noise-multiplier", "1e-6", "--sampling-rate", "0.5", "--steps", "1", "--discretization", "1e-5"], "--noise-multiplier"),
        (["rtm", "--mechanism", "laplace", "--mu", "1", "--steps", "1000000", "--alpha", "0.5"], "--steps"),
        (["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--sampling-rate", "0.5",
          "--steps", "1000000000", "--kappa", "0.1"], "--steps"),
        (["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--steps", "10000000",
          "--kappa", "0.1", "--method", "mc"], "--samples"),
        (["gdp", "--mechanism", "laplace", "--epsilon", "1e4"], "--epsilon"),
    ],
)
def test_resource_guards_exit_2_at_once(capsys, no_computation, argv, flag):
    code, _, err = run_cli(capsys, argv)
    assert code == 2 and flag in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["rero", "--mechanism", "gaussian", "--mu", "1", "--sampling-rate", "5", "--kappa", "0.1"], "--sampling-rate"),
        (["rero", "--mechanism", "gaussian", "--mu", "1", "--steps", "3", "--kappa", "0.1"], "--steps"),
        (["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--discretization", "0",
          "--kappa", "0.1"], "--discretization"),
        (["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--kappa", "0.1", "--method", "mc",
          "--seed", "-1"], "--seed"),
        (["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--kappa", "0.1", "--order", "2"],
         "--order"),
        (["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "-1", "--kappa", "0.1"],
         "--noise-multiplier"),
        (["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1", "--sampling-rate", "0",
          "--kappa", "0.1"], "--sampling-rate"),
        (["gdp", "--mechanism", "laplace", "--epsilon", "1", "--delta", "5"], "--delta"),
        (["gdp", "--mechanism", "laplace", "--epsilon", "0"], "(0, 700]"),
        (["gdp", "--mechanism", "gaussian", "--epsilon", "1", "--noise-multiplier", "2"], "--noise-multiplier"),
        (["gdp", "--noise-multiplier", "1", "--epsilon", "2"], "--epsilon"),
        (["gdp", "--noise-multiplier", "1", "--tail", "1e-8"], "--tail"),
        (["rtm", "--mechanism", "laplace", "--mu", "1", "--dimension", "3", "--alpha", "0.5"], "--dimension"),
        (["rtm", "--mechanism", "gaussian", "--release", "averaged", "--mu", "1", "--sampling-rate", "0.5", "--alpha", "0.5"],
         "--sampling-rate"),
    ],
)
def test_cli_names_its_own_flags(capsys, argv, flag):
    code, _, err = run_cli(capsys, argv)
    assert code == 2 and flag in err and len(err.strip().splitlines()) == 1


def test_kappa_and_delta_are_checked_before_any_computation(capsys, no_computation):
    argv = ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "0.5", "--sampling-rate", "1e-5",
            "--steps", "1000000", "--kappa", "0.1", "1.5"]
    assert run_cli(capsys, argv)[0] == 2
    argv = ["gdp", "--noise-multiplier", "9.4", "--sampling-rate", "0.3", "--steps", "2000", "--delta", "5"]
    assert run_cli(capsys, argv)[0] == 2


@pytest.mark.slow
@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sigma=log_uniform(0.01, 100.0), q=log_uniform(1e-6, 1.0), steps=log_uniform(1, 1e7).map(round))
def test_gdp_cli_answers_or_refuses(capsys, sigma, q, steps):
    argv = ["gdp", "--noise-multiplier", repr(sigma), "--sampling-rate", repr(q), "--steps", str(steps)]
    out = answer_or_refusal(capsys, argv)
    if out is None:
        return
    assert out["mu"] >= 0.0 and 0.0 <= out["regret"] <= 1.0
    if q == 1.0:  # full batches: exactly sqrt(T)/sigma
        assert out["mu"] == pytest.approx(np.sqrt(steps) / sigma, rel=1e-12)


@pytest.mark.slow
@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sigma=log_uniform(0.01, 100.0), q=log_uniform(1e-6, 1.0), steps=log_uniform(1, 1e7).map(round),
       kappa=_KAPPA, method=st.sampled_from(["bracket", "edgeworth", "clt"]))
def test_rero_cli_answers_or_refuses(capsys, sigma, q, steps, kappa, method):
    argv = ["rero", "--mechanism", "subsampled-gaussian", "--noise-multiplier", repr(sigma), "--sampling-rate",
            repr(q), "--steps", str(steps), "--kappa", repr(kappa), "--method", method]
    out = answer_or_refusal(capsys, argv)
    if out is None:
        return
    k = out["kappa"][0]
    assert k == kappa and kappa <= out["gamma"][0] <= 1.0
    if method == "bracket":
        assert kappa <= out["gamma_lower"][0] <= out["gamma"][0] <= out["gamma_upper"][0] <= 1.0
    else:  # approximations are never presented as certified, and carry an error estimate or say why they have none
        assert out["certified"] is False
        assert "error_estimate" in out or any("no error estimate" in w for w in out["warnings"])


@pytest.mark.parametrize("command", [
    "gdp --noise-multiplier 2",
    "report --noise-multiplier 2 --kappa 0.1 --fpr 0.01 --prior 0.5 --discretization 1e-3",
    "calibrate --mu 1 --discretization 1e-3",
])
def test_a_training_scripts_batch_dataset_and_epochs_are_its_rate_and_steps(capsys, command):
    """Issue 53: --batch-size 100 --dataset-size 1000 --epochs 2 is --sampling-rate 0.1 --steps 20, as Opacus and TF
    Privacy users write their run."""
    script = run_cli(capsys, [*command.split(), "--batch-size", "100", "--dataset-size", "1000", "--epochs", "2"])
    rates = run_cli(capsys, [*command.split(), "--sampling-rate", "0.1", "--steps", "20"])
    assert script[0] == rates[0] == 0
    drop = ("seconds", "provenance")
    assert {k: v for k, v in script[1].items() if k not in drop} == {k: v for k, v in rates[1].items() if k not in drop}
    code, _, err = run_cli(capsys, [*command.split(), "--batch-size", "100", "--sampling-rate", "0.1", "--steps", "2"])
    assert code == 2 and "give --sampling-rate or --batch-size with --dataset-size" in err


def test_report_of_a_run_given_by_its_batches(capsys):
    """A run given as a training script states it: its length is required, epochs count from the decimal written,
    delta not below one over the data-set size is a warning in the Markdown too, and plain words never exceed 100 %."""
    from fdp import cli

    assert cli.main(["report", "--noise-multiplier", "1", "--batch-size", "10", "--dataset-size", "100"]) == 2
    assert "give --epochs (or --steps) with --batch-size and --dataset-size" in capsys.readouterr().err
    assert cli.main(["report", "--noise-multiplier", "1", "--sampling-rate", "0.01"]) == 2  # not silently one step
    assert "give --steps with --sampling-rate" in capsys.readouterr().err
    assert cli.main(["report", "--noise-multiplier", "1", "--batch-size", "10", "--epochs", "1"]) == 2  # not "got None"
    assert "give --batch-size and --dataset-size together" in capsys.readouterr().err
    # counts as a person writes them: 6e4 is 60,000; 2.5 and inf are no counts
    assert cli.main(["report", "--noise-multiplier", "1", "--batch-size", "1e2", "--dataset-size", "6e4", "--epochs", "1"]) == 0
    assert "600 steps" in capsys.readouterr().out
    for bad in ("2.5", "inf", "nan", "ten"):
        code, _, err = run_cli(capsys, ["report", "--noise-multiplier", "1", "--steps", bad], json_out=False)
        assert code == 2 and f"argument --steps: a whole number is needed, such as 60000 or 1e6, got '{bad}'" in err
    assert cli.main(["report", "--noise-multiplier", "1", "--batch-size", "10", "--dataset-size", "100", "--epochs", "0.1",
                     "--delta", "0.01"]) == 0
    captured = capsys.readouterr()
    assert "1 step\n" in captured.out  # 0.1 x 100 / 10 = 1 (the binary 0.1 gave 2)
    assert "--delta 0.01 is not below 1 / --dataset-size = 0.01" in captured.err
    assert "- --delta 0.01 is not below" in captured.out  # the Markdown's warnings
    assert cli.main(["report", "--noise-multiplier", "0.1", "--fpr", "0", "1", "--kappa", "1e-309"]) == 0
    out = capsys.readouterr().out
    assert "101 %" not in out and "or 100 % of those who were" in out and "candidates" not in out


def test_report_gives_the_noise_for_a_target_as_calibrate_does(capsys):
    """Issue 53: one command prints the run's risks and the noise a chosen target needs (the same search as
    `calibrate`); a malformed target is refused before any work, naming --noise-for."""
    run = ["--noise-multiplier", "0.3", "--sampling-rate", "0.01", "--steps", "100", "--discretization", "1e-3"]
    code, out, _ = run_cli(capsys, ["report", *run, "--noise-for", "advantage", "0.05"])
    _, cal, _ = run_cli(capsys, ["calibrate", "--advantage", "0.05", "--sampling-rate", "0.01", "--steps", "100",
                                 "--discretization", "1e-3"])
    assert code == 0 and out["noise_for"]["noise_multiplier"] == cal["noise_multiplier"] > 0.3
    code, text, _ = run_cli(capsys, ["report", *run, "--noise-for", "advantage", "0.05"], json_out=False)
    assert "## Noise for a target" in text and "This run's 0.3 does not: it needs" in text and " or more**" in text
    for bad, message in ((["tpr", "0.05"], "--noise-for tpr needs its FPR after the value"),
                         (["mu", "1", "2"], "--noise-for mu takes its value alone"),
                         (["mu", "one"], "the value and level must be numbers"),
                         (["bogus", "1"], "--noise-for: target must be one of")):
        code, _, err = run_cli(capsys, ["report", *run, "--noise-for", *bad], json_out=False)
        assert code == 2 and message in err, err
    code, _, err = run_cli(capsys, ["report", "--mechanism", "laplace", "--noise-multiplier", "1", "--noise-for", "mu", "1"],
                           json_out=False)
    assert code == 2 and "--noise-for needs DP-SGD" in err


def test_the_noise_section_never_contradicts_the_report(capsys):
    """Break review: a run inside the search's tolerance (sigma 10.002 for mu <= 1 over 100 full batches: exactly
    10 is needed, the search answers (9.995, 10.01]) was told it fails; a needed/run factor overflowed into an error."""
    code, text, _ = run_cli(capsys, ["report", "--noise-multiplier", "10.002", "--sampling-rate", "1", "--steps", "100",
                                     "--noise-for", "mu", "1"], json_out=False)
    assert code == 0 and "lies within the search's tolerance" in text and "does not" not in text.split("## Noise")[1]
    code, text, _ = run_cli(capsys, ["report", "--noise-multiplier", "1e-300", "--steps", "1", "--noise-for", "mu", "1e-10"],
                            json_out=False)
    assert code == 0 and "does not, by far" in text and "over 1 step," in text
    code, _, err = run_cli(capsys, ["report", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10",
                                    "--noise-for", "tpr", "0.05", "0"], json_out=False)
    assert code == 2 and "--noise-for tpr: its FPR must lie in (0, 1), got 0.0" in err


@pytest.mark.parametrize("command", ["gdp --noise-multiplier 1", "rero --mechanism subsampled-gaussian --noise-multiplier 1 --kappa 0.1"])
def test_every_command_refuses_a_subsampled_run_without_its_length(capsys, command):
    """Issue 53: report refused --sampling-rate 0.01 without --steps, but gdp and rero read it as one step."""
    code, _, err = _main(capsys, command.split() + ["--sampling-rate", "0.01"])
    assert code == 2 and "give --steps with --sampling-rate" in err and "--steps 1" in err
    assert _main(capsys, command.split() + ["--sampling-rate", "0.01", "--steps", "1"])[0] == 0


def test_an_unknown_flag_names_the_flag_meant(capsys):
    """Issue 53: `report --sigma 1.0` said only "unrecognized arguments"; a synonym or a near spelling is named."""
    code, _, err = _main(capsys, ["report", "--sigma", "1.0", "--sampling-rate", "0.01", "--steps", "100"])
    assert code == 2 and err.count("\n") == 1
    assert "--sigma is written --noise-multiplier here" in err and "python -m fdp report --help" in err
    code, _, err = _main(capsys, ["gdp", "--noise-multiplier", "1", "--sampling_rate", "0.01", "--steps", "10"])
    assert code == 2 and "--sampling_rate is written --sampling-rate here" in err
    code, _, err = _main(capsys, ["gdp", "--noise-multiplier", "1", "--foo", "3"])
    assert code == 2 and "unrecognized arguments: --foo 3; python -m fdp gdp --help lists its flags" in err


def test_the_text_output_rounds_outward_and_keeps_typed_numbers(capsys):
    """Issue 53: `calibrate` printed 1.4150362280689364; the text rounds to six digits, a noise up, a lower end down,
    and a number typed with six digits or fewer as typed; the JSON keeps every digit."""
    from fdp.cli import _field

    assert _field("noise_multiplier", 1.4150362280689364) == "1.41504"
    assert _field("noise_lower", 1.3925869441401100) == "1.39258" and _field("achieved_lower", 0.98456032915) == "0.98456"
    assert _field("delta", 1e-5) == "1e-05" and _field("steps", 1000) == "1000" and _field("seconds", 8.10126) == "8.1"
    code, out, _ = _main(capsys, ["gdp", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "100"])
    mu = next(line for line in out.splitlines() if line.strip().startswith("mu:")).split(":")[1].strip()
    code, js, _ = _main(capsys, ["gdp", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "100", "--json"])
    exact = json.loads(js)["mu"]
    assert len(mu.replace("0.", "", 1)) <= 6 and float(mu) >= exact and repr(exact) != mu



def test_a_list_written_with_commas_and_a_clipping_norm_are_explained(capsys):
    code, _, err = _main(capsys, ["report", "--noise-multiplier", "1", "--fpr", "1e-5,1e-3"])
    assert code == 2 and "separated by spaces" in err
    code, _, err = _main(capsys, ["gdp", "--noise-multiplier", "1", "--max-grad-norm", "1.0"])
    assert code == 2 and "--max-grad-norm is not needed" in err
    code, _, err = _main(capsys, ["gdp", "--noise-multiplier", "1", "--target-delta", "1e-5"])
    assert code == 2 and "--target-delta is written --delta here" in err


def test_no_flag_is_taken_for_another_by_its_prefix_and_hints_name_the_same_quantity(capsys):
    """The break review: argparse read --n as --noise-multiplier (noise 60,000, silently) and --t as --tail; a near
    spelling of another quantity (--tpr, --eps in rero) was hinted as if it were the flag meant."""
    code, out, err = _main(capsys, ["gdp", "--n", "60000", "--sampling-rate", "0.01", "--steps", "1000"])
    assert code == 2 and out == "" and "unrecognized arguments: --n 60000" in err
    code, _, err = _main(capsys, ["gdp", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--t", "1000"])
    assert code == 2 and "--t is written --steps here" in err
    for argv in (["report", "--noise-multiplier", "1", "--tpr", "1"],
                 ["rero", "--mechanism", "gaussian", "--noise-multiplier", "1", "--kappa", "0.1", "--eps", "3"]):
        code, _, err = _main(capsys, argv)
        assert code == 2 and "is written" not in err, err
    code, _, err = _main(capsys, ["--json", "gdp", "--noise-multiplier", "1"])
    assert code == 2 and "--json goes after the command" in err


def test_a_number_past_the_largest_double_prints_as_typed():
    from fdp.cli import _field

    assert _field("noise_multiplier", 1.7976931e308) == "1.7976931e+308"
