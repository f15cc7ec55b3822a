"""Tight accounting for ObjPert: independent references for every curve.

* δ(ε) and RDP against mpmath quadrature of the dominating pair's hockey-stick and
  Rényi divergences (tails included);
* the dominating pair's densities against its own privacy loss and normalization;
* inverses by round trips, never on the unsafe side;
* Lemma 3.4 (the Gaussian mechanism is a special case) on random parameters;
* validity: the exact ObjPert output densities in d = 1 (both neighbour directions)
  have hockey-stick divergences below δ(ε); a statistical audit on the linear-loss pair;
* composition: k = 2 against the exact density of |Z1| + |Z2|, pessimistic within 0.2%;
* dp_accounting's RDP conversion against the formula by hand; bad input.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdpkit import accounting as acc
from pdpkit import gaussian as gm
from pdpkit.audit import audit_delta_curve
from pdpkit.losses import logistic
from pdpkit.objpert import objpert_log_density, objpert_sigma_classic

P = dict(L=1.0, beta=0.25, lam=1.0, sigma=2.0)


def _ref_delta(eps: float, *, L, beta, lam, sigma, sharp=False, dps=40) -> float:
    """E[(1 - e^{eps - c - a|Z|})_+] by mpmath quadrature over |Z| (substituting u = t - t0)."""
    with mp.workdps(dps):
        a = mp.mpf(L) / sigma
        e0 = mp.log1p(mp.mpf(beta) / lam) if sharp else -mp.log1p(-mp.mpf(beta) / lam)
        c = e0 + a * a / 2
        t0 = max(mp.mpf(0), (mp.mpf(eps) - c) / a)
        f = lambda u: 2 * mp.npdf(t0 + u) * (1 - mp.e ** (mp.mpf(eps) - c - a * (t0 + u)))
        s = 1 / (t0 + 1)  # the integrand decays on the scale 1/t0 in the far tail
        knots = [s * k for k in (0, mp.mpf("0.01"), mp.mpf("0.1"), mp.mpf("0.5"), 1, 2, 5, 10, 50)]
        return mp.quad(f, [*knots, mp.inf])


def _ref_rdp(alpha: float, *, L, beta, lam, sigma, dps=30) -> float:
    """(1/(alpha-1)) log E_P[e^{(alpha-1) Y}] by quadrature over the half-normal."""
    with mp.workdps(dps):
        a = mp.mpf(L) / sigma
        c = -mp.log1p(-mp.mpf(beta) / lam) + a * a / 2
        m = mp.mpf(alpha) - 1
        mgf = mp.quad(lambda t: 2 * mp.npdf(t) * mp.e ** (m * (c + a * t)), [0, 1, 4, 16, mp.inf])
        return float(mp.log(mgf) / m)


# ------------------------------------------------------------------ profile
@pytest.mark.parametrize("params", [P, dict(L=1.0, beta=0.25, lam=0.3, sigma=0.7),
                                    dict(L=2.0, beta=0.5, lam=5.0, sigma=10.0)])
def test_delta_matches_quadrature_across_the_tail(params):
    a = params["L"] / params["sigma"]
    c = -math.log1p(-params["beta"] / params["lam"]) + a * a / 2
    eps = np.array([-2.0, 0.0, c * 0.5, c, c + 0.01, c + 0.5, c + 2, c + 5 * a + 1, c + 20 * a + 1])
    got = acc.objpert_delta(eps, **params)
    for e, g in zip(eps, got, strict=True):
        ref = float(_ref_delta(float(e), **params))
        if ref > 1e-30:  # quadrature is accurate to ~1e-12 here
            assert g == pytest.approx(ref, rel=1e-10), (e, g, ref)
        else:  # far tail: quadrature to ~1e-8; the closed form at 60 digits to 1e-12
            assert g == pytest.approx(ref, rel=1e-6), (e, g, ref)
            assert g == pytest.approx(_closed_form_mp(float(e), **params), rel=1e-12)


def _closed_form_mp(eps: float, *, L, beta, lam, sigma) -> float:
    """2 [Phi(x1) - e^{eps~} Phi(x2)] at 60 digits (eps-hat >= 0 branch)."""
    with mp.workdps(60):
        a = mp.mpf(L) / sigma
        et = mp.mpf(eps) + mp.log1p(-mp.mpf(beta) / lam)
        x1, x2 = a / 2 - et / a, -a / 2 - et / a
        return float(2 * (mp.ncdf(x1) - mp.e**et * mp.ncdf(x2)))


def test_delta_far_tail_keeps_relative_accuracy_down_to_1e_minus_300():
    # choose eps so that delta is about 1e-250..1e-300
    for target in (1e-150, 1e-250, 1e-300):
        e = float(acc.objpert_epsilon(target, **P))
        got = float(acc.objpert_delta(e, **P))
        assert got == pytest.approx(_closed_form_mp(e, **P), rel=1e-10)
        assert got <= target


def test_sharp_constant_is_smaller_and_valid_below_beta():
    e = np.linspace(0.1, 5, 20)
    assert np.all(acc.objpert_delta(e, **P, sharp=True) <= acc.objpert_delta(e, **P))
    low = dict(L=1.0, beta=0.25, lam=0.1, sigma=2.0)  # lam < beta: only the sharp form exists
    with pytest.raises(ValueError, match="lam"):
        acc.objpert_delta(1.0, **low)
    got = acc.objpert_delta(np.array([1.0, 3.0]), **low, sharp=True)
    ref = [float(_ref_delta(x, **low, sharp=True)) for x in (1.0, 3.0)]
    np.testing.assert_allclose(got, ref, rtol=1e-10)


def test_continuity_at_eps_hat_zero_and_monotonicity():
    a = P["L"] / P["sigma"]
    c = -math.log1p(-P["beta"] / P["lam"]) + a * a / 2
    left, right = acc.objpert_delta(np.array([c - 1e-12, c + 1e-12]), **P)
    assert abs(left - right) < 1e-11
    grid = np.linspace(-5, 10, 2001)
    d = acc.objpert_delta(grid, **P)
    assert np.all(np.diff(d) <= 1e-15) and d[0] <= 1 and d[-1] >= 0


@settings(max_examples=40, deadline=None)
@given(L=st.floats(0.1, 3), beta=st.floats(0, 1), ratio=st.floats(1.05, 50), sigma=st.floats(0.2, 30),
       eps=st.floats(0, 15))
def test_lemma_3_4_gaussian_lower_bound(L, beta, ratio, sigma, eps):
    """ObjPert's profile is never below the Gaussian mechanism's (Lemma 3.4)."""
    lam = max(beta * ratio, 1e-3)
    d_obj = float(acc.objpert_delta(eps, L=L, beta=beta, lam=lam, sigma=sigma))
    d_gauss = float(gm.gaussian_delta(eps, sensitivity=L, sigma=sigma))
    assert d_obj >= d_gauss * (1 - 1e-12)


def test_printed_theorem_3_1_falls_below_the_gaussian_lower_bound():
    """The source's eps-tilde = eps - log(1 - beta/lam) shifts the wrong way (errata)."""
    a = P["L"] / P["sigma"]
    e0 = -math.log1p(-P["beta"] / P["lam"])
    eps = 1.5
    printed = 2 * float(gm.gaussian_delta(eps + e0, sensitivity=P["L"], sigma=P["sigma"]))  # eps-hat >= 0 branch
    assert eps + e0 - a * a / 2 >= 0
    assert printed < float(gm.gaussian_delta(eps, sensitivity=P["L"], sigma=P["sigma"]))  # violates Lemma 3.4
    assert float(acc.objpert_delta(eps, **P)) >= float(gm.gaussian_delta(eps, sensitivity=P["L"], sigma=P["sigma"]))


