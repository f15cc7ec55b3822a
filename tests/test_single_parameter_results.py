"""Alg 1 / Lemma 2.5, the source's route to the certificate, the printed (14), and the accuracy rates (Asi, Duchi & Talwar)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from pdpkit import single
from pdpkit import stability as st
from pdpkit.experiments import single_parameter as ex
from pdpkit.gaussian import gaussian_sigma
from pdpkit.losses import robust_log

# ------------------------------------------------------------------ Alg 1 / Lemma 2.5
E0, D0, E1, D1 = 0.5, 1e-3, 1.0, 1e-5


def _exact_delta(pair, T, eps_tot, sig):
    """Exact hockey stick at eps_tot of the toy Alg 1's output (m0, M1 or ⊥), by quadrature."""
    (ka, tha), (kb, thb) = pair
    lap = lambda m, c: 0.5 * E0 * math.exp(-E0 * abs(m - c))

    def gauss(e, shift):
        mu = abs(shift) / sig
        if mu == 0:
            return max(0.0, 1 - math.exp(e))
        return stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2)

    rej = integrate.quad(lambda m: max(0.0, lap(m, ka) - math.exp(eps_tot) * lap(m, kb)), -80, T,
                         points=[ka, kb], limit=200)[0]
    acc = integrate.quad(lambda m: lap(m, ka) * gauss(eps_tot - math.log(lap(m, ka) / lap(m, kb)), thb - tha),
                         T, T + 80, limit=200)[0]
    return max(0.0, rej) + acc


def test_lemma_2_5_budget_against_exact_privacy_loss_and_a_bad_test_fails():
    eps_tot, delta_tot = single.gated_release_budget(test_eps=E0, test_delta=D0, release_eps=E1, release_delta=D1)
    assert eps_tot == E0 + E1 and delta_tot == pytest.approx(math.exp(E0) * D0 + D1, rel=1e-15)
    sig = float(gaussian_sigma(E1, D1, sensitivity=1.0))
    T_ok = 1 + math.log(1 / (2 * D0)) / E0
    pairs = [((1, 0.0), (0, 1e3)), ((0, 1e3), (1, 0.0)), ((2, 0.0), (1, 1.0)), ((1, 1.0), (2, 0.0))]
    good = [_exact_delta(p, T_ok, eps_tot, sig) for p in pairs]
    assert max(good) <= delta_tot
    assert max(good) >= 0.5 * D0  # not vacuous: the good/bad pair spends about delta_0
    bad = [_exact_delta(p, 1.0, eps_tot, sig) for p in pairs]  # a test that ignores delta_0
    assert max(bad) > 100 * delta_tot


def test_release_if_accepted_runs_the_scheme_and_validates():
    T = 1 + math.log(1 / (2 * D0)) / E0
    calls = []
    rel = lambda D, m, g: calls.append(m) or D["theta"] + g.standard_normal()
    kw = dict(test_eps=E0, test_delta=D0, release_eps=E1, release_delta=D1)
    out = single.release_if_accepted({"k": 60, "theta": 0.0}, lambda D, g: D["k"] + g.laplace(scale=1 / E0),
                                     lambda m: m >= T, rel, rng=1, **kw)
    assert out.released and calls == [out.test_output] and isinstance(out.value, float)
    out0 = single.release_if_accepted({"k": -5, "theta": 0.0}, lambda D, g: D["k"] + g.laplace(scale=1 / E0),
                                      lambda m: m >= T, rel, rng=1, **kw)
    assert not out0.released and out0.value is None and len(calls) == 1
    assert "⊥" in repr(out0) and "0.0" not in repr(out0).split("eps")[0]
    a = single.release_if_accepted({"k": 60, "theta": 0.0}, lambda D, g: g.random(), lambda m: True,
                                   lambda D, m, g: g.random(), rng=np.random.default_rng(3), **kw)
    b = single.release_if_accepted({"k": 60, "theta": 0.0}, lambda D, g: g.random(), lambda m: True,
                                   lambda D, m, g: g.random(), rng=3, **kw)
    assert (a.test_output, a.value) == (b.test_output, b.value)
    with pytest.raises(TypeError, match="test must be callable"):
        single.release_if_accepted({}, 1.0, lambda m: True, rel, **kw)
    with pytest.raises(ValueError, match="test_delta"):
        single.gated_release_budget(test_eps=1.0, test_delta=1.5, release_eps=1.0, release_delta=1e-6)
    with pytest.raises(TypeError):
        single.gated_release_budget(1.0, 1e-3, 1.0, 1e-6)  # keyword-only


