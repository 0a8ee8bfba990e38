"""Gradient-space RTM audits (fdp.experiments.audit): training, clipping, and the canary statistic's laws."""

import numpy as np
import pytest
from scipy.stats import chi, kstest, ncx2

from fdp import Mechanism
from fdp.accounting import rtm
from fdp.curves import tradeoff
from fdp.experiments import audit, datasets
from fdp.experiments.attacks import empirical_tradeoff, pooled_tradeoff
from fdp.experiments.dpsgd import Training
from fdp.parallel import Execution

#: One full-batch step of noise 1.
ONE_STEP = Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0)


def test_clip_rows_bounds_norms_and_keeps_small_vectors():
    g = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    c = audit.clip_rows(g, 1.0)  # DP-SGD's clip (fdp.experiments.dpsgd.clip), as the audits use it
    np.testing.assert_allclose(np.linalg.norm(c, axis=1), [1.0, 0.5, 0.0])
    np.testing.assert_allclose(c[1], g[1])


def test_dpgd_training_is_seeded_clipped_and_learns():
    data = datasets.one_feature_classification(1025, seed=0)
    run = Training(Mechanism("gaussian", 1.0, 1.0, 60), learning_rate=2.0, clip_norm=1.0)
    a = audit.train_linear_dpgd(data.x, data.y, run, runs=4, execution=Execution(seed=5))
    b = audit.train_linear_dpgd(data.x, data.y, run, runs=4, execution=Execution(seed=5))
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.final_gradients.shape == (4, 1025, 2)
    assert np.all(np.linalg.norm(a.final_gradients, axis=-1) <= 1.0 + 1e-12)
    xb = np.hstack([data.x, np.ones((1025, 1))])
    acc = ((xb @ a.weights.T > 0) == data.y[:, None]).mean(axis=0)
    assert np.all(acc > 0.8)  # make_classification's one informative feature separates well


def test_per_sample_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2))
    y = np.array([0.0, 1.0, 1.0])
    w = np.array([0.3, -0.2, 0.1])
    xb = np.hstack([x, np.ones((3, 1))])

    def loss(w, i):
        z = xb[i] @ w
        return np.logaddexp(0.0, z) - y[i] * z  # cross-entropy of sigmoid(z)

    analytic = audit.logistic_gradients(w[None], xb, y)[0]  # the library's, at w != 0 (w = 0 hides a scaling)
    per_run = audit.logistic_gradients(np.stack([w, -w]), np.stack([xb, xb]), np.stack([y, y]))
    np.testing.assert_allclose(per_run[0], analytic)
    h = 1e-6
    for i in range(3):
        fd = [(loss(w + h * e, i) - loss(w - h * e, i)) / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(analytic[i], fd, rtol=1e-6, atol=1e-9)
        fd_neg = [(loss(-w + h * e, i) - loss(-w - h * e, i)) / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(per_run[1, i], fd_neg, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("d, mu", [(1, 1.0), (50, 2.0)])
def test_gaussian_canary_statistic_has_the_laws_of_theorem_2(d, mu):
    ref = np.random.default_rng(1).standard_normal((20, d))
    s0, s1 = audit.canary_scores(ref, mu, Mechanism("gaussian", 1.0 / mu), 20_000, seed=2)  # noise sd 1
    assert kstest(s0, chi(d).cdf).pvalue > 1e-3
    assert kstest(s1**2, ncx2(d, mu**2).cdf).pvalue > 1e-3


def test_gaussian_canary_audit_matches_the_rtm_curve():
    s0, s1 = audit.canary_scores(np.zeros((5, 1)), 1.0, Mechanism("gaussian", 1.0), 50_000, seed=3)
    t, alpha, beta = empirical_tradeoff(s0, s1, thresholds=np.linspace(0.05, 3.5, 30))
    j = rtm.gaussian(1.0, 1)
    # 50,000 samples: binomial standard error of beta below 0.0023
    assert np.max(np.abs(beta - j(alpha))) < 0.012
    assert np.all(beta >= tradeoff.gaussian(1.0)(alpha) - 0.012)  # never below the DP curve (Lemma 6)


def test_laplace_and_subsampled_canary_audits_match_theory():
    s0, s1 = audit.canary_scores(np.zeros(1), 1.0, Mechanism("laplace", 1.0), 50_000, seed=4)
    _, alpha, beta = empirical_tradeoff(s0, s1, thresholds=np.linspace(0.05, 4.0, 30))
    assert np.max(np.abs(beta - rtm.laplace(1.0)(alpha))) < 0.012
    s0, s1 = audit.canary_scores(np.zeros(1), 1.5, Mechanism("gaussian", 1.0 / 1.5, 0.3), 50_000, seed=5)
    _, alpha, beta = empirical_tradeoff(s0, s1, thresholds=np.linspace(0.05, 4.0, 30))
    j_p = tradeoff.subsample(rtm.gaussian(1.5, 1), 0.3)  # Lemma 9
    assert np.max(np.abs(beta - j_p(alpha))) < 0.012


def test_per_run_data_sets_and_no_intercept():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 40, 1))
    y = (x[..., 0] > 0).astype(float)
    runs = audit.train_linear_dpgd(x, y, Training(Mechanism("gaussian", 1.0, 1.0, 5), clip_norm=1.0, learning_rate=1.0), fit_intercept=False,
                                   execution=Execution(seed=1))
    assert runs.weights.shape == (3, 1) and runs.final_gradients.shape == (3, 40, 1)
    # without an intercept each clipped gradient is (p - y) x scaled by at most 1, so run r's gradients divided by
    # its own x[r] lie in [-1, 1] with the sign of 1/2 - y[r]; gradients of another run's data would not
    ratio = runs.final_gradients[..., 0] / x[..., 0]
    assert np.all(np.abs(ratio) <= 1.0 + 1e-12)
    assert np.all(np.where(y == 1.0, ratio <= 0.0, ratio >= 0.0))
    # run r trained on x[r] alone: the same seed on one data set reproduces nothing of the others
    with pytest.raises(ValueError, match="runs"):
        audit.train_linear_dpgd(x, y, Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0), runs=2, execution=Execution(seed=1))


