"""Every guarantee pdpkit attaches is true: attacks on what a user actually releases.

* The solver: ObjPert's proof is for the exact minimizer. A data-dependent stopping rule that
  may release the starting point distinguishes neighbours far beyond the claimed δ (the
  broken variant below must be refuted); the released θ — certified public tolerance plus
  output noise — must not be (Clopper–Pearson audits with events fixed in advance).
* Release files: a corpus of tampered files, each refused with the field named.
* Pickling and deep copies of estimators with every report method.
* Messages and reprs of the failure paths carry no number computed from the data.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import re

import numpy as np
import pytest

from pdpkit import amp, objpert
from pdpkit._solver import _solve
from pdpkit.accounting import objpert_calibrate, objpert_output_delta
from pdpkit.audit import audit_delta_curve
from pdpkit.estimators import ObjPertClassifier, ObjPertRegressor
from pdpkit.losses import get_loss
from pdpkit.release import Guarantee, Release, objpert_release

LOGISTIC = get_loss("logistic")


# ------------------------------------------------------------------ the solver
def _pair(n=150):
    """D: n rows equal to 1e-9 with label 1; D' = D plus the row 1.0 (d = 1)."""
    X = np.full((n, 1), 1e-9)
    y = np.ones(n)
    return (X, y), (np.vstack([X, [[1.0]]]), np.append(y, 1.0))


def _old_release(X, y, lam, sigma, rng):
    """The former stopping rule: a relative tolerance times n max||x|| L, and the solver's point released."""
    b = rng.normal(0.0, sigma, size=X.shape[1])
    tol_abs = 1e-2 * max(1.0, X.shape[0] * float(np.max(np.linalg.norm(X, axis=1))))
    theta, *_ = _solve(X, y, LOGISTIC, lam, b, tol_abs, 200, "auto", want_hessian=False, certify=False)
    return theta


def _sampler(data, release, lam, sigma):
    X, y = data

    def sample(m, rng):
        return np.array([release(X, y, lam, sigma, rng)[0] for _ in range(m)])

    return sample


def _cached(sample):
    """The sampler's first draw of m releases, returned again on every later call for m (no new fits)."""
    store = {}

    def again(m, rng):
        if m not in store:
            store[m] = sample(m, rng)
        return store[m]

    return again


def _new_release(X, y, lam, sigma, rng):
    return objpert.objpert_fit(X, y, LOGISTIC, lam=lam, sigma=sigma, rng=rng).theta_released


def test_the_old_stopping_rule_is_refuted_and_the_release_is_not():
    lam, sigma = objpert_calibrate(1.0, 1e-5, L=1.0, beta=0.25, sharp=True)
    D, Dp = _pair()
    is_zero = lambda th: (th == 0.0).astype(float)  # the event the attack uses, fixed in advance
    # the broken variant: the starting point theta = 0 is released far more often on D' than on D
    old = audit_delta_curve(_sampler(Dp, _old_release, lam, sigma), _sampler(D, _old_release, lam, sigma),
                            is_zero, [0.5], [1.0], [1e-5], n_samples=1500, alpha=0.01, rng=1)
    assert not old.passed and old.delta_lower[0] > 0.1, old.summary()
    # the release: same events, and threshold events on theta itself, all fixed before sampling
    fit = objpert.objpert_fit(*D, LOGISTIC, lam=lam, sigma=sigma, rng=0)
    g = objpert_release(fit, delta=1e-5).guarantee
    assert g.epsilon <= 1.0 + 1e-4 and g.epsilon > 1.0  # ObjPert at (1, 1e-5), plus the output noise's share
    # one set of 1500 releases per data set, drawn once and shared by the six audits: each audit's event
    # is fixed before sampling and its samples are i.i.d. releases, so each test keeps its level
    draws = {id(data): _cached(_sampler(data, _new_release, lam, sigma)) for data in (D, Dp)}
    for stat, thr in ((is_zero, 0.5), (lambda th: th, 0.0), (lambda th: th, -0.05)):
        for P, Q in ((Dp, D), (D, Dp)):
            res = audit_delta_curve(draws[id(P)], draws[id(Q)],
                                    stat, [thr], [g.epsilon], [1e-5], n_samples=1500, alpha=0.01, rng=2)
            assert res.passed, res.summary()


