"""Edges: extreme and malformed arguments of the calibration and accounting functions.

* Every public function of :mod:`pdpkit.gaussian` and :mod:`pdpkit.accounting`, called with each
  numeric argument replaced by 1e-300, 1e-30, 1e30, 1e300, -1e300, the string ``"1"`` or a list,
  either returns finite numbers or raises a ``ValueError``/``TypeError`` naming a parameter, and
  never lets a ``RuntimeWarning`` (overflow, divide by zero) or a root finder's message escape.
* Where a value is returned at an extreme, it is checked against mpmath or a closed form: the
  Gaussian profile for tiny μ and ε, the calibrated σ from ε = 1e-300 to 1e300, its ε → 0 limit
  Δ/(2√2 erf⁻¹(δ)), ObjPert's ε ≥ 0 for a tiny L, λ and σ at the far ends.
* Each check is also run on a deliberately wrong variant (the values the code gave before),
  which it must reject.
"""

from __future__ import annotations

import inspect
import math
import re
import warnings
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy import optimize

from pdpkit import accounting as acc
from pdpkit import gaussian as gm
from pdpkit._validation import as_finite_array, scalar_positive

OBJ = dict(L=1.0, beta=0.25, lam=1.0, sigma=2.0)


# ----------------------------------------------------------------------------- references
def _mills(x: mp.mpf) -> mp.mpf:
    """R(x) = Φ(x)/φ(x) at the working precision (asymptotic series for x < -1e6)."""
    if x < -(10**6):
        ax, total, j = -x, mp.mpf(0), 0
        term = 1 / ax
        while abs(term) > mp.mpf(10) ** (-mp.mp.dps - 5) / ax:
            total += term
            term = -term * (2 * j + 1) / (ax * ax)
            j += 1
        return total
    return mp.ncdf(x) / mp.npdf(x)


def ref_log_delta(eps: float, mu: float) -> mp.mpf:
    r"""log δ(ε; μ) of the Gaussian mechanism, ε ≥ 0: :math:`\log\varphi(x_1) + \log(R(x_1) - R(x_1 - \mu))`,
    at a precision that covers the cancellation (about log10(max(1, |x1|)/μ) digits)."""
    with mp.workdps(40 + 2 * max(0, int(math.log10(max(eps, mu, 1.0))))):  # x1 = m/2 - e/m cancels
        x1 = mp.mpf(mu) / 2 - mp.mpf(eps) / mp.mpf(mu)
    with mp.workdps(30 + max(0, int(mp.log10(max(1, abs(x1)) / mp.mpf(mu))))):
        m = mp.mpf(mu)
        if x1 > 10:  # 1 - δ = Φ(-x1) + e^ε Φ(x2) = φ(x1)(R(-x1) + R(x2))
            return mp.log1p(-(_mills(-x1) + _mills(x1 - m)) * mp.npdf(x1))
        return -x1 * x1 / 2 - mp.log(mp.sqrt(2 * mp.pi)) + mp.log(_mills(x1) - _mills(x1 - m))


def _is_root_of_profile(sigma: float, eps: float, delta: float, sensitivity: float = 1.0, rel: float = 1e-11) -> bool:
    """Whether σ is the calibrated noise to ``rel``: δ_ref(ε; Δ/(σ(1+rel))) ≤ δ < δ_ref(ε; Δ/(σ(1-rel)))."""
    with mp.workdps(40):
        log_d = mp.log(mp.mpf(delta))
        mu = mp.mpf(sensitivity) / mp.mpf(sigma)
        return bool(ref_log_delta(eps, mu / (1 + mp.mpf(rel))) <= log_d < ref_log_delta(eps, mu / (1 - mp.mpf(rel))))


