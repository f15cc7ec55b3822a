"""PrivacyReport.bounds / sup_over_labels / PersonalBounds: the readable per-person result."""

from __future__ import annotations

import numpy as np
import pytest

from pdpkit._display import fmt_up
from pdpkit.objpert import objpert_fit
from pdpkit.report import PersonalBounds, privacy_report

N, D = 300, 4
REPORTS = [("data-independent", {}), ("data-dependent", dict(sigma_hessian=0.3, sigma_gradient=2.0)),
           ("adaptive", dict(sigma_hessian=1.0, sigma_gradient=2.0, sigma_lambda_min=1.0))]


def _data(loss: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    t = X @ rng.normal(size=D)
    y = np.where(t + 0.3 * rng.normal(size=N) > 0, 1.0, -1.0) if loss == "logistic" else np.clip(t, -1, 1)
    return X, y, rng


def _grid_max(rep, T, labels, block: int = 500, **kw):
    """max over the labels of rep.epsilon_bound(T, label): every (target, label) pair evaluated.

    Blocks of labels in one call, except with ``uniform=True``, whose bound for a call
    depends on how many targets it holds (a union bound over them).
    """
    T = np.asarray(T)
    if kw.get("uniform") is True:
        return np.max([rep.epsilon_bound(T, np.full(T.shape[0], v), **kw) for v in labels], axis=0)
    best = np.full(T.shape[0], -np.inf)
    for start in range(0, labels.size, block):
        v = labels[start:start + block]
        vals = rep.epsilon_bound(np.tile(T, (v.size, 1)), np.repeat(v, T.shape[0]), **kw)
        best = np.maximum(best, np.asarray(vals).reshape(v.size, T.shape[0]).max(axis=0))
    return best


def _report(loss: str, method: str, kw: dict, lam: float = 5.0, sigma: float = 3.0):
    X, y, rng = _data(loss)
    fit = objpert_fit(X, y, loss, lam=lam, sigma=sigma, rng=1, norm_bound=1.0)
    return privacy_report(fit, X, y, method=method, rng=2, **kw), rng


@pytest.mark.parametrize("loss", ["huber", "robust_log"])
@pytest.mark.parametrize("method,kw", REPORTS)
@pytest.mark.parametrize("uniform", [False, True, "domain"])
def test_sup_over_labels_is_the_maximum_over_a_dense_label_grid(loss, method, kw, uniform):
    rep, rng = _report(loss, method, kw, lam=2.0 if method == "data-independent" else 5.0)
    T = rng.normal(size=(40, D)) * rng.uniform(0.1, 6.0, size=(40, 1))
    got = rep.sup_over_labels(T, label_bounds=(-1.0, 1.0), uniform=uniform)
    # uniform=True takes one call per label (its union bound counts a call's targets): 1001
    # labels, whose grid maximum is within 1e-8 (relative) of the supremum on these reports
    ys = np.linspace(-1.0, 1.0, 1001 if uniform is True else 4001)
    grid = _grid_max(rep, T, ys, uniform=uniform)
    # never below the grid's maximum; above it only by the peak the grid misses (B is flat there)
    assert np.all(got >= grid * (1 - 1e-14))
    assert np.all(got <= grid * (1 + 1e-6))


def test_sup_over_labels_finds_interior_maxima():
    """Cases where the maximum is strictly inside the label range (an end-point search would be wrong)."""
    rep, rng = _report("robust_log", "data-independent", {}, lam=2.0)
    T = rng.normal(size=(400, D)) * rng.uniform(0.1, 6.0, size=(400, 1))
    got = rep.sup_over_labels(T, label_bounds=(-1.0, 1.0))
    ends = np.maximum(rep.epsilon_bound(T, np.full(400, -1.0)), rep.epsilon_bound(T, np.full(400, 1.0)))
    t = T @ rep.theta
    inside = (t > -1) & (t < 1)
    ends = np.where(inside, np.maximum(ends, rep.epsilon_bound(T, np.clip(t, -1, 1))), ends)
    assert np.any(got > ends * (1 + 1e-9)), "no interior maximum in the sample: the test would not test"
    fine = _grid_max(rep, T, np.linspace(-1, 1, 20001), block=100)
    assert np.all(got >= fine * (1 - 1e-14))
    assert np.max(got / fine - 1) < 1e-9


def test_a_wrong_maximizer_fails_the_grid_check():
    """Test the tester: the larger end point (a plausible shortcut) is below the grid somewhere."""
    rep, rng = _report("robust_log", "data-independent", {}, lam=2.0)
    T = rng.normal(size=(400, D)) * rng.uniform(0.1, 6.0, size=(400, 1))
    ends = np.maximum(rep.epsilon_bound(T, np.full(400, -1.0)), rep.epsilon_bound(T, np.full(400, 1.0)))
    grid = _grid_max(rep, T, np.linspace(-1, 1, 2001), block=100)
    assert np.any(ends < grid * (1 - 1e-9))


@pytest.mark.parametrize("method,kw", REPORTS)
def test_logistic_without_label_is_the_larger_of_the_two(method, kw):
    rep, rng = _report("logistic", method, kw)
    T = rng.normal(size=(30, D))
    got = rep.bounds(T)
    want = np.maximum(rep.epsilon_bound(T, np.ones(30)), rep.epsilon_bound(T, -np.ones(30)))
    np.testing.assert_array_equal(np.asarray(got), want)
    assert not got.label_known.any()


def test_regression_without_label_needs_label_bounds():
    rep, rng = _report("huber", "data-independent", {})
    with pytest.raises(ValueError, match="label_bounds"):
        rep.bounds(rng.normal(size=(3, D)))
    with pytest.raises(ValueError, match="low < high"):
        rep.bounds(rng.normal(size=(3, D)), label_bounds=(1.0, -1.0))


def test_personal_bounds_is_readable_and_behaves_as_an_array():
    rep, rng = _report("logistic", "adaptive", REPORTS[2][1])
    T = rng.normal(size=(5, D)) / 3
    y = np.where(rng.random(5) > 0.5, 1.0, -1.0)

    class G:  # a guarantee-like object (pdpkit.release.Guarantee has these fields)
        epsilon, delta = 1.25, 2e-5
        parts = (type("P", (), dict(name="model", epsilon=1.0, delta=1e-5))(),
                 type("P", (), dict(name="report", epsilon=0.5, delta=1e-5))())

    res = rep.bounds(T, y, guarantee=G(), index=list("abcde"))
    assert isinstance(res, PersonalBounds)
    want = rep.epsilon_bound(T, y)
    np.testing.assert_array_equal(np.asarray(res), want)
    np.testing.assert_array_equal(res + 0, want)
    assert np.all(res >= 0) and len(res) == 5 and res[1] == want[1] and res.shape == (5,)
    assert float(np.max(res)) == want.max() == res.max() and res.tolist() == want.tolist()
    assert np.quantile(res, 0.5) == np.quantile(want, 0.5)
    import pickle

    back = pickle.loads(pickle.dumps(res))
    np.testing.assert_array_equal(np.asarray(back), want)
    assert back.total_epsilon == 1.25
    frame = res.to_frame()
    assert list(frame.index) == list("abcde")
    np.testing.assert_allclose(frame["factor"], np.exp(want))
    assert (frame["probability"] == 0.95).all()
    assert frame.attrs["total_epsilon"] == 1.25 and frame.attrs["report_epsilon"] == 0.5
    text = res.summary()
    assert "probability at least 95%" in text and "factor" in text and "1.25" in text
    one = rep.bounds(T[0], y[0]).summary()
    assert "this person's privacy loss from the published model is at most" in one
    assert f"at most {fmt_up(want[0], 3)}," in one and f"factor {fmt_up(np.exp(want[0]), 3)}." in one
    assert "PersonalBounds(5 people" in repr(res) and "adaptive" in repr(res)
    assert "whatever their label" in rep.bounds(T[0]).summary()


def _bounds(eps, **kw) -> PersonalBounds:
    return PersonalBounds(epsilon=eps, label_known=np.ones(len(eps), bool), rho=0.05, method="adaptive", **kw)


def test_every_displayed_bound_is_rounded_up():
    """Values where round-to-nearest goes down: each display must show the digits above, the numbers stay exact."""
    guarantee = dict(total_epsilon=1.12341, total_delta=1.0001e-6, report_epsilon=0.50001, report_delta=1e-6)
    one = _bounds([0.37241], **guarantee)
    assert (f"{0.37241:.3g}", f"{np.exp(0.37241):.3g}") == ("0.372", "1.45")  # what nearest rounding showed
    text = one.summary()
    assert "at most 0.373," in text and "at most a factor 1.46." in text
    assert "(epsilon, delta) = (1.13, 1.1e-06)" in text and "the report took (0.501, 1e-06)" in text
    assert "total guarantee (1.124, 1.01e-06)-DP" in repr(one) and "epsilon <= [0.3725] nats" in repr(one)

    many = _bounds([0.37241, 0.12341, 2.00001, 0.0012341], **guarantee, index=list("abcd"))
    text = many.summary()
    # median (0.12341 + 0.37241) / 2 = 0.24791; factors e^0.0012341 = 1.001235 and e^2.00001 = 7.38913
    assert "(median 0.248, largest 2.01, smallest 0.00124)" in text and "between 1.01 and 7.39." in text
    assert "epsilon <= [0.3725, 0.1235, 2.001, 0.001235] nats" in repr(many)
    html = many._repr_html_()
    for shown in ("<td>0.3725</td>", "<td>1.452</td>", "<td>2.001</td>", "<td>0.001235</td>", "<td>1.002</td>"):
        assert shown in html
    frame = many.to_frame()  # numbers, not strings: exact
    assert frame["epsilon_bound"].tolist() == [0.37241, 0.12341, 2.00001, 0.0012341]
    np.testing.assert_array_equal(frame["factor"], np.exp(many.epsilon))


def test_a_long_repr_rounds_every_shown_bound_up():
    eps = np.linspace(0.0, 1.0, 20) + 1e-9
    shown = repr(_bounds(eps)).split("epsilon <= [", 1)[1].split("]", 1)[0].split(", ")
    assert shown[3] == "..." and len(shown) == 7
    kept = np.concatenate([eps[:3], eps[-3:]])
    values = [float(v) for v in shown[:3] + shown[4:]]
    assert values == [float(fmt_up(v, 4)) for v in kept] and all(v >= e for v, e in zip(values, kept, strict=True))
    assert shown[-1] == "1.001"  # 1 + 1e-9 is above 1: never shown as 1
