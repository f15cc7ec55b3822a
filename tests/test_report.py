"""Tests of pdpkit.report against independent references.

* Coverage: ObjPert + report simulated, the exact (non-private) ex-post pDP of
  :func:`pdpkit.objpert.ex_post_pdp` as the truth, Clopper–Pearson intervals: where the cross
  term dominates (the bound is nearly tight there) and where the members' log term does
  (few rows, small λ, small ``sigma_gradient``); uniform variants; each with a deliberately
  wrong variant of the bound that must fail (the source's printed forms, traps 2 and 3).
* The leverage bound in its worst direction (rows ≈ 0, H ≈ λI, λ = 2τσ_H), and with
  Chiani's τ/√2 (trap 1), which must fail.
* Bounds recomputed by hand from the released matrices (numpy.linalg.inv), against
  :func:`pdpkit.objpert.pdp_bound_data_independent` and :func:`pdpkit.gaussian.gaussian_ex_post_bound`.
* Release noise by chi-square; the release mechanism audited on a worst-case pair
  (:mod:`pdpkit.audit`); accounting by hand formulas and a root finder; bad inputs.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize, special, stats

from pdpkit import analyze_gauss, audit, gaussian, goe, objpert, report
from pdpkit.losses import logistic, squared

ALPHA = 1e-3  # two-sided Clopper–Pearson level of every coverage statement


def _unit_rows(rng, n, d):
    X = rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1)[:, None]


def _pm1(rng, n):
    return np.where(rng.random(n) < 0.5, 1.0, -1.0)


def _cp_lower(k, n):
    return float(audit.clopper_pearson(k, n, ALPHA)[0])


def _cp_upper(k, n):
    return float(audit.clopper_pearson(k, n, ALPHA)[1])


def _log_term_bound(rep, X, y):
    """The report's log-term bound, recomputed by hand (module docstring)."""
    z = X @ rep.theta
    c2 = rep.loss.d2(z, y)
    xx = np.einsum("ij,ij->i", X, X)
    a = c2 * rep.leverage_bound(X)
    with np.errstate(divide="ignore"):
        t1 = np.where(a < 1, -np.log1p(-np.minimum(a, 1 - 1e-300)), np.inf)
    return np.minimum(t1, np.log1p(c2 * xx / np.maximum(rep.lam, rep.lambda_lower - c2 * xx)))


# ============================================================ coverage: cross term
def test_coverage_cross_term_dominates_and_the_missing_absolute_value_fails():
    # lam large (log term ~ 0), sigma small: the cross term c1 x^T b / sigma^2 dominates and the
    # data-independent bound is nearly tight, so its failure rate is close to rho/2 (one tail).
    # N = 300 keeps the power: the failure rates of the bound without |.| are 0.41-0.47, Clopper-
    # Pearson lower limits >= 0.31 against rho = 0.2 (>= 9 binomial standard errors above rho)
    rng = np.random.default_rng(11)
    n, d, rho, N, sig, sg = 40, 4, 0.2, 300, 1.0, 0.05
    X, y = _unit_rows(rng, n, d), _pm1(rng, n)
    tx, ty = _unit_rows(rng, 3, d), _pm1(rng, 3)
    # three non-members and three members, one call each
    ax, ay = np.vstack([tx, X[:3]]), np.concatenate([ty, y[:3]])
    member = np.repeat([False, True], 3)
    fails = {"independent": np.zeros(3), "gradient": np.zeros(3), "gradient_members": np.zeros(3),
             "no_abs": np.zeros(3)}
    for _ in range(N):
        fit = objpert.objpert_fit(X, y, "logistic", lam=50.0, sigma=sig, rng=rng)
        at = objpert.released_state_nonprivate(fit, X, y)  # the loss at the released point
        e_all = objpert.ex_post_pdp(at, X, y, ax, ay, member=member)
        e1, em = e_all[:3], e_all[3:]
        rep0 = report.privacy_report(fit, X, y, method="data-independent", rho=rho)
        fails["independent"] += rep0.epsilon_bound(tx, ty) < e1
        rep = report.privacy_report(fit, X, y, method="data-dependent", rho=rho, sigma_gradient=sg,
                                    sigma_hessian=0.5, rng=rng)
        b_all = rep.epsilon_bound(ax, ay)
        b = b_all[:3]
        fails["gradient"] += b < e1
        fails["gradient_members"] += b_all[3:] < em
        # Alg 4 as printed: g-bar = f' g^T x + sigma_2 |f'| ||x|| z, without |.|
        z = tx @ fit.theta_released
        c1 = logistic.d1(z, ty)
        q = -special.ndtri(rep.rho_parts["cross"] / 4)
        nrm = np.linalg.norm(tx, axis=1)
        right = np.minimum(sig * np.abs(c1) * nrm * q,
                           np.abs(c1 * (tx @ rep.gradient_release)) + sg * q * np.abs(c1) * nrm) / sig**2
        wrong = np.minimum(sig * np.abs(c1) * nrm * q,
                           c1 * (tx @ rep.gradient_release) + sg * q * np.abs(c1) * nrm) / sig**2
        fails["no_abs"] += (b - right + wrong) < e1
    for key in ("independent", "gradient", "gradient_members"):
        assert max(_cp_lower(k, N) for k in fails[key]) <= rho, (key, fails[key] / N)
    # the data-independent bound is nearly tight here: failures do happen (the test can fail)
    assert fails["independent"].sum() > 0
    assert min(_cp_lower(k, N) for k in fails["no_abs"]) > rho, fails["no_abs"] / N