# ------------------------------------------------------------------ (14) as printed
def _literal_14a(eig0, eig1, n, r, consts):
    """(13)-(14a) typed again from the source (averaged convention), independently of the module."""
    al, h2 = consts.alpha, consts.loss.smoothness
    lam0, lam1 = eig0 / n, eig1 / n
    tau_avg = 2 * consts.G0 / n  # replace-one
    t = (1 - math.sqrt(1 - 4 * al * r * tau_avg / lam0)) / (2 * al * r)
    R0 = float(st.qsc_lambda_min_recursion(consts)(eig0)) / n
    t1 = (1 - math.sqrt(1 - 4 * al * r * tau_avg / R0)) / (2 * al * r)
    beta = h2 / (1 - al * t) * r**2 / (n * lam0)
    gam, gam1 = al * r * t, al * r * t1
    s1 = 1 / (1 - al * r * t) - 1
    s2 = h2 / (n * (1 - beta) * (1 - al * r * t))
    kap = lam1 / lam0
    up = (1 + kap * gam / (1 + gam)) / (1 - kap * (s1 + s2 * r))
    lo = 1 + kap * (s1 + s2 * r) + lam1 / R0 * gam1 / (1 - gam1)
    return max(up, lo) ** 2 - 1


def test_as_printed_matches_the_source_typed_again_and_is_not_scale_invariant():
    dat = ex.make_robust_regression(200_000, d=3, rng=3)
    vals = []
    for scale in (1.0, 100.0):
        _, ev = ex.fit_and_eigs_nonprivate(scale * dat.X, dat.y)
        r = scale * dat.norm_bound
        c = st.stability_constants(robust_log, norm_bound=r, neighbours="replace")
        mine = float(st.modulus_ratio_bound_as_printed(ev[0], ev[-1], c, n=200_000))
        assert mine == pytest.approx(_literal_14a(ev[0], ev[-1], 200_000, r, c), rel=1e-9)
        vals.append((mine, float(st.modulus_ratio_bound(ev[0], ev[-1], c))))
    assert vals[1][0] > 1.5 * vals[0][0]  # the printed s2 r term depends on the units of x
    assert vals[1][1] == pytest.approx(vals[0][1], rel=1e-6)  # pdpkit's does not
    c = st.stability_constants(robust_log, norm_bound=1.0, neighbours="replace")
    assert math.isinf(st.modulus_ratio_bound_as_printed(0.0, 1.0, c, n=10))
    with pytest.raises(ValueError, match="n must be"):
        st.modulus_ratio_bound_as_printed(1.0, 2.0, c, n=0)
    with pytest.raises(ValueError, match="d must be"):
        st.modulus_ratio_bound_as_printed(1.0, 2.0, c, n=10, domain="linf")


