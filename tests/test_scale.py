"""Data larger than memory: rows read by blocks (numpy, memmap, Dask) give the in-memory results.

* The block map (intercept column, clipping) equals ``prepare_rows``'s copy, kernel by kernel.
* objpert_fit, ex_post_pdp, privacy_report and the estimators on a memmap and on a Dask array
  (a LocalCluster with two workers) equal the numpy path to 1e-10 with the same seed.
* The stopping rule still certifies on every path: the true gradient (in exact rational
  arithmetic, fractions) at the solver's point is at most grad_tol, and a certificate whose
  block count is understated is caught.
* Member matching in another order, by blocks, accepts a permutation and refuses a changed row.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from pdpkit import objpert, report
from pdpkit._solver import _ROWS_READ, _certified_gradient, _Rows, _solve
from pdpkit.estimators import ObjPertClassifier, ObjPertRegressor, prepare_rows
from pdpkit.losses import get_loss

LOGISTIC = get_loss("logistic")
#: The public classes of ``_data``'s labels.
CLASSES = [-1.0, 1.0]


def _data(n=3000, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * 1.01
    w = rng.normal(size=d) * 2
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


def test_block_map_equals_prepare_rows_copy():
    X, y = _data(1000, 5)
    X[3] *= 3.0  # beyond the ball: clipped
    rows = _Rows(X, intercept=1.0, clip=1.0, block_rows=97)
    full = prepare_rows(X, norm_bound=1.0, row_norm="clip", fit_intercept=True)
    got = np.vstack([rows.effective(X[s:s + 97]) for s in range(0, 1000, 97)])
    np.testing.assert_array_equal(got, full)
    theta = np.linspace(-1, 1, 6)
    b = np.full(6, 0.3)
    g1, e1 = _certified_gradient(rows, y, LOGISTIC, 0.5, b, theta)
    g2, e2 = _certified_gradient(full, y, LOGISTIC, 0.5, b, theta)
    np.testing.assert_allclose(g1, g2, rtol=0, atol=1e-12)
    assert e1 > 0 and e2 > 0


def _exact_gradient_norm(X, y, lam, b, theta):
    """||sum_i f'(x_i^T theta) x_i + lam theta + b|| with the margins and the sums in exact rationals."""
    Fx = [[Fraction(v) for v in row] for row in X]
    ft = [Fraction(v) for v in theta]
    g = [Fraction(lam) * t + Fraction(bb) for t, bb in zip(ft, b, strict=True)]
    for row, yi in zip(Fx, y, strict=True):
        z = sum(a * t for a, t in zip(row, ft, strict=True))
        # f'(z; y) = -y / (1 + exp(y z)): exp in float64 of an exactly rounded margin, error << tolerance
        d1 = Fraction(-yi / (1.0 + math.exp(yi * float(z))))
        for j, a in enumerate(row):
            g[j] += d1 * a
    return math.sqrt(float(sum(v * v for v in g)))


def test_block_solver_still_certifies_its_public_tolerance():
    X, y = _data(400, 4, seed=5)
    rows = _Rows(X, intercept=1.0, block_rows=37)  # many small blocks, intercept inside the kernels
    b = np.random.default_rng(1).normal(size=5)
    tol = 1e-9
    theta, _gnorm, _tau, _it, _m, _c = _solve(rows, y, LOGISTIC, 0.7, b, tol, 200, "auto", want_hessian=False)
    Xi = prepare_rows(X, norm_bound=1.0, fit_intercept=True)
    true = _exact_gradient_norm(Xi, y, 0.7, b, theta)
    assert true <= tol
    # the certificate is not vacuous: it bounds the float64 error far below the tolerance
    g, err = _certified_gradient(rows, y, LOGISTIC, 0.7, b, theta)
    assert err < 1e-3 * tol and abs(float(np.linalg.norm(g)) - true) <= err
    # a deliberately wrong stopping rule (relative tolerance, no certificate) can stop above it
    loose, *_ = _solve(rows, y, LOGISTIC, 0.7, b, 1e-3, 200, "auto", want_hessian=False, certify=False)
    assert _exact_gradient_norm(Xi, y, 0.7, b, loose) > tol