# =========================================================== coverage: log term
def test_coverage_members_log_term_and_the_printed_log1p_fails():
    # few rows, tiny lam, squared loss with nearly interpolated labels: the members' log term
    # -log(1 - mu) dominates; small sigma_gradient makes the cross term nearly exact. N = 200:
    # the printed log1p fails at rates 0.20-0.56 (largest Clopper-Pearson lower limit 0.44
    # against rho = 0.1), the report's bounds at <= 0.015 (upper limits <= 0.07)
    rng = np.random.default_rng(5)
    n, d, lam, sigma, rho, N = 4, 3, 0.01, 0.01, 0.1, 200
    X = _unit_rows(rng, n, d)
    y = X @ rng.normal(size=d)
    fails = {m: np.zeros(n) for m in ("data-dependent", "adaptive", "printed")}
    tau_h = goe.goe_norm_bound(d, rho=rho / 2)
    for _ in range(N):
        fit = objpert.objpert_fit(X, y, "squared", lam=lam, sigma=sigma, rng=rng)
        e1 = objpert.ex_post_pdp(objpert.released_state_nonprivate(fit, X, y), X, y, X, y, member=True)
        rep = report.privacy_report(fit, X, y, method="data-dependent", rho=rho, sigma_gradient=1e-3,
                                    sigma_hessian=lam / (2 * tau_h), rng=rng)
        b = rep.epsilon_bound(X, y)
        fails["data-dependent"] += b < e1
        rep_a = report.privacy_report(fit, X, y, method="adaptive", rho=rho, sigma_gradient=1e-3,
                                      sigma_hessian=lam / 10, sigma_lambda_min=1e-3, rng=rng)
        fails["adaptive"] += rep_a.epsilon_bound(X, y) < e1
        # the public draft's Alg 2: |-log(1 + f'' mu-bar)| for everybody
        c2 = squared.d2(X @ fit.theta_released, y)
        printed = b - _log_term_bound(rep, X, y) + np.log1p(c2 * rep.leverage_bound(X))
        fails["printed"] += printed < e1
    assert max(_cp_upper(k, N) for k in fails["data-dependent"]) <= rho
    assert max(_cp_upper(k, N) for k in fails["adaptive"]) <= rho
    assert max(_cp_lower(k, N) for k in fails["printed"]) > rho, fails["printed"] / N


def test_uniform_variants_cover_all_targets_jointly_and_per_target_bounds_do_not():
    # N = 200: the per-target bound fails for some target in 64% of the draws (Clopper-Pearson
    # lower limit 0.52 against rho = 0.2), the uniform variants in <= 2.5% (lower limits <= 0.003)
    rng = np.random.default_rng(2)
    n, d, m, rho, N = 30, 3, 40, 0.2, 200
    X, y = _unit_rows(rng, n, d), _pm1(rng, n)
    tx, ty = _unit_rows(rng, m, d), _pm1(rng, m)
    anyfail = {"per-target": 0, "uniform": 0, "domain": 0, "uniform-grad": 0}
    for _ in range(N):
        fit = objpert.objpert_fit(X, y, "logistic", lam=50.0, sigma=0.3, rng=rng)
        e1 = objpert.ex_post_pdp(objpert.released_state_nonprivate(fit, X, y), X, y, tx, ty, member=False)
        rep = report.privacy_report(fit, X, y, method="data-independent", rho=rho)
        anyfail["per-target"] += bool(np.any(rep.epsilon_bound(tx, ty) < e1))
        anyfail["uniform"] += bool(np.any(rep.epsilon_bound(tx, ty, uniform=True) < e1))
        anyfail["domain"] += bool(np.any(rep.epsilon_bound(tx, ty, uniform="domain") < e1))
        rep_g = report.privacy_report(fit, X, y, method="data-dependent", rho=rho, sigma_gradient=0.05,
                                      sigma_hessian=0.5, rng=rng)
        anyfail["uniform-grad"] += bool(np.any(rep_g.epsilon_bound(tx, ty, uniform=True) < e1))
    for key in ("uniform", "domain", "uniform-grad"):
        assert _cp_lower(anyfail[key], N) <= rho, (key, anyfail[key] / N)
    assert _cp_lower(anyfail["per-target"], N) > rho, anyfail["per-target"] / N