# ------------------------------------------------------------------ Lemmas 8.1-8.3, 8.5 vs pdpkit's route
def _neighbour_changes(n, d, seed):
    dat = ex.make_robust_regression(n, d=d, rng=seed)
    X, y = dat.X, dat.y
    hess = lambda Xa, ya, th: (Xa * robust_log.d2(Xa @ th, ya)[:, None]).T @ Xa
    th0 = ex.fit_nonprivate(X, y)
    H0 = hess(X, y, th0)
    g = np.random.default_rng(seed)
    U = g.standard_normal((200, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    A0 = np.linalg.solve(H0, U.T)
    worst2 = worst1 = 0.0
    order = np.argsort(np.abs(robust_log.d1(X @ th0, y)) * np.linalg.norm(X, axis=1))
    nbrs = [(np.delete(X, i, 0), np.delete(y, i)) for i in order[-3:]]
    for _ in range(3):
        z = g.choice([-1.0, 1.0], size=d)
        nbrs.append((np.vstack([X, z]), np.append(y, z @ th0 + 40)))
    for Xp, yp in nbrs:
        A1 = np.linalg.solve(hess(Xp, yp, ex.fit_nonprivate(Xp, yp)), U.T)
        worst2 = max(worst2, np.abs(np.linalg.norm(A1, axis=0) / np.linalg.norm(A0, axis=0) - 1).max())
        worst1 = max(worst1, np.abs(np.abs(A1).sum(0) / np.abs(A0).sum(0) - 1).max())
    return np.linalg.eigvalsh(H0), dat.norm_bound, worst2, worst1


def test_both_routes_bound_the_directional_sensitivity_change_and_a_too_small_bound_fails():
    ev, R, w2, w1 = _neighbour_changes(3000, 3, 5)
    c = st.stability_constants(robust_log, norm_bound=R)
    for route in ("source", "pdpkit"):
        b2 = st.modulus_perturbation_bound(ev[0], ev[-1], c, route=route, domain="l2")
        b1 = st.modulus_perturbation_bound(ev[0], ev[-1], c, route=route, domain="linf", d=3)
        assert w2 <= b2 and w1 <= b1
        assert not w2 <= b2 / 100  # the tester: a bound 100x smaller is refuted by these neighbours
    # the source's route is the looser one at high condition number
    c_lg = st.stability_constants("logistic", norm_bound=math.sqrt(15))
    src, pdk = (st.modulus_perturbation_bound(2e5, 5e7, c_lg, route=r_, domain="linf", d=15)
                for r_ in ("source", "pdpkit"))
    assert src > 2 * pdk
    with pytest.raises(ValueError, match="route"):
        st.modulus_perturbation_bound(1.0, 2.0, c, route="paper")


# ------------------------------------------------------------------ Figs 6-7: thresholds and certified n
def test_release_thresholds_and_certified_sample_size():
    z = stats.norm.isf(1e-6 / (4 + math.exp(1.0)) / 2)
    assert ex.release_threshold(4.0, 1e-6, accounting="pdpkit") == pytest.approx(2.0 / (1 + z * z))
    t = [ex.release_threshold(4.0, 1e-6, accounting=a) for a in ("pdpkit", "source", "whole")]
    assert t[0] < t[1] < t[2]
    kw = dict(loss="logistic", norm_bound=math.sqrt(17), d=17, delta=1e-6, domain="l2")
    n_pd = ex.certified_sample_size_nonprivate(4.25 / 300, 4.25, eps=8.0, certificate="pdpkit",
                                               accounting="whole", **kw)
    n_lit = ex.certified_sample_size_nonprivate(4.25 / 300, 4.25, eps=8.0, certificate="printed",
                                                accounting="source", **kw)
    assert 4e5 < n_pd < n_lit
    r2 = ex.certificate_r2_nonprivate(n_pd * 4.25 / 300, n_pd * 4.25, n=int(n_pd), loss="logistic",
                                      norm_bound=math.sqrt(17), d=17, certificate="pdpkit", domain="l2")
    assert r2 <= ex.release_threshold(8.0, 1e-6, accounting="whole")
    r2_below = ex.certificate_r2_nonprivate(0.99 * n_pd * 4.25 / 300, 0.99 * n_pd * 4.25, n=int(0.99 * n_pd),
                                            loss="logistic", norm_bound=math.sqrt(17), d=17,
                                            certificate="pdpkit", domain="l2")
    assert r2_below > ex.release_threshold(8.0, 1e-6, accounting="whole")
    with pytest.raises(ValueError, match="accounting"):
        ex.release_threshold(4.0, 1e-6, accounting="basic")


# ------------------------------------------------------------------ Thm 1, Thm 2, Prop 7.1: rates in n
@pytest.mark.parametrize("algorithm, ns, eps", [
    ("alg3", np.geomspace(5e3, 2e5, 4).round(), 2.0),
    ("alg7", np.geomspace(2e4, 4e5, 4).round(), 2.0),
    ("alg5", np.geomspace(2e4, 4e5, 4).round(), 4.0),
])
def test_accuracy_rate_is_one_over_n_and_the_statistical_rate_is_rejected(algorithm, ns, eps):
    res = ex.accuracy_against_n(ns, algorithm=algorithm, eps=eps, reps=2, draws=60, rng=17)
    assert res.released.min() == 1.0
    assert ex.rate_consistent(ns, res.error, claimed_slope=-1.0, tol=0.1)
    assert not ex.rate_consistent(ns, res.error, claimed_slope=-0.5, tol=0.1)  # a wrong rate fails
    ratio = np.nanmean(res.error / res.rate, axis=1)
    assert ratio.max() / ratio.min() < 1.6  # the claimed data factor, up to a constant


def test_alg3_error_grows_like_sqrt_d_not_the_printed_fourth_root():
    dims = (2, 4, 8, 16)
    const = [float(np.nanmean(r.error / r.rate)) for r in
             (ex.accuracy_against_n([100_000], algorithm="alg3", d=d, eps=2.0, reps=1, draws=200, rng=100 + d)
              for d in dims)]
    slope = float(np.polyfit(np.log(dims), np.log(const), 1)[0])
    assert abs(slope - 0.5) < 0.1
    assert abs(slope - 0.25) > 0.2  # Thm 1's printed d^(1/4) is rejected