def test_memmap_and_numpy_paths_agree(tmp_path):
    X, y = _data(5000, 8, seed=2)
    mm = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=np.float64, shape=X.shape)
    mm[:] = X
    mm.flush()
    mm = np.load(tmp_path / "X.npy", mmap_mode="r")
    a = objpert.objpert_fit(X, y, "logistic", lam=1.0, sigma=2.0, rng=4)
    b = objpert.objpert_fit(mm, y, "logistic", lam=1.0, sigma=2.0, rng=4)
    np.testing.assert_allclose(a.theta_released, b.theta_released, rtol=0, atol=1e-10)
    e1 = objpert.ex_post_pdp(a, X, y, X[:50], y[:50], member=True)
    e2 = objpert.ex_post_pdp(b, mm, y, mm[:50], y[:50], member=True)
    np.testing.assert_allclose(e1, e2, rtol=1e-10, atol=1e-12)


def test_member_matching_in_another_order_by_blocks():
    X, y = _data(2000, 5, seed=3)
    fit = objpert.objpert_fit(X, y, "logistic", lam=1.0, sigma=2.0, rng=1)
    perm = np.random.default_rng(0).permutation(2000)
    e_in_order = objpert.ex_post_pdp(fit, X, y, X, y, member=True)
    e_perm = objpert.ex_post_pdp(fit, X, y, X[perm], y[perm], member=True)
    np.testing.assert_allclose(e_perm, e_in_order[perm], rtol=1e-12)
    bad = X[perm].copy()
    bad[17, 0] = np.nextafter(bad[17, 0], 2.0)
    with pytest.raises(ValueError, match=r"target_x\[17\]"):
        objpert.ex_post_pdp(fit, X, y, bad, y[perm], member=True)


def test_spooled_chunks_fit_like_the_array(tmp_path):
    from pdpkit._solver import _spool_chunks

    X, y = _data(3000, 4, seed=8)
    Xs, ys = _spool_chunks(((X[s:s + 700], y[s:s + 700]) for s in range(0, 3000, 700)), directory=tmp_path)
    assert isinstance(Xs, np.memmap) and not any(tmp_path.iterdir())  # nothing left on disk
    np.testing.assert_array_equal(Xs, X)
    a = ObjPertClassifier(classes=CLASSES, random_state=1).fit(X, y)
    b = ObjPertClassifier(classes=CLASSES, random_state=1).fit(Xs, ys)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="chunk 1"):
        _spool_chunks([(X[:5], y[:5]), (X[:5, :3], y[:5])], directory=tmp_path)


def test_passes_are_counted_and_few():
    X, y = _data(64_000, 10, seed=7)
    _ROWS_READ[0] = 0
    objpert.objpert_fit(X, y, "logistic", lam=1.0, sigma=2.0, rng=0)
    passes = _ROWS_READ[0] / X.shape[0]
    assert 2 <= passes <= 20


dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       memory_limit="1GiB")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_dask_fit_and_report_equal_numpy(client):
    X, y = _data(6000, 7, seed=9)
    Xd = da.from_array(X, chunks=(1000, 7))
    yd = da.from_array(y, chunks=1000)
    a = objpert.objpert_fit(X, y, "logistic", lam=1.0, sigma=2.0, rng=11)
    b = objpert.objpert_fit(Xd, yd, "logistic", lam=1.0, sigma=2.0, rng=11)
    np.testing.assert_allclose(b.theta, a.theta, rtol=0, atol=1e-10)
    np.testing.assert_allclose(b.theta_released, a.theta_released, rtol=0, atol=1e-10)
    assert b.grad_tol == a.grad_tol and b.sigma_out == a.sigma_out
    # the same fit analysed through Dask: the kernels agree to rounding
    e1 = objpert.ex_post_pdp(a, X, y, X, y, member=True)
    np.testing.assert_allclose(objpert.ex_post_pdp(a, Xd, yd, Xd, yd, member=True), e1, rtol=1e-10, atol=1e-12)
    # the Dask fit: its point differs from numpy's by summation order only (both certified within
    # grad_tol); b = -grad J moves by H times that, so the pDP agrees to about 1e-9
    np.testing.assert_allclose(objpert.ex_post_pdp(b, Xd, yd, Xd, yd, member=True), e1, rtol=1e-6, atol=1e-9)
    r1 = report.privacy_report(a, X, y, method="adaptive", sigma_gradient=1.0, sigma_hessian=0.5,
                               sigma_lambda_min=0.5, rng=3)
    r2 = report.privacy_report(b, Xd, yd, method="adaptive", sigma_gradient=1.0, sigma_hessian=0.5,
                               sigma_lambda_min=0.5, rng=3)
    np.testing.assert_allclose(r2.hessian_release, r1.hessian_release, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r2.epsilon_bound(Xd, yd), r1.epsilon_bound(X, y), rtol=1e-9)
    # memmap-free, in-order member targets are recognised as the data without a hash pass
    with pytest.raises(ValueError, match="not a record"):
        objpert.ex_post_pdp(b, Xd, yd, X[:3] + 1e-3, y[:3], member=True)
    # Dask targets in another order are matched by hash; a non-finite one is refused (on a worker) as such
    perm = np.random.default_rng(4).permutation(6000)
    Xp = X[perm]
    np.testing.assert_allclose(objpert.ex_post_pdp(a, Xd, yd, da.from_array(Xp, chunks=(1000, 7)),
                                                   da.from_array(y[perm], chunks=1000), member=True),
                               e1[perm], rtol=1e-10, atol=1e-12)
    Xp[4321, 2] = np.nan
    for member in (True, False):
        with pytest.raises(ValueError, match="finite"):
            objpert.ex_post_pdp(a, Xd, yd, da.from_array(Xp, chunks=(1000, 7)), da.from_array(y[perm], chunks=1000),
                                member=member)


def test_dask_estimators_equal_numpy(client):
    X, y = _data(4000, 5, seed=12)
    Xd = da.from_array(X, chunks=(700, 5))
    yd = da.from_array(y, chunks=700)
    kw = dict(epsilon=1.0, delta=1e-6, report="adaptive", report_epsilon=0.5, report_delta=1e-6,
              random_state=5, classes=CLASSES)
    a = ObjPertClassifier(**kw).fit(X, y)
    b = ObjPertClassifier(**kw).fit(Xd, yd)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=0, atol=1e-10)
    assert abs(b.intercept_ - a.intercept_) <= 1e-10
    assert b.privacy_spent().epsilon == a.privacy_spent().epsilon
    np.testing.assert_allclose(b.privacy_report(Xd, yd), a.privacy_report(X, y), rtol=1e-9)
    r = ObjPertRegressor(epsilon=1.0, delta=1e-6, random_state=2, row_norm="clip").fit(Xd * 2, yd)
    r0 = ObjPertRegressor(epsilon=1.0, delta=1e-6, random_state=2, row_norm="clip").fit(X * 2, y)
    np.testing.assert_allclose(r.coef_, r0.coef_, rtol=0, atol=1e-10)


def test_certificate_partials_carry_their_machines_roundoff():
    # a worker whose long double is float64 (unit roundoff 2^-53) must loosen the bound of the whole sum
    from pdpkit import _solver

    X, y = _data(500, 3, seed=4)
    part = _solver._k_cert(X, y, 0, LOGISTIC, np.ones(3))
    coarse = (*part[:5], 2.0 ** -53)
    assert _solver._comb_cert(part, coarse)[5] == 2.0 ** -53
    hi, lo = _solver._comb_cert(part, part)[:2]
    np.testing.assert_allclose(hi + lo, 2 * (part[0] + part[1]), rtol=1e-15)