def test_against_kifer_at_equal_lambda():
    """At Thm 2.8's lambda = 2 beta/eps: with the sharp log term Thm 3.1's sigma is below
    Kifer's for every eps; with the source's -log(1 - beta/lambda) it is *above* at eps = 1
    (the trap: 11.5 vs 10.1), because lambda = 2 beta there and the log term is log 2."""
    ratios = []
    for eps in (0.1, 0.5, 1.0, 2.0, 5.0):
        lam = 2 * 0.25 / eps
        s_kifer = objpert_sigma_classic(eps, 1e-5, L=1.0, beta=0.25, lam=lam)
        s_tight = acc.objpert_sigma(eps, 1e-5, L=1.0, beta=0.25, lam=lam, sharp=True)
        ratios.append(s_tight / s_kifer)
    assert all(0.3 < r < 1.0 for r in ratios), ratios
    s_src = acc.objpert_sigma(1.0, 1e-5, L=1.0, beta=0.25, lam=0.5)
    s_kifer = objpert_sigma_classic(1.0, 1e-5, L=1.0, beta=0.25, lam=0.5)
    assert s_src == pytest.approx(11.5, abs=0.1) and s_kifer == pytest.approx(10.1, abs=0.1)


# ----------------------------------------------------------------- inverses
@pytest.mark.parametrize("delta", [0.3, 1e-3, 1e-6, 1e-12, 1e-50])
def test_epsilon_inverse_round_trip_and_safe_side(delta):
    e = float(acc.objpert_epsilon(delta, **P))
    assert float(acc.objpert_delta(e, **P)) <= delta
    assert float(acc.objpert_delta(e - 1e-9 * max(1, abs(e)), **P)) > delta * (1 - 1e-6)


