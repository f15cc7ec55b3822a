"""OPS and AdaOPS (Wang, document 001, §2.3–§4): independent references for every claim.

* pDP, δ(ε), RDP against mpmath: both posteriors refit explicitly in 40-digit
  arithmetic, the law of xᵀθ under each, the hockey-stick as a numerical integral of
  (p − e^ε q)_+ and the Rényi divergence as a numerical integral of p^α q^(1−α);
  members and newcomers, λ = 0 and λ > 0, δ down to 1e-12;
* ex-post pDP against scipy's d-dimensional multivariate normal log-densities;
* the sampler: whitened samples vs N(0, I) (KS and variance), a wrong sampler fails;
* Thm 4.1: corrected ≥ exact; the printed form falls below exact (erratum);
* DP over a class ≥ exact pDP of explicit worst-case data sets; monotonicity behind it;
* AdaOPS: budget parts recomputed by hand; laws of λ̃ and θ̃ over runs;
  audits (pdpkit.audit) of the λ̃ release and of OPS on a corner pair;
* Lemma 3.1 (sign of the second identity), Prop 2.9's plug-in; bad input.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from pdpkit import gaussian, ops
from pdpkit.output_perturbation import ridge_removal_sensitivity_nonprivate
from pdpkit.audit import audit_delta_curve


def _data(n=12, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(X @ np.linspace(0.6, -0.4, d) + 0.3 * rng.normal(size=n), -1, 1)
    return X, y


# ------------------------------------------------------------------ mpmath reference
def _mp_laws(X, y, tx, ty, lam, gamma, member):
    """(mean, var) of xᵀθ under D and under its neighbour, from explicit mpmath refits."""
    def post(Xm, ym):
        Xm_ = mp.matrix(Xm.tolist())
        H = Xm_.T * Xm_ + lam * mp.eye(Xm.shape[1])
        th = mp.lu_solve(H, Xm_.T * mp.matrix(ym.tolist()))
        x = mp.matrix(tx.tolist())
        return (x.T * th)[0], (x.T * mp.lu_solve(H, x))[0] / gamma

    if member:
        i = int(np.flatnonzero(np.all(X == tx, axis=1))[0])
        Xo, yo = np.delete(X, i, axis=0), np.delete(y, i)
    else:
        Xo, yo = np.vstack([X, tx]), np.append(y, ty)
    return post(X, y), post(Xo, yo)


def _mp_hockey(eps, p_law, q_law):
    """∫ (p − e^ε q)_+ for two 1-d normals, split at the roots of log p − log q = ε."""
    (m1, v1), (m2, v2) = p_law, q_law
    e = mp.mpf(eps)
    # log p − log q − ε = A t² + B t + C
    A = -1 / (2 * v1) + 1 / (2 * v2)
    B = m1 / v1 - m2 / v2
    C = -m1**2 / (2 * v1) + m2**2 / (2 * v2) - mp.log(v1) / 2 + mp.log(v2) / 2 - e
    f = lambda t: max(mp.npdf(t, m1, mp.sqrt(v1)) - mp.exp(e) * mp.npdf(t, m2, mp.sqrt(v2)), 0)
    s = mp.sqrt(max(v1, v2))
    pts = [mp.ninf]
    disc = B * B - 4 * A * C
    if disc > 0:
        r = sorted([(-B - mp.sqrt(disc)) / (2 * A), (-B + mp.sqrt(disc)) / (2 * A)])
        pts += [r[0] - 3 * s, r[0], (r[0] + r[1]) / 2, r[1], r[1] + 3 * s]
    else:
        pts += [m1 - 3 * s, m1, m1 + 3 * s]
    pts.append(mp.inf)
    return mp.quad(f, pts)


def _mp_delta(eps, laws):
    (pd, pn) = laws
    return max(_mp_hockey(eps, pd, pn), _mp_hockey(eps, pn, pd))


def _mp_rdp(alpha, laws):
    def one(p, q):
        (m1, v1), (m2, v2) = p, q
        if alpha * v2 + (1 - alpha) * v1 <= 0:
            return mp.inf
        g = lambda t: mp.npdf(t, m1, mp.sqrt(v1)) ** alpha * mp.npdf(t, m2, mp.sqrt(v2)) ** (1 - alpha)
        s = mp.sqrt(max(v1, v2))
        c = (m1 + m2) / 2
        return mp.log(mp.quad(g, [mp.ninf, c - 10 * s, c, c + 10 * s, mp.inf])) / (alpha - 1)
    return max(one(*laws), one(laws[1], laws[0]))


CASES = [  # (lam, gamma, member, target index or newcomer)
    (0.5, 20.0, True, 3),
    (0.0, 20.0, True, 7),
    (0.5, 200.0, False, None),
    (0.0, 5.0, False, None),
]


@pytest.mark.parametrize("lam,gamma,member,i", CASES)
def test_pdp_delta_epsilon_rdp_match_mpmath_refits(lam, gamma, member, i):
    X, y = _data()
    if member:
        tx, ty = X[i], y[i]
    else:
        tx, ty = np.array([0.6, -0.7]), -0.9
    with mp.workdps(25):
        laws = _mp_laws(X, y, tx, ty, lam, gamma, member)
        kw = dict(lam=lam, gamma=gamma, member=member)
        for eps in (0.0, 0.7):
            ref = float(_mp_delta(eps, laws))
            got = float(ops.ops_pdp_delta(X, y, tx, ty, eps=eps, **kw))
            assert got == pytest.approx(ref, rel=1e-8, abs=1e-300), (eps, got, ref)
        for delta in (1e-6, 1e-12):
            e = float(ops.ops_pdp_epsilon(X, y, tx, ty, delta=delta, **kw))
            # the mpmath root lies in [e(1 − 1e-8), e]: accurate to 1e-8 and never on the unsafe side
            assert float(_mp_delta(e, laws)) <= delta * (1 + 1e-12)
            assert float(_mp_delta(e * (1 - 1e-8), laws)) > delta
        # test of the tester: one order alone (the larger set's) is refuted by the reference
        e_one = float(ops.ops_pdp_epsilon(X, y, tx, ty, delta=1e-6, direction="larger_first", **kw))
        assert float(_mp_delta(e_one, laws)) > 1e-6 * (1 + 1e-6)
        for alpha in (3.0,):
            ref = _mp_rdp(alpha, laws)
            got = float(ops.ops_pdp_rdp(X, y, tx, ty, alpha=alpha, **kw))
            assert got == pytest.approx(float(ref), rel=1e-8)


def test_equal_variance_limit_is_the_gaussian_mechanism():
    # w -> 0: the pair tends to N(0,1) vs N(a,1), whose tight profile is pdpkit.gaussian's (eq. B.1)
    a = np.array([0.05, 0.5, 2.0])
    for delta in (1e-3, 1e-9):
        e = ops._pair_epsilon(delta, np.full(3, 1e-13), a)
        ref = gaussian.gaussian_epsilon(delta, sensitivity=a, sigma=1.0)
        np.testing.assert_allclose(e, ref, rtol=1e-7)
    # both orders agree at ε = 0 (total variation) and the smaller set's order dominates on a grid
    W, A = np.meshgrid(np.geomspace(1e-5, 0.9, 15), np.geomspace(1e-3, 10, 15), indexing="ij")
    for eps in (0.0, 0.5, 3.0):
        d_pq, d_qp = ops._pair_delta(np.full(W.shape, eps), W, A)
        if eps == 0.0:
            np.testing.assert_allclose(d_pq, d_qp, rtol=1e-9, atol=1e-300)
        assert np.all(d_pq >= d_qp * (1 - 1e-9))


def test_rdp_is_inf_where_it_diverges():
    X, y = _data()
    h = ops.leverage_scores_nonprivate(X, lam=0.1)
    i = int(np.argmax(h))
    mu_small = h[i] / (1 - h[i])  # out-of-sample leverage of the smaller set
    kw = dict(lam=0.1, gamma=1.0, member=True)
    assert np.isinf(ops.ops_pdp_rdp(X, y, X[i], y[i], alpha=1 + 1.01 / mu_small, **kw))
    assert np.isfinite(ops.ops_pdp_rdp(X, y, X[i], y[i], alpha=1 + 0.99 / mu_small, **kw))


def test_leverage_sherman_morrison_and_member_inf():
    X, y = _data(n=30, d=3, seed=1)
    lam = 0.7
    H = X.T @ X + lam * np.eye(3)
    h = ops.leverage_scores_nonprivate(X, lam=lam)
    np.testing.assert_allclose(h, np.einsum("ij,jk,ik->i", X, np.linalg.inv(H), X), rtol=1e-12)
    Hm = H - np.outer(X[0], X[0])
    assert X[0] @ np.linalg.solve(Hm, X[0]) == pytest.approx(h[0] / (1 - h[0]), rel=1e-12)
    t = np.array([[0.3, 0.2, -0.1]])
    mu = ops.leverage_scores_nonprivate(X, lam=lam, target_x=t)
    np.testing.assert_allclose(mu, t @ np.linalg.solve(H, t.T)[:, 0], rtol=1e-12)
    # removing the only row in a direction with lam = 0: H - xxᵀ singular -> inf, not NaN
    Xs = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.5]])
    ys = np.array([0.5, 0.2, -0.1])
    kw = dict(lam=0.0, gamma=1.0, member=True)
    assert ops.ops_pdp_epsilon(Xs, ys, Xs[0], ys[0], delta=1e-6, **kw) == np.inf
    assert ops.ops_pdp_rdp(Xs, ys, Xs[0], ys[0], alpha=2.0, **kw) == np.inf
    assert ops.ops_pdp_bound(Xs, ys, Xs[0], ys[0], delta=1e-6, form="corrected", **kw) == np.inf
    assert np.isfinite(ops.ops_pdp_epsilon(Xs, ys, Xs[1], ys[1], delta=1e-6, **kw))


def test_vectorized_equals_one_at_a_time():
    X, y = _data(n=40, d=3, seed=2)
    kw = dict(lam=0.2, gamma=30.0, delta=1e-6)
    e_all = ops.ops_pdp_epsilon(X, y, X, y, member=True, **kw)
    for i in (0, 17, 39):
        assert e_all[i] == pytest.approx(ops.ops_pdp_epsilon(X, y, X[i], y[i], member=True, **kw), rel=1e-9)
    mem = np.arange(40) % 2 == 0
    tx = np.where(mem[:, None], X, -X)
    e_mix = ops.ops_pdp_epsilon(X, y, tx, y, member=mem, **kw)
    np.testing.assert_allclose(e_mix[mem], e_all[mem], rtol=1e-9)


# ------------------------------------------------------------------ ex post
def test_ex_post_equals_scipy_log_density_difference():
    X, y = _data(n=15, d=3, seed=3)
    lam, gamma = 0.3, 8.0
    res = ops.ops_fit(X, y, lam=lam, gamma=gamma, rng=4, size=5)

    def logpdf(Xm, ym, th):
        H = Xm.T @ Xm + lam * np.eye(3)
        return stats.multivariate_normal(np.linalg.solve(H, Xm.T @ ym), np.linalg.inv(H) / gamma).logpdf(th)

    base = logpdf(X, y, res.theta)
    tx_new, ty_new = np.array([0.2, -0.5, 0.4]), 0.7
    got = ops.ops_ex_post_pdp(res, X, y, np.vstack([X[2], tx_new]), [y[2], ty_new], member=np.array([True, False]))
    ref_m = np.abs(base - logpdf(np.delete(X, 2, 0), np.delete(y, 2), res.theta))
    ref_n = np.abs(base - logpdf(np.vstack([X, tx_new]), np.append(y, ty_new), res.theta))
    np.testing.assert_allclose(got[:, 0], ref_m, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[:, 1], ref_n, rtol=1e-9, atol=1e-12)


def test_reduction_to_one_dimension_by_monte_carlo_in_d_dimensions():
    # E_P[(1 − e^ε p'/p)_+] with the full 3-d posterior densities (scipy) equals δ(ε) of the 1-d pair
    X, y = _data(n=15, d=3, seed=15)
    lam, gamma, eps = 0.5, 40.0, 0.3
    tx, ty = np.array([0.3, -0.9, 0.2]), 0.8

    def post(Xm, ym):
        H = Xm.T @ Xm + lam * np.eye(3)
        return stats.multivariate_normal(np.linalg.solve(H, Xm.T @ ym), np.linalg.inv(H) / gamma)

    p, q = post(X, y), post(np.vstack([X, tx]), np.append(y, ty))
    th = p.rvs(size=200_000, random_state=16)
    f = np.maximum(1.0 - np.exp(eps + q.logpdf(th) - p.logpdf(th)), 0.0)
    ref = float(ops.ops_pdp_delta(X, y, tx, ty, lam=lam, gamma=gamma, eps=eps, member=False,
                                  direction="smaller_first"))
    assert ref > 0.05
    assert abs(f.mean() - ref) < 5 * f.std() / math.sqrt(f.size)  # 5 standard errors


# ------------------------------------------------------------------ sampler
def _whitened_pvalues(theta, mean, H, gamma):
    Lc = np.linalg.cholesky(H)
    z = ((theta - mean) @ Lc) * math.sqrt(gamma)  # Lᵀ(θ − θ̂)√γ ~ N(0, I)
    ks = stats.kstest(z.ravel(), "norm").pvalue
    k = z.shape[0]
    chi = (z**2).sum(axis=0)  # ~ χ²_k per coordinate
    var_p = np.minimum(stats.chi2.cdf(chi, k), stats.chi2.sf(chi, k)).min() * 2 * z.shape[1]
    return ks, var_p


def test_sampler_whitened_is_standard_normal_and_wrong_sampler_fails():
    X, y = _data(n=50, d=3, seed=5)
    lam, gamma = 0.5, 3.0
    res = ops.ops_fit(X, y, lam=lam, gamma=gamma, rng=6, size=3000)
    H = X.T @ X + lam * np.eye(3)
    np.testing.assert_allclose(res.mean, np.linalg.solve(H, X.T @ y), rtol=1e-12)
    ks, var_p = _whitened_pvalues(res.theta, res.mean, H, gamma)
    assert ks > 1e-3 and var_p > 1e-3  # a correct sampler fails with probability ≤ 2e-3
    wrong = res.mean + (res.theta - res.mean) / math.sqrt(2.0)  # covariance H⁻¹/(2γ)
    ks_w, var_w = _whitened_pvalues(wrong, res.mean, H, gamma)
    assert ks_w < 1e-3 and var_w < 1e-3
    assert "mean" not in repr(res)
    one = ops.ops_fit(X, y, lam=lam, gamma=gamma, rng=6)
    assert one.theta.shape == (3,)


# ------------------------------------------------------------------ Thm 4.1
def test_corrected_bound_dominates_exact_and_printed_does_not():
    X, y = _data(n=200, d=3, seed=7)
    rng = np.random.default_rng(8)
    tx = rng.normal(size=(200, 3))
    tx /= np.linalg.norm(tx, axis=1)[:, None]
    ty = rng.uniform(-1, 1, 200)
    for lam, gamma in ((1.0, 10.0), (0.0, 500.0), (5.0, 0.5)):
        for delta in (1e-2, 1e-6, 1e-12):
            for tX, tY, mem in ((X, y, True), (tx, ty, False)):
                kw = dict(lam=lam, gamma=gamma, delta=delta, member=mem)
                exact = ops.ops_pdp_epsilon(X, y, tX, tY, **kw)
                corr = ops.ops_pdp_bound(X, y, tX, tY, form="corrected", **kw)
                assert np.all(corr >= exact)
    # the printed tail step is invalid: (4.3)/(4.4) fall below the exact pDP
    kw = dict(lam=1.0, gamma=10.0, delta=1e-6, member=True)
    exact = ops.ops_pdp_epsilon(X, y, X, y, **kw)
    printed = ops.ops_pdp_bound(X, y, X, y, form="printed", **kw)
    assert np.mean(printed < exact) > 0.2


def test_printed_43_and_44_differ():
    X, y = _data(n=20, d=2, seed=9)
    kw = dict(lam=0.5, gamma=50.0, delta=1e-6)
    # the same pair (X, X + z): (4.3) from the smaller set, (4.4) from the larger one
    z, zy = np.array([0.5, 0.5]), 0.9
    b43 = ops.ops_pdp_bound(X, y, z, zy, member=False, form="printed", **kw)
    Xb, yb = np.vstack([X, z]), np.append(y, zy)
    b44 = ops.ops_pdp_bound(Xb, yb, z, zy, member=True, form="printed", **kw)
    e1 = ops.ops_pdp_epsilon(X, y, z, zy, member=False, **kw)
    e2 = ops.ops_pdp_epsilon(Xb, yb, z, zy, member=True, **kw)
    assert e1 == pytest.approx(e2, rel=1e-10)  # same pair, same exact pDP
    assert abs(b43 - b44) > 1e-3 * b43


# ------------------------------------------------------------------ DP over a class
def test_pdp_monotone_in_leverage_and_residual():
    W = np.geomspace(1e-5, 0.95, 25)
    A = np.geomspace(1e-4, 20, 25)
    w, a = np.meshgrid(W, A, indexing="ij")
    for delta in (1e-9, 1e-3):
        e = ops._pair_epsilon(delta, w, a)
        assert np.all(np.diff(e, axis=0) >= -1e-12) and np.all(np.diff(e, axis=1) >= -1e-12)


def _worst_data(n, lam, lam_min, d=3):
    """Smaller set S (n−1 unit-bounded rows): singular value² = max(lam, lam_min) along e1 with
    aligned ±1 labels (the largest ‖θ̂‖), and exactly lam_min along the other axes."""
    m = n - 1
    extra = []
    if lam_min > 0:
        k = math.ceil(lam_min)
        for j in range(1, d):
            row = np.zeros(d)
            row[j] = math.sqrt(lam_min / k)
            extra += [row] * k
    m1 = m - len(extra)
    s2 = max(lam, lam_min)
    assert s2 <= m1
    sign = np.where(np.arange(m1) % 2 == 0, 1.0, -1.0)
    X1 = np.zeros((m1, d))
    X1[:, 0] = sign * math.sqrt(s2 / m1)
    X = np.vstack([X1, *extra]) if extra else X1
    y = np.concatenate([sign, np.zeros(len(extra))])
    return X, y


@pytest.mark.parametrize("n,lam,lam_min", [(50, 4.0, 0.0), (50, 0.5, 0.0), (400, 0.0, 2.0), (400, 10.0, 1.0)])
def test_dp_epsilon_dominates_explicit_worst_case_data(n, lam, lam_min):
    gamma, delta = 2.0, 1e-6
    X, y = _worst_data(n, lam, lam_min)
    assert np.all(np.linalg.norm(X, axis=1) <= 1 + 1e-12)
    assert np.linalg.eigvalsh(X.T @ X)[0] >= lam_min - 1e-9
    th = np.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ y)
    u = th / np.linalg.norm(th)
    cands = [(u, -1.0), (-u, 1.0), (np.array([0.0, 1.0, 0.0]), 1.0), (np.array([0.0, 0.6, 0.8]), 1.0),
             (np.array([0.8, 0.6, 0.0]) * np.sign(u[0]), -1.0)]
    tx = np.array([c[0] for c in cands])
    ty = np.array([c[1] for c in cands])
    exact = ops.ops_pdp_epsilon(X, y, tx, ty, lam=lam, gamma=gamma, delta=delta, member=False)
    dp = ops.ops_dp_epsilon(delta, n=n, lam=lam, gamma=gamma, lam_min=lam_min)
    assert np.all(exact <= dp)
    assert exact.max() >= 0.2 * dp  # and not absurdly loose on these corners


def test_gamma_for_dp_inverts_never_unsafe():
    for kw in (dict(n=100, lam=50.0), dict(n=1000, lam=1.0, lam_min=100.0)):
        g = ops.ops_gamma_for_dp(0.8, 1e-6, **kw)
        assert ops.ops_dp_epsilon(1e-6, gamma=g, **kw) <= 0.8
        assert ops.ops_dp_epsilon(1e-6, gamma=g * (1 + 1e-6), **kw) > 0.8
    with pytest.raises(ValueError, match="lam"):
        ops.ops_gamma_for_dp(0.01, 1e-6, n=10, lam=0.1)


# ------------------------------------------------------------------ AdaOPS
def _ada_data(n=3000, d=4, seed=10):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1)[:, None]
    y = np.clip(X @ np.full(d, 0.3) + 0.1 * rng.normal(size=n), -1, 1)
    return X, y


def _gauss_delta(eps, mu):
    return stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)


def test_adaops_budget_parts_recomputed():
    X, y = _ada_data()
    eps, delta, kappa = 1.0, 1e-6, 4.0
    r = ops.adaops_fit(X, y, eps, delta, kappa=kappa, rng=11)
    b = r.budget
    assert b.eps_lambda + b.eps_ops == pytest.approx(eps)
    assert b.delta_lambda + b.delta_fail + b.delta_ops == pytest.approx(delta)
    # step 1: Gaussian mechanism at sensitivity 1 is tight at (eps_lambda, delta_lambda)
    assert _gauss_delta(b.eps_lambda, 1 / r.sigma_lam) == pytest.approx(b.delta_lambda, rel=1e-7)
    # step 2: margin with the −1
    assert stats.norm.sf((r.margin - 1) / r.sigma_lam) == pytest.approx(b.delta_fail, rel=1e-9)
    assert r.target == pytest.approx(len(X) / (X.shape[1] * kappa))
    assert r.lam == pytest.approx(max(0.0, r.target - r.lam_min_noisy + r.margin))
    # step 3: exact pDP at the class's corner (by hand) is ≤ eps_ops at delta_ops, and tight
    n1 = r.n_public + 1
    h = max(r.target, r.lam)
    mu = 1 / h
    lm = max(r.target - r.lam, 0.0)
    if r.lam > 0:
        s = max(math.sqrt(r.lam), math.sqrt(lm))
        f = s / (s * s + r.lam)
    else:
        f = 1 / math.sqrt(lm)
    rmax = 1 + math.sqrt(n1 - 1) * f
    w, a = mu / (1 + mu), rmax * math.sqrt(r.gamma * min(mu, 1)) / (1 + min(mu, 1))
    with mp.workdps(30):
        laws = ((mp.mpf(0), mp.mpf(1)), (mp.mpf(a), 1 - mp.mpf(w)))
        d_at = float(_mp_delta(b.eps_ops, laws))
    assert d_at <= b.delta_ops * (1 + 1e-9)
    assert d_at == pytest.approx(b.delta_ops, rel=1e-6)


def test_adaops_laws_over_runs():
    X, y = _ada_data(n=2000, d=3, seed=12)
    lmin = np.linalg.eigvalsh(X.T @ X)[0]
    gen = np.random.default_rng(13)
    zs, ws, gammas = [], [], []
    for _ in range(60):
        r = ops.adaops_fit(X, y, 1.0, 1e-6, kappa=3.0, rng=gen)
        zs.append((r.lam_min_noisy - lmin) / r.sigma_lam)
        H = X.T @ X + r.lam * np.eye(3)
        mean = np.linalg.solve(H, X.T @ y)
        ws.append(np.linalg.cholesky(H).T @ (r.theta - mean) * math.sqrt(r.gamma))
        gammas.append(r.gamma)
    assert stats.kstest(zs, "norm").pvalue > 1e-3
    assert stats.kstest(np.ravel(ws), "norm").pvalue > 1e-3
    # test the tester (same runs): a λ̃ centred one σ_λ off, and θ̃'s noise without the
    # 1/sqrt(γ) of OPS, are refuted (p about 1e-8 and 1e-10 here)
    assert stats.kstest(np.array(zs) - 1.0, "norm").pvalue < 1e-5
    wrong_w = np.array(ws) / np.sqrt(np.array(gammas))[:, None]
    assert stats.kstest(np.ravel(wrong_w), "norm").pvalue < 1e-5


def test_adaops_infeasible_kappa_and_domain():
    X, y = _ada_data(n=200, d=4)
    with pytest.raises(ValueError, match="kappa"):
        ops.adaops_fit(X, y, 0.1, 1e-6, kappa=1e4, rng=0)
    with pytest.raises(ValueError, match="n_public"):
        ops.adaops_fit(X, y, 1.0, 1e-6, kappa=2.0, n_public=100)
    with pytest.raises(ValueError, match="norm"):
        ops.adaops_fit(2 * X, y, 1.0, 1e-6, kappa=2.0)
    with pytest.raises(ValueError, match=r"\|y\|"):
        ops.adaops_fit(X, 2 * y + 1.5, 1.0, 1e-6, kappa=2.0)


# ------------------------------------------------------------------ audits
def test_audit_ops_on_corner_pair_and_lambda_release():
    # smaller set S: rank-one design, aligned labels; newcomer z at the largest residual
    n, lam, gamma = 30, 2.0, 1.0
    S, yS = _worst_data(n, lam, 0.0, d=2)
    th = np.linalg.solve(S.T @ S + lam * np.eye(2), S.T @ yS)
    x = th / np.linalg.norm(th)
    zy = -1.0
    B, yB = np.vstack([S, x]), np.append(yS, zy)
    res_s = ops.ops_fit(S, yS, lam=lam, gamma=gamma, rng=0)
    res_b = ops.ops_fit(B, yB, lam=lam, gamma=gamma, rng=0)
    Hs, Hb = S.T @ S + lam * np.eye(2), B.T @ B + lam * np.eye(2)

    def loss(theta):  # claimed privacy loss log p_S − log p_{S+z}, a function of xᵀθ
        t = theta @ x
        ms, vs = x @ res_s.mean, x @ np.linalg.solve(Hs, x) / gamma
        mb, vb = x @ res_b.mean, x @ np.linalg.solve(Hb, x) / gamma
        return (-(t - ms) ** 2 / (2 * vs) - 0.5 * np.log(vs)) + (t - mb) ** 2 / (2 * vb) + 0.5 * np.log(vb)

    eps = np.array([0.5, 1.0, 2.0])
    claimed = np.array([ops.ops_pdp_delta(S, yS, x, zy, lam=lam, gamma=gamma, eps=e, member=False) for e in eps])
    assert claimed.min() > 0.05
    samp_s = lambda m, g: ops.ops_fit(S, yS, lam=lam, gamma=gamma, rng=g, size=m).theta
    samp_b = lambda m, g: ops.ops_fit(B, yB, lam=lam, gamma=gamma, rng=g, size=m).theta
    kw = dict(n_samples=100_000, alpha=1e-3, chunk=50_000)
    ok = audit_delta_curve(samp_s, samp_b, loss, eps, eps, claimed, rng=1, **kw)
    assert ok.passed, ok.summary()
    bad = audit_delta_curve(samp_s, samp_b, loss, eps, eps, 0.8 * claimed, rng=1, **kw)
    assert not bad.passed, bad.summary()
    # AdaOPS's λ̃ release: a Gaussian mechanism of sensitivity 1 (λ_min of the pair (λ, λ + 1), its
    # law checked in test_adaops_laws_over_runs) with the σ_λ that adaops_fit calibrates
    Xa, ya = _ada_data(n=500, d=2)
    sig = ops.adaops_fit(Xa, ya, 1.0, 1e-6, kappa=2.0, rng=3).sigma_lam
    samp0 = lambda m, g: 5.0 + sig * g.standard_normal(m)
    samp1 = lambda m, g: 6.0 + sig * g.standard_normal(m)
    e_l = np.array([0.005, 0.02, 0.05])
    thr = 5.5 - e_l * sig**2  # {o < 5.5 − ε σ²}: the optimal event for the pair
    cl = np.array([_gauss_delta(e, 1 / sig) for e in e_l])
    ok = audit_delta_curve(samp0, samp1, lambda o: -o, -thr, e_l, cl, rng=2, **kw)
    assert ok.passed, ok.summary()
    bad = audit_delta_curve(samp0, samp1, lambda o: -o, -thr, e_l, 0.7 * cl, rng=2, **kw)
    assert not bad.passed, bad.summary()


# ------------------------------------------------------------------ Lemma 3.1, Prop 2.9
def test_lemma31_shift_and_sign_of_second_identity():
    from pdpkit.losses import logistic

    X, y = _data(n=40, d=2, seed=14)
    lam = 0.5
    yl = np.where(y > 0, 1.0, -1.0)
    # squared loss: the one-step formula is exact
    ex = ops.erm_per_instance_shift_nonprivate(X, y, "squared", X[:3], y[:3], lam=lam, member=True)
    os_ = ops.erm_per_instance_shift_nonprivate(X, y, "squared", X[:3], y[:3], lam=lam, member=True,
                                                method="one_step")
    np.testing.assert_allclose(os_, ex, rtol=1e-8, atol=1e-13)
    np.testing.assert_allclose(np.linalg.norm(os_, axis=1),
                               ridge_removal_sensitivity_nonprivate(X, y, lam=lam)[:3], rtol=1e-10)
    # logistic: both identities with the integrated Hessians (Gauss–Legendre on η_t)
    z, zy = np.array([0.7, -0.6]), 1.0
    shift = ops.erm_per_instance_shift_nonprivate(X, yl, "logistic", z, zy, lam=lam, member=False)
    from pdpkit.objpert import erm_fit_nonprivate

    th = erm_fit_nonprivate(X, yl, "logistic", lam=lam, tol=1e-13)
    thp = th + shift
    nodes, wts = np.polynomial.legendre.leggauss(30)
    t_nodes, wts = (nodes + 1) / 2, wts / 2

    def hess(theta, with_z):
        H = (X * logistic.d2(X @ theta, yl)[:, None]).T @ X + lam * np.eye(2)
        return H + (logistic.d2(z @ theta, zy) * np.outer(z, z) if with_z else 0)

    M = sum(wk * hess(tk * th + (1 - tk) * thp, False) for tk, wk in zip(t_nodes, wts))
    Mp = sum(wk * hess(tk * th + (1 - tk) * thp, True) for tk, wk in zip(t_nodes, wts))
    grad = lambda theta: logistic.d1(z @ theta, zy) * z
    np.testing.assert_allclose(th - thp, np.linalg.solve(Mp, grad(th)), rtol=1e-7)  # first identity
    np.testing.assert_allclose(th - thp, np.linalg.solve(M, grad(thp)), rtol=1e-7)  # second, with "+"
    assert np.linalg.norm(th - thp + np.linalg.solve(M, grad(thp))) > 0.5 * np.linalg.norm(th - thp)


def test_generalization_bound_plug_in():
    e = np.array([[0.1, 0.3], [0.0, 0.2]])
    got = ops.pdp_generalization_bound(e, 1e-3)
    m = np.exp(e).mean(axis=1)
    assert got == pytest.approx(np.mean(m**2) - 1 + 1e-3 + np.mean(m * 1e-3), rel=1e-14)
    assert ops.pdp_generalization_bound(np.zeros((3, 4)), 0.0) == 0.0


# ------------------------------------------------------------------ bad input
def test_bad_input():
    X, y = _data()
    tx, ty = X[0], y[0]
    kw = dict(lam=0.5, gamma=1.0, member=True)
    with pytest.raises(ValueError, match="X"):
        ops.ops_fit(np.where(X > 0.5, np.nan, X), y, lam=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="y"):
        ops.ops_fit(X, np.append(y, np.inf), lam=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="same number of rows"):
        ops.ops_fit(X, y[:-1], lam=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="target_x"):
        ops.ops_pdp_epsilon(X, y, np.ones(3), 0.0, delta=1e-6, **kw)
    with pytest.raises(ValueError, match="target_y"):
        ops.ops_pdp_epsilon(X, y, X[:2], y[:3], delta=1e-6, **kw)
    with pytest.raises(ValueError, match="gamma"):
        ops.ops_fit(X, y, lam=1.0, gamma=0.0)
    with pytest.raises(ValueError, match="lam"):
        ops.ops_fit(X, y, lam=-1.0, gamma=1.0)
    with pytest.raises(ValueError, match="lam"):
        ops.ops_fit(np.zeros((3, 2)), np.zeros(3), lam=0.0, gamma=1.0)
    for d in (0.0, 1.0, -1e-3, 2.0):
        with pytest.raises(ValueError, match="delta"):
            ops.ops_pdp_epsilon(X, y, tx, ty, delta=d, **kw)
        with pytest.raises(ValueError, match="delta"):
            ops.ops_dp_epsilon(d, n=10, lam=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="eps"):
        ops.ops_pdp_delta(X, y, tx, ty, eps=-0.1, **kw)
    with pytest.raises(ValueError, match="eps"):
        ops.ops_gamma_for_dp(0.0, 1e-6, n=10, lam=1.0)
    with pytest.raises(ValueError, match="eps"):
        ops.adaops_fit(X, y, 0.0, 1e-6, kappa=1.0)
    for a in (1.0, 0.5, np.nan):
        with pytest.raises(ValueError, match="alpha"):
            ops.ops_pdp_rdp(X, y, tx, ty, alpha=a, **kw)
    with pytest.raises(ValueError, match=r"target_x\[0\].*not a record of \(X, y\)"):
        ops.ops_pdp_epsilon(X, y, tx + 0.01, ty, delta=1e-6, **kw)
    with pytest.raises(TypeError, match="member"):
        ops.ops_pdp_epsilon(X, y, tx, ty, delta=1e-6, lam=0.5, gamma=1.0, member="yes")
    with pytest.raises(ValueError, match="lam_min"):
        ops.ops_dp_epsilon(1e-6, n=10, lam=0.0, gamma=1.0, lam_min=0.0)
    with pytest.raises(ValueError, match="x_bound"):
        ops.ops_dp_epsilon(1e-6, n=10, lam=1.0, gamma=1.0, x_bound=0.0)
    with pytest.raises(ValueError, match="n"):
        ops.ops_dp_epsilon(1e-6, n=0, lam=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="kappa"):
        ops.adaops_fit(X, y, 1.0, 1e-6, kappa=-1.0)
    with pytest.raises(ValueError, match="form"):
        ops.ops_pdp_bound(X, y, tx, ty, delta=1e-6, form="tight", **kw)
    with pytest.raises(TypeError, match="rng"):
        ops.ops_fit(X, y, lam=1.0, gamma=1.0, rng=1.5)
    with pytest.raises(TypeError):
        ops.ops_fit(X, y, 1.0, 1.0)  # mechanism parameters are keyword-only
    with pytest.raises(ValueError, match="eps"):
        ops.pdp_generalization_bound(np.array([[-1.0]]), 0.0)
