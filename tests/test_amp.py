"""Accounting of approximate minima perturbation (Alg 1, Thm 4.1 of Redberg, Koskela & Wang 2023).

References independent of the code under test: mpmath quadrature of the composed pair
with the Gaussian profile written out in mpmath, Monte Carlo of the composed privacy
loss, Thm 4.1 by hand, and the tau = 0 reduction to ObjPert.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from pdpkit import accounting as acc
from pdpkit import amp

K = dict(C=1.0, beta=0.25, lam=1.0, sigma=2.0, sigma_out=0.5, tau=0.05)


def _ref_delta(eps: float, *, C, beta, lam, sigma, sigma_out, tau) -> float:
    with mp.workdps(30):
        a = mp.mpf(C) / sigma
        c = -mp.log1p(-mp.mpf(beta) / lam) + a * a / 2
        mu = 2 * mp.mpf(tau) / (lam * sigma_out)

        def gauss_profile(x):  # H_{e^x}(N(mu, 1) || N(0, 1)) for any real x
            return mp.ncdf(mu / 2 - x / mu) - mp.e**x * mp.ncdf(-mu / 2 - x / mu)

        f = lambda t: 2 * mp.npdf(t) * gauss_profile(mp.mpf(eps) - c - a * t)
        knee = max(mp.mpf(0), (mp.mpf(eps) - c) / a)
        return float(mp.quad(f, [0, knee, knee + 1, knee + 4, knee + 16, mp.inf]))


@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0, 2.0, 4.0])
def test_amp_delta_matches_mpmath_quadrature(eps):
    assert float(amp.amp_delta(eps, **K)) == pytest.approx(_ref_delta(eps, **K), rel=1e-8)


def test_amp_delta_matches_monte_carlo_of_the_composed_loss():
    rng = np.random.default_rng(0)
    a = K["C"] / K["sigma"]
    c = -math.log1p(-K["beta"] / K["lam"]) + a * a / 2
    mu = 2 * K["tau"] / (K["lam"] * K["sigma_out"])
    n = 2_000_000
    loss = c + a * np.abs(rng.standard_normal(n)) + mu * mu / 2 + mu * rng.standard_normal(n)
    for eps in (0.5, 1.0):
        vals = np.maximum(0.0, -np.expm1(eps - loss))
        mc, se = vals.mean(), vals.std() / math.sqrt(n)
        assert abs(float(amp.amp_delta(eps, **K)) - mc) < 5 * se


def test_tau_zero_is_objpert_and_tau_costs_privacy():
    e = np.array([0.0, 0.5, 1.0, 2.0])
    base = acc.objpert_delta(e, L=1.0, beta=0.25, lam=1.0, sigma=2.0)
    np.testing.assert_allclose(amp.amp_delta(e, **{**K, "tau": 0.0}), base, rtol=1e-8)
    assert np.all(amp.amp_delta(e, **K) >= base)


def test_amp_rdp_is_theorem_4_1_by_hand():
    al = np.array([1.0, 2.0, 8.0])
    by_hand = acc.objpert_rdp(al, L=1.0, beta=0.25, lam=1.0, sigma=2.0) + 2 * 0.05**2 * al / (0.5**2 * 1.0**2)
    np.testing.assert_allclose(amp.amp_rdp(al, **K), by_hand, rtol=1e-12)


def test_amp_epsilon_exact_is_below_rdp_and_safe():
    e_rdp = amp.amp_epsilon(1e-6, **K)
    e_pld = amp.amp_epsilon(1e-6, **K, accounting="pld")
    assert e_pld <= e_rdp
    assert float(amp.amp_delta(e_pld, **K)) <= 1e-6


def test_amp_calibrate_gives_the_guarantee_and_the_smallest_lambda():
    lam, sigma = amp.amp_calibrate(1.0, 1e-5, C=1.0, beta=0.25, sigma_out=0.1, tau=1e-3)
    kw = dict(C=1.0, beta=0.25, sigma=sigma, sigma_out=0.1, tau=1e-3)
    assert amp.amp_epsilon(1e-5, lam=lam, **kw) <= 1.0
    assert amp.amp_epsilon(1e-5, lam=lam * (1 - 1e-4), **kw) > 1.0


@pytest.mark.parametrize("call, name", [
    (lambda: amp.amp_delta(1.0, **{**K, "sigma_out": 0.0}), "sigma_out"),
    (lambda: amp.amp_delta(1.0, **{**K, "tau": -1.0}), "tau"),
    (lambda: amp.amp_delta(1.0, **{**K, "sigma": -1.0}), "sigma"),
    (lambda: amp.amp_epsilon(1e-5, **K, accounting="moments"), "accounting"),
    (lambda: amp.amp_epsilon(2.0, **K), "delta"),
    (lambda: amp.amp_rdp(0.5, **K), "alpha"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------------------------ DP-SGD baseline
def test_dpsgd_noise_multiplier_against_dp_accounting_directly():
    """Plain and honestly tuned (repeat-and-select, mu = 15.41) calibrations, each the smallest
    noise that dp_accounting's own accountant finds within the budget. The configuration is the
    chapter's DP-SGD on 2,000 rows at epsilon = 0.1, whose calibrations the stored size sweep
    (results/amp/eps01_sizes.json) holds: the chapter and tests/test_amp_fullscale.py take
    them from there, so the stored ones must be these."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    from pdpkit.experiments import stored

    q, steps, eps = 256 / 2000, 469, 0.1
    mu = amp.poisson_select_mean(10)
    nms = {}
    for select_mean in (None, mu):
        nm = amp.dpsgd_noise_multiplier(eps, 1e-5, sample_rate=q, steps=steps, select_mean=select_mean)

        def eps_at(m, select_mean=select_mean):
            ev = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(m)), steps)
            if select_mean is not None:
                ev = dp_event.RepeatAndSelectDpEvent(ev, select_mean, np.inf)
            return RdpAccountant().compose(ev).get_epsilon(1e-5)

        assert eps_at(nm) <= eps + 1e-9 and eps_at(nm * (1 - 1e-3)) > eps
        nms[select_mean] = nm
    assert nms[mu] > 2 * nms[None]  # honest tuning costs noise
    sweep = stored.load_result("amp", "eps01_sizes").data
    row = sweep["Adult"][0]
    assert (sweep["eps"], row["n_train"], row["setting"]) == (eps, 2_000, "source")
    assert nms[None] == pytest.approx(row["noise_dishonest"], rel=1e-6)
    assert nms[mu] == pytest.approx(row["noise_honest"], rel=1e-6)