def test_linear_network_gradients_match_finite_differences():
    rng = np.random.default_rng(4)
    x, y, latent = rng.standard_normal((4, 3)), rng.standard_normal(4), 5
    params = rng.standard_normal(latent * (3 + 2) + 1)

    def loss(p, i):
        w1 = p[: latent * 3].reshape(latent, 3)
        b1, w2, b2 = p[latent * 3 : latent * 4], p[latent * 4 : latent * 5], p[-1]
        return 0.5 * (w2 @ (w1 @ x[i] + b1) + b2 - y[i]) ** 2

    g = audit.linear_network_gradients(params, x, y, latent)
    h = 1e-6
    for i in range(4):
        fd = [(loss(params + h * e, i) - loss(params - h * e, i)) / (2 * h) for e in np.eye(params.size)]
        np.testing.assert_allclose(g[i], fd, rtol=1e-5, atol=1e-8)


def test_linear_network_training_clips_and_fits_diabetes():
    data = datasets.diabetes()
    run = audit.train_linear_network_dpgd(data.x, data.y, Training(Mechanism("gaussian", 0.5, 1.0, 150), clip_norm=1.0,
                                                                                    learning_rate=0.5), latent=50, seed=0)
    assert run.weights.shape == (1, 50 * 12 + 1) and run.final_gradients.shape == (1, 442, 601)
    assert np.all(np.linalg.norm(run.final_gradients, axis=-1) <= 1.0 + 1e-12)
    p = run.weights[0]
    w1, b1, w2, b2 = p[:500].reshape(50, 10), p[500:550], p[550:600], p[600]
    mse = np.mean(((data.x @ w1.T + b1) @ w2 + b2 - data.y) ** 2)
    assert mse < 0.6  # standardised target: variance 1; least squares reaches about 0.48