# ================================================================ leverage bound
def test_leverage_bound_worst_direction_and_chiani_tau_fails():
    # rows ~ 0: H = lam I (+1e-12), lam = 2 tau sigma_H exactly; worst direction = the top
    # eigenvector of the release, where 3/2 x^T H-hat^-1 x is smallest relative to x^T H^-1 x.
    # N = 500: Chiani's tau/sqrt 2 fails at rate 0.58 (Clopper-Pearson lower limit 0.51 against
    # rho = 0.2, and against rho/4); the report's bound at 0.064 (lower limit 0.034 <= rho/4)
    rng = np.random.default_rng(3)
    d, rho, N = 8, 0.2, 500
    X, y = 1e-6 * _unit_rows(rng, 5, d), _pm1(rng, 5)
    tau = goe.goe_norm_bound(d, rho=rho / 2)
    s_h = 1.0
    lam = 2 * tau * s_h
    fit = objpert.objpert_fit(X, y, "logistic", lam=lam, sigma=1.0, rng=rng)
    Hess = (X.T * logistic.d2(X @ fit.theta_released, y)) @ X + lam * np.eye(d)
    Hinv = np.linalg.inv(Hess)
    fails = wrong = 0
    s_wrong = math.sqrt(2.0) * s_h  # allowed by tau/sqrt 2: lam = 2 (tau/sqrt 2) s_wrong
    for _ in range(N):
        rep = report.privacy_report(fit, X, y, method="data-dependent", rho=rho, sigma_hessian=s_h, rng=rng)
        u = np.linalg.eigh(rep.hessian_release)[1][:, -1]
        fails += rep.leverage_bound(u) < u @ Hinv @ u
        Hw = analyze_gauss.analyze_gauss(Hess, sigma=s_wrong, rng=rng)
        w = np.linalg.eigh(Hw)[1][:, -1]
        wrong += min(1.5 * w @ np.linalg.solve(Hw, w), 1.0 / lam) < w @ Hinv @ w
    assert _cp_lower(fails, N) <= rho / 4  # P(lambda_max(G) > tau sigma_H) = rho_H / 2 = rho / 4 exactly
    assert fails > 0  # the worst direction does fail sometimes: the bound is tight
    assert _cp_lower(wrong, N) > rho, wrong / N
    with pytest.raises(ValueError, match="lam"):
        report.privacy_report(fit, X, y, method="data-dependent", rho=rho, sigma_hessian=s_wrong, rng=rng)


def test_data_dependent_refuses_small_lam_and_releases_nothing():
    rng = np.random.default_rng(0)
    X, y = _unit_rows(rng, 20, 3), _pm1(rng, 20)
    fit = objpert.objpert_fit(X, y, "logistic", lam=1.0, sigma=1.0, rng=1)
    gen = np.random.default_rng(7)
    state = json.dumps(gen.bit_generator.state)
    with pytest.raises(ValueError, match="lam"):
        report.privacy_report(fit, X, y, method="data-dependent", sigma_hessian=1.0, sigma_gradient=1.0, rng=gen)
    assert json.dumps(gen.bit_generator.state) == state  # no noise was drawn
    # the adaptive report works at any lam (regularized estimator)
    rep = report.privacy_report(fit, X, y, method="adaptive", sigma_hessian=1.0, sigma_lambda_min=1.0, rng=gen)
    assert rep.estimator == "regularized"