def test_poisson_select_mean_is_the_sources_15_4_and_exact():
    from scipy import stats

    mu = amp.poisson_select_mean(10, prob=0.9)
    assert mu == pytest.approx(15.41, abs=0.01)  # the source's mu for a grid of 10
    assert stats.poisson.sf(10, mu) == pytest.approx(0.9, abs=1e-9)
    with pytest.raises(ValueError, match="grid_size"):
        amp.poisson_select_mean(0)


def test_dpsgd_fit_learns_with_little_noise_and_clips():
    from pdpkit import datasets as ds
    from pdpkit.losses import logistic

    data = ds.make_synthetic_logistic(2000, d=5, theta_scale=4.0, rng=2)
    theta = amp.dpsgd_fit(data.X, data.y, logistic, noise_multiplier=1e-3, clip=1.0, sample_rate=0.1,
                          steps=300, lr=0.05, rng=3)
    acc = np.mean(np.sign(data.X @ theta) == data.y)
    best = np.mean(np.sign(data.X @ data.theta_true) == data.y)
    assert acc > best - 0.05
    with pytest.raises(ValueError, match="sample_rate"):
        amp.dpsgd_fit(data.X, data.y, logistic, noise_multiplier=1.0, clip=1.0, sample_rate=1.5, steps=1, lr=0.1)


def test_amp_epsilon_rdp_matches_autodp():
    """autodp converts the same RDP curve independently (its own optimizer over orders)."""
    import warnings

    from autodp.autodp_core import Mechanism

    for k in (K, {**K, "tau": 0.2, "sigma_out": 0.3}):
        mech = Mechanism()
        mech.propagate_updates(lambda a, k=k: float(amp.amp_rdp(max(a, 1.0), **k)), type_of_update="RDP")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = mech.get_approxDP(1e-6)
        assert amp.amp_epsilon(1e-6, **k) == pytest.approx(ref, rel=1e-6)