def test_release_guarantee_is_the_exact_composition_at_the_fit_parameters():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.where(rng.random(200) < 0.5, 1.0, -1.0)
    fit = objpert.objpert_fit(X, y, LOGISTIC, lam=2.0, sigma=4.0, rng=rng)
    assert fit.output_mu == pytest.approx(1e-3, rel=1e-12)
    g = objpert_release(fit, delta=1e-6).guarantee
    # delta(eps) of the composed pair at the claimed eps is the claimed delta (never above)
    d_at = float(objpert_output_delta(g.epsilon, L=1.0, beta=0.25, lam=2.0, sigma=4.0, mu=fit.output_mu, sharp=True))
    assert d_at <= 1e-6 and d_at == pytest.approx(1e-6, rel=1e-6)
    # a deliberately wrong variant: ObjPert alone (the output noise not paid for) claims less
    from pdpkit.accounting import objpert_epsilon

    assert objpert_epsilon(1e-6, L=1.0, beta=0.25, lam=2.0, sigma=4.0, sharp=True) < g.epsilon


def test_a_tolerance_the_guarantee_does_not_pay_for_is_refused():
    D, _ = _pair()
    with pytest.raises(TypeError, match="grad_tol"):
        objpert.objpert_fit(*D, LOGISTIC, lam=1.0, sigma=1.0, tol=1e-2)
    fit = objpert.objpert_fit(*D, LOGISTIC, lam=1.0, sigma=1.0, rng=0, grad_tol=1e-3)
    # a larger tolerance is paid for: proportionally larger output noise at the same mu
    assert fit.sigma_out == pytest.approx(2e-3 / 1e-3, rel=1e-12) and fit.output_mu == pytest.approx(1e-3)


# ------------------------------------------------------------ release integrity
def _estimator_release(report="adaptive"):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.normal(size=400) > 0, "yes", "no")
    kw = dict(report_epsilon=0.5, report_delta=1e-6) if report not in (None, "data-independent") else {}
    if report == "data-dependent":  # Prop 21 needs lam >= 2 tau sigma_H
        kw["lam"] = 60.0
    est = ObjPertClassifier(1.0, 1e-6, classes=["no", "yes"], report=report, random_state=0, **kw)
    import pandas as pd

    est.fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    return est, X, y


@pytest.fixture(scope="module")
def release_text():
    est, _, _ = _estimator_release()
    return est.release_.to_json()


def test_release_guarantee_is_the_total_with_its_parts(release_text):
    est, _, _ = _estimator_release()
    g = est.release_.guarantee
    assert [p.name for p in g.parts] == ["model", "report"]
    assert g.delta == pytest.approx(2e-6)
    assert g.part("model").epsilon == pytest.approx(1.0, rel=1e-8) and g.part("report").epsilon == pytest.approx(0.5)
    assert g.epsilon < g.part("model").epsilon + g.part("report").epsilon  # exact composition, tighter than the sum
    assert est.privacy_spent() == g
    back = Release.from_json(release_text)  # verifies by default
    assert back.guarantee == g


def _tamper(text, path, value=None, delete=False):
    data = json.loads(text)
    node = data
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return json.dumps(data)