def test_sigma_and_lambda_inverses_and_calibration():
    for eps, delta in ((0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-8)):
        lam = 2.0
        s = acc.objpert_sigma(eps, delta, L=1.0, beta=0.25, lam=lam)
        assert float(acc.objpert_delta(eps, L=1.0, beta=0.25, lam=lam, sigma=s)) <= delta
        assert float(acc.objpert_delta(eps, L=1.0, beta=0.25, lam=lam, sigma=s * (1 - 1e-7))) > delta
        lam2 = acc.objpert_lambda(eps, delta, L=1.0, beta=0.25, sigma=s * 1.2)
        assert lam2 < lam
        assert float(acc.objpert_delta(eps, L=1.0, beta=0.25, lam=lam2, sigma=s * 1.2)) <= delta
        assert float(acc.objpert_delta(eps, L=1.0, beta=0.25, lam=lam2 * (1 - 1e-7), sigma=s * 1.2)) > delta
        lam3, s3 = acc.objpert_calibrate(eps, delta, L=1.0, beta=0.25)
        assert s3 == pytest.approx(1.3 * float(gm.gaussian_sigma(eps, delta, sensitivity=1.0)), rel=1e-12)
        assert float(acc.objpert_delta(eps, L=1.0, beta=0.25, lam=lam3, sigma=s3)) <= delta


# --------------------------------------------------------------------- RDP
@pytest.mark.parametrize("alpha", [1.5, 2.0, 8.0, 64.0])
def test_rdp_matches_quadrature(alpha):
    got = float(acc.objpert_rdp(alpha, **P))
    assert got == pytest.approx(_ref_rdp(alpha, **P), rel=1e-10)


def test_rdp_at_one_is_the_limit_not_the_printed_line():
    a = P["L"] / P["sigma"]
    e0 = -math.log1p(-P["beta"] / P["lam"])
    at_one = float(acc.objpert_rdp(1.0, **P))
    assert at_one == pytest.approx(e0 + a * a / 2 + a * math.sqrt(2 / math.pi), rel=1e-12)
    assert at_one == pytest.approx(float(acc.objpert_rdp(1 + 1e-7, **P)), rel=1e-6)
    printed = e0 + a * a / 2 + math.log(2 * math.exp(a * a / 2) * 0.5 * math.erfc(-a / math.sqrt(2)))
    assert printed > at_one + 0.05


def test_rdp_conversion_matches_the_formula_and_continuous_alpha_helps():
    orders = np.array([1.5, 2, 4, 8, 16, 32, 64])
    rdp = acc.objpert_rdp(orders, **P)
    eps, order = acc.rdp_to_epsilon(orders, rdp, delta=1e-6)
    by_hand = rdp + np.log1p(-1 / orders) - np.log(1e-6 * orders) / (orders - 1)
    assert eps == pytest.approx(by_hand.min()) and order == orders[np.argmin(by_hand)]
    dl, _ = acc.rdp_to_delta(orders, rdp, eps=eps)
    assert dl <= 1e-6 * (1 + 1e-9)
    eps_c, alpha_c = acc.objpert_epsilon_rdp(1e-6, **P)
    assert eps_c <= eps + 1e-12 and alpha_c > 1
    # RDP conversion is valid but looser than the exact profile
    assert eps_c >= float(acc.objpert_epsilon(1e-6, **P))