def _adversarial_block(k, d, seed):
    """Rows of mixed scales (tiny, huge, exact zeros, powers of two, a constant column) and f' in (-1, 1)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(k, d)) * np.exp2(rng.integers(-30, 4, size=(k, 1)))
    X[::7, 0] = 0.0
    X[::11, -1] = 2.0 ** -40
    X[:, 1] = 3.0  # an intercept-like constant column
    f = np.tanh(rng.normal(size=k) * 3) * np.exp2(rng.integers(-12, 1, size=k))
    return X, f


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_certificate_split_is_exact_and_its_leading_sums_are_exact(seed):
    from pdpkit import _solver

    X, f = _adversarial_block(_solver._CERT_ROWS, 3, seed)
    bits = _solver._SPLIT_BITS
    X1, X2, unit = _solver._split(X, float(np.max(np.abs(X))), bits)
    f1, f2, unit_f = _solver._split(f, float(np.max(np.abs(f))), bits)
    for a, hi, lo, u in ((X.ravel(), X1.ravel(), X2.ravel(), unit), (f, f1, f2, unit_f)):
        assert all(Fraction(h) + Fraction(lo_) == Fraction(v) for v, h, lo_ in zip(a, hi, lo, strict=True))
        assert np.all(np.abs(lo) <= u) and np.all(np.mod(hi, u) == 0) and np.all(np.abs(hi) <= (2 ** bits + 1) * u)
    # the leading parts' dot products over a whole sub-block are exact in float64 BLAS
    got = X1.T @ f1
    exact = [sum((Fraction(a) * Fraction(b) for a, b in zip(X1[:, j], f1, strict=True)), Fraction(0)) for j in range(3)]
    assert [Fraction(v) for v in got] == exact


def test_certificate_split_budget_is_needed():
    # the test of the tester: leading parts of 30 bits overflow float64's 53 and the sum is no longer exact
    from pdpkit import _solver

    X, f = _adversarial_block(_solver._CERT_ROWS, 3, 0)
    X1 = _solver._split(X, float(np.max(np.abs(X))), 30)[0]
    f1 = _solver._split(f, float(np.max(np.abs(f))), 30)[0]
    got = X1.T @ f1
    exact = [sum((Fraction(a) * Fraction(b) for a, b in zip(X1[:, j], f1, strict=True)), Fraction(0)) for j in range(3)]
    assert [Fraction(v) for v in got] != exact


def test_certificate_bounds_the_exact_gradient_on_mixed_scales():
    rng = np.random.default_rng(11)
    n, d = 2500, 4
    X = rng.normal(size=(n, d)) * np.exp2(rng.integers(-20, 1, size=(n, 1)))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    theta = rng.normal(size=d) * np.array([30.0, 1.0, 1e-3, 0.0])
    b = rng.normal(size=d)
    for block_rows in (n, 300, 37):  # one block, several, and sub-blocks shorter than the split's
        g, err = _certified_gradient(_Rows(X, block_rows=block_rows), y, LOGISTIC, 0.3, b, theta)
        true = _exact_gradient_norm(X, y, 0.3, b, theta)
        assert abs(float(np.linalg.norm(g)) - true) <= err
        assert err < 1e-11 * (1.0 + true)


def test_newton_cg_certifies_with_its_last_step(monkeypatch):
    # Newton-CG (warm start, deflation preconditioner, cached f'') forms the certificate with its
    # last step when it predicts that step to be the last: the released point still certifies
    from pdpkit import _solver

    X, y = _data(3000, 5, seed=7)
    b = np.random.default_rng(3).normal(size=5)
    calls = []
    real = _solver._certified_gradient

    def counting(*args, **kw):
        import sys

        calls.append(sys._getframe(1).f_code.co_name)  # who asked for the certificate
        return real(*args, **kw)

    monkeypatch.setattr(_solver, "_certified_gradient", counting)
    tol = 1e-9
    theta, _gnorm, _tau, _it, method, _c = _solve(X, y, LOGISTIC, 0.7, b, tol, 200, "newton-cg", want_hessian=False)
    assert method == "newton-cg" and calls == ["_newton_rows"]
    assert _exact_gradient_norm(X, y, 0.7, b, theta) <= tol
    # the same point from the plain iteration (certificate after it) agrees to the tolerance
    monkeypatch.setattr(_solver, "_certified_gradient", real)
    plain, *_ = _solve(X, y, LOGISTIC, 0.7, b, tol / 2, 200, "newton", want_hessian=False)
    assert float(np.linalg.norm(theta - plain)) <= 2 * tol / 0.7


@pytest.mark.parametrize("keys", ["real", "constant", "reversed"])
def test_member_matching_by_sorted_keys_is_exact_whatever_the_keys(monkeypatch, keys):
    # the sort-merge key only proposes pairs: with every key equal (each pair by position is a guess)
    # or keys that pair the wrong rows, a permutation is still accepted and a changed row refused
    X, y = _data(1500, 4, seed=9)
    X[100:110] = X[90]  # duplicate rows, some with another label
    y[100:105] = -y[90]
    fit = objpert.objpert_fit(X, y, "logistic", lam=1.0, sigma=2.0, rng=1)
    expected = objpert.ex_post_pdp(fit, X, y, X, y, member=True)
    real = objpert._record_keys
    if keys == "constant":
        monkeypatch.setattr(objpert, "_record_keys", lambda z, yc, out=None: np.zeros(z.shape[0]))
    elif keys == "reversed":  # and scaled by position: the rank of a record differs from its target's
        monkeypatch.setattr(objpert, "_record_keys",
                            lambda z, yc, out=None: -real(z, yc) * (1 + np.arange(z.shape[0]) % 3))
    perm = np.random.default_rng(2).permutation(1500)
    got = objpert.ex_post_pdp(fit, X, y, X[perm], y[perm], member=True)
    np.testing.assert_allclose(got, expected[perm], rtol=1e-12)
    sub = perm[:300]  # a subset of the records
    np.testing.assert_allclose(objpert.ex_post_pdp(fit, X, y, X[sub], y[sub], member=True), expected[sub],
                               rtol=1e-12)
    bad_y = y[perm].copy()
    k = int(np.flatnonzero(perm == 95)[0])
    bad_y[k] = -bad_y[k]  # an existing row with a label it does not have
    with pytest.raises(ValueError, match=rf"target_x\[{k}\]"):
        objpert.ex_post_pdp(fit, X, y, X[perm], bad_y, member=True)


@pytest.mark.parametrize("bits", [0, 11, 20])
def test_key_order_sorts_by_the_top_bits_then_by_position(bits):
    # the packed sort equals a lexicographic sort on (key >> bits, position), whatever the signs
    rng = np.random.default_rng(4)
    k = np.concatenate([rng.normal(size=1500) * 10.0 ** rng.integers(-300, 300, size=1500), [0.0, -0.0, 0.0, 5.0, 5.0],
                        np.nextafter(5.0, 6.0) + np.zeros(3), [-np.finfo(float).max, np.finfo(float).max, -1e-320]])
    k = k[rng.permutation(k.size)]
    order, keys = objpert._key_order(k, bits)
    ok = objpert._ordered_key(k)
    np.testing.assert_array_equal(order, np.lexsort((np.arange(k.size), ok >> bits)))
    np.testing.assert_array_equal(keys, (ok >> bits)[order])
    # the order of the float keys themselves, up to the dropped bits
    assert np.all(np.diff(ok[order]) >= -(1 << bits) if bits else np.diff(k[order]) >= 0)
    assert np.all(k[np.argsort(ok, kind="stable")][1:] >= k[np.argsort(ok, kind="stable")][:-1])
    # a plain integer view (no flip of the negatives) would not sort them: the check above can fail
    naive = k.view(np.int64)
    assert not np.all(np.diff(k[np.argsort(naive, kind="stable")]) >= 0)


@pytest.mark.parametrize("group", [4, 30])
def test_member_matching_with_keys_tied_in_their_top_bits(monkeypatch, group):
    # records whose margins differ in their last bits only share a packed key: pairing by rank
    # goes wrong inside such a group, and the window of ranks around each key (a group of 4) or
    # the hash pass (a group of 30) still pairs every target, exactly
    from pdpkit import objpert as op

    X, y = _data(1500, 4, seed=12)
    X[200:200 + group] = X[200]
    X[200:200 + group, 0] += np.arange(group) * 4e-15 * abs(X[200, 0])  # distinct, keys equal to ~1e-13
    y[200:200 + group] = 1.0
    fit = op.objpert_fit(X, y, "logistic", lam=1.0, sigma=2.0, rng=1)
    expected = op.ex_post_pdp(fit, X, y, X, y, member=True)
    hashed, paired = [], []
    real_hash, real_pairs = op._row_hash, op._k_pairs_equal
    monkeypatch.setattr(op, "_row_hash", lambda Xe, yc: hashed.append(Xe.shape[0]) or real_hash(Xe, yc))
    monkeypatch.setattr(op, "_k_pairs_equal", lambda Xe, *a: paired.append(Xe.shape[0]) or real_pairs(Xe, *a))
    perm = np.random.default_rng(3).permutation(1500)
    at = np.flatnonzero((perm >= 200) & (perm < 200 + group))
    perm[at] = np.arange(200 + group - 1, 199, -1)  # the group in reverse order: ranks pair it wrongly
    np.testing.assert_allclose(op.ex_post_pdp(fit, X, y, X[perm], y[perm], member=True), expected[perm], rtol=1e-12)
    assert paired[0] == 1500 and len(paired) > 1  # the rank pairing missed some, the window was searched
    assert (sum(hashed) > 0) == (group > 2 * op._KEY_WINDOW + 1)
    Xb = X[perm].copy()
    k = int(np.flatnonzero(perm == 201)[0])
    Xb[k, 0] = np.nextafter(Xb[k, 0], np.inf)  # one bit off: a record of no one
    if Xb[k, 0] in X[200:200 + group, 0]:
        Xb[k, 0] = np.nextafter(Xb[k, 0], np.inf)
    with pytest.raises(ValueError, match=rf"target_x\[{k}\].*not a record"):
        op.ex_post_pdp(fit, X, y, Xb, y[perm], member=True)


@pytest.mark.parametrize("intercept, clip", [(None, None), (1.0, None), (None, 0.8), (2.0, 0.8)])
def test_effective_rows_into_a_work_array_equal_fresh_ones(intercept, clip):
    # a pass's work array receives the changed rows (clipped, intercept column) of each block;
    # the rows equal a fresh effective block's, and the raw rows are never written
    X, _y = _data(1000, 5, seed=13)
    X[::7] *= 3.0  # some rows beyond the clip
    raw = X.copy()
    rows = _Rows(X, intercept=intercept, clip=clip, block_rows=300)
    buf = rows.block_buffer()
    assert (buf is None) == (intercept is None and clip is None)
    for s in range(0, 1000, 300):
        fresh = rows.effective(X[s:s + 300])
        got = rows.effective(X[s:s + 300], buf)
        np.testing.assert_array_equal(got, fresh)
        if buf is not None:
            assert np.shares_memory(got, buf) and not np.shares_memory(fresh, buf)
    np.testing.assert_array_equal(X, raw)
    if clip is not None:
        assert np.all(np.linalg.norm(rows.effective(X, buf)[:, :5], axis=1) <= clip * (1 + 1e-12))


def test_scratch_arrays_are_per_name_and_grow():
    from pdpkit._solver import _scratch

    a = _scratch((10, 3), 1, "test-a")[0]
    b = _scratch((10, 3), 1, "test-b")[0]
    assert not np.shares_memory(a, b)  # two users of one pass never share
    a2 = _scratch((4, 3), 1, "test-a")[0]
    assert np.shares_memory(a, a2) and a2.shape == (4, 3) and a2.flags.c_contiguous
    big = _scratch((50, 3), 1, "test-a")[0]
    assert big.shape == (50, 3) and big.flags.c_contiguous
    from pdpkit._solver import _SCRATCH_MAX

    huge = _scratch((_SCRATCH_MAX // 10 + 1, 10), 1, "test-a")[0]  # beyond the cap: fresh, not kept
    assert not np.shares_memory(huge, _scratch((_SCRATCH_MAX // 10 + 1, 10), 1, "test-a")[0])
    assert np.shares_memory(big, _scratch((50, 3), 1, "test-a")[0])


def test_moved_margins_evaluate_like_a_fresh_pass():
    # Newton-CG keeps X p from its products' own X s: the evaluation at theta + t p from those
    # margins equals a fresh pass (value, gradient, f''); a step whose margins are off is caught
    from pdpkit import _solver

    X, y = _data(5000, 12, seed=11)
    rows = _Rows(X, intercept=1.0, block_rows=700)
    n, d = rows.shape
    b = np.random.default_rng(2).normal(size=d)
    theta = np.random.default_rng(3).normal(size=d) * 0.3
    curv = (np.empty(n), np.empty(n))
    F, _s, g, _h, _m = _solver._evaluate(rows, y, LOGISTIC, theta, 0.7, b, 1.0, False, curv_out=curv)
    zp, u = np.empty(n), np.empty(n)
    p, _r = _solver._cg_direction(rows, y, LOGISTIC, theta, 1.0, 0.7, g, curv=curv[0], forcing=1e-3 * np.linalg.norm(g),
                                  zp=zp, u=u)
    Xi = prepare_rows(X, norm_bound=1.0, fit_intercept=True)
    np.testing.assert_allclose(zp, Xi @ p, rtol=0, atol=1e-12 * np.abs(Xi @ p).max())
    t = 0.6
    fresh = (np.empty(n), np.empty(n))
    F1, _s1, g1, _h1, _m1 = _solver._evaluate(rows, y, LOGISTIC, theta + t * p, 0.7, b, 1.0, False, curv_out=fresh)
    z0 = curv[1].copy()
    F2, _s2, g2, _h2, _m2 = _solver._evaluate(rows, y, LOGISTIC, theta + t * p, 0.7, b, 1.0, False, curv_out=curv,
                                              moved=(z0, zp, t))
    assert abs(F2 - F1) <= 1e-12 * abs(F1)
    np.testing.assert_allclose(g2, g1, rtol=0, atol=1e-10 * np.linalg.norm(g1))
    np.testing.assert_allclose(curv[0], fresh[0], rtol=1e-10)
    np.testing.assert_allclose(curv[1], fresh[1], rtol=0, atol=1e-12)
    # the tester: a wrong step length in the cached margins shows
    F3, _s3, g3, _h3, _m3 = _solver._evaluate(rows, y, LOGISTIC, theta + t * p, 0.7, b, 1.0, False,
                                              curv_out=(np.empty(n), np.empty(n)), moved=(z0, zp, 0.9 * t))
    assert np.linalg.norm(g3 - g1) > 1e-6 * np.linalg.norm(g1)


def test_newton_cg_with_sampled_preconditioner_statistics_certifies():
    # from 16 x 256 rows on, the preconditioner's statistics come from every 16th row and the
    # iteration moves the margins along the known X p: the released point still certifies
    X, y = _data(8192, 5, seed=13)
    b = np.random.default_rng(4).normal(size=5)
    tol = 1e-9
    _ROWS_READ[0] = 0
    theta, _g, _tau, _it, method, _c = _solve(X, y, LOGISTIC, 0.7, b, tol, 200, "newton-cg", want_hessian=False)
    assert method == "newton-cg"
    assert _exact_gradient_norm(X, y, 0.7, b, theta) <= tol
    plain, *_ = _solve(X, y, LOGISTIC, 0.7, b, tol / 2, 200, "newton", want_hessian=False)
    assert float(np.linalg.norm(theta - plain)) <= 2 * tol / 0.7


def test_row_map_checks_once_and_dask_labels_are_still_checked(client):
    # an estimator's row map carries its rows' checks (one pass for the bound and the solver's
    # checks); labels on a Dask array are then checked on their own, and a wrong one is refused
    from pdpkit._solver import _check_rows
    from pdpkit.estimators import _row_map

    X, y = _data(4000, 5, seed=21)
    Xd = da.from_array(X, chunks=(1000, 5))
    rows = _row_map(Xd, norm_bound=1.0, fit_intercept=True)
    _ROWS_READ[0] = 0
    r2, _y, stats = _check_rows(rows, da.from_array(y, chunks=1000), LOGISTIC)
    assert _ROWS_READ[0] == 0 and r2 is rows
    assert stats[1] == pytest.approx(float(np.max(np.sum(X * X, axis=1))) + 1.0)
    bad = y.copy()
    bad[2500] = 0.5
    with pytest.raises(ValueError, match="labels -1 and \\+1"):
        _check_rows(rows, da.from_array(bad, chunks=1000), LOGISTIC)
    with pytest.raises(ValueError, match="X has a row whose Euclidean norm exceeds norm_bound=1") as err:
        X2 = X.copy()
        X2[7] *= 3.0
        _row_map(da.from_array(X2, chunks=(1000, 5)), norm_bound=1.0)
    assert "row 7" not in str(err.value) and "such rows" not in str(err.value)  # no row, norm or count


@pytest.mark.parametrize("backend", ["numpy", "dask"])
def test_deferred_row_checks_raise_before_any_bound_leaves(backend, client):
    # the estimator's privacy_report checks its records inside the per-row pass (one pass, not
    # two) and refuses a record beyond the bound, or a non-finite one, before returning anything
    X, y = _data(3000, 4, seed=23)
    clf = ObjPertClassifier(epsilon=1.0, delta=1e-6, report="data-independent", random_state=0,
                            classes=CLASSES).fit(X, y)
    wrap = (lambda a: da.from_array(a, chunks=(700,) + a.shape[1:])) if backend == "dask" else (lambda a: a)
    _ROWS_READ[0] = 0
    good = np.asarray(clf.privacy_report(wrap(X), wrap(y)))
    assert _ROWS_READ[0] == X.shape[0]  # one pass over the records
    np.testing.assert_allclose(good, np.asarray(clf.privacy_report(X, y)), rtol=0, atol=0)
    far = X.copy()
    far[1234] *= 5.0
    with pytest.raises(ValueError, match="X has a row whose Euclidean norm exceeds norm_bound=1") as err:
        clf.privacy_report(wrap(far), wrap(y))
    assert "1234" not in str(err.value) and "such rows" not in str(err.value)  # no row, norm or count
    bad = X.copy()
    bad[99, 2] = np.nan
    with pytest.raises(ValueError, match="finite|NaN"):
        clf.privacy_report(wrap(bad), wrap(y))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_member_targets_in_another_order_are_checked_finite_in_the_terms_pass(bad):
    # members in another order are matched by their margins, formed in the terms' own product,
    # which also checks the targets finite (a squared norm; a row whose square overflows is read)
    X, y = _data(2000, 6, seed=31)
    fit = objpert.objpert_fit(X, y, "logistic", lam=1.0, sigma=2.0, rng=0)
    perm = np.random.default_rng(5).permutation(X.shape[0])
    Xp, yp = X[perm].copy(), y[perm]
    ref = objpert.ex_post_pdp(fit, X, y, X, y, member=True)
    np.testing.assert_allclose(objpert.ex_post_pdp(fit, X, y, Xp, yp, member=True), ref[perm], rtol=1e-12, atol=0)
    Xp[17, 5] = bad
    with pytest.raises(ValueError, match="finite"):
        objpert.ex_post_pdp(fit, X, y, Xp, yp, member=True)
    with pytest.raises(ValueError, match="finite"):
        objpert.ex_post_pdp(fit, X, y, Xp, yp, member=False)
    Xp[17, 5] = 1e200  # finite, its square is not: not refused as non-finite, but as what it is
    with pytest.raises(ValueError, match=r"target_x\[17\].*not a record"):
        objpert.ex_post_pdp(fit, X, y, Xp, yp, member=True)
    with pytest.raises(ValueError, match="too large"):
        objpert.ex_post_pdp(fit, X, y, Xp, yp, member=False)


def test_plain_newton_stops_at_the_float64_floor_when_the_iterates_cycle(monkeypatch):
    # At float64's floor the iterates of plain Newton can cycle through a few points whose gradients
    # rise and then fall by more than half (seen on one CPU: 5.1e-15, 6.6e-15, 7.7e-15, 1.4e-14, again
    # and again, for a tolerance of 1e-30): a test against the previous step's gradient is reset once
    # per cycle and never stops. The cycle is imposed here on the solver's own passes, so every
    # machine sees it; the solver must refuse within a few cycles.
    from pdpkit import _solver

    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 4)) * 5
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    real = _solver._evaluate
    cycle = (5.07e-15, 6.60e-15, 7.68e-15, 1.37e-14)
    calls = {"n": 0, "floor": 0}

    def cycling(rows, y_, loss, theta, lam, b, *args, **kw):
        calls["n"] += 1
        if calls["n"] > 2000:
            raise AssertionError("the solver keeps iterating at float64's floor")
        F, Fscale, g, H, mv = real(rows, y_, loss, theta, lam, b, *args, **kw)
        gn = float(np.linalg.norm(g))
        if gn < 1e-12:  # at the floor: the same objective, a gradient of the cycle's norm
            F = float(np.round(F, 6))
            g = g / max(gn, 1e-300) * cycle[calls["floor"] % len(cycle)]
            calls["floor"] += 1
        return F, Fscale, g, H, mv

    monkeypatch.setattr(_solver, "_evaluate", cycling)
    with pytest.raises(RuntimeError, match="resolution of double precision"):
        objpert.objpert_fit(X, y, LOGISTIC, lam=1e-3, sigma=1.0, rng=0, norm_bound=None, grad_tol=1e-30)
    assert calls["floor"] <= _solver._FAST_ITER + 4 * len(cycle) * _solver._FLOOR_STEPS