# ======================================================= recomputed from releases
@pytest.mark.parametrize("method", ["data-independent", "data-dependent", "adaptive"])
def test_bounds_recomputed_by_hand_from_the_published_dict(method):
    rng = np.random.default_rng(4)
    n, d, m = 300, 5, 50
    X, y = _unit_rows(rng, n, d), _pm1(rng, n)
    tx, ty = _unit_rows(rng, m, d), _pm1(rng, m)
    fit = objpert.objpert_fit(X, y, "logistic", lam=20.0, sigma=1.0, rng=rng)
    kw = {"data-independent": {}, "data-dependent": dict(sigma_hessian=0.5, sigma_gradient=2.0),
          "adaptive": dict(sigma_hessian=0.5, sigma_gradient=2.0, sigma_lambda_min=0.5)}[method]
    rep = report.privacy_report(fit, X, y, method=method, rho=0.05, rng=rng, **kw)
    pub = json.loads(json.dumps(rep.to_dict()))
    assert set(pub) == {"format", "version", "method", "rho", "theta", "lam", "sigma", "loss", "sigma_gradient",
                        "sigma_hessian", "sigma_lambda_min", "gradient_release", "hessian_release",
                        "lambda_min_release"}
    rep2 = report.PrivacyReport.from_dict(pub)
    for u in (False, True, "domain"):
        np.testing.assert_array_equal(rep2.epsilon_bound(tx, ty, uniform=u), rep.epsilon_bound(tx, ty, uniform=u))
    # by hand, from the dict only
    theta, lam, sigma, rho = np.array(pub["theta"]), pub["lam"], pub["sigma"], pub["rho"]
    z = tx @ theta
    c1, c2 = logistic.d1(z, ty), logistic.d2(z, ty)
    xx = np.sum(tx * tx, axis=1)
    k = {"data-independent": 1, "data-dependent": 2, "adaptive": 3}[method]
    rc = rho / k
    if method == "data-independent":
        lam_lo, mubar = lam, xx / lam
    else:
        Hh = np.array(pub["hessian_release"])
        tau_s = goe.goe_lambda1_isf(rc / 2, d=d) * pub["sigma_hessian"]
        if method == "data-dependent":
            lam_lo, M, fac = lam, Hh, 1.5
        else:
            lam_lo = max(lam, pub["lambda_min_release"] - pub["sigma_lambda_min"] * stats.norm.isf(rc))
            assert lam_lo >= 2 * tau_s  # this data set is well conditioned: the standard estimator
            M, fac = Hh, (lam_lo + tau_s) / lam_lo
        mubar = np.minimum(fac * np.einsum("ij,jk,ik->i", tx, np.linalg.inv(M), tx), xx / lam_lo)
    np.testing.assert_allclose(rep.leverage_bound(tx), mubar, rtol=1e-10)
    t1 = np.minimum(-np.log(1 - c2 * mubar), np.log(1 + c2 * xx / np.maximum(lam, lam_lo - c2 * xx)))
    if method == "data-independent":
        cross = sigma * np.abs(c1) * np.sqrt(xx) * stats.norm.isf(rc / 2)
    else:
        q = stats.norm.isf(rc / 4)
        cross = np.minimum(sigma * np.abs(c1) * np.sqrt(xx) * q,
                           np.abs(c1 * (tx @ np.array(pub["gradient_release"])))
                           + pub["sigma_gradient"] * np.abs(c1) * np.sqrt(xx) * q)
    hand = t1 + c1**2 * xx / (2 * sigma**2) + cross / sigma**2
    np.testing.assert_allclose(rep.epsilon_bound(tx, ty), hand, rtol=1e-10)
    assert rep.epsilon_bound(tx[0], ty[0]) == pytest.approx(hand[0], rel=1e-10)
    if method == "data-independent":
        # Thm 8 (sharp log term) + Thm 9: the objpert module's bounds
        ref = np.log1p(c2 * xx / lam) + gaussian.gaussian_ex_post_bound(np.abs(c1) * np.sqrt(xx), sigma=sigma,
                                                                       rho=rho)
        np.testing.assert_allclose(rep.epsilon_bound(tx, ty), ref, rtol=1e-10)
        ref_dom = objpert.pdp_bound_data_independent("logistic", tx, lam=lam, sigma=sigma, rho=rho, theta=theta,
                                                     target_y=ty, sharp=True)
        np.testing.assert_allclose(rep.epsilon_bound(tx, ty, uniform="domain"), ref_dom, rtol=1e-12)


def test_general_bound_equals_the_glm_bound_on_glm_targets_and_covers_eps1():
    rng = np.random.default_rng(8)
    n, d, m = 200, 4, 30
    X, y = _unit_rows(rng, n, d), _pm1(rng, n)
    fit = objpert.objpert_fit(X, y, "logistic", lam=10.0, sigma=0.5, rng=rng)
    rep = report.privacy_report(fit, X, y, method="adaptive", sigma_hessian=0.3, sigma_gradient=0.2,
                                sigma_lambda_min=0.3, rng=rng)
    tx, ty = X[:m], y[:m]
    z = tx @ fit.theta_released
    g = logistic.d1(z, ty)[:, None] * tx
    G = logistic.d2(z, ty)[:, None, None] * np.einsum("ij,ik->ijk", tx, tx)
    np.testing.assert_allclose(rep.epsilon_bound_general(g, G, uniform="domain"),
                               rep.epsilon_bound(tx, ty, uniform="domain"), rtol=1e-9)
    general = rep.epsilon_bound_general(g, G)
    at_release = objpert.released_state_nonprivate(fit, X, y)
    assert np.all(general >= objpert.ex_post_pdp_general(at_release, X, y, g, G, member=True))
    assert np.all(general >= rep.epsilon_bound(tx, ty) * (1 - 1e-12))  # l1 cross term >= l2 one
    with pytest.raises(ValueError, match="symmetric"):
        rep.epsilon_bound_general(g[0], G[0] + np.triu(np.ones((d, d)), 1))