# --------------------------------------------------------- dominating pair / PLD
def test_dominating_pair_is_normalized_and_has_the_stated_privacy_loss():
    pair = acc.objpert_dominating_pair(**P)
    with mp.workdps(30):
        mass_p = mp.quad(lambda t: float(pair.pdf_p(float(t))), [0, 1, 4, 16, mp.inf])
        mass_q = mp.quad(lambda t: float(pair.pdf_q(float(t))), [0, 1, 4, 16, mp.inf])
    assert float(mass_p) == pytest.approx(1.0, abs=1e-12)
    assert 0 <= pair.mass_q_at_minus_inf < 1
    assert float(mass_q) + pair.mass_q_at_minus_inf == pytest.approx(1.0, abs=1e-12)
    t = np.linspace(0, 5, 11)
    np.testing.assert_allclose(np.log(pair.pdf_p(t) / pair.pdf_q(t)), pair.privacy_loss(t), rtol=1e-12)
    # its hockey-stick divergence is delta(eps)
    for e in (0.2, 1.0, 3.0):
        kink = max(0.0, (e - pair.c) / pair.a)  # p = e^eps q there
        with mp.workdps(30):
            hs = mp.quad(lambda x, e=e: float(pair.pdf_p(float(x)) - math.exp(e) * pair.pdf_q(float(x))),
                         [kink, kink + 0.5, kink + 2, kink + 8, mp.inf])
        assert float(hs) == pytest.approx(float(acc.objpert_delta(e, **P)), rel=1e-6)


def test_pld_is_pessimistic_and_tight():
    pld = acc.objpert_pld(**P, value_discretization_interval=1e-4)
    for e in (0.0, 0.5, 1.0, 2.0, 3.0):
        exact = float(acc.objpert_delta(e, **P))
        got = pld.get_delta_for_epsilon(e)
        assert exact <= got <= exact * 1.002 + 1e-15


def test_composition_two_fold_exact_and_pessimistic():
    """|Z1| + |Z2| has density (2/sqrt(pi)) e^{-t^2/4} erf(t/2) on t >= 0."""
    a = P["L"] / P["sigma"]
    c = -math.log1p(-P["beta"] / P["lam"]) + a * a / 2
    dens = lambda t: 2 / mp.sqrt(mp.pi) * mp.e ** (-t * t / 4) * mp.erf(t / 2)
    for e in (1.0, 2.0, 3.5):
        with mp.workdps(30):
            t0 = max(mp.mpf(0), (e - 2 * c) / a)
            exact = mp.quad(lambda t, e=e: dens(t) * (1 - mp.e ** (e - 2 * c - a * t)),
                            [t0, t0 + 1, t0 + 4, t0 + 16, mp.inf])
        got = float(acc.objpert_delta_composed(e, k=2, **P))
        assert float(exact) <= got <= float(exact) * 1.002 + 1e-12


def test_composition_k10_between_bracket_and_fast():
    import time

    t0 = time.perf_counter()
    d10 = acc.objpert_delta_composed(np.array([2.0, 4.0]), k=10, **P, value_discretization_interval=1e-3)
    assert time.perf_counter() - t0 < 5.0
    d_one = acc.objpert_delta(np.array([0.2, 0.4]), **P)
    assert np.all(d10 >= d_one * 0)  # well-defined
    # basic composition is an upper bound: k-fold at k*eps <= k * delta(eps)
    assert np.all(d10 <= 10 * d_one + 1e-12)