TAMPERED = [
    (("guarantee", "epsilon"), 0.01, r"guarantee\.epsilon"),
    (("guarantee", "parts", 0, "epsilon"), 0.01, r"guarantee\.parts\[0\]\.epsilon"),
    (("guarantee", "delta"), 0, r"guarantee\.delta"),
    (("guarantee", "accounting"), "basic", r"guarantee\.accounting"),
    (("sigma",), -1, r"\bsigma\b"),
    (("sigma",), "7", r"\bsigma\b"),
    (("sigma",), 100.0, r"guarantee"),  # a valid value, but not the one the guarantee was computed at
    (("lam",), -5, r"\blam\b"),
    (("lam",), True, r"\blam\b"),
    (("loss",), "hinge", r"\bloss\b"),
    (("loss",), "huber", r"classes"),
    (("classes",), ["a", "b", "c"], r"classes"),
    (("theta",), [0.1, 0.2], r"feature_names|theta"),
    (("theta",), [0.1, "x", 0.2, 0.3], r"theta"),
    (("norm_bound",), -1, r"norm_bound"),
    (("norm_bound",), None, r"norm_bound"),
    (("norm_bound",), 2.0, r"guarantee"),
    (("fit_intercept",), "false", r"fit_intercept"),
    (("fit_intercept",), 0, r"fit_intercept"),
    (("grad_tol",), 1e-2, r"guarantee"),
    (("sigma_out",), 1e-12, r"guarantee"),
    (("row_norm",), "ignore", r"row_norm"),
    (("report", "theta"), [0.0, 0.0, 0.0, 0.0], r"report.*theta"),
    (("report", "lam"), 1.0, r"report.*lam"),
    (("report", "rho"), 2.0, r"report\.rho"),
    (("report", "sigma_hessian"), 1e-9, r"guarantee"),
    (("report", "method"), "data-independent", r"report"),
    (("format",), "pdpkit-release/1", r"format"),
    (("seeded",), "true", r"seeded"),
    (("extra",), 1, r"unknown field"),
    (("feature_names",), ["a", "a", "c"], r"feature_names"),
]


@pytest.mark.parametrize("path, value, pattern", TAMPERED, ids=[".".join(map(str, t[0])) + "=" + repr(t[1])
                                                                 for t in TAMPERED])
def test_a_tampered_release_is_refused_naming_the_field(release_text, path, value, pattern):
    bad = _tamper(release_text, path, value)
    with pytest.raises((ValueError, TypeError), match=pattern):
        Release.from_json(bad)


def test_deleted_fields_nan_and_the_untampered_file(release_text):
    for key in ("guarantee", "sigma_out", "theta", "seeded"):
        with pytest.raises(ValueError, match=key):
            Release.from_json(_tamper(release_text, (key,), delete=True))
    with pytest.raises(ValueError, match="NaN"):
        Release.from_json(release_text.replace('"lam": ', '"lam": NaN, "x": ', 1))
    Release.from_json(release_text)  # the test of the tester: the original loads
    assert Release.from_json(_tamper(release_text, ("guarantee", "epsilon"), 0.01), verify=False)  # schema alone


def test_a_release_at_another_bound_than_the_fit_enforced_is_refused():
    rng = np.random.default_rng(6)
    X = 8.7 * rng.normal(size=(50, 2)) / np.sqrt(2)
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    unbounded = objpert.objpert_fit(X, y, LOGISTIC, lam=1.0, sigma=1.0, rng=0, norm_bound=None)
    with pytest.raises(ValueError, match="norm_bound"):
        objpert_release(unbounded, delta=1e-5, norm_bound=1.0)
    assert objpert_release(unbounded, delta=1e-5).guarantee is None
    Xs = X / np.linalg.norm(X, axis=1).max()
    fit = objpert.objpert_fit(Xs, y, LOGISTIC, lam=1.0, sigma=1.0, rng=0)
    with pytest.raises(ValueError, match="norm_bound"):
        objpert_release(fit, delta=1e-5, norm_bound=2.0)
    assert objpert_release(fit, delta=1e-5, norm_bound=1.0).guarantee is not None
    g = Guarantee(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="norm_bound"):
        Release(theta=np.ones(2), lam=1.0, sigma=1.0, loss="logistic", norm_bound=None, grad_tol=1e-8,
                sigma_out=1e-5, guarantee=g)