# ============================================================== release noise
def test_release_noise_by_chi_square():
    rng = np.random.default_rng(9)
    n, d, N = 50, 4, 400
    X, y = _unit_rows(rng, n, d), _pm1(rng, n)
    fit = objpert.objpert_fit(X, y, "logistic", lam=5.0, sigma=1.0, rng=rng)
    z = X @ fit.theta_released  # the report's statistics are those of the released point
    grad = X.T @ logistic.d1(z, y) + 5.0 * fit.theta_released
    H = (X.T * logistic.d2(z, y)) @ X + 5.0 * np.eye(d)
    lmin = np.linalg.eigvalsh(H)[0]
    sg, sh, sl = 0.7, 0.3, 0.2
    eg, eh_off, eh_diag, el = [], [], [], []
    for _ in range(N):
        rep = report.privacy_report(fit, X, y, method="adaptive", sigma_gradient=sg, sigma_hessian=sh,
                                    sigma_lambda_min=sl, rng=rng)
        eg.append((rep.gradient_release - grad) / sg)
        E = (rep.hessian_release - H) / sh
        eh_off.append(E[np.triu_indices(d, 1)])
        eh_diag.append(np.diag(E) / math.sqrt(2.0))  # Alg 6: diagonal variance 2 sigma^2
        el.append((rep.lambda_min_release - lmin) / sl)

    def pval(v):
        s = float(np.sum(np.square(v)))
        k = np.size(v)
        return 2 * min(stats.chi2.cdf(s, k), stats.chi2.sf(s, k))

    for v in (eg, eh_off, eh_diag, el):
        assert pval(v) > 1e-3
    # the tester: the classic Analyze-Gauss normalization (diagonal variance sigma^2) is rejected
    assert pval(np.array(eh_diag) * math.sqrt(2.0)) < 1e-6


# ================================================================== accounting
def _tight_eps_by_root(mu, delta):
    f = lambda e: stats.norm.cdf(mu / 2 - e / mu) - math.exp(e) * stats.norm.cdf(-mu / 2 - e / mu) - delta  # noqa: E731
    return optimize.brentq(f, 0.0, 100.0, xtol=1e-13)


def test_overhead_and_dp_epsilon_by_hand_formulas():
    rng = np.random.default_rng(1)
    n, d = 100, 3
    X, y = _unit_rows(rng, n, d), _pm1(rng, n)
    fit = objpert.objpert_fit(X, y, "logistic", lam=5.0, sigma=1.0, rng=rng)
    sg, sh, sl, delta = 0.8, 0.6, 0.9, 1e-5
    rep = report.privacy_report(fit, X, y, method="adaptive", sigma_gradient=sg, sigma_hessian=sh,
                                sigma_lambda_min=sl, rng=rng)
    tx, ty = 0.7 * _unit_rows(rng, 4, d), _pm1(rng, 4)
    assert np.array_equal(rep.theta, fit.theta_released)  # the report is computed at the release
    z = tx @ fit.theta_released
    c1, c2 = np.abs(logistic.d1(z, ty)), logistic.d2(z, ty)
    xx = np.sum(tx * tx, axis=1)
    mu = np.sqrt((c1 * np.sqrt(xx) / sg) ** 2 + (c2 * xx / math.sqrt(2) / sh) ** 2 + (c2 * xx / sl) ** 2)
    np.testing.assert_allclose(rep.overhead_pdp(tx, ty, delta), [_tight_eps_by_root(v, delta) for v in mu],
                               rtol=1e-9)
    c = math.sqrt(2 * math.log(3 / delta))
    src = ((c1**2 * xx / (2 * sg**2) + c1 * np.sqrt(xx) * c / sg)  # Thm 14 at delta/3
           + ((c2 * xx) ** 2 / (4 * sh**2) + c2 * xx * c / (math.sqrt(2) * sh))  # Thm 17
           + ((c2 * xx) ** 2 / (2 * sl**2) + c2 * xx * c / sl))  # Thm 11
    np.testing.assert_allclose(rep.overhead_pdp(tx, ty, delta, accounting="source"), src, rtol=1e-12)
    # DP: L = 1, beta = 1/4 for the logistic loss, rows of norm <= R
    R = 2.0
    muw = math.sqrt((R / sg) ** 2 + (R * R / 4 / math.sqrt(2) / sh) ** 2 + (R * R / 4 / sl) ** 2)
    assert rep.dp_epsilon(delta, norm_bound=R) == pytest.approx(_tight_eps_by_root(muw, delta), rel=1e-9)
    b = R * R / 4
    src_dp = (R**2 / (2 * sg**2) + R * c / sg + b**2 / (4 * sh**2) + b * c / (math.sqrt(2) * sh)
              + b**2 / (2 * sl**2) + b * c / sl)
    assert rep.dp_epsilon(delta, norm_bound=R, accounting="source") == pytest.approx(src_dp, rel=1e-12)
    assert rep.dp_epsilon(delta) < rep.dp_epsilon(delta, accounting="source")
    rep0 = report.privacy_report(fit, X, y, method="data-independent")
    assert rep0.dp_epsilon(delta) == 0.0 and np.all(rep0.overhead_pdp(tx, ty, delta) == 0.0)