# ---------------------------------------------------------------- validity
def test_exact_objpert_densities_respect_the_profile_d1():
    """d = 1 logistic: H_{e^eps}(p_D || p_D') from the exact output densities, both directions."""
    X = np.array([[0.9], [-0.4], [0.7]])
    y = np.array([1.0, -1.0, 1.0])
    z_x, z_y = np.array([[-1.0]]), np.array([1.0])
    lam, sigma = 0.5, 0.8
    grid = np.linspace(-30, 30, 120001)
    logp_D = objpert_log_density(grid[:, None], X, y, logistic, lam=lam, sigma=sigma)
    logp_Dz = objpert_log_density(grid[:, None], np.vstack([X, z_x]), np.append(y, z_y), logistic, lam=lam, sigma=sigma)
    p_D, p_Dz = np.exp(logp_D), np.exp(logp_Dz)
    h = grid[1] - grid[0]
    for eps in (0.0, 0.3, 1.0, 2.0):
        bound = float(acc.objpert_delta(eps, L=1.0, beta=0.25, lam=lam, sigma=sigma, sharp=True))
        for P1, P2 in ((p_D, p_Dz), (p_Dz, p_D)):
            hs = float(np.sum(np.maximum(P1 - math.exp(eps) * P2, 0.0)) * h)
            assert hs <= bound + 1e-6


def test_audit_of_the_linear_loss_pair_passes_at_sigma_and_fails_at_0_4_sigma():
    """Lemma 3.4's pair: output -(x + b)/lam vs -b/lam, |x| = L: the claim must survive at
    the claimed sigma and be refuted when the mechanism secretly uses 0.4 sigma."""
    L, lam, sigma = 1.0, 1.0, 1.0
    eps_grid = np.linspace(0.0, 2.0, 9)
    claimed = acc.objpert_delta(eps_grid, L=L, beta=0.0, lam=lam, sigma=sigma, sharp=True)
    thresholds = L / 2 + eps_grid * sigma**2 / L  # level sets of the Gaussian loss in units of b

    def run(factor, seed):
        s = factor * sigma
        return audit_delta_curve(lambda m, r: L + s * r.standard_normal(m), lambda m, r: s * r.standard_normal(m),
                                 lambda o: o, thresholds, eps_grid, claimed, n_samples=200_000, alpha=0.01,
                                 rng=np.random.default_rng(seed))

    assert run(1.0, 1).passed
    assert not run(0.4, 2).passed


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("call, exc, name", [
    (lambda: acc.objpert_delta(1.0, L=1.0, beta=0.25, lam=1.0, sigma=0.0), ValueError, "sigma"),
    (lambda: acc.objpert_delta(1.0, L=-1.0, beta=0.25, lam=1.0, sigma=1.0), ValueError, "L"),
    (lambda: acc.objpert_delta(float("nan"), **P), ValueError, "eps"),
    (lambda: acc.objpert_delta(1.0, L=1.0, beta=0.25, lam=0.2, sigma=1.0), ValueError, "lam"),
    (lambda: acc.objpert_delta(1.0, 1.0, 0.25, 1.0, 1.0), TypeError, "positional"),
    (lambda: acc.objpert_epsilon(0.0, **P), ValueError, "delta"),
    (lambda: acc.objpert_epsilon(1.5, **P), ValueError, "delta"),
    (lambda: acc.objpert_rdp(0.5, **P), ValueError, "alpha"),
    (lambda: acc.objpert_delta_composed(1.0, k=0, **P), ValueError, "k"),
    (lambda: acc.objpert_sigma(0.1, 1e-5, L=1.0, beta=0.25, lam=1.0), ValueError, "lam"),
    (lambda: acc.objpert_lambda(0.1, 1e-12, L=1.0, beta=0.25, sigma=1.0), ValueError, "sigma"),
    (lambda: acc.objpert_calibrate(1.0, 1e-5, L=1.0, beta=0.25, f=0.9), ValueError, "f"),
])
def test_bad_input_names_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# ---------------------------------------------------------------- non-GLM losses
def test_nonglm_reduces_to_the_glm_curves_at_d_1():
    e = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 4.0])
    np.testing.assert_allclose(acc.objpert_delta_nonglm(e, d=1, **P), acc.objpert_delta(e, **P), rtol=1e-9)
    al = np.array([1.0, 1.5, 2.0, 8.0])
    np.testing.assert_allclose(acc.objpert_rdp_nonglm(al, d=1, **P), acc.objpert_rdp(al, **P), rtol=1e-9)


