"""Tests of pdpkit.losses against sympy (high-precision mpmath evaluation) and finite differences."""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest
import sympy as sp

from pdpkit import losses
from pdpkit.losses import GLMLoss, Huber, get_loss, huber, logistic, robust_log, squared

T, Y = sp.symbols("t y", real=True)


def _reference(name: str, scale: float = 1.0) -> sp.Expr:
    """Each loss written out independently from the issue's definitions."""
    if name == "logistic":
        return sp.log(1 + sp.exp(-Y * T))
    if name == "squared":
        return (Y - T) ** 2 / 2
    if name == "robust_log":
        return sp.log(1 + sp.exp(Y - T)) + sp.log(1 + sp.exp(T - Y))
    if name == "huber":
        d = sp.nsimplify(scale)
        return d**2 * (sp.sqrt(1 + ((Y - T) / d) ** 2) - 1)
    raise AssertionError(name)


CASES = [
    (logistic, "logistic", 1.0),
    (squared, "squared", 1.0),
    (robust_log, "robust_log", 1.0),
    (huber, "huber", 1.0),
    (Huber(0.3), "huber", 0.3),
]


def _labels(loss: GLMLoss, rng: np.random.Generator, m: int) -> np.ndarray:
    if loss is logistic:
        return rng.choice([-1.0, 1.0], size=m)
    return rng.normal(scale=3.0, size=m)


def _points(rng: np.random.Generator) -> np.ndarray:
    """Random points at all scales, including |t| up to 1e4."""
    return np.concatenate([
        rng.normal(scale=2.0, size=12),
        rng.uniform(-40, 40, size=8),
        np.sign(rng.normal(size=10)) * 10 ** rng.uniform(1, 4, size=10),
        [1e4, -1e4, 0.0],
    ])


@pytest.mark.parametrize("loss,name,scale", CASES, ids=lambda c: getattr(c, "name", str(c)))
def test_derivatives_match_sympy_at_high_precision(loss, name, scale):
    f = _reference(name, scale)
    exprs = [f] + [sp.diff(f, T, k) for k in (1, 2, 3)]
    funcs = [sp.lambdify((T, Y), e, modules="mpmath") for e in exprs]
    rng = np.random.default_rng(1)
    t = _points(rng)
    y = _labels(loss, rng, t.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / invalid-value warnings anywhere
        ours = [loss.value(t, y), loss.d1(t, y), loss.d2(t, y), loss.d3(t, y)]
    def ref_value(func, ti: float, yi: float) -> float:
        # enough digits that 1 + e^{-|t|} is not rounded to 1 (|t| up to 1e4)
        with mpmath.workdps(60 + int(0.5 * (abs(ti) + abs(yi)))):
            return float(func(mpmath.mpf(ti), mpmath.mpf(yi)))

    for k, (func, got) in enumerate(zip(funcs, ours, strict=False)):
        assert np.all(np.isfinite(got)), (name, k)
        ref = np.array([ref_value(func, float(ti), float(yi)) for ti, yi in zip(t, y, strict=False)])
        # relative accuracy, with an absolute floor far below anything the solvers can notice
        err = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)
        ok = (err <= 1e-12) | (np.abs(got - ref) <= 1e-300)
        assert np.all(ok), (name, k, t[~ok], got[~ok], ref[~ok])


