"""The command line, ``python -m fdp``, run as a user would (a subprocess with this interpreter)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import norm

from fdp import calibrate
from fdp.cli import main
from fdp.curves import rero, tradeoff
from fdp.targets import Advantage

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
    ("rero", "--steps"): "rero --mechanism gaussian --noise-multiplier 2 --sampling-rate 0.5 --kappa 0.1",
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