def test_nonglm_matches_chi_quadrature_in_mpmath_and_grows_with_d():
    d = 4
    a = P["L"] / P["sigma"]
    c = -d * math.log1p(-P["beta"] / P["lam"]) + a * a / 2
    chi_pdf = lambda w: mp.mpf(2) ** (1 - d / 2) * w ** (d - 1) * mp.e ** (-w * w / 2) / mp.gamma(d / 2)
    for e in (0.5, 2.0, 3.5):
        with mp.workdps(30):
            w0 = max(mp.mpf(0), (e - c) / a)
            ref = mp.quad(lambda w, e=e: chi_pdf(w) * max(mp.mpf(0), 1 - mp.e ** (e - c - a * w)),
                          [w0, w0 + 1, w0 + 4, w0 + 16, mp.inf])
        assert float(acc.objpert_delta_nonglm(e, d=d, **P)) == pytest.approx(float(ref), rel=1e-9)
    with mp.workdps(30):
        ref_rdp = mp.log(mp.quad(lambda w: chi_pdf(w) * mp.e ** (a * w), [0, 1, 4, 16, mp.inf])) + c
    assert float(acc.objpert_rdp_nonglm(2.0, d=d, **P)) == pytest.approx(float(ref_rdp), rel=1e-9)
    e = np.array([1.0, 3.0])
    assert np.all(acc.objpert_delta_nonglm(e, d=8, **P) >= acc.objpert_delta_nonglm(e, d=4, **P))
    with pytest.raises(ValueError, match="d"):
        acc.objpert_delta_nonglm(1.0, d=0, **P)


def test_composition_k3_inside_an_optimistic_pessimistic_bracket():
    """Connect-the-dots (pessimistic) vs an optimistic PLD built here independently: the
    privacy loss c + a|Z| rounded *down* to the grid. Composed 3 times by FFT, the two
    bracket the truth; the pessimistic one is within 0.2% of the optimistic one."""
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution
    from scipy import special

    h = 1e-4
    a = P["L"] / P["sigma"]
    c = -math.log1p(-P["beta"] / P["lam"]) + a * a / 2
    ks = np.arange(math.floor(c / h), math.ceil((c + a * 9.0) / h) + 1)
    lower_t = np.clip((ks * h - c) / a, 0, 9.0)
    upper_t = np.clip(((ks + 1) * h - c) / a, 0, 9.0)
    probs = 2 * (special.ndtr(upper_t) - special.ndtr(lower_t))  # Y in [kh, (k+1)h) reported at kh
    optimistic = privacy_loss_distribution.PrivacyLossDistribution(pld_pmf.create_pmf(
        {int(k): float(v) for k, v in zip(ks, probs, strict=True) if v > 0}, h, 0.0, pessimistic_estimate=False))
    pess = acc.objpert_pld(**P, value_discretization_interval=h)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        opt3, pess3 = optimistic.self_compose(3), pess.self_compose(3)
    for e in (1.5, 2.0, 3.0):
        lo, hi = opt3.get_delta_for_epsilon(e), pess3.get_delta_for_epsilon(e)
        assert lo <= hi <= lo * 1.002 + 1e-12
        assert float(acc.objpert_delta_composed(e, k=3, **P)) == pytest.approx(hi, rel=1e-9)


def test_objpert_output_epsilon_memo_returns_the_uncached_bits():
    """The per-process memo of the ObjPert-plus-Gaussian inversion returns what a fresh inversion gives."""
    from pdpkit.accounting import _output_epsilon, objpert_constants

    kw = dict(L=1.0, beta=0.25, lam=2.0, sigma=3.0, mu=0.05)
    got = acc.objpert_output_epsilon(1e-6, **kw)
    eps0, a = objpert_constants(1.0, 0.25, 2.0, 3.0, False)
    assert got == _output_epsilon.__wrapped__(1e-6, float(eps0), float(a), 0.05)
    assert acc.objpert_output_epsilon(1e-6, **kw) == got
    # a different mu is a different key: the memo does not return a neighbour's value
    assert acc.objpert_output_epsilon(1e-6, **dict(kw, mu=0.06)) > got