# ----------------------------------------------------------------------------- Gaussian profile
@pytest.mark.parametrize("mu", [1e-300, 1e-100, 1e-20, 1e-8, 1e-3, 0.1, 1.0, 30.0, 1e10, 1e150])
def test_gaussian_delta_matches_mpmath_for_every_scale_of_mu_and_eps(mu):
    eps = np.array([0.0, 1e-300, 1e-50, 1e-10, 1e-3, 1.0, 10.0, 700.0, 1e5, 1e100, 1e300])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = gm.gaussian_delta(eps, sensitivity=mu, sigma=1.0)
        # above mu ~ 1e3, eps_t = eps + mu^2/2 is so large that x1 = mu/2 - eps_t/mu loses log10(mu) digits
        # to the rounding of eps_t itself (an ill-conditioned input): only compare where it is well-conditioned
        got_log = acc.objpert_log_delta(eps + 0.5 * mu * mu, L=mu, beta=0.0, lam=1.0, sigma=1.0) - math.log(2.0) \
            if mu <= 1e3 else None
    for i, e in enumerate(eps):
        ref = ref_log_delta(float(e), mu)
        ref_d = float(mp.e**ref)
        assert got[i] == pytest.approx(ref_d, rel=1e-12, abs=1e-300), (e, mu)
        if got_log is not None and e + 0.5 * mu * mu > 0.5 * mu * mu and ref > -1e300:
            # objpert's log-profile is 2 H at eps - mu^2/2 above eps_hat = 0: its log-space branch
            e_t = float(e + 0.5 * mu * mu)  # the eps_t the accountant evaluates (rounded)
            assert got_log[i] == pytest.approx(float(ref_log_delta(e_t, mu)), rel=1e-12, abs=1e-12)


def test_the_old_closed_form_fails_where_the_series_is_needed():
    """The direct formula (the code before) has no correct digit at μ = 1e-20: the reference must see that."""
    from scipy import special

    mu, eps = 1e-20, 1e-300
    x1, x2 = mu / 2 - eps / mu, -mu / 2 - eps / mu
    old = special.ndtr(x1) - 0.5 * np.exp(-0.5 * x1 * x1) * special.erfcx(-x2 / math.sqrt(2))
    ref = float(mp.e ** ref_log_delta(eps, mu))
    assert old != pytest.approx(ref, rel=1e-3, abs=0.0)
    assert gm.gaussian_delta(eps, sensitivity=mu, sigma=1.0) == pytest.approx(ref, rel=1e-12)


# ----------------------------------------------------------------------------- calibrated sigma
@pytest.mark.parametrize("delta", [1e-300, 1e-12, 1e-5, 0.3, 0.9])
def test_gaussian_sigma_tends_to_the_eps_zero_closed_form(delta):
    """ε → 0: σ → Δ/μ0 with μ0 = 2Φ⁻¹((1+δ)/2) = 2√2 erf⁻¹(δ) ≈ δ√(2π) (once ε ≪ μ0²)."""
    with mp.workdps(40):
        sigma0 = float(3.0 / (2 * mp.sqrt(2) * mp.erfinv(mp.mpf(delta))))
    eps = 5e-324 if delta < 1e-100 else 1e-300  # eps / mu0 -> 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = float(gm.gaussian_sigma(eps, delta, sensitivity=3.0))
    assert got == pytest.approx(sigma0, rel=1e-12)


def test_gaussian_sigma_at_eps_1e_minus_50_is_the_limit_not_4e27():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = float(gm.gaussian_sigma(1e-50, 1e-5))
    assert got == pytest.approx(39894.228040143, rel=1e-10)  # 1/(2√2 erf⁻¹(1e-5)); the code gave 3.99e27
    assert not _is_root_of_profile(3.991289658932748e27, 1e-50, 1e-5)