@pytest.mark.parametrize("accounting", ["gaussian", "source"])
@pytest.mark.parametrize("method", ["data-dependent", "adaptive"])
def test_calibrate_report_inverts_dp_epsilon_on_the_safe_side(method, accounting):
    eps, delta = 0.7, 1e-6
    cal = report.calibrate_report(eps, delta, method=method, norm_bound=1.5, accounting=accounting,
                                  weights=None)
    assert (cal["sigma_lambda_min"] is None) == (method == "data-dependent")
    rng = np.random.default_rng(0)
    X, y = 1.5 * _unit_rows(rng, 30, 3), _pm1(rng, 30)
    fit = objpert.objpert_fit(X, y, "logistic", lam=100.0, sigma=1.0, rng=0, norm_bound=1.5)
    rep = report.privacy_report(fit, X, y, method=method, rng=0, **cal)
    got = rep.dp_epsilon(delta, norm_bound=1.5, accounting=accounting)
    assert eps * (1 - 1e-9) <= got <= eps
    if accounting == "gaussian":  # equal weights: equal normalized sensitivities
        w = report.calibrate_report(eps, delta, method=method, weights={"hessian": 3.0, "gradient": 1.0,
                                                                           **({"lambda_min": 1.0} if method == "adaptive" else {})})
        assert w["sigma_hessian"] < cal["sigma_hessian"]
    nograd = report.calibrate_report(eps, delta, method=method, weights={"hessian": 1.0, "lambda_min": 1.0}
                                     if method == "adaptive" else {"hessian": 1.0})
    assert nograd["sigma_gradient"] is None


def test_total_privacy_basic_pld_and_kifer():
    from pdpkit import accounting

    rng = np.random.default_rng(0)
    X, y = _unit_rows(rng, 30, 3), _pm1(rng, 30)
    fit = objpert.objpert_fit(X, y, "logistic", lam=2.0, sigma=3.0, rng=0)
    rep = report.privacy_report(fit, X, y, method="data-dependent", sigma_hessian=0.02, sigma_gradient=5.0, rng=0)
    eps, delta = report.total_privacy(rep, delta_model=1e-6, delta_report=1e-6)
    em = float(accounting.objpert_epsilon(1e-6, L=1.0, beta=0.25, lam=2.0, sigma=3.0, sharp=True))
    assert delta == 2e-6 and eps == pytest.approx(em + rep.dp_epsilon(1e-6), rel=1e-12)
    ek, _ = report.total_privacy(rep, delta_model=1e-6, delta_report=1e-6, form="kifer")
    assert ek == pytest.approx(objpert.objpert_epsilon_classic(1e-6, L=1.0, beta=0.25, lam=2.0, sigma=3.0, form="kifer")
                               + rep.dp_epsilon(1e-6), rel=1e-12)
    ep, dp = report.total_privacy(rep, delta_model=1e-6, delta_report=1e-6, composition="pld")
    assert dp == 2e-6 and ep < eps
    # the composed PLD is at least the report alone and the model alone
    assert ep > max(em, rep.dp_epsilon(2e-6)) - 1e-3


