"""The release file of OPS and AdaOPS: round trip, verification, the guarantee, the per-person bound.

Independent references: predictions are compared bit for bit with the fitted estimator's; the
guarantee is recomputed by a fresh accountant charged with the estimator's own events, for OPS
also from the release's public fields alone (:func:`pdpkit.ops.ops_dp_epsilon`), and for AdaOPS
from the composed profile written out here with scipy's normal CDF; each person's bound is
checked against the exact, data-dependent pDP (:func:`pdpkit.ops.ops_pdp_epsilon`) on data sets
and neighbours drawn here, and for AdaOPS against the profile inverted here with brentq. Each
check has a deliberately wrong variant that must fail.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from pdpkit import ops
from pdpkit.accountant import PrivacyAccountant, ledger_guarantee
from pdpkit.events import GaussianEvent
from pdpkit.ops_estimators import AdaOPSRegressor, OPSEstimator, OPSRegressor
from pdpkit.release import OPSRelease, Release, load_release
from pdpkit.schema import Schema
from pdpkit.signing import generate_private_key

LABELS = (0.0, 10.0)


def _data(n: int = 300, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= 0.8 / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(5.0 + X @ np.arange(1.0, d + 1.0) * 3.0 + rng.normal(size=n), *LABELS)
    return X, y


def _schema() -> Schema:
    return Schema.from_dict({"format": "pdpkit-schema/1", "columns": [
        {"name": "a", "kind": "numeric", "low": -1.0, "high": 1.0},
        {"name": "b", "kind": "numeric", "low": -1.0, "high": 1.0},
        {"name": "colour", "kind": "categorical", "categories": ["red", "green"]},
        {"name": "y", "kind": "numeric", "low": 0.0, "high": 10.0, "role": "label"}]})


def _raw(n: int = 300, seed: int = 1) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.uniform(-1, 1, n), "b": rng.uniform(-1, 1, n),
                          "colour": rng.choice(["red", "green"], n)})
    y = np.clip(5.0 + 2.0 * frame["a"] - frame["b"] + (frame["colour"] == "red") + rng.normal(size=n), 0.0, 10.0)
    return frame, np.asarray(y)


def _quiet_load(text: str, **kw) -> OPSRelease:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded releases say so
        return load_release(text, **kw)


FITS = {
    "ops": lambda: OPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=3).fit(*_data()),
    "adaops": lambda: AdaOPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=3).fit(*_data()),
    "ops-schema": lambda: OPSRegressor(1.0, 1e-6, schema=_schema(), row_norm="clip", random_state=3).fit(*_raw()),
    "adaops-schema": lambda: AdaOPSRegressor(1.0, 1e-6, schema=_schema(), random_state=3).fit(*_raw()),
}


def _rounded(text: str) -> str:
    """A wrong writer: the coefficients at 12 significant digits."""
    data = json.loads(text)
    data["theta"] = [float(f"{v:.12g}") for v in data["theta"]]
    return json.dumps(data)


@pytest.mark.parametrize("kind", sorted(FITS))
def test_round_trip_predicts_bit_identically(kind):
    est = FITS[kind]()
    X = _raw(40, seed=9)[0] if "schema" in kind else _data(40, seed=9)[0]
    text = est.release_.to_json(indent=2)
    rel = _quiet_load(text)
    assert isinstance(rel, OPSRelease) and rel.mechanism == kind.split("-")[0]
    back = OPSEstimator.from_release(rel)
    assert type(back) is type(est)
    want = est.predict(X)
    assert np.array_equal(back.predict(X), want) and np.array_equal(rel.predict(X), want)
    if "schema" not in kind:  # whatever the memory layout of the rows
        assert np.array_equal(rel.predict(np.asfortranarray(X)), want)
        assert np.array_equal(back.predict(pd.DataFrame(X).to_numpy(copy=True).T.copy().T), want)
    assert np.array_equal(back.coef_, est.coef_) and back.intercept_ == est.intercept_
    assert (back.lam_, back.gamma_, back.event_) == (est.lam_, est.gamma_, est.event_)
    assert back.privacy_spent() == est.privacy_spent()
    # the tester's control: 12 significant digits are not the release
    assert not np.array_equal(OPSEstimator.from_release(_quiet_load(_rounded(text))).predict(X), want)


def test_from_release_refuses_the_other_mechanism_and_an_objpert_release():
    rel = FITS["adaops"]().release_
    with pytest.raises(TypeError, match="AdaOPSRegressor.from_release"):
        OPSRegressor.from_release(rel)
    assert isinstance(AdaOPSRegressor.from_release(rel), AdaOPSRegressor)
    with pytest.raises(TypeError, match="OPSRelease"):
        OPSEstimator.from_release(object())
    with pytest.raises(ValueError, match="load_release"):
        Release.from_json(rel.to_json())


def _edit(text: str, path: tuple, how) -> str:
    data = json.loads(text)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = how(node[path[-1]])
    return json.dumps(data)


EDITS = {
    "ops": [(("norm_bound",), lambda v: v * 2), (("lam",), lambda v: v * 1.01), (("gamma",), lambda v: v * 1.01),
            (("n_max",), lambda v: v + 50), (("ledger", 0, "params", "gamma"), lambda v: v * 2),
            (("ledger", 0, "params", "x_bound"), lambda v: v / 2), (("guarantee", "epsilon"), lambda v: v / 2),
            (("fit_intercept",), lambda v: not v)],
    "adaops": [(("lam_min_noisy",), lambda v: v + 5.0), (("kappa",), lambda v: v / 2), (("lam",), lambda v: v * 1.01),
               (("gamma",), lambda v: v * 1.01), (("ledger", 0, "params", "sigma_lam"), lambda v: v * 2),
               (("ledger", 0, "params", "eps_ops"), lambda v: v * 0.9), (("n_max",), lambda v: v * 2)],
}


def _naive_verify(text: str) -> bool:
    """A wrong verifier: the total recomputed from the ledger, the release's own fields not compared with it."""
    rel = OPSRelease.from_json(text, verify=False)
    want = ledger_guarantee(rel.ledger, rel.guarantee.delta)
    return math.isclose(want.epsilon, rel.guarantee.epsilon, rel_tol=1e-9)