@pytest.mark.parametrize("loss,name,scale", CASES, ids=lambda c: getattr(c, "name", str(c)))
def test_derivatives_match_finite_differences(loss, name, scale):
    rng = np.random.default_rng(2)
    t = rng.uniform(-6, 6, size=40)
    y = _labels(loss, rng, t.size)
    h = 1e-5
    for lower, upper in ((loss.value, loss.d1), (loss.d1, loss.d2), (loss.d2, loss.d3)):
        fd = (lower(t + h, y) - lower(t - h, y)) / (2 * h)
        np.testing.assert_allclose(upper(t, y), fd, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("loss", [logistic, squared, robust_log, huber, Huber(0.3)], ids=lambda loss: loss.name)
def test_extreme_arguments_are_finite_without_warnings(loss):
    t = np.array([-1e300, -1e150, -1e4, -745.5, -40.0, 0.0, 40.0, 745.5, 1e4, 1e150, 1e300])
    y = np.ones_like(t) if loss is logistic else np.zeros_like(t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in (loss.d1, loss.d2, loss.d3):
            assert np.all(np.isfinite(method(t, y)))
        small = np.abs(t) <= 1e150
        assert np.all(np.isfinite(loss.value(t[small], y[small])))
        if loss is not squared:
            assert np.all(np.isfinite(loss.value(t, y)))


def _sup_on_grid(func, loss, y) -> float:
    t = np.concatenate([np.linspace(-60, 60, 400_001), [0.0, y, y - 0.5, y + 0.5, y - 1.0, y + 1.0]])
    t = np.concatenate([t, y + np.linspace(-2, 2, 40_001)])  # fine grid around the residual's extrema
    return float(np.max(func(t, np.full_like(t, y))))


@pytest.mark.parametrize("loss,name,scale", [c for c in CASES if c[1] != "squared"], ids=lambda c: getattr(c, "name", str(c)))
def test_constants_are_the_suprema(loss, name, scale):
    # Constants per unit ||x|| are suprema over t; a fine grid attains them to 1e-9.
    for y in ((-1.0, 1.0) if loss is logistic else (0.0, 2.5)):
        lip = _sup_on_grid(lambda t, yy: np.abs(loss.d1(t, yy)), loss, y)
        beta = _sup_on_grid(loss.d2, loss, y)
        d3 = _sup_on_grid(lambda t, yy: np.abs(loss.d3(t, yy)), loss, y)
        sc = _sup_on_grid(lambda t, yy: np.abs(loss.d3(t, yy)) / loss.d2(t, yy), loss, y)
        assert lip <= loss.lipschitz + 1e-12
        assert beta == pytest.approx(loss.smoothness, abs=1e-9)
        assert d3 == pytest.approx(loss.d3_bound, abs=1e-9)
        assert sc <= loss.self_concordance + 1e-12
        if name == "huber":
            assert sc == pytest.approx(loss.self_concordance, abs=1e-9)
            assert lip == pytest.approx(loss.lipschitz, rel=2e-3)  # approached as |t| -> inf
        else:
            assert lip == pytest.approx(loss.lipschitz, abs=1e-12)
            assert sc == pytest.approx(loss.self_concordance, abs=1e-12)


def test_constants_by_sympy():
    # logistic: f'' = 1/4 - tanh(t/2)^2/4 <= 1/4 and f'''/f'' = -tanh(t/2)
    f = _reference("logistic")
    for yv in (1, -1):
        fy = f.subs(Y, yv)
        f2, f3 = sp.diff(fy, T, 2), sp.diff(fy, T, 3)
        assert sp.simplify((f2 - (sp.Rational(1, 4) - sp.tanh(T / 2) ** 2 / 4)).rewrite(sp.exp)) == 0
        assert sp.simplify((f3 / f2 + sp.tanh(T / 2)).rewrite(sp.exp)) == 0
        assert sp.simplify((sp.diff(fy, T) + yv / (1 + sp.exp(yv * T))).rewrite(sp.exp)) == 0
    # robust: h'' = (1 - tanh(u/2)^2)/2 <= 1/2 and h'''/h'' = -tanh(u/2), |h'| = |tanh(u/2)| < 1
    u = sp.symbols("u", real=True)
    h = sp.log(1 + sp.exp(u)) + sp.log(1 + sp.exp(-u))
    assert sp.simplify((sp.diff(h, u) - sp.tanh(u / 2)).rewrite(sp.exp)) == 0
    assert sp.simplify((sp.diff(h, u, 2) - (1 - sp.tanh(u / 2) ** 2) / 2).rewrite(sp.exp)) == 0
    assert sp.simplify((sp.diff(h, u, 3) / sp.diff(h, u, 2) + sp.tanh(u / 2)).rewrite(sp.exp)) == 0
    # sup |f'''| = 2 * max_s s(1-s^2)/4 over s = tanh in (-1, 1): at s = 1/sqrt(3)
    s = sp.symbols("s", real=True)
    g = s * (1 - s**2) / 4
    crit = sp.solve(sp.diff(g, s), s)
    assert max(g.subs(s, c) for c in crit) == sp.sqrt(3) / 18
    assert sp.nsimplify(logistic.d3_bound) == sp.sqrt(3) / 18
    assert robust_log.d3_bound == pytest.approx(float(2 * sp.sqrt(3) / 18), rel=1e-15)
    # pseudo-Huber with scale delta: f'' = (1 + s^2)^(-3/2), |f'''|/f'' = 3|s|/(delta (1 + s^2)) <= 3/(2 delta)
    d = sp.symbols("delta", positive=True)
    r = sp.symbols("r", real=True)
    H = d**2 * (sp.sqrt(1 + (r / d) ** 2) - 1)
    assert sp.simplify(sp.diff(H, r, 2) - (1 + (r / d) ** 2) ** sp.Rational(-3, 2)) == 0
    ratio = sp.simplify(-sp.diff(H, r, 3) / sp.diff(H, r, 2))
    assert sp.simplify(ratio - 3 * r / (d**2 + r**2)) == 0
    assert sp.simplify(ratio.subs(r, d) - sp.Rational(3, 2) / d) == 0
    f3abs = sp.simplify(sp.diff(H, r, 3).subs(r, d / 2))
    assert sp.simplify(sp.Abs(f3abs) - 48 / (25 * sp.sqrt(5) * d)) == 0


@pytest.mark.parametrize("loss,name,scale", CASES, ids=lambda c: getattr(c, "name", str(c)))
def test_symbolic_matches_reference(loss, name, scale):
    assert sp.simplify(loss.symbolic(T, Y) - _reference(name, scale)) == 0


def test_squared_and_huber_limits():
    t = np.linspace(-3, 3, 13)
    y = np.zeros_like(t)
    np.testing.assert_array_equal(squared.d2(t, y), 1.0)
    np.testing.assert_array_equal(squared.d3(t, y), 0.0)
    assert math.isinf(squared.lipschitz)
    # pseudo-Huber ~ squared for |r| << delta and ~ delta |r| for |r| >> delta
    big = Huber(1e4)
    np.testing.assert_allclose(big.value(t, y), squared.value(t, y), rtol=1e-6)
    small = Huber(1e-4)
    np.testing.assert_allclose(small.value(t[t != 0], 0.0), 1e-4 * np.abs(t[t != 0]), rtol=1e-3)


def test_broadcasting():
    t = np.linspace(-2, 2, 5)[:, None]
    y = np.array([-1.0, 1.0])[None, :]
    for method in (logistic.value, logistic.d1, logistic.d2, logistic.d3):
        assert method(t, y).shape == (5, 2)
    assert robust_log.d2(t, y).shape == (5, 2)
    with pytest.raises(ValueError, match="broadcast"):
        logistic.d1(np.zeros(3), np.ones(2))


def test_check_labels_names_y():
    for bad in ([0.0, 1.0], [1.0, 2.0], [0.5]):
        with pytest.raises(ValueError, match=r"\by\b.*-1 and \+1"):
            logistic.check_labels(bad)
        with pytest.raises(ValueError, match=r"\by\b"):
            logistic.value(0.0, bad)
    np.testing.assert_array_equal(logistic.check_labels([1, -1, 1]), [1.0, -1.0, 1.0])
    for loss in (squared, robust_log, huber):
        with pytest.raises(ValueError, match=r"\by\b.*finite"):
            loss.check_labels([0.0, np.nan])
        with pytest.raises(ValueError, match=r"\by\b.*finite"):
            loss.d1(0.0, np.inf)
        assert loss.check_labels([-3.5, 1e6]).dtype == np.float64
    with pytest.raises(ValueError, match=r"\bt\b"):
        logistic.d1(np.nan, 1.0)
    with pytest.raises(TypeError, match=r"\bt\b"):
        logistic.d1("abc", 1.0)


def test_get_loss_and_huber_scale():
    assert get_loss("logistic") is logistic
    assert get_loss("squared") is squared
    assert get_loss("robust_log") is robust_log
    assert get_loss("huber") is huber
    h = Huber(0.5)
    assert get_loss(h) is h
    assert h.lipschitz == 0.5 and h.smoothness == 1.0 and h.self_concordance == 3.0
    with pytest.raises(ValueError, match="loss must be one of"):
        get_loss("hinge")
    with pytest.raises(TypeError, match="loss"):
        get_loss(3)
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="scale"):
            Huber(bad)
    assert set(losses.__all__) >= {"logistic", "squared", "robust_log", "huber", "Huber", "get_loss"}
    assert "logistic" in repr(logistic)


@pytest.mark.parametrize("loss", [logistic, squared, robust_log, huber], ids=lambda loss: loss.name)
def test_fused_value_and_derivatives_equal_the_separate_ones(loss):
    # the solver's one-pass evaluation (sum of f, f', f'') equals the three functions it replaces,
    # out to margins where exp(-|u|) underflows
    rng = np.random.default_rng(5)
    t = np.concatenate([rng.normal(size=500) * 4, [-800.0, -40.0, -1e-300, 0.0, 1e-300, 40.0, 800.0]])
    y = np.where(rng.random(t.size) < 0.5, -1.0, 1.0) if loss is logistic else rng.normal(size=t.size)
    fs, d1, d2 = loss._sum_d1_d2(t, y)
    e1, e2 = loss._d1_d2(t, y)
    np.testing.assert_allclose(d1, e1, rtol=1e-15, atol=0)
    np.testing.assert_allclose(d2, e2, rtol=1e-15, atol=0)
    ref = math.fsum(loss._value(t, y))
    assert abs(fs - ref) <= 1e-13 * abs(ref)
    assert abs(loss._sum_d1_d2(t, -y if loss is logistic else y + 1)[0] - ref) > 1e-6 * abs(ref)  # the tester