def test_cli_writes_the_total_and_refuses_a_tampered_file(tmp_path, capsys):
    # in this process (``python -m pdpkit`` itself is tests/test_cli.py's)
    from pdpkit import cli

    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 2))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.where(X[:, 0] > 0, "yes", "no")
    data = tmp_path / "train.csv"
    data.write_text("f0,f1,label\n" + "".join(f"{float(a)!r},{float(b)!r},{c}\n" for (a, b), c in zip(X, y)))
    out = tmp_path / "release.json"
    argv = ["fit", str(data), "--label", "label", "--epsilon", "1", "--delta", "1e-5",
            "--report", "adaptive", "--report-epsilon", "0.5", "--report-delta", "1e-5", "--seed", "0",
            "--classes", "no,yes", "--out", str(out)]
    assert cli.main(argv) == 0, capsys.readouterr().err
    stdout = capsys.readouterr().out
    written = json.loads(out.read_text())["guarantee"]
    assert written["delta"] == pytest.approx(2e-5) and [p["name"] for p in written["parts"]] == ["model", "report"]
    printed = float(re.search(r"\(([\d.]+), 2e-05\)-DP", stdout).group(1))
    # what is printed is the total written, rounded up (an upper bound is never shown below itself)
    assert written["epsilon"] <= printed <= written["epsilon"] + 1e-3
    bad = tmp_path / "bad.json"
    bad.write_text(_tamper(out.read_text(), ("guarantee", "epsilon"), 0.01))
    for sub in (["predict", str(bad), str(data), "--out", str(tmp_path / "p.csv")],
                ["report", str(bad), str(data), "--label", "label", "--out", str(tmp_path / "r.csv")]):
        assert cli.main(sub) == 2
        err = capsys.readouterr().err
        assert "guarantee.epsilon" in err and "Traceback" not in err
    assert not (tmp_path / "p.csv").exists() and not (tmp_path / "r.csv").exists()


# ------------------------------------------------------------------- pickling
@pytest.mark.parametrize("report", [None, "data-independent", "data-dependent", "adaptive"])
def test_fitted_estimators_pickle_and_deepcopy_with_every_report(report):
    est, X, y = _estimator_release(report)
    for clone in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        np.testing.assert_array_equal(clone.coef_, est.coef_)
        assert clone.privacy_spent() == est.privacy_spent()
        if report is not None:
            import pandas as pd

            frame = pd.DataFrame(X[:5], columns=["a", "b", "c"])
            np.testing.assert_array_equal(clone.privacy_report(frame, y[:5]), est.privacy_report(frame, y[:5]))


# ------------------------------------------------------------------- messages
def _numbers(text, allowed=()):
    return [m for m in re.findall(r"(?<![A-Za-z_])\d+(?:\.\d+)?(?:e[+-]?\d+)?", text) if m not in allowed]


def test_failure_messages_and_reprs_carry_no_data_dependent_number():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 4)) * 5
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    msgs = []
    for kw in (dict(max_iter=1), dict(grad_tol=1e-30)):
        with pytest.raises(RuntimeError) as info:
            objpert.objpert_fit(X, y, LOGISTIC, lam=1e-3, sigma=1.0, rng=0, norm_bound=None, **kw)
        msgs.append((str(info.value), ("1", "1e-30", "200", "64")))
    fit = objpert.objpert_fit(X / 20, y, LOGISTIC, lam=1.0, sigma=1.0, rng=0)
    from pdpkit import report as rp

    with pytest.raises(ValueError) as info:
        rp.privacy_report(fit, X / 20 + 0.01, y, method="data-dependent", sigma_hessian=0.01)
    msgs.append((str(info.value), ()))
    with pytest.raises(ValueError) as info:
        rp.privacy_report(fit, X[:10] / 20, y[:10], method="data-dependent", sigma_hessian=0.01)
    msgs.append((str(info.value), ("10", "4")))  # the caller's own shape and d
    with pytest.raises(RuntimeError) as info:
        amp.amp_fit(X / 20, y, "logistic", lam=1e-3, sigma=1.0, sigma_out=1.0, tau=1e-300, max_iter=2, rng=0)
    msgs.append((str(info.value), ("1e-300", "2")))
    for text, allowed in msgs:
        assert not _numbers(text, allowed), text
    # the test of the tester: the former message is caught
    assert _numbers("perturbed-gradient norm 6.934e+01 (tolerance 8.047e-08)")
    res = amp.amp_fit(X / 20, y, "logistic", lam=1.0, sigma=1.0, sigma_out=1.0, tau=1e-6, rng=0)
    text = repr(res)
    assert "grad_norm_nonprivate" not in text and "n_iter" not in text
    text = repr(fit)
    assert "theta_released=" in text and " b=" not in text and "grad_norm" not in text and " n=" not in text