@pytest.mark.parametrize("kind", ["ops", "adaops"])
def test_an_edited_file_is_refused(kind):
    text = FITS[kind]().release_.to_json()
    _quiet_load(text)  # the file as written verifies
    naive_accepts = 0
    for path, how in EDITS[kind]:
        edited = _edit(text, path, how)
        with pytest.raises((ValueError, TypeError)):
            _quiet_load(edited)
        naive_accepts += _naive_verify(edited) if path[0] not in ("ledger", "guarantee") else 0
    # the tester's control: a verifier that recomputes the total alone accepts the edited own fields
    assert naive_accepts >= 3
    # θ and the label bounds enter no guarantee: a signature covers them
    key = generate_private_key()
    signed = _quiet_load(text).sign(key).to_json()
    _quiet_load(signed, public_key=key.public_key())
    for path, how in [(("theta", 0), lambda v: v + 1e-9), (("label_bounds", 1), lambda v: v + 1.0)]:
        edited = _edit(signed, path, how)
        with pytest.raises(ValueError, match="signature"):
            _quiet_load(edited, public_key=key.public_key())
        with pytest.raises(ValueError, match="signature"):
            _quiet_load(edited)  # signed: checked against the key it names
        unsigned = _edit(edited, ("signature",), lambda v: None)
        _quiet_load(unsigned)  # no consistency check can see it ...
        with pytest.raises(ValueError, match="signature"):
            _quiet_load(unsigned, public_key=key.public_key())  # ... the publisher's key can


def _gauss_delta(eps: np.ndarray, mu: float) -> np.ndarray:
    """The Gaussian mechanism's tight δ(ε) (Balle & Wang 2018, Thm 8), any real ε, from scipy."""
    return stats.norm.cdf(mu / 2 - eps / mu) - np.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)


def _adaops_delta(eps: float, ev: ops.AdaOPSEvent, mu: float) -> float:
    p = math.exp(ev.eps_ops) / (1.0 + math.exp(ev.eps_ops))
    g = _gauss_delta(np.array([eps - ev.eps_ops, eps + ev.eps_ops]), mu)
    return ev.delta_fail + ev.delta_ops + (1.0 - ev.delta_ops) * (p * g[0] + (1.0 - p) * g[1])