# ------------------------------------------------------------ clipped losses
def _bounds_reference(closs, y, r, halvings=200):
    """The clipping points by the plain elementwise bisection (every row, all the halvings)."""
    y, r = np.broadcast_arrays(np.asarray(y, float), np.asarray(r, float))
    with np.errstate(divide="ignore"):
        s = np.where(r > 0, closs.C / np.where(r > 0, r, 1.0), np.inf)
    d1 = closs.loss._d1
    out = []
    for sign in (-1.0, 1.0):
        target = sign * s
        lo, hi = np.full(y.shape, -1.0), np.full(y.shape, 1.0)
        for _ in range(60):
            bad_lo, bad_hi = d1(lo, y) >= target, d1(hi, y) <= target
            if not (np.any(bad_lo) or np.any(bad_hi)):
                break
            lo, hi = np.where(bad_lo, 2.0 * lo, lo), np.where(bad_hi, 2.0 * hi, hi)
        never_low, never_high = d1(lo, y) >= target, d1(hi, y) <= target
        for _ in range(halvings):
            mid = 0.5 * (lo + hi)
            below = d1(mid, y) < target
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        u = 0.5 * (lo + hi)
        never = (never_low if sign < 0 else never_high) | ~np.isfinite(target)
        out.append(np.where(never, sign * np.inf, u))
    return out


@pytest.mark.parametrize("loss", ["logistic", "robust_log", "squared", "huber"])
def test_clipping_points_equal_the_elementwise_bisection_bit_for_bit(loss):
    """The clipping points, computed once per distinct (label, row norm), at once for rows that
    never reach their clipping threshold, and stopped at the bisection's fixed point, equal
    the plain bisection of every row to the last bit."""
    rng = np.random.default_rng(4)
    n = 300
    y = rng.choice([-1.0, 1.0], n) if loss in ("logistic", "robust_log") else np.round(3 * rng.normal(size=n), 1)
    if loss != "logistic":
        y[:4] = [0.0, -0.0, 0.0, -0.0]
    r = np.concatenate([np.full(100, math.sqrt(2)), np.abs(rng.normal(size=n - 110)), np.zeros(10)])
    closs = amp.ClippedGLMLoss(loss, 0.7)
    for got, ref in zip(closs._bounds(y, r), _bounds_reference(closs, y, r), strict=True):
        assert np.array_equal(got, ref) and np.array_equal(np.signbit(got), np.signbit(ref))
        assert np.unique(ref).size < n  # repeated pairs: the shortcut is exercised
        if loss != "squared":  # a bounded f': some rows are never clipped, others are
            assert np.isinf(ref[r > 0]).any() and np.isfinite(ref).any()
    # the control: a bisection stopped after 40 halvings is not bit-equal
    assert not np.array_equal(_bounds_reference(closs, y, r, halvings=40)[0], closs._bounds(y, r)[0])


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_clipped_loss_keeps_convexity_smoothness_and_the_gradient_bound(loss):
    """Thm F.3 on a grid: |f_C'| <= C/r, 0 <= f_C'' <= f'', f_C' nondecreasing, and f_C = f
    wherever f' is not clipped."""
    from pdpkit.losses import get_loss

    base = get_loss(loss)
    t = np.linspace(-8, 8, 801)
    for C, r in ((0.5, 1.0), (1.0, 2.0)):
        closs = amp.ClippedGLMLoss(loss, C, norm_bound=max(r, 1.0))
        for lab in (1.0, -1.0) if loss == "logistic" else (-2.0, 0.5):
            d1, d2 = closs.d1(t, lab, r), closs.d2(t, lab, r)
            assert np.all(np.abs(d1) <= C / r + 1e-15)
            assert np.all((d2 >= 0) & (d2 <= base.d2(t, lab) + 1e-15))
            assert np.all(np.diff(d1) >= -1e-15)
            free = np.abs(base.d1(t, lab)) < C / r
            assert free.any() and (~free).any()
            np.testing.assert_allclose(closs.d1(t[free], lab, r), base.d1(t[free], lab), rtol=0, atol=1e-15)
            v = closs.value(t, lab, r)
            # continuous and with slope f_C': the trapezoid rule of f_C' recovers f_C
            steps = np.concatenate([[0.0], np.cumsum(0.5 * (d1[1:] + d1[:-1]) * np.diff(t))])
            np.testing.assert_allclose(v - v[0], steps, atol=2e-4)
    # the control: the unclipped loss breaks the gradient bound on the same grid
    assert np.max(np.abs(base.d1(t, 1.0 if loss == "logistic" else -2.0))) > 0.5