# ======================================================================= audit
def test_release_mechanism_audited_on_a_worst_case_pair():
    # D' = D + z with z at the worst margin of the logistic Hessian (x^T theta = 0): the joint
    # release (gradient, Hessian, lambda_min) is audited against the claimed pDP profile
    rng = np.random.default_rng(12)
    d = 2
    X, y = _unit_rows(rng, 6, d), _pm1(rng, 6)
    theta = np.array([0.3, -0.2])
    zx = np.array([-theta[1], theta[0]]) / np.linalg.norm(theta)  # x^T theta = 0: c2 = 1/4, |c1| = 1/2
    zy = 1.0
    Xp, yp = np.vstack([X, zx]), np.append(y, zy)

    def stats_of(Xd, yd):
        t = Xd @ theta
        return Xd.T @ logistic.d1(t, yd) + theta, (Xd.T * logistic.d2(t, yd)) @ Xd + np.eye(d)

    g0, H0 = stats_of(X, y)
    g1, H1 = stats_of(Xp, yp)
    l0, l1 = np.linalg.eigvalsh(H0)[0], np.linalg.eigvalsh(H1)[0]
    sg, sh, sl = 0.5, 0.1, 0.2
    rep = report.PrivacyReport(method="adaptive", rho=0.05, theta=theta, lam=1.0, sigma=1.0, loss="logistic",
                               sigma_gradient=sg, sigma_hessian=sh, sigma_lambda_min=sl, gradient_release=g0,
                               hessian_release=H0, lambda_min_release=l0)
    iu = np.triu_indices(d, 1)

    def sampler(g, H, lm):
        def draw(m, gen):
            out = np.empty((m, d + d * d + 1))
            out[:, :d] = g + sg * gen.standard_normal((m, d))
            out[:, d:d + d * d] = (H + goe.goe_matrix(d, sigma=sh, size=m, rng=gen)).reshape(m, -1)
            out[:, -1] = lm + sl * gen.standard_normal(m)
            return out
        return draw

    def loss_stat(o):  # exact privacy loss log p_D(o) / p_D'(o)
        lg = (np.sum((o[:, :d] - g1) ** 2, 1) - np.sum((o[:, :d] - g0) ** 2, 1)) / (2 * sg**2)
        lh = analyze_gauss.analyze_gauss_privacy_loss(o[:, d:d + d * d].reshape(-1, d, d), H0, H1, sigma=sh)
        ll = ((o[:, -1] - l1) ** 2 - (o[:, -1] - l0) ** 2) / (2 * sl**2)
        return lg + lh + ll

    eps_grid = np.array([0.5, 1.0, 1.5])
    mu = math.sqrt((0.5 / sg) ** 2 + (0.25 / math.sqrt(2) / sh) ** 2 + (0.25 / sl) ** 2)
    claimed = gaussian.gaussian_delta(eps_grid, sensitivity=mu, sigma=1.0)
    # the report's own claim at those deltas is the same profile
    np.testing.assert_allclose([rep.overhead_pdp(zx, zy, dl) for dl in claimed], eps_grid, rtol=1e-8)
    kw = dict(n_samples=40_000, alpha=1e-3, rng=rng)
    res = audit.audit_delta_curve(sampler(g0, H0, l0), sampler(g1, H1, l1), loss_stat, eps_grid, eps_grid,
                                  claimed, **kw)
    assert res.passed
    # the tester: a claim that forgets the Hessian and lambda_min releases is refuted
    too_small = gaussian.gaussian_delta(eps_grid, sensitivity=0.5 / sg, sigma=1.0)
    res_bad = audit.audit_delta_curve(sampler(g0, H0, l0), sampler(g1, H1, l1), loss_stat, eps_grid, eps_grid,
                                      too_small, **kw)
    assert not res_bad.passed