def test_the_guarantee_is_the_composition_of_the_estimators_own_events():
    ops_est = FITS["ops"]()
    rel = ops_est.release_
    # from the release's public fields alone, without its ledger
    eps = float(ops.ops_dp_epsilon(1e-6, n=rel.n_max + 1, lam=rel.lam, gamma=rel.gamma,
                                   x_bound=math.sqrt(2.0) * rel.norm_bound, y_bound=1.0))
    assert rel.guarantee.epsilon == pytest.approx(eps, rel=1e-12) and rel.guarantee.delta == 1e-6
    acc = PrivacyAccountant(50.0, 1e-6)
    acc.charge(ops_est.event_, name="model", delta=1e-6)
    assert acc.spent().epsilon == pytest.approx(rel.guarantee.epsilon, rel=1e-12)
    # AdaOPS: its composed profile written out here
    ada = FITS["adaops"]()
    g = ada.release_.guarantee
    assert _adaops_delta(g.epsilon, ada.event_, 1.0 / ada.event_.sigma_lam) <= 1e-6 * (1 + 1e-9)
    assert _adaops_delta(g.epsilon * (1 - 1e-6), ada.event_, 1.0 / ada.event_.sigma_lam) > 1e-6
    # under a session's accountant: the file states the session's total, composed from the events
    session = PrivacyAccountant(5.0, 1e-5)
    scaler = GaussianEvent(mu=0.4)
    session.charge(scaler, name="scaler")
    est = OPSRegressor(1.0, 1e-6, label_bounds=LABELS, random_state=3, accountant=session).fit(*_data())
    rel = _quiet_load(est.release_.to_json())
    assert [c.kind for c in rel.ledger] == ["gaussian", "ops"]
    fresh = PrivacyAccountant(5.0, 1e-5)
    fresh.charge(scaler, name="scaler")
    fresh.charge(est.event_, name="model", delta=1e-6)
    assert rel.guarantee.epsilon == pytest.approx(fresh.spent().epsilon, rel=1e-9)
    # the tester's control: adding the two entries' epsilons (basic composition) is not what the file states
    basic = sum(c.epsilon(1e-5 / 2) for c in rel.ledger)
    assert basic > rel.guarantee.epsilon * 1.01


def _record_bound_without_others(rel: OPSRelease, rows: np.ndarray, t: np.ndarray, delta: float) -> np.ndarray:
    """A wrong per-person bound: the residual bounded by the record's own label, the other records ignored."""
    ev = rel.model_charge().event
    mu = np.sum(rows * rows, axis=1) / ev.lam
    a = np.abs(t) * np.sqrt(ev.gamma * np.minimum(mu, 1.0)) / (1.0 + np.minimum(mu, 1.0))
    w = mu / (1.0 + mu)
    return np.array([_pair_eps(wi, ai, delta) for wi, ai in zip(w, a, strict=True)])


def _pair_eps(w: float, a: float, delta: float) -> float:
    """ε(δ) of the pair N(0, 1) vs N(a, 1 − w) (both orders), via pdpkit's pair at a one-record data set.

    One record x = s, label 0, λ such that the newcomer (x = 1, label y) has leverage μ = w/(1 − w)
    and residual r with a = |r| sqrt(γ μ)/(1 + μ), γ = 1.
    """
    mu = w / (1.0 - w)
    lam = 1.0 / mu
    r = a * (1.0 + mu) / math.sqrt(mu)
    return float(ops.ops_pdp_epsilon(np.zeros((1, 1)), np.zeros(1), [1.0], [r], lam=lam, gamma=1.0, delta=delta,
                                     member=False))