def _ps_theorem6_epsilon(nm, *, q, steps, mu, orders, delta):
    """(ε, δ) of Poisson(mu) repeat-and-select over DP-SGD, computed here from the papers:
    the exact RDP of the Poisson-subsampled Gaussian at integer orders (Mironov, Talwar & Zhang
    2019, Thm 5: a binomial sum), Papernot & Steinke 2022 Thm 6 with ε̂ = log(1 + 1/(α − 1)) and
    δ̂ from Canonne, Kamath & Steinke 2020 Prop 12, and the same conversion to (ε, δ)."""
    from scipy.special import gammaln, logsumexp

    a = np.asarray(orders, dtype=float)
    rdp = np.empty(a.size)
    for i, al in enumerate(a):
        k = np.arange(int(al) + 1)
        logc = gammaln(al + 1) - gammaln(k + 1) - gammaln(al - k + 1)
        terms = logc + (al - k) * np.log1p(-q) + k * np.log(q) + (k * k - k) / (2 * nm * nm)
        rdp[i] = steps * logsumexp(terms) / (al - 1)

    def log_delta(eps_hat):  # CKS Prop 12, minimized over the orders
        return np.min((a - 1) * (rdp - eps_hat) - np.log(a) + (a - 1) * np.log1p(-1 / a))

    eps_hat = np.log1p(1 / (a - 1))
    rdp_sel = rdp + mu * np.exp([log_delta(e) for e in eps_hat]) + np.log(mu) / (a - 1)
    return float(np.min(rdp_sel + np.log1p(-1 / a) - (np.log(delta) + np.log(a)) / (a - 1)))


def test_honest_noise_at_integer_orders_matches_papernot_steinke_theorem_6_computed_here():
    # dpsgd_noise_multiplier(orders=2..256), the authors' code's accounting of honest DP-SGD,
    # against the theorem evaluated independently of dp_accounting's repeat-and-select code
    q, steps, eps, delta = 256 / 2000, 469, 0.1, 1e-5
    mu = amp.poisson_select_mean(10)
    orders = range(2, 257)
    nm = amp.dpsgd_noise_multiplier(eps, delta, sample_rate=q, steps=steps, select_mean=mu, orders=orders)
    here = lambda m: _ps_theorem6_epsilon(m, q=q, steps=steps, mu=mu, orders=orders, delta=delta)
    assert here(nm) <= eps * (1 + 1e-3) and here(nm * (1 - 2e-3)) > eps
    assert here(0.99 * nm) > eps  # the check refutes a noise multiplier 1 % too small
    with pytest.raises(ValueError, match="orders"):
        amp.dpsgd_noise_multiplier(eps, delta, sample_rate=q, steps=steps, orders=[0.5, 2])


def test_honest_dpsgd_candidates_follow_each_reading():
    from pdpkit.experiments import amp as ex

    rng = np.random.default_rng(0)
    X = ex.with_bias(rng.normal(size=(400, 3)))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=400) > 0, 1.0, -1.0)
    seen = {}
    real = amp.dpsgd_fit

    def spy(*args, lr, **kw):
        seen.setdefault(key, []).append(lr)
        return real(*args, lr=lr, **kw)

    import pdpkit.experiments.amp as ex_mod

    grid = (1e-3, 1e-2, 1e-1)
    for key in ("with-replacement", "distinct", "log-spaced"):
        mp = pytest.MonkeyPatch()
        mp.setattr(ex_mod, "dpsgd_fit", spy)
        mp.setattr(ex_mod, "dpsgd_noise_multiplier", lambda *a, **k: 2.0)  # the calibration is tested above
        try:
            r = ex.honest_dpsgd(X[:300], y[:300], X[300:], y[300:], 4.0, candidates=key, lr_grid=grid,
                                select_mean=6.0, epochs=2, batch_size=100, trials=1, rng=3)
        finally:
            mp.undo()
        k = int(r.n_candidates[0])
        lrs = seen[key]
        if key == "with-replacement":
            assert len(lrs) == k and set(lrs) <= set(grid)
        elif key == "distinct":
            assert len(lrs) == min(k, 3) == len(set(lrs)) and set(lrs) <= set(grid)
        else:
            np.testing.assert_allclose(lrs, np.logspace(-3, -1, k))
        assert r.steps == 6 and 0.5 <= r.accuracy[0] <= 1
    with pytest.raises(ValueError, match="candidates"):
        ex.honest_dpsgd(X, y, X, y, 1.0, candidates="grid")