def test_lira_scores_follow_the_gaussian_shift_of_the_target_gradient():
    # one converged model, one label-flipped target far from the boundary: its clipped gradient has
    # norm 1 along the target's feature vector, so the logit moves by exactly Delta / sigma = 1 noise sd
    rng = np.random.default_rng(6)
    x = rng.standard_normal((200, 1))
    y = (x[:, 0] > 0).astype(float)
    w = np.array([[4.0, 0.0]])
    s0, s1, effect = audit.lira_offline_scores(x, y, w, np.array([[2.0]]), np.array([0.0]),
                                               Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0),
                                               shadow_models=4000, target_models=20_000, execution=Execution(seed=7))
    np.testing.assert_allclose(effect, [1.0], rtol=1e-9)
    assert abs(s0.mean()) < 0.05 and abs(s0.std() - 1) < 0.05
    assert abs(s1.mean() - s0.mean() - 1.0) < 0.05
    _, alpha, beta = empirical_tradeoff(s0, s1, thresholds=np.linspace(-2, 3, 20))
    # the one-sided test reaches the DP curve G_1, below the RTM curve of the magnitude test
    assert np.max(np.abs(beta - tradeoff.gaussian(1.0)(alpha))) < 0.03
    assert np.max(rtm.gaussian(1.0, 1)(alpha) - beta) > 0.1


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: audit.canary_scores(np.zeros(1), -1.0, Mechanism("gaussian", 1.0), 10, seed=0), "canary_norm"),
        (lambda: audit.canary_scores(np.zeros(1), 1.0, "gaussian", 10, seed=0), "mechanism must be a fdp.Mechanism"),
        (lambda: audit.canary_scores(np.zeros(1), 1.0, Mechanism("gaussian", 1.0, 1.0, 3), 10, seed=0), "steps 1"),
        (lambda: audit.canary_scores(np.zeros(1), 1.0, Mechanism("gaussian", 1.0), 0, seed=0), "repetitions"),
        (lambda: audit.canary_scores([np.nan], 1.0, Mechanism("gaussian", 1.0), 10, seed=0), "reference_gradients"),
        (lambda: audit.train_linear_dpgd([[0.0]], [2.0],
         Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0),
         execution=Execution(seed=0)), "labels"),
        (lambda: audit.train_linear_dpgd([[0.0]], [1.0],
         Training(Mechanism("gaussian", 1.0, 1.0, 0), clip_norm=1.0, learning_rate=1.0),
         execution=Execution(seed=0)), "steps"),
        (lambda: audit.train_linear_network_dpgd([[0.0]], [1.0],
         Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0),
         latent=0, seed=0), "latent"),
        (lambda: audit.lira_offline_scores([[0.0]], [1.0], [[0.0, 0.0]], [[1.0]], [0.0],
         Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0), shadow_models=1, target_models=5,
         execution=Execution(seed=0)), "shadow_models"),
        (lambda: audit.lira_offline_scores([[0.0]], [1.0], [[0.0, 0.0]], [[1.0, 2.0]], [0.0],
         Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0), shadow_models=5, target_models=5,
         execution=Execution(seed=0)), "x_target"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_canary_audit_is_canary_scores_per_run_whatever_the_chunks_and_workers():
    refs = np.random.default_rng(1).normal(size=(5, 4, 3))
    seeds = np.random.SeedSequence(9).spawn(5)
    expected = [audit.canary_scores(refs[r], 0.5, Mechanism("gaussian", 2.0, 0.5), 30, seed=seeds[r]) for r in range(5)]
    for chunk, n_jobs in ((1, 1), (2, 2), (64, 1)):
        s0, s1 = audit.canary_audit(refs, 0.5, Mechanism("gaussian", 2.0, 0.5), 30, execution=Execution(seed=9, chunk=chunk, n_jobs=n_jobs))
        assert s0.shape == s1.shape == (5, 30)
        np.testing.assert_allclose(s0, [e[0] for e in expected], rtol=1e-14)
        np.testing.assert_allclose(s1, [e[1] for e in expected], rtol=1e-14)
    with pytest.raises(ValueError, match="references"):
        audit.canary_audit(np.zeros(3), 1.0, Mechanism("gaussian", 1.0), 10, execution=Execution(seed=0))
    with pytest.raises(ValueError, match="mechanism"):
        audit.canary_audit(refs, 1.0, Mechanism("gaussian", 1.0, 1.0, 2), 10, execution=Execution(seed=0))


def test_training_and_lira_are_the_same_bits_whatever_the_chunks_and_workers():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 30, 1))
    y = (x[..., 0] > 0).astype(float)
    xt, yt = rng.standard_normal((5, 1)), np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    outs = []
    for chunk, n_jobs in ((5, 1), (1, 1), (2, 2)):
        runs = audit.train_linear_dpgd(x, y,
                                       Training(Mechanism("gaussian", 1.0, 0.5, 8), clip_norm=1.0, learning_rate=1.0),
                                       execution=Execution(seed=3, chunk=chunk, n_jobs=n_jobs))
        scores = audit.lira_offline_scores(x, y, runs.weights, xt, yt,
                                           ONE_STEP, shadow_models=6, target_models=4,
                                           execution=Execution(seed=4, chunk=chunk, n_jobs=n_jobs))
        outs.append((runs.weights, runs.final_gradients) + scores)
    assert outs[0][0].shape == (5, 2) and outs[0][1].shape == (5, 30, 2) and outs[0][2].shape == (5, 4)
    for other in outs[1:]:
        for a, b in zip(outs[0], other):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(outs[0][0][0], outs[0][0][1])  # every run has its own stream
    # one shared data set (sent once per task) trains exactly as the same set given to every run
    shared = audit.train_linear_dpgd(x[0], y[0],
                                     Training(Mechanism("gaussian", 1.0, 0.5, 8), clip_norm=1.0, learning_rate=1.0), runs=5,
                                     execution=Execution(seed=3, chunk=2))
    copied = audit.train_linear_dpgd(np.repeat(x[:1], 5, 0), np.repeat(y[:1], 5, 0),
                                     Training(Mechanism("gaussian", 1.0, 0.5, 8), clip_norm=1.0, learning_rate=1.0),
                                     execution=Execution(seed=3))
    np.testing.assert_array_equal(shared.weights, copied.weights)
    np.testing.assert_array_equal(shared.final_gradients, copied.final_gradients)
    lira_shared = audit.lira_offline_scores(x[0], y[0], runs.weights, xt, yt,
                                            ONE_STEP, shadow_models=6, target_models=4,
                                            execution=Execution(seed=4, chunk=2))
    lira_copied = audit.lira_offline_scores(np.repeat(x[:1], 5, 0), np.repeat(y[:1], 5, 0), runs.weights, xt, yt,
                                            ONE_STEP, shadow_models=6, target_models=4,
                                            execution=Execution(seed=4))
    for a, b in zip(lira_shared, lira_copied):
        np.testing.assert_array_equal(a, b)
    # a SeedSequence passed twice gives the same models twice (it is not advanced)
    ss = np.random.SeedSequence(11)
    first, second = (audit.train_linear_dpgd(x, y,
                     Training(Mechanism("gaussian", 1.0, 1.0, 3), clip_norm=1.0, learning_rate=1.0),
                     execution=Execution(seed=ss)).weights for _ in range(2))
    np.testing.assert_array_equal(first, second)
    with pytest.raises(ValueError, match="chunk"):
        audit.train_linear_dpgd(x, y, Training(Mechanism("gaussian", 1.0, 1.0, 1), clip_norm=1.0, learning_rate=1.0), execution=Execution(seed=0, chunk=0))
    with pytest.raises(ValueError, match="n_jobs"):
        audit.lira_offline_scores(x, y, runs.weights, xt, yt,
                                  ONE_STEP, shadow_models=6, target_models=4,
                                  execution=Execution(seed=4, n_jobs=0))