@pytest.mark.parametrize("eps", [1e-300, 1e-50, 1e-10, 1e-4, 1.0, 700.0, 1e5, 1e100, 1e300])
@pytest.mark.parametrize("delta", [1e-300, 1e-12, 1e-5, 0.3, 1 - 1e-16])
def test_gaussian_sigma_is_the_mpmath_root_across_the_range(eps, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sigma = float(gm.gaussian_sigma(eps, delta))
    assert _is_root_of_profile(sigma, eps, delta)


def test_the_root_check_rejects_a_slightly_wrong_sigma():
    sigma = float(gm.gaussian_sigma(1.0, 1e-5))
    assert _is_root_of_profile(sigma, 1.0, 1e-5)
    assert not _is_root_of_profile(sigma * (1 + 1e-9), 1.0, 1e-5)
    assert not _is_root_of_profile(sigma * (1 - 1e-9), 1.0, 1e-5)
    # mu = 1e20: the value the code gave before (solving in eps, where x1 = mu/2 - eps/mu is lost to rounding)
    # is 6e-14 too small, on the unsafe side; the one solved in x1 is not
    assert ref_log_delta(4.9999999999997154e39, 1e20) > math.log(1e-10)
    assert ref_log_delta(float(gm.gaussian_epsilon(1e-10, sensitivity=1e20, sigma=1.0)), 1e20) <= math.log(1e-10)
    # delta just below 1: the value the code gave before (solving on log delta) is off by 1e-5
    assert _is_root_of_profile(float(gm.gaussian_sigma(1.0, 1 - 1e-16)), 1.0, 1 - 1e-16)
    assert not _is_root_of_profile(0.0598690118537949, 1.0, 1 - 1e-16)


@pytest.mark.parametrize("mu", [1e-200, 1e-9, 1e-3, 1.0, 999.0, 1001.0, 1e8, 1e20, 1e100])
@pytest.mark.parametrize("delta", [1e-300, 1e-10, 0.5, 1 - 1e-16])
def test_gaussian_epsilon_inverts_the_mpmath_profile(mu, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eps = float(gm.gaussian_epsilon(delta, sensitivity=mu, sigma=1.0))
    log_d = mp.log(mp.mpf(delta))
    if eps == 0.0:  # delta(0) <= delta already
        assert ref_log_delta(0.0, mu) <= log_d + 1e-12
    else:
        assert ref_log_delta(eps * (1 + 1e-10), mu) <= log_d + 1e-12 * abs(log_d)
        assert ref_log_delta(eps * (1 - 1e-10), mu) > log_d - 1e-12 * abs(log_d)


def test_sigma_beyond_the_float_range_is_a_value_error_naming_sensitivity():
    with pytest.raises(ValueError, match="sensitivity"):
        gm.gaussian_sigma(1e-300, 1e-300, sensitivity=1e300)  # sigma would be ~1e600
    with pytest.raises(ValueError, match="sensitivity"):
        gm.gaussian_sigma(1e300, 0.5, sensitivity=1e-300)  # ~1e-450
    with pytest.raises(ValueError, match="sensitivity/sigma"):
        gm.gaussian_epsilon(1e-5, sensitivity=1e300, sigma=1e-300)  # eps ~ 1e1200


def test_huge_and_tiny_ratios_give_the_limits_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gm.gaussian_delta(1.0, sensitivity=1e300, sigma=1e-300) == 1.0  # mu = inf: delta -> 1
        assert gm.gaussian_delta(1.0, sensitivity=1e-300, sigma=1e300) == 0.0  # mu underflows: no loss
        assert gm.gaussian_delta(-1e300, sensitivity=1.0, sigma=1.0) == 1.0
        assert gm.gaussian_epsilon(1e-5, sensitivity=1.0, sigma=1e300) == 0.0
        # the squares leave the float range, the loss does not
        loss = gm.gaussian_privacy_loss([3e-200, 4e-200], [1e-200, 0.0], sigma=1e-200)
        assert loss == pytest.approx(12.5 - 3.0, rel=1e-14)
        assert gm.gaussian_rdp(2.0, sensitivity=1e200, sigma=1e200) == pytest.approx(1.0, rel=1e-14)
        assert gm.mahalanobis_sensitivity([3e200, 4e200], precision=np.eye(2)) == pytest.approx(5e200, rel=1e-14)


def test_overflowing_results_are_value_errors_without_data_values():
    """A result beyond the float range is refused; the message names parameters, never the data."""
    with pytest.raises(ValueError, match="sigma") as info:
        gm.gaussian_privacy_loss([3.25e200, 4.5e200], [1.75e200, 0.0], sigma=1e-200)
    assert not re.search(r"3\.25|4\.5|1\.75", str(info.value))
    with pytest.raises(ValueError, match="sensitivity/sigma"):
        gm.gaussian_pdp_epsilon(np.array([0.5, 7.25e200]), sigma=1e-200, delta=1e-5)
    with pytest.raises(ValueError, match="alpha"):
        gm.gaussian_rdp(1e300, sensitivity=1.0, sigma=1e-10)
    with pytest.raises(ValueError, match="epsilons") as info:
        gm.pdp_moments([2.5e200, 1.0], k=2)
    assert "2.5" not in str(info.value)


# ----------------------------------------------------------------------------- ObjPert accounting
def _check_epsilon(eps: float, delta: float, params: dict) -> None:
    """ε ≥ 0, on the safe side (δ(ε) ≤ δ), and tight: ε - (1e-9 ε + 1e-12) misses δ (the inversion's
    absolute resolution is about 1e-13: Brent's xtol and the round-up steps)."""
    assert eps >= 0.0
    assert float(acc.objpert_delta(eps, **params)) <= delta
    if eps > 1e-12:
        assert float(acc.objpert_delta(eps - 1e-9 * eps - 1e-12, **params)) > delta


@pytest.mark.parametrize("beta", [0.0, 0.25])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_objpert_epsilon_is_nonnegative_tight_and_monotone_for_tiny_L(beta, delta):
    Ls = np.logspace(-12, 0, 49)
    eps = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for L in Ls:
            params = dict(L=float(L), beta=beta, lam=1.0, sigma=1.0)
            e = float(acc.objpert_epsilon(delta, **params))
            _check_epsilon(e, delta, params)
            if beta == 0.0:
                # delta(0) = 1 - E e^{-Y} = 1 - 2 Phi(-a) = erf(a/sqrt 2) (a = L/sigma): eps = 0 exactly when it is <= delta
                d0 = float(mp.erf(mp.mpf(L) / mp.sqrt(2)))
                if abs(d0 / delta - 1) > 1e-6:
                    assert (e == 0.0) == (d0 <= delta), (L, e, d0)
            eps.append(e)
    assert np.all(np.diff(eps) >= 0.0)


def test_the_unclamped_inverse_would_fail_the_check():
    """The smallest real root (what the code returned, e.g. -2e-6 at L = 1e-5, beta = 0) fails ``_check_epsilon``."""
    params = dict(L=1e-5, beta=0.0, lam=1.0, sigma=1.0)
    root = optimize.brentq(lambda e: float(acc.objpert_delta(e, **params)) - 1e-5, -1.0, 1.0, xtol=1e-18)
    assert root < 0
    with pytest.raises(AssertionError):
        _check_epsilon(root, 1e-5, params)
    assert acc.objpert_epsilon(1e-5, **params) == 0.0


def test_objpert_sigma_and_calibrate_at_eps_1e300_are_tiny_and_correct():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = acc.objpert_sigma(1e300, 1e-5, L=1.0, beta=0.25, lam=1.0)
        lam, s2 = acc.objpert_calibrate(1e300, 1e-5, L=1.0, beta=0.25)
    # Y = eps0 + a^2/2 + a|Z| with a = L/sigma: eps = 1e300 is met once a^2/2 ~ eps, to float precision
    assert s == pytest.approx(1.0 / math.sqrt(2e300), rel=1e-12)
    assert float(acc.objpert_delta(1e300, L=1.0, beta=0.25, lam=1.0, sigma=s)) <= 1e-5
    assert float(acc.objpert_delta(1e300, L=1.0, beta=0.25, lam=1.0, sigma=s * (1 - 1e-9))) > 1e-5
    assert s2 == pytest.approx(1.3 * float(gm.gaussian_sigma(1e300, 1e-5)), rel=1e-14)
    assert lam == pytest.approx(0.25, rel=1e-9)  # lam > beta is all the bound asks at such an eps
    assert float(acc.objpert_delta(1e300, L=1.0, beta=0.25, lam=lam, sigma=s2)) <= 1e-5
    with pytest.raises(ValueError, match="eps must be at most 1e300"):
        acc.objpert_sigma(1e308, 1e-5, L=1.0, beta=0.25, lam=1.0)


def test_objpert_lambda_with_huge_sigma_is_the_point_mass_closed_form():
    """σ = 1e300: the privacy loss is eps0 (a = 1e-300), so δ(ε) = 1 - e^{ε - eps0} and the smallest λ
    has eps0 = ε - log(1 - δ), i.e. λ = β / (1 - e^{-eps0}) (the code raised brentq's 'f(a) and f(b)')."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lam = acc.objpert_lambda(1.0, 1e-5, L=1.0, beta=0.25, sigma=1e300)
    e0 = 1.0 - math.log1p(-1e-5)
    assert lam == pytest.approx(0.25 / -math.expm1(-e0), rel=1e-9)
    assert float(acc.objpert_delta(1.0, L=1.0, beta=0.25, lam=lam, sigma=1e300)) <= 1e-5
    # sharp, a huge eps: the smallest lam is below the float range; the smallest normal float is valid
    lam = acc.objpert_lambda(1e4, 1e-5, L=1.0, beta=0.25, sigma=1e3, sharp=True)
    assert lam == pytest.approx(np.finfo(float).tiny, rel=1e-9)
    assert float(acc.objpert_delta(1e4, L=1.0, beta=0.25, lam=lam, sigma=1e3, sharp=True)) <= 1e-5


def test_calibrate_names_f_when_the_rule_has_no_lambda():
    """For ε → 0 ObjPert's δ(0) is about twice the Gaussian's at the same σ: f = 1.3 cannot work, f = 3 can."""
    with pytest.raises(ValueError, match=r"f is too small.*increase f"):
        acc.objpert_calibrate(1e-300, 1e-5, L=1.0, beta=0.25)
    lam, sigma = acc.objpert_calibrate(1e-300, 1e-5, L=1.0, beta=0.0, f=3.0)
    assert float(acc.objpert_delta(1e-300, L=1.0, beta=0.0, lam=lam, sigma=sigma)) <= 1e-5
    with pytest.raises(ValueError, match="f is too large"):
        acc.objpert_calibrate(1.0, 1e-5, L=1.0, beta=0.25, f=1e305)


def test_rdp_to_delta_tiny_rdp_and_negative_rdp():
    # dp_accounting's KL bound 0.5 log(1 - e^{-r}) hit a math domain error for r < 1e-16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        delta, order = acc.rdp_to_delta([2.0, 3.0], [1e-300, 0.2], eps=1.0)
    assert delta == pytest.approx(1e-150, rel=1e-12) and order == 2.0
    assert acc.rdp_to_delta([2.0, 3.0], [1e-10, 0.2], eps=1.0) == pytest.approx(
        acc.rdp_to_delta([2.0], [1e-10], eps=1.0), rel=1e-15)
    with pytest.raises(ValueError, match="rdp"):
        acc.rdp_to_epsilon([2.0, 3.0], [-1e300, 0.1], delta=1e-5)


def test_pld_grid_too_fine_is_a_value_error_not_a_hang():
    with pytest.raises(ValueError, match="value_discretization_interval"):
        acc.objpert_pld(L=1e30, beta=0.25, lam=1.0, sigma=2.0, value_discretization_interval=1e-2)
    with pytest.raises(ValueError, match="value_discretization_interval"):
        acc.objpert_pld(**OBJ, value_discretization_interval=1e30)


@pytest.mark.parametrize("alpha, d", [(1000.0, 3), (1000.0, 50), (150.0, 7)])
def test_nonglm_rdp_at_large_orders_matches_mpmath(alpha, d):
    """(α-1)L/σ > 50: the χ_d moment generating function's peak at w ≈ m, integrated around it."""
    with mp.workdps(40):
        a, m = mp.mpf(0.5), (mp.mpf(alpha) - 1) * mp.mpf(0.5)
        logc = (1 - mp.mpf(d) / 2) * mp.log(2) - mp.loggamma(mp.mpf(d) / 2)
        w0 = (m + mp.sqrt(m * m + 4 * (d - 1))) / 2
        f = lambda w: mp.exp(logc + (d - 1) * mp.log(w) - w * w / 2 + m * w - m * m / 2)
        mgf = mp.quad(f, [0, w0 - 20, w0, w0 + 20, mp.inf])
        ref = float(d * -mp.log1p(-mp.mpf(0.25)) + a * a / 2 + (mp.log(mgf) + m * m / 2) / (alpha - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = acc.objpert_rdp_nonglm(alpha, d=d, **OBJ)
    assert got == pytest.approx(ref, rel=1e-13)
    assert acc.objpert_rdp_nonglm(1e300, d=1, **OBJ) == pytest.approx(acc.objpert_rdp(1e300, **OBJ), rel=1e-14)


# ----------------------------------------------------------------------------- types
def test_text_is_never_read_as_a_number():
    for bad in ["1", b"1", ["1", 2], np.array(["1.0"]), np.array([1.0, "2"], dtype=object)]:
        with pytest.raises(TypeError, match="x must be numeric"):
            as_finite_array(bad, "x")
    # numbers that are not floats still are
    assert float(as_finite_array(Fraction(1, 4), "x")) == 0.25
    assert float(as_finite_array(mp.mpf("0.5"), "x")) == 0.5
    with pytest.raises(TypeError, match="eps must be a single number"):
        scalar_positive([1.0, 2.0], "eps")
    with pytest.raises(TypeError, match="eps"):
        gm.gaussian_sigma("1", 1e-5)
    with pytest.raises(TypeError, match="delta"):
        acc.objpert_epsilon("1e-5", **OBJ)


# ----------------------------------------------------------------------------- every function, every edge
_GAUSS = dict(sensitivity=1.0, sigma=1.0)
#: name -> (function, arguments, parameters that are vectorized: a list is allowed there)
CASES = {
    "gaussian_privacy_loss": (gm.gaussian_privacy_loss, dict(delta_z=[0.3, 0.4], noise=[0.1, -0.2], sigma=1.0),
                              {"delta_z", "noise", "sigma"}),
    "gaussian_ex_post_pdp": (gm.gaussian_ex_post_pdp, dict(delta_z=[0.3, 0.4], noise=[0.1, -0.2], sigma=1.0),
                             {"delta_z", "noise", "sigma"}),
    "gaussian_pdp_epsilon": (gm.gaussian_pdp_epsilon, dict(**_GAUSS, delta=1e-5), {"sensitivity", "sigma", "delta"}),
    "gaussian_ex_post_bound": (gm.gaussian_ex_post_bound, dict(**_GAUSS, rho=0.05), {"sensitivity", "sigma", "rho"}),
    "gaussian_delta": (gm.gaussian_delta, dict(eps=1.0, **_GAUSS), {"eps", "sensitivity", "sigma"}),
    "gaussian_epsilon": (gm.gaussian_epsilon, dict(delta=1e-5, **_GAUSS), {"delta", "sensitivity", "sigma"}),
    "gaussian_sigma": (gm.gaussian_sigma, dict(eps=1.0, delta=1e-5, sensitivity=1.0), {"eps", "delta", "sensitivity"}),
    "gaussian_rdp": (gm.gaussian_rdp, dict(alpha=2.0, **_GAUSS), {"alpha", "sensitivity", "sigma"}),
    "gaussian_classic_epsilon": (gm.gaussian_classic_epsilon, dict(**_GAUSS, delta=1e-5),
                                 {"sensitivity", "sigma", "delta"}),
    "mahalanobis_sensitivity": (gm.mahalanobis_sensitivity, dict(delta_z=[0.3, 0.4], precision=[[2.0, 0.0], [0.0, 1.0]]),
                                {"delta_z"}),
    "gaussian_pdp_epsilon_covariance": (gm.gaussian_pdp_epsilon_covariance,
                                        dict(delta_z=[0.3, 0.4], precision=[[2.0, 0.0], [0.0, 1.0]], delta=1e-5),
                                        {"delta_z", "delta"}),
    "pdp_moments": (gm.pdp_moments, dict(epsilons=[0.1, 0.5], k=2), {"epsilons"}),
    "objpert_delta": (acc.objpert_delta, dict(eps=1.0, **OBJ), {"eps"}),
    "objpert_log_delta": (acc.objpert_log_delta, dict(eps=1.0, **OBJ), {"eps"}),
    "objpert_epsilon": (acc.objpert_epsilon, dict(delta=1e-5, **OBJ), {"delta"}),
    "objpert_sigma": (acc.objpert_sigma, dict(eps=1.0, delta=1e-5, L=1.0, beta=0.25, lam=1.0), set()),
    "objpert_lambda": (acc.objpert_lambda, dict(eps=1.0, delta=1e-5, L=1.0, beta=0.25, sigma=5.0), set()),
    "objpert_calibrate": (acc.objpert_calibrate, dict(eps=1.0, delta=1e-5, L=1.0, beta=0.25), set()),
    "objpert_rdp": (acc.objpert_rdp, dict(alpha=2.0, **OBJ), {"alpha"}),
    "rdp_to_epsilon": (acc.rdp_to_epsilon, dict(orders=[2.0, 3.0], rdp=[0.1, 0.2], delta=1e-5), {"orders", "rdp"}),
    "rdp_to_delta": (acc.rdp_to_delta, dict(orders=[2.0, 3.0], rdp=[0.1, 0.2], eps=1.0), {"orders", "rdp"}),
    "objpert_epsilon_rdp": (acc.objpert_epsilon_rdp, dict(delta=1e-5, **OBJ), set()),
    "objpert_dominating_pair": (acc.objpert_dominating_pair, dict(**OBJ), set()),
    "objpert_pld": (acc.objpert_pld, dict(**OBJ, value_discretization_interval=1e-2), set()),
    "objpert_delta_composed": (acc.objpert_delta_composed,
                               dict(eps=1.0, k=2, **OBJ, value_discretization_interval=1e-2), {"eps"}),
    "objpert_rdp_nonglm": (acc.objpert_rdp_nonglm, dict(alpha=2.0, **OBJ, d=2), {"alpha"}),
    "objpert_delta_nonglm": (acc.objpert_delta_nonglm, dict(eps=1.0, **OBJ, d=2), {"eps"}),
}
EXTREMES = [1e-300, 1e-30, 1e30, 1e300, -1e300]
#: the only non-finite value a function may return: log δ = -inf where δ is 0 to below 1e-308
MAY_BE_MINUS_INF = {"objpert_log_delta"}
SOLVER_WORDS = re.compile(r"f\(a\) and f\(b\)|brentq|solver cannot continue|math (domain|range) error|"
                          r"only 0-dimensional|could not convert")


def _call(fn, kw):
    sig = inspect.signature(fn)
    args = [kw[p.name] for p in sig.parameters.values() if p.name in kw and p.kind != p.KEYWORD_ONLY]
    kwargs = {p.name: kw[p.name] for p in sig.parameters.values() if p.name in kw and p.kind == p.KEYWORD_ONLY}
    return fn(*args, **kwargs)


def _variants(base: dict):
    """(parameter, value, arguments) with one argument replaced: extremes, text and a list."""
    for name, value in base.items():
        if name in ("k", "d"):
            continue
        for v in [*EXTREMES, "1", [1.0, 2.0]]:
            kw = dict(base)
            if isinstance(value, list) and not isinstance(v, (str, list)):
                kw[name] = [[v, 0.0], [0.0, 1.0]] if isinstance(value[0], list) else [v, *value[1:]]
            else:
                kw[name] = v
            yield name, v, kw


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_edge_is_an_answer_or_an_error_naming_a_parameter(case):
    fn, base, vectorized = CASES[case]
    params = set(inspect.signature(fn).parameters) | {"L/sigma", "sensitivity/sigma", "beta/lam"}
    for name, v, kw in _variants(base):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a RuntimeWarning or IntegrationWarning fails the test
            try:
                out = _call(fn, kw)
            except (ValueError, TypeError) as exc:
                msg = str(exc)
                assert any(p in msg for p in params), (case, name, v, msg)
                assert not SOLVER_WORDS.search(msg), (case, name, v, msg)
                assert type(exc) in (ValueError, TypeError), (case, name, v, type(exc))
                if isinstance(v, str):
                    assert isinstance(exc, TypeError) and name in msg, (case, name, msg)
                continue
        assert not isinstance(v, str), f"{case}: {name}={v!r} was read as a number"
        if isinstance(v, list) and name not in vectorized:
            raise AssertionError(f"{case}: a list for the scalar {name} was accepted")
        values = [out.eps0, out.a] if isinstance(out, acc.ObjPertDominatingPair) else out
        if case == "objpert_pld":
            values = [out.get_delta_for_epsilon(1.0)]
        arr = np.asarray(values, dtype=float)
        ok = np.isfinite(arr) | ((arr == -np.inf) & (case in MAY_BE_MINUS_INF))
        assert np.all(ok), (case, name, v, out)


def test_the_edge_check_would_catch_the_old_failures():
    """The harness flags what the code did before: a warning, a brentq message, a silently read string."""
    def overflowing(eps, *, sigma):
        return np.exp(np.asarray(eps) * 1e300)

    def leaking(eps, *, sigma):
        return optimize.brentq(lambda x: 1.0, 0.0, 1.0)

    def coercing(eps, *, sigma):
        return float(eps)

    for bad in (overflowing, leaking, coercing):
        CASES["_bad"] = (bad, dict(eps=1.0, sigma=1.0), {"eps", "sigma"})
        try:
            with pytest.raises((AssertionError, RuntimeWarning)):
                test_every_edge_is_an_answer_or_an_error_naming_a_parameter("_bad")
        finally:
            del CASES["_bad"]