def test_clipped_loss_constants_are_those_of_its_rows():
    c1 = amp.ClippedGLMLoss("logistic", 1.0)
    c10 = amp.ClippedGLMLoss("logistic", 1.0, norm_bound=10.0)
    assert c1.smoothness == 0.25 and c10.smoothness == pytest.approx(25.0) and c10.lipschitz == 1.0
    rng = np.random.default_rng(9)
    X = 10 * rng.normal(size=(30, 2)) / math.sqrt(2) / 3
    y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
    with pytest.raises(ValueError, match="norm_bound"):
        amp.amp_fit(X * 100, y, "logistic", lam=1.0, sigma=1.0, sigma_out=1.0, tau=1e-6, clip=1.0, rng=0)
    res = amp.amp_fit(X, y, "logistic", lam=1.0, sigma=1.0, sigma_out=1.0, tau=1e-6, clip=1.0, rng=0,
                      norm_bound=float(np.linalg.norm(X, axis=1).max()))
    assert res.beta == pytest.approx(0.25 * res.norm_bound**2)


def test_estimator_edges_name_parameters_the_caller_can_set():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    for eps in (50.0, 500.0):
        est = ObjPertClassifier(eps, classes=[0, 1], row_norm="clip", random_state=0).fit(X, y)
        assert est.privacy_spent().epsilon <= eps and est.score(X, y) > 0.8
    est = ObjPertClassifier(1.0, 0.5, classes=[0, 1], row_norm="clip", random_state=0).fit(X, y)
    assert est.privacy_spent().delta == 0.5 and est.privacy_spent().epsilon <= 1.0
    for eps in (1e-6, 0.005):  # the output noise's mu shrinks with a tiny eps: still a valid fit
        est = ObjPertClassifier(eps, classes=[0, 1], row_norm="clip", random_state=0).fit(X, y)
        assert est.privacy_spent().epsilon <= eps * (1 + 1e-9)
    for kw, exc, name in ((dict(epsilon=1e300), ValueError, "epsilon"),
                          (dict(epsilon=1e-300), ValueError, "epsilon"),
                          (dict(epsilon=1e4), ValueError, "epsilon"),
                          (dict(sigma=1e300), ValueError, "sigma"),
                          (dict(sigma=1e-300), ValueError, "sigma"),
                          (dict(delta=1e-300), ValueError, "delta"),
                          (dict(fit_intercept="no"), TypeError, "fit_intercept"),
                          (dict(epsilon="1"), TypeError, "epsilon"),
                          (dict(epsilon=[1, 2]), TypeError, "epsilon"),
                          (dict(grad_tol=-1.0), ValueError, "grad_tol")):
        with pytest.raises(exc, match=name):
            ObjPertClassifier(classes=[0, 1], row_norm="clip", **kw).fit(X, y)
    # no iteration cap to set: the solver's budget is proven, so whether a fit ends never depends on a record
    for cls in (ObjPertClassifier, ObjPertRegressor):
        with pytest.raises(TypeError, match="solver_max_iter"):
            cls(solver_max_iter=200)
    # the ill-conditioned fit that used to run out of solver_max_iter=1 iterations ends
    reg = ObjPertRegressor(lam=1e-3, sigma=1.0, row_norm="clip", random_state=0).fit(X, y.astype(float) * 100)
    assert np.all(np.isfinite(reg.coef_)) and reg.privacy_spent() is not None


def test_the_fast_gaussian_profile_is_never_below_the_exact_one():
    from pdpkit.accounting import _gauss_delta_scalar
    from pdpkit.gaussian import delta_from_mu

    xs = np.concatenate([np.linspace(-50, 200, 501), [0.0, 1e-12, 1e-6, -1e-6]])
    for mu in (1e-300, 1e-20, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1.0, 10.0, 100.0):
        exact_all = delta_from_mu(xs, np.full(xs.size, mu))
        for x, exact in zip(xs, exact_all, strict=True):
            fast = _gauss_delta_scalar(float(x), mu)
            assert fast >= exact * (1 - 1e-15), (mu, x, fast, exact)  # the safe side
            assert fast <= exact * (1 + 1e-7) + 1e-300, (mu, x, fast, exact)
    # the test of the tester: the plain log-space form falls below the exact value at small mu
    from scipy import special

    mu, x = 1e-8, 0.0
    la, lb = special.log_ndtr(0.5 * mu - x / mu), special.log_ndtr(-0.5 * mu - x / mu)
    plain = math.exp(la) * -math.expm1(x + lb - la)
    assert plain < float(delta_from_mu(np.array([x]), np.array([mu]))[0]) * (1 - 1e-12)