def test_flipped_target_sets_hold_out_one_point_with_its_label_flipped():
    xs, ys, xt, yt = audit.flipped_target_sets(3, 20, seed=5)
    assert xs.shape == (3, 19, 1) and ys.shape == (3, 19) and xt.shape == (3, 1) and yt.shape == (3,)
    rng = np.random.default_rng(5)
    for r in range(3):  # run r: a fresh data set from the r-th draw, the held-out point appended with its label flipped
        data = datasets.one_feature_classification(20, seed=int(rng.integers(2**31 - 1)))
        held = int(rng.integers(20))
        assert np.array_equal(xt[r], data.x[held]) and yt[r] == 1 - data.y[held]
        assert np.array_equal(xs[r], np.delete(data.x, held, axis=0))
    again = audit.flipped_target_sets(3, 20, seed=5)
    assert all(np.array_equal(a, b) for a, b in zip(again, (xs, ys, xt, yt)))


def test_the_fit_of_linear_runs_is_the_mean_cross_entropy_and_accuracy():
    x = np.array([[[1.0], [-2.0], [0.5]]])
    y = np.array([[1.0, 0.0, 0.0]])
    runs = audit.LinearRuns(weights=np.array([[2.0, -0.5]]), final_gradients=np.zeros((1, 3, 2)))
    loss, acc = runs.fit(x, y)
    logits = 2.0 * x[0, :, 0] - 0.5
    p = 1 / (1 + np.exp(-logits))
    assert loss[0] == pytest.approx(-np.mean(y[0] * np.log(p) + (1 - y[0]) * np.log(1 - p)), rel=1e-12)
    assert acc[0] == pytest.approx(np.mean((p > 0.5) == (y[0] == 1)))


def test_pooled_curves_share_their_critical_values_and_span_the_square():
    rng = np.random.default_rng(0)
    s0, s1 = rng.normal(size=(4, 200)), rng.normal(1.0, size=(4, 200))
    alpha, beta = pooled_tradeoff(s0, s1, thresholds=30)
    assert alpha.shape == beta.shape and alpha.shape[0] == 4
    assert np.all(alpha[:, 0] == 1.0) and np.all(beta[:, 0] == 0.0)  # the lowest critical value rejects every score
    assert np.all(alpha[:, -1] == 0.0) and np.all(beta[:, -1] == 1.0)  # the highest: the largest score
    assert np.all(np.diff(alpha, axis=1) <= 0) and np.all(np.diff(beta, axis=1) >= 0)
    t = np.quantile(np.concatenate([s0.ravel(), s1.ravel()]), np.linspace(0, 1, 30))
    t[0] = np.nextafter(t[0], -np.inf)
    assert np.array_equal(alpha, empirical_tradeoff(s0, s1, np.unique(t))[1])
    with pytest.raises(ValueError, match="thresholds"):
        pooled_tradeoff(s0, s1, thresholds=1)
    with pytest.raises(ValueError, match="repetitions, samples"):
        pooled_tradeoff(s0[0], s1[0])