# ================================================================= bad inputs
def test_bad_inputs():
    rng = np.random.default_rng(0)
    X, y = _unit_rows(rng, 20, 3), _pm1(rng, 20)
    fit = objpert.objpert_fit(X, y, "logistic", lam=20.0, sigma=1.0, rng=0)
    ok = dict(method="data-dependent", sigma_hessian=0.5)
    with pytest.raises(TypeError, match="ObjPertResult"):
        report.privacy_report({"theta": fit.theta}, X, y, **ok)
    with pytest.raises(ValueError, match="method"):
        report.privacy_report(fit, X, y, method="magic", sigma_hessian=0.5)
    for rho in (0.0, 1.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="rho"):
            report.privacy_report(fit, X, y, rho=rho, **ok)
    for s in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="sigma_hessian"):
            report.privacy_report(fit, X, y, method="data-dependent", sigma_hessian=s)
        with pytest.raises(ValueError, match="sigma_gradient"):
            report.privacy_report(fit, X, y, sigma_gradient=s, **ok)
        with pytest.raises(ValueError, match="sigma_lambda_min"):
            report.privacy_report(fit, X, y, method="adaptive", sigma_hessian=0.5, sigma_lambda_min=s)
    with pytest.raises(ValueError, match="sigma_hessian"):
        report.privacy_report(fit, X, y, method="data-dependent")
    with pytest.raises(ValueError, match="sigma_lambda_min"):
        report.privacy_report(fit, X, y, method="adaptive", sigma_hessian=0.5)
    with pytest.raises(ValueError, match="sigma_hessian"):
        report.privacy_report(fit, X, y, method="data-independent", sigma_hessian=0.5)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        report.privacy_report(fit, Xn, y, **ok)
    with pytest.raises(ValueError):
        report.privacy_report(fit, X[:-1], y[:-1], **ok)
    with pytest.raises(ValueError, match="y"):
        report.privacy_report(fit, X, y[:-1], **ok)
    with pytest.raises(ValueError, match="fitted"):
        report.privacy_report(fit, X[::-1] * 0.5, y, **ok)
    rep = report.privacy_report(fit, X, y, rng=0, **ok)
    bad = X[:3].copy()
    bad[1, 2] = np.inf
    with pytest.raises(ValueError, match="target_x"):
        rep.epsilon_bound(bad, y[:3])
    with pytest.raises(ValueError, match="target_x"):
        rep.leverage_bound(bad)
    with pytest.raises(ValueError, match="target_x"):
        rep.epsilon_bound(X[:3, :2], y[:3])
    with pytest.raises(ValueError, match="target_y"):
        rep.epsilon_bound(X[:3], y[:2])
    with pytest.raises(ValueError, match="target_y"):
        rep.epsilon_bound(X[:3], np.array([1.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="uniform"):
        rep.epsilon_bound(X[:3], y[:3], uniform="all")
    with pytest.raises(ValueError, match="accounting"):
        rep.dp_epsilon(1e-5, accounting="rdp")
    with pytest.raises(ValueError, match="delta"):
        rep.overhead_pdp(X[:3], y[:3], 0.0)
    with pytest.raises(ValueError, match="norm_bound"):
        rep.dp_epsilon(1e-5, norm_bound=0.0)
    with pytest.raises(dataclass_error()):
        rep.rho = 0.1
    with pytest.raises(TypeError):
        rep.rho_parts["cross"] = 1.0
    with pytest.raises(ValueError, match="method"):
        report.rho_parts(0.1, method="x")
    assert report.rho_parts(0.3, method="adaptive") == pytest.approx({"cross": 0.1, "hessian": 0.1,
                                                                      "lambda_min": 0.1})
    with pytest.raises(ValueError, match="eps"):
        report.calibrate_report(0.0, 1e-5, method="adaptive")
    with pytest.raises(ValueError, match="weights"):
        report.calibrate_report(1.0, 1e-5, method="data-dependent", weights={"lambda_min": 1.0, "hessian": 1.0})
    with pytest.raises(ValueError, match="gradient"):
        report.calibrate_report(1.0, 1e-5, method="data-dependent", loss="squared")
    with pytest.raises(TypeError, match="PrivacyReport"):
        report.total_privacy(fit, delta_model=1e-6, delta_report=1e-6)
    with pytest.raises(ValueError, match="kind"):
        report.plot_report([1.0, 2.0], kind="pie")
    with pytest.raises(ValueError, match="version"):
        report.PrivacyReport.from_dict({"format": "other"})
    tampered = rep.to_dict()
    tampered["hessian_release"][0][1] += 1.0
    with pytest.raises(ValueError, match="symmetric"):
        report.PrivacyReport.from_dict(tampered)


def dataclass_error():
    import dataclasses

    return dataclasses.FrozenInstanceError


def test_report_coverage_and_plot_report_smoke():
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.default_rng(0)
    X, y = _unit_rows(rng, 20, 2), _pm1(rng, 20)
    cov = report.report_coverage(X, y, "logistic", X[:5], y[:5], member=True, lam=20.0, sigma=1.0,
                                 method="data-independent", rho=0.1, n_trials=20, rng=1)
    assert cov["trials"] == 20 and cov["failures"].shape == (5,) and 0 <= cov["max_ci_upper"] <= 1
    assert cov["median_ratio"] >= 1.0
    for kind in ("hist", "cdf", "ratio"):
        fig, ax = report.plot_report([1.0, 2.0, 3.0], [0.5, 1.0, 2.5], kind=kind)
        assert ax.get_xlabel() and ax.get_ylabel()
        import matplotlib.pyplot as plt

        plt.close(fig)