def test_each_persons_bound_holds_on_every_data_set_and_reads_no_other_record():
    lam, n_max = 40.0, 60
    est = OPSRegressor(1.0, 1e-6, lam=lam, label_bounds=LABELS, n_max=n_max, fit_intercept=False,
                       random_state=0)
    X, y = _data(n_max, d=2, seed=4)
    est.fit(X, y)
    rel = est.release_
    t = (y - 5.0) / 5.0
    bound = rel.per_person_epsilon(X, y)
    # a function of the record and the public fields: a fit on other data, same public fields, says the same
    other = OPSRegressor(1.0, 1e-6, lam=lam, label_bounds=LABELS, n_max=n_max, fit_intercept=False,
                         random_state=1).fit(*_data(n_max - 7, d=2, seed=5))
    assert np.array_equal(other.release_.per_person_epsilon(X, y), bound)
    assert np.array_equal(est.per_person_epsilon(X, y), bound)
    # at the corner of the class it is the DP guarantee; a record x = 0 has none
    corner = rel.per_person_epsilon(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([10.0, 3.0]))
    assert corner[0] == pytest.approx(rel.guarantee.epsilon, rel=1e-12) and corner[1] == 0.0
    # the exact pDP (data-dependent) on data sets of the class, members and newcomers: never above
    rng = np.random.default_rng(7)
    worst_ratio, wrong_below = 0.0, 0
    for trial in range(6):
        Xs, ys = _data(n_max - 1, d=2, seed=100 + trial)
        ts = (ys - 5.0) / 5.0
        if trial % 2:  # an adversarial set: labels aligned with a direction, largest residual
            ts = np.sign(Xs[:, 0] + 1e-12) * 1.0
        z = rng.normal(size=(20, 2))
        z *= rng.uniform(0.2, 1.0, size=(20, 1)) / np.linalg.norm(z, axis=1, keepdims=True)
        tz = rng.choice([-1.0, 1.0], size=20) * rng.uniform(0.5, 1.0, size=20)
        exact_new = ops.ops_pdp_epsilon(Xs, ts, z, tz, lam=lam, gamma=rel.gamma, delta=1e-6, member=False)
        exact_mem = ops.ops_pdp_epsilon(Xs, ts, Xs, ts, lam=lam, gamma=rel.gamma, delta=1e-6,
                                        member=np.ones(len(ts), dtype=bool))
        b_new = rel.per_person_epsilon(z, 5.0 + 5.0 * tz)
        b_mem = rel.per_person_epsilon(Xs, 5.0 + 5.0 * ts)
        assert np.all(exact_new <= b_new * (1 + 1e-9)) and np.all(exact_mem <= b_mem * (1 + 1e-9))
        worst_ratio = max(worst_ratio, float(np.max(exact_new / b_new)))
        wrong = _record_bound_without_others(rel, z, tz, 1e-6)
        wrong_below += int(np.sum(exact_new > wrong * (1 + 1e-9)))
    assert worst_ratio > 0.3  # not vacuous
    assert wrong_below > 0  # the tester's control: ignoring the other records' fit is not a bound
    assert t.shape == bound.shape


def test_adaops_bound_per_person_is_the_composed_profile_at_the_records_sensitivity():
    est = FITS["adaops"]()
    rel = est.release_
    X = np.array([[0.8, 0.0, 0.0], [0.1, 0.2, 0.0], [0.0, 0.0, 0.0]])
    got = rel.per_person_epsilon(X, np.array([1.0, 9.0, 5.0]))
    ev = est.event_
    R = math.sqrt(2.0) * rel.norm_bound
    for row, g in zip(X, got, strict=True):
        rho2 = (row @ row + rel.norm_bound ** 2) / R ** 2  # the fitted row (intercept column) on the unit ball
        mu = rho2 / ev.sigma_lam
        want = optimize.brentq(lambda e: _adaops_delta(e, ev, mu) - 1e-6, 0.0, 20.0, xtol=1e-14)
        assert g == pytest.approx(want, rel=1e-8)
        # the tester's control: the record's sensitivity ||x|| (not ||x||^2) gives another number
        wrong = optimize.brentq(lambda e: _adaops_delta(e, ev, math.sqrt(rho2) / ev.sigma_lam) - 1e-6, 0.0, 20.0)
        assert abs(wrong - g) > 1e-6
    assert np.all(got <= rel.guarantee.epsilon) and np.all(np.diff(got) <= 0)


def test_a_release_holds_no_private_field_and_says_what_n_max_is():
    X, y = _data()
    est = OPSRegressor(1.0, 1e-6, label_bounds=LABELS, n_max=1000, random_state=0).fit(X, y)
    data = json.loads(est.release_.to_json())
    assert data["n_max"] == 1000 and data["ledger"][0]["params"]["n"] == 1001
    assert not any("nonprivate" in k for k in data)
    flat = json.dumps(data)
    rows = np.column_stack([X, np.ones(len(X))])
    t = (y - 5.0) / 5.0
    mean = np.linalg.solve(rows.T @ rows + est.lam_ * np.eye(4), rows.T @ t)
    private = list(mean) + [len(X), float(np.linalg.eigvalsh(rows.T @ rows)[0])]
    numbers = [float(v) for v in _numbers(data)]
    assert not any(math.isclose(v, p, rel_tol=1e-9) for v in numbers for p in private)
    # the tester's control: a writer that put the ridge mean in the file is caught
    leaky = dict(data, theta=list(mean))
    assert any(math.isclose(v, p, rel_tol=1e-9) for v in _numbers(leaky) for p in private)
    assert "theta" in flat


def _numbers(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from _numbers(v)
    elif isinstance(node, list):
        for v in node:
            yield from _numbers(v)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield node
