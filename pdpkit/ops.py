r"""One-posterior sampling (OPS) for linear regression: exact per-instance privacy, and AdaOPS.

Source: Wang, *Per-instance differential privacy* (document 001), §2.3, §3, §4 and
App. A–B. Convention of Thm 4.1: OPS releases one sample of

.. math:: \begin{aligned}
          p(\theta \mid X, y) &\propto \exp\!\big(-\tfrac{\gamma}{2}(\lVert y - X\theta\rVert^2
          + \lambda\lVert\theta\rVert^2)\big) \\
          &= \mathcal N(\hat\theta_\lambda, H^{-1}/\gamma), \qquad H = X^\top X + \lambda I,
          \end{aligned}

with :math:`\lambda \ge 0` allowed whenever :math:`H \succ 0`. A target
:math:`z = (x, y)` with ``member=True`` is a row of the data (its neighbour is
:math:`D - z`); with ``member=False`` it is a newcomer (neighbour :math:`D + z`).

**Exact pDP (the basis of everything here).** Let S be the smaller data set of the
pair and :math:`S+z` the larger, :math:`\mu = x^\top H_S^{-1}x` the out-of-sample
leverage and :math:`r = y - x^\top\hat\theta_S` the out-of-sample residual. By (A.1) the
log-ratio of the two posteriors depends on θ only through :math:`t = x^\top\theta`, and
given t the two posteriors have the same conditional law on the rest (the ratio is a
function of t), so every hockey-stick, Rényi or ex-post quantity of the pair equals
that of the two laws of t. In units :math:`u = (t - x^\top\hat\theta_S)\sqrt{\gamma/\mu}`:

.. math:: \begin{aligned}
          &P_S = \mathcal N(0, 1), \qquad P_{S+z} = \mathcal N\big(a, v\big), \\
          &v = \frac{1}{1+\mu} = 1 - w,\quad w = \frac{\mu}{1+\mu},\quad
          a = \frac{r\sqrt{\gamma\mu}}{1+\mu}
          \end{aligned}

(Sherman–Morrison: :math:`x^\top\hat\theta_{S+z} - x^\top\hat\theta_S = \mu r/(1+\mu)` and
:math:`x^\top H_{S+z}^{-1}x = \mu/(1+\mu)`). For a member with in-sample leverage
:math:`h = x^\top H^{-1}x` and residual :math:`r_{\rm in}`, :math:`w = h` and
:math:`a = r_{\rm in}\sqrt{\gamma h/(1-h)}`; :math:`h \ge 1` means :math:`H - xx^\top` is
singular: the neighbour's posterior does not exist and the pDP is ``inf``.
The privacy loss :math:`\log p_S/p_{S+z}` is the quadratic
:math:`L(u) = \frac{w}{2v}u^2 - \frac{a}{v}u + \frac{a^2}{2v} + \frac12\log v`, so both
hockey-stick divergences are sums of normal-CDF differences between the two roots of
:math:`L(u) = \pm\varepsilon` (closed form, computed in log space).

Corrections to the source implemented here (evidence in the tests and the chapter):

* Thm 4.1's tail step drops a ½: with :math:`t^2 = \log(2/\delta)`,
  :math:`P(|Z| > t)` is about :math:`\sqrt\delta`, not δ; the printed (4.3)/(4.4) fall below
  the exact pDP (``ops_pdp_bound(form="printed")``); ``form="corrected"`` uses
  :math:`2\log(2/\delta)` and both orders. (4.3) and (4.4) are not equal.
* Def 2.2 needs both orders of the pair; the smaller set's order
  :math:`H(P_S\|P_{S+z})` is the larger one on every grid we tried (equal at ε = 0), but
  both are computed.
* Alg 1 (AdaOPS): ``min{0, …}`` must be ``max``; its σ for λ̃ and its margin are not
  (ε/2, δ/2)-calibrated, and the margin needs a −1 for the neighbour; (A.5) drops a
  "1 +" and a factor 2 under a square root. :func:`adaops_fit` re-derives all of it.
* Lemma 3.1's second identity has a spurious minus sign; (3.4)'s first line pairs
  :math:`\hat\theta'` with :math:`X'` (it should be θ̂ with X′, or θ̂′ with X).

Everything computed from the data here except :func:`ops_fit`'s ``theta``, the AdaOPS
release and the data-independent DP functions is **not private** (names end in
``_nonprivate`` where the quantity itself is the data's; the pDP values of a data set
are data-dependent too and are for analysis, not for release).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike
from scipy import special

from . import gaussian
from .events import PrivacyEvent
from .losses import GLMLoss
from ._progress import progress as _progress
from ._validation import (
    as_finite_array,
    as_generator,
    check_int_at_least,
    check_member_flags,
    check_member_records,
    check_nonnegative,
    check_positive,
    check_json_keys,
    check_probability,
    strict_real,
)

__all__ = [
    "OPSResult",
    "ops_fit",
    "leverage_scores_nonprivate",
    "ops_pdp_delta",
    "ops_pdp_epsilon",
    "ops_pdp_rdp",
    "ops_ex_post_pdp",
    "ops_pdp_bound",
    "ops_dp_epsilon",
    "ops_gamma_for_dp",
    "ops_lam_floor",
    "OPSEvent",
    "AdaOPSEvent",
    "AdaOPSBudget",
    "AdaOPSResult",
    "adaops_budget",
    "adaops_event",
    "adaops_check_kappa",
    "adaops_tight_budget",
    "adaops_fit",
    "erm_per_instance_shift_nonprivate",
    "pdp_generalization_bound",
]

_MEMBER_H_TOL = 1e-10  # in-sample leverage within this of 1: H - xx^T treated as singular (pDP inf)
_DIRECTIONS = ("both", "smaller_first", "larger_first")


# ============================================================================ fitting
@dataclass(frozen=True, repr=False)
class OPSResult:
    """Output of :func:`ops_fit`.

    Attributes
    ----------
    theta : numpy.ndarray
        The release: one posterior sample, shape (d,), or (size, d) for ``size=k``.
    mean : numpy.ndarray
        The posterior mean :math:`\\hat\\theta_\\lambda` (ridge estimate). **Not private**:
        never publish it; kept for analysis (ex-post pDP, tests).
    lam, gamma : float
        The mechanism's parameters (public).
    """

    theta: np.ndarray
    mean: np.ndarray = field(compare=False)
    lam: float
    gamma: float

    def __repr__(self) -> str:  # the release only, never the non-private mean
        return f"OPSResult(theta={self.theta!r}, lam={self.lam!r}, gamma={self.gamma!r})"


def _check_xy(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = as_finite_array(X, "X", ndim=2)
    y = as_finite_array(y, "y", ndim=1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y must have the same number of rows; got {X.shape[0]} and {y.shape[0]}")
    if X.shape[1] == 0:
        raise ValueError("X must have at least one column")
    return X, y


def _check_lam_gamma(lam, gamma=None) -> tuple[float, float | None]:
    lam_f = float(check_nonnegative(lam, "lam"))
    if np.ndim(lam) != 0:
        raise ValueError("lam must be a scalar >= 0")
    if gamma is None:
        return lam_f, None
    if np.ndim(gamma) != 0:
        raise ValueError("gamma must be a scalar > 0")
    return lam_f, float(check_positive(gamma, "gamma"))


def _factor(X: np.ndarray, y: np.ndarray | None, lam: float) -> tuple[np.ndarray, np.ndarray | None]:
    """Lower Cholesky factor of H = X^T X + lam I and the ridge mean (one factorization)."""
    d = X.shape[1]
    H = X.T @ X
    H[np.diag_indices(d)] += lam
    try:
        L = sla.cholesky(H, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        raise ValueError("H = X^T X + lam*I must be positive definite: use lam > 0 "
                         f"(got lam={lam}) or a design X of full column rank") from None
    if not np.all(np.diag(L) > 0):
        raise ValueError(f"H = X^T X + lam*I must be positive definite (lam={lam})")
    theta = None
    if y is not None:
        theta = sla.cho_solve((L, True), X.T @ y, check_finite=False)
    return L, theta


def ops_fit(X: ArrayLike, y: ArrayLike, *, lam: float, gamma: float, rng: int | np.random.Generator | None = None,
            size: int | None = None) -> OPSResult:
    r"""One posterior sample of OPS: :math:`\tilde\theta \sim \mathcal N(\hat\theta_\lambda, H^{-1}/\gamma)`.

    Wang 2019, Thm 4.1 (and eq. 4.2 with the ridge term). One Cholesky
    :math:`H = LL^\top`; a sample is :math:`\hat\theta + L^{-\top}\xi/\sqrt\gamma`,
    :math:`\xi \sim \mathcal N(0, I_d)` (covariance :math:`L^{-\top}L^{-1}/\gamma = H^{-1}/\gamma`).

    Parameters
    ----------
    X, y : array_like, shapes (n, d) and (n,)
    lam : float
        Ridge parameter :math:`\lambda \ge 0` (0 needs :math:`X^\top X \succ 0`).
    gamma : float
        Inverse temperature :math:`\gamma > 0`.
    rng : int, numpy.random.Generator or None
    size : int or None
        ``None``: one sample of shape (d,); ``k``: k independent samples, shape (k, d).

    Returns
    -------
    OPSResult
        ``theta`` is the release; ``mean`` is **not private**.
    """
    X, y = _check_xy(X, y)
    lam, gamma = _check_lam_gamma(lam, gamma)
    gen = as_generator(rng)
    k = 1 if size is None else check_int_at_least(size, "size", 1)
    L, mean = _factor(X, y, lam)
    xi = gen.standard_normal((X.shape[1], k))
    draws = mean[:, None] + sla.solve_triangular(L.T, xi, lower=False, check_finite=False) / math.sqrt(gamma)
    theta = draws[:, 0] if size is None else draws.T.copy()
    theta.setflags(write=False)
    mean.setflags(write=False)
    return OPSResult(theta=theta, mean=mean, lam=lam, gamma=gamma)


# ============================================================================ leverage
def _targets(target_x, target_y, d: int) -> tuple[np.ndarray, np.ndarray | None, bool]:
    tx = as_finite_array(target_x, "target_x")
    scalar = tx.ndim == 1
    tx = np.atleast_2d(tx)
    if tx.ndim != 2 or tx.shape[1] != d:
        raise ValueError(f"target_x must have shape (m, {d}) or ({d},); got {np.shape(target_x)}")
    ty = None
    if target_y is not None:
        ty = np.atleast_1d(as_finite_array(target_y, "target_y"))
        if ty.ndim != 1 or ty.shape[0] != tx.shape[0]:
            raise ValueError(f"target_y must have one label per target ({tx.shape[0]}); got shape {np.shape(target_y)}")
    return tx, ty, scalar


def leverage_scores_nonprivate(X: ArrayLike, *, lam: float, target_x: ArrayLike | None = None) -> np.ndarray:
    r"""Leverage scores :math:`x^\top H^{-1}x`, :math:`H = X^\top X + \lambda I` (not private).

    Wang 2019, §3 after (3.4): with ``target_x=None`` the in-sample scores
    :math:`h_i = x_i^\top H^{-1}x_i` of the rows; otherwise the out-of-sample scores
    :math:`\mu = x^\top H^{-1}x` of the targets. Sherman–Morrison links them:
    :math:`x^\top(H + xx^\top)^{-1}x = \mu/(1+\mu)` and :math:`x^\top(H - x_ix_i^\top)^{-1}x_i = h_i/(1-h_i)`.
    One Cholesky and one triangular solve for all of them.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    target_x : array_like, optional
        Features x of the target record z.
    """
    X = as_finite_array(X, "X", ndim=2)
    lam, _ = _check_lam_gamma(lam)
    L, _ = _factor(X, None, lam)
    if target_x is None:
        tx, scalar = X, False
    else:
        tx, _, scalar = _targets(target_x, None, X.shape[1])
    W = sla.solve_triangular(L, tx.T, lower=True, check_finite=False)
    out = np.einsum("ij,ij->j", W, W)
    return out[0] if scalar else out


def _pair_params(X, y, target_x, target_y, lam, gamma, member, *, check_members=True):
    """(w, a, infinite, scalar, extra) of the standardized pair N(0,1) vs N(a, 1-w) for each target."""
    X, y = _check_xy(X, y)
    lam, gamma = _check_lam_gamma(lam, gamma)
    tx, ty, scalar = _targets(target_x, target_y, X.shape[1])
    mem = check_member_flags(member, tx.shape[0])
    if check_members and not (tx is X and ty is y):  # targets = the rows themselves: nothing to check
        check_member_records(X, y, tx, ty, mem)
    L, theta = _factor(X, y, lam)
    W = sla.solve_triangular(L, tx.T, lower=True, check_finite=False)
    lev = np.einsum("ij,ij->j", W, W)
    r = ty - tx @ theta
    with np.errstate(divide="ignore", invalid="ignore"):
        # non-members: mu = lev (out of sample), w = mu/(1+mu), a = |r| sqrt(g mu)/(1+mu)
        w_out = lev / (1.0 + lev)
        a_out = np.abs(r) * np.sqrt(gamma * lev) / (1.0 + lev)
        # members: h = lev (in sample), w = h, a = |r_in| sqrt(g h/(1-h))
        a_in = np.abs(r) * np.sqrt(gamma * lev / (1.0 - lev))
    infinite = mem & (lev >= 1.0 - _MEMBER_H_TOL)
    w = np.where(mem, np.minimum(lev, 1.0), w_out)
    a = np.where(mem, np.where(infinite, 0.0, a_in), a_out)
    w = np.where(infinite, 0.0, w)
    return w, a, infinite, scalar, dict(lev=lev, r=r, member=mem, gamma=gamma, lam=lam, theta=theta,
                                        L=L, W=W, tx=tx, ty=ty)


# ============================================================================ the pair
def _log_interval(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """log(Φ(hi) − Φ(lo)) for lo ≤ hi, accurate in both tails (lo, hi may be ±inf)."""
    out = np.empty(np.broadcast(lo, hi).shape)
    right = lo >= 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if right.all():  # the usual case for OPS (small leverage): no masking
            a, b = special.log_ndtr(-lo), special.log_ndtr(-hi)
            return a + np.log1p(-np.exp(b - a))
    left = hi <= 0
    mid = ~(right | left)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if np.any(right):
            a, b = special.log_ndtr(-lo[right]), special.log_ndtr(-hi[right])
            out[right] = a + np.log1p(-np.exp(b - a))
        if np.any(left):
            a, b = special.log_ndtr(hi[left]), special.log_ndtr(lo[left])
            out[left] = a + np.log1p(-np.exp(b - a))
        if np.any(mid):
            out[mid] = np.log1p(-(special.ndtr(lo[mid]) + special.ndtr(-hi[mid])))
    return out


def _prep(w, a):
    """ε-independent constants of the pair N(0,1) vs N(a, v), v = 1 − w (a ≥ 0)."""
    v = 1.0 - w
    logv = np.log1p(-w)
    with np.errstate(divide="ignore"):
        inv2A = np.where(w > 0, v / np.where(w > 0, w, 1.0), np.inf)  # 1/(2A), A = w/(2v)
    return (a, np.sqrt(v), a / v, a * a / (2.0 * v) + 0.5 * logv, inv2A, (a * a - w * logv) / v, 2.0 * w / v)


def _take(pre, idx):
    return pre if idx is None else tuple(p[idx] for p in pre)


_TAIL_CUT = 38.5  # Φ(−38.5) < 1e-300: a tail piece beyond it is below every representable δ


def _delta_pq(eps, pre, want_slope=False):
    r"""H_{e^ε}(P‖Q) for P = N(0,1) (smaller set), Q = N(a, 1−w): the region {L > ε} is the
    outside of the roots of A u² − B u + (C − ε) (both always exist for ε ≥ 0), so δ is two tail
    pieces, each :math:`P - e^\varepsilon Q \ge 0` computed in log space. With ``want_slope`` also
    dδ/dε = −e^ε Q(region)."""
    a, sv, B, C, inv2A, D0, D1 = pre
    q = B + np.sqrt(D0 + D1 * eps)
    u_lo = 2.0 * (C - eps) / q  # q > 0 unless a = w = 0 (excluded by the callers)
    lp = special.log_ndtr(u_lo)
    lq = special.log_ndtr((u_lo - a) / sv) + eps
    d = np.exp(lp) * -np.expm1(np.minimum(lq - lp, 0.0))
    slope = np.exp(lq) if want_slope else None
    with np.errstate(invalid="ignore", over="ignore"):
        u_hi = q * inv2A  # inf when w = 0 (one root: the Gaussian mechanism)
    far = np.flatnonzero(u_hi < _TAIL_CUT)
    if far.size:
        uh, e = u_hi[far], eps[far]
        lp_r = special.log_ndtr(-uh)
        lq_r = special.log_ndtr(-(uh - a[far]) / sv[far]) + e
        d[far] += np.exp(lp_r) * -np.expm1(np.minimum(lq_r - lp_r, 0.0))
        if want_slope:
            slope[far] += np.exp(lq_r)
    d = np.maximum(d, 0.0)
    return (d, -slope) if want_slope else d


def _delta_qp(eps, pre, want_slope=False):
    r"""H_{e^ε}(Q‖P): the region {L < −ε} lies between the roots of A u² − B u + (C + ε), if any."""
    a, sv, B, C, inv2A, D0, D1 = pre
    disc = D0 - D1 * eps
    has = disc > 0
    q = B + np.sqrt(np.where(has, disc, 0.0))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lo = np.where(has & (q > 0), 2.0 * (C + eps) / np.where(q > 0, q, 1.0), 0.0)
        hi = np.where(has, np.maximum(q * inv2A, lo), 0.0)
        lq = _log_interval((lo - a) / sv, (hi - a) / sv)
        lp = _log_interval(lo, hi) + eps
        d = np.where(has & (lq > -np.inf), np.exp(lq) * -np.expm1(np.minimum(lp - lq, 0.0)), 0.0)
        d = np.maximum(d, 0.0)
        if not want_slope:
            return d
        return d, np.where(has, -np.exp(lp), 0.0)


def _pair_delta(eps, w, a):
    r"""Both hockey-stick divergences (δ_PQ, δ_QP) of P = N(0,1) (smaller set) and Q = N(a, 1−w)."""
    eps, w, a = np.broadcast_arrays(np.asarray(eps, float), np.asarray(w, float), np.abs(np.asarray(a, float)))
    shape = eps.shape
    eps, w, a = eps.ravel(), w.ravel(), a.ravel()
    trivial = (w == 0) & (a == 0)
    pre = _prep(w, np.where(trivial, 1.0, a))
    dpq, dqp = _delta_pq(eps, pre), _delta_qp(eps, pre)
    return np.where(trivial, 0.0, dpq).reshape(shape), np.where(trivial, 0.0, dqp).reshape(shape)


def _select(d_pq, d_qp, direction):
    if direction == "both":
        return np.maximum(d_pq, d_qp)
    return d_pq if direction == "smaller_first" else d_qp


def _solve_eps(dd, ww, aa, fn, pre_all=None):
    """Smallest ε ≥ 0 with fn(ε) ≤ dd (fn decreasing in ε): safeguarded Newton on log δ.

    Returns ε within a relative ~1e-11 above the root and always on the safe side."""
    out = np.zeros(dd.shape)
    idx = np.flatnonzero((ww > 0) | (aa > 0))  # a = w = 0: identical posteriors, ε = 0
    if idx.size == 0:
        return out
    if idx.size == ww.size:
        idx = None
        pre = _prep(ww, aa) if pre_all is None else pre_all
    else:
        pre = _prep(ww[idx], aa[idx]) if pre_all is None else _take(pre_all, idx)
    dd = dd if idx is None else dd[idx]
    sg = np.sqrt(-2.0 * np.log(dd))
    # start: a fraction of the loss A z² + B z + C at the (1−δ)-quantile z (that tail bound is
    # 1.2–4 times the root); Newton is safeguarded by the bracket [lo, hi] either way
    z = -special.ndtri(dd)
    _, _, B, C, inv2A = pre[:5]
    x = np.maximum(0.7 * (z * z / (2.0 * inv2A) + B * z + C), 1e-6)
    lo = np.zeros_like(x)
    hi = np.full_like(x, np.inf)
    act = np.arange(x.size)
    full = True
    for _ in range(100):
        xa = x if full else x[act]
        dv, sl = fn(xa, pre if full else _take(pre, act), want_slope=True)
        d_act = dd if full else dd[act]
        above = dv > d_act
        l_act = np.where(above, xa, lo if full else lo[act])
        h_act = np.where(above, hi if full else hi[act], xa)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # Newton on g(ε) = sqrt(−2 log δ(ε)), nearly linear in ε (≈ ε/a − a/2 for the Gaussian pair)
            g = np.sqrt(-2.0 * np.log(dv))
            newton = xa + (g - (sg if full else sg[act])) * g * dv / sl
        ok = np.isfinite(newton) & (newton > l_act) & (newton < np.minimum(h_act, 2.0 * xa + 1.0))
        xn = np.where(ok, newton, np.where(np.isfinite(h_act), 0.5 * (l_act + h_act), 2.0 * xa + 1.0))
        xn = np.where((newton <= 0) & (l_act == 0), 0.0, xn)  # the root may be ε = 0 itself: try it
        done = (np.abs(xn - xa) <= 1e-10 * xa) | (np.isfinite(h_act) & (h_act - l_act <= 1e-12 * h_act))
        if full:
            lo, hi, x = l_act, h_act, xn
        else:
            lo[act], hi[act], x[act] = l_act, h_act, xn
        act = act[~done]
        full = False
        if act.size == 0:
            break
    # the safe side: Newton converges from below the root (δ slightly > dd), so try x(1 + τ) for
    # growing τ and fall back to the bracket's upper end (evaluated, δ ≤ dd) where none works
    res = hi.copy()
    pend = np.arange(x.size)
    for tau in (1e-11, 1e-9, 1e-7, 1e-5):
        cand = x[pend] * (1.0 + tau) + 1e-300
        good = fn(cand, _take(pre, pend)) <= dd[pend]
        res[pend[good]] = np.minimum(cand[good], res[pend[good]])
        pend = pend[~good]
        if pend.size == 0:
            break
    while True:  # only if the bracket never got an evaluated upper end (not seen in practice)
        bad = np.flatnonzero(~np.isfinite(res))
        if bad.size == 0:
            break
        x[bad] = 2.0 * x[bad] + 1.0
        good = fn(x[bad], _take(pre, bad)) <= dd[bad]
        res[bad[good]] = x[bad[good]]
    if idx is None:
        return res
    out[idx] = res
    return out


def _pair_epsilon(delta: np.ndarray, w: np.ndarray, a: np.ndarray, direction: str = "both") -> np.ndarray:
    """Smallest ε ≥ 0 with δ(ε) ≤ δ for each pair, never on the unsafe side (vectorized).

    For ``"both"``, max(δ_PQ, δ_QP)(ε) ≤ δ iff ε ≥ max(ε_PQ, ε_QP): ε_PQ is solved for every pair,
    ε_QP only where δ_QP(ε_PQ) > δ (on our grids, never: the smaller set's order dominates)."""
    delta, w, a = np.broadcast_arrays(np.asarray(delta, float), np.asarray(w, float), np.abs(np.asarray(a, float)))
    shape = delta.shape
    dl, w, a = delta.ravel(), w.ravel(), a.ravel()
    pend = np.zeros(0, dtype=np.intp)
    if direction == "larger_first":
        out = _solve_eps(dl, w, a, _delta_qp)
    else:
        pre = _prep(w, a)
        out = _solve_eps(dl, w, a, _delta_pq, pre)  # δ_PQ(out) ≤ dl is verified inside
        if direction == "both":
            pend = np.flatnonzero(_delta_qp(out, pre) > dl)
            if pend.size:
                out[pend] = np.maximum(out[pend], _solve_eps(dl[pend], w[pend], a[pend], _delta_qp))
    # where the two orders were combined, check both at the result: rounding noise (seen only for
    # nearly identical pairs, a and w ~ 1e-13, where δ is a difference of nearly equal probabilities)
    # can break monotonicity; step up until the check passes
    for k in range(80):
        if pend.size == 0:
            break
        bad = _select(*_pair_delta(out[pend], w[pend], a[pend]), direction) > dl[pend]
        pend = pend[bad]
        out[pend] = out[pend] * (1.0 + 1e-9 * 2.0**k) + 1e-300
    return out.reshape(shape)


def _pair_rdp(alpha, w, a, direction="both"):
    """Rényi divergences of order α between N(0,1) and N(a, 1−w), both orders (inf where divergent)."""
    alpha, w, a = np.broadcast_arrays(np.asarray(alpha, float), np.asarray(w, float), np.asarray(a, float))
    a2 = a * a
    logv = np.log1p(-w)
    with np.errstate(divide="ignore", invalid="ignore"):
        s1 = 1.0 - alpha * w  # D_α(P‖Q): α v + (1−α)·1
        r_pq = alpha * a2 / (2.0 * s1) - (np.log(s1) - alpha * logv) / (2.0 * (alpha - 1.0))
        r_pq = np.where(s1 > 0, r_pq, np.inf)
        s2 = 1.0 - w + alpha * w  # D_α(Q‖P): α·1 + (1−α) v
        r_qp = alpha * a2 / (2.0 * s2) - (np.log1p((alpha - 1.0) * w) - (1.0 - alpha) * logv) / (2.0 * (alpha - 1.0))
    r_pq = np.maximum(r_pq, 0.0)
    r_qp = np.maximum(r_qp, 0.0)
    if direction == "both":
        return np.maximum(r_pq, r_qp)
    return r_pq if direction == "smaller_first" else r_qp


def _check_direction(direction: str) -> str:
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS}; got {direction!r}")
    return direction


def _finish(out: np.ndarray, scalar: bool):
    return out[0] if scalar else out


# ============================================================================ exact pDP
def ops_pdp_delta(X: ArrayLike, y: ArrayLike, target_x: ArrayLike, target_y: ArrayLike, *, lam: float,
                  gamma: float, eps: float, member: ArrayLike, direction: str = "both") -> np.ndarray:
    r"""Tight δ(ε) of OPS for each target (Def 2.2 of Wang 2019, both directions).

    The hockey-stick divergence :math:`H_{e^\varepsilon}` between the OPS posteriors of
    the pair (S, S+z), computed exactly from the two laws of :math:`x^\top\theta`
    (module docstring). ``direction="both"`` (default) is Def 2.2's
    :math:`\max\{H_{e^\varepsilon}(P_S\|P_{S+z}), H_{e^\varepsilon}(P_{S+z}\|P_S)\}`;
    ``"smaller_first"`` / ``"larger_first"`` give one order. A member whose removal
    leaves H singular gets δ = 1. Not private (a function of the data).

    Parameters
    ----------
    X, y : data; target_x (m, d) or (d,), target_y (m,) or scalar
    lam, gamma : OPS parameters (``lam`` ≥ 0, ``gamma`` > 0)
    eps : float ≥ 0
    member : bool or bool array (m,)
        True: the target is a row of (X, y) (neighbour D − z, checked); False: a newcomer.
    target_x : array_like
        Features x of the target record z.
    target_y : array_like
        Label y of the target record z.
    direction : str, default 'both'
        ``"both"`` (Def 2.2, the larger of the two orders), ``"smaller_first"`` or ``"larger_first"`` (one order).
    """
    direction = _check_direction(direction)
    eps = float(check_nonnegative(eps, "eps"))
    w, a, inf, scalar, _ = _pair_params(X, y, target_x, target_y, lam, gamma, member)
    d = _select(*_pair_delta(np.full(w.shape, eps), w, a), direction)
    return _finish(np.where(inf, 1.0, d), scalar)


def ops_pdp_epsilon(X: ArrayLike, y: ArrayLike, target_x: ArrayLike, target_y: ArrayLike, *, lam: float,
                    gamma: float, delta: float, member: ArrayLike, direction: str = "both") -> np.ndarray:
    r"""Tight (ε, δ)-pDP of OPS for each target: the smallest ε with δ(ε) ≤ δ (exact).

    Wang 2019, Def 2.2 and Thm 4.1 made exact: the two posteriors differ only through
    the law of :math:`x^\top\theta`, two normals with unequal variances (module
    docstring), so :math:`\delta(\varepsilon)` is a closed form (:func:`ops_pdp_delta`)
    inverted by safeguarded Newton steps; the returned ε satisfies
    :math:`\delta(\varepsilon) \le \delta` (never the unsafe side; relative accuracy ~1e-13).
    One Cholesky and one triangular solve for all targets; ``inf`` when removing a
    member leaves :math:`H - xx^\top` singular (in-sample leverage ≥ 1 − 1e-10).
    Not private (a function of the data).

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    target_x : array_like
        Features x of the target record z.
    target_y : array_like
        Label y of the target record z.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    gamma : float
        Inverse temperature γ > 0 of OPS: θ is drawn from N(θ̂, H⁻¹/γ).
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    member : array_like
        ``True`` when the target is in the data set (its removal), ``False`` when it is added.
    direction : str, default 'both'
        ``"both"`` (Def 2.2, the larger of the two orders), ``"smaller_first"`` or ``"larger_first"`` (one order).
    """
    direction = _check_direction(direction)
    delta = float(check_probability(delta, "delta"))
    w, a, inf, scalar, _ = _pair_params(X, y, target_x, target_y, lam, gamma, member)
    e = _pair_epsilon(np.full(w.shape, delta), w, a, direction)
    return _finish(np.where(inf, np.inf, e), scalar)


def ops_pdp_rdp(X: ArrayLike, y: ArrayLike, target_x: ArrayLike, target_y: ArrayLike, *, lam: float,
                gamma: float, alpha: float, member: ArrayLike, direction: str = "both") -> np.ndarray:
    r"""Rényi pDP of OPS of order α > 1: the larger of the two orders' Rényi divergences.

    For :math:`\mathcal N(m_1, s_1^2)` vs :math:`\mathcal N(m_2, s_2^2)`,
    :math:`D_\alpha = \frac{\alpha(m_1-m_2)^2}{2s_\alpha^2} - \frac{1}{2(\alpha-1)}\log\frac{s_\alpha^2}{s_1^{2(1-\alpha)}s_2^{2\alpha}}`
    with :math:`s_\alpha^2 = \alpha s_2^2 + (1-\alpha)s_1^2`, and ``inf`` where
    :math:`s_\alpha^2 \le 0`: for :math:`D_\alpha(P_S\|P_{S+z})` this happens when
    :math:`\alpha \ge 1 + 1/\mu` (the smaller set's posterior is wider). Exact for OPS by
    the reduction to :math:`x^\top\theta`. Not private.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    target_x : array_like
        Features x of the target record z.
    target_y : array_like
        Label y of the target record z.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    gamma : float
        Inverse temperature γ > 0 of OPS: θ is drawn from N(θ̂, H⁻¹/γ).
    member : array_like
        ``True`` when the target is in the data set (its removal), ``False`` when it is added.
    alpha : float
        Rényi order α > 1.
    direction : str, default 'both'
        ``"both"`` (the larger of the two orders), ``"smaller_first"`` or ``"larger_first"`` (one order).
    """
    direction = _check_direction(direction)
    alpha_a = as_finite_array(alpha, "alpha")
    if alpha_a.ndim != 0 or alpha_a <= 1:
        raise ValueError(f"alpha must be a scalar > 1; got {alpha!r}")
    w, a, inf, scalar, _ = _pair_params(X, y, target_x, target_y, lam, gamma, member)
    r = _pair_rdp(float(alpha_a), w, a, direction)
    return _finish(np.where(inf, np.inf, r), scalar)


def ops_ex_post_pdp(result: OPSResult, X: ArrayLike, y: ArrayLike, target_x: ArrayLike, target_y: ArrayLike, *,
                    member: ArrayLike) -> np.ndarray:
    r"""Ex-post pDP :math:`|\log p_D(\tilde\theta) - \log p_{D\pm z}(\tilde\theta)|` of an OPS release.

    Wang 2019, (A.1): the log-ratio is a function of :math:`t = x^\top\tilde\theta` only,
    the difference of the two normal log-densities of t. ``result`` is the output of
    :func:`ops_fit` on (X, y) (its ``lam`` and ``gamma`` are used); for ``size=k`` the
    result has shape (k, m). ``inf`` for a member whose removal leaves H singular.
    Not private.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    target_x : array_like
        Features x of the target record z.
    target_y : array_like
        Label y of the target record z.
    member : array_like
        ``True`` when the target is in the data set (its removal), ``False`` when it is added.
    result : OPSResult
        The output of :func:`ops_fit` on ``(X, y)``: its sample, ``lam`` and ``gamma`` are used.
    """
    if not isinstance(result, OPSResult):
        raise TypeError(f"result must be an OPSResult from ops_fit; got {type(result).__name__}")
    w, a, inf, scalar, ex = _pair_params(X, y, target_x, target_y, result.lam, result.gamma, member)
    theta = np.asarray(result.theta, dtype=float)
    if theta.shape[-1] != ex["tx"].shape[1]:
        raise ValueError("result.theta does not match the number of columns of X")
    g, lev, r, mem = ex["gamma"], ex["lev"], ex["r"], ex["member"]
    t = np.atleast_2d(theta) @ ex["tx"].T  # (k, m)
    center = ex["tx"] @ ex["theta"]  # x^T theta_hat(D)
    with np.errstate(divide="ignore", invalid="ignore"):
        # means and variances of t under D and under its neighbour
        var_d = lev / g
        # non-member: neighbour D+z has mean center + r lev/(1+lev), variance lev/(1+lev)/g
        m_nb_out = center + r * lev / (1.0 + lev)
        v_nb_out = lev / (1.0 + lev) / g
        # member: neighbour D-z has mean y - r/(1-h), variance h/(1-h)/g
        m_nb_in = ex["ty"] - r / (1.0 - lev)
        v_nb_in = lev / (1.0 - lev) / g
        m_nb = np.where(mem, m_nb_in, m_nb_out)
        v_nb = np.where(mem, v_nb_in, v_nb_out)
        logp = -0.5 * (t - center) ** 2 / var_d - 0.5 * np.log(var_d)
        logq = -0.5 * (t - m_nb) ** 2 / v_nb - 0.5 * np.log(v_nb)
        out = np.abs(logp - logq)
    out = np.where(lev[None, :] == 0, 0.0, out)
    out = np.where(inf[None, :], np.inf, out)
    if np.ndim(result.theta) == 1:
        out = out[0]
        return out[0] if scalar else out
    return out[:, 0] if scalar else out


# ============================================================================ Thm 4.1
def _thm41(mu, r, gamma, L2):
    """Thm 4.1's (4.3) form with log(2/δ) replaced by L2, given out-of-sample μ and residual."""
    return (0.5 * np.abs(-np.log1p(mu) + gamma * mu / (1.0 + mu) * r * r) + 0.5 * mu * L2
            + np.sqrt(gamma * mu * L2) * np.abs(r))


def _thm44(mu_in, r_in, gamma, L2):
    """Thm 4.1's (4.4) form (in-sample μ', residual r' of the larger set)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (0.5 * np.abs(-np.log1p(-mu_in) - gamma * mu_in / (1.0 - mu_in) * r_in * r_in) + 0.5 * mu_in * L2
                + np.sqrt(gamma * mu_in * L2) * np.abs(r_in))


def ops_pdp_bound(X: ArrayLike, y: ArrayLike, target_x: ArrayLike, target_y: ArrayLike, *, lam: float,
                  gamma: float, delta: float, member: ArrayLike, form: str = "printed") -> np.ndarray:
    r"""Thm 4.1 of Wang 2019: (4.3) for non-members, (4.4) for members.

    ``form="printed"``: the bound as printed,
    :math:`\tfrac12|{-\log(1+\mu)} + \tfrac{\gamma\mu}{1+\mu}r^2| + \tfrac{\mu}{2}\log\tfrac2\delta + \sqrt{\gamma\mu\log\tfrac2\delta}\,|r|`
    with the out-of-sample μ, r of the data set without z (4.3), resp. its
    in-sample twin (4.4). Its tail step is invalid: with
    :math:`t^2 = \log(2/\delta)`, Lemma B.5 gives
    :math:`P(|Z| > t) \le 2e^{-t^2/2}/t = \sqrt{2\delta}/t`, not :math:`\delta/\log(2/\delta)`
    (the exponent's ½ is dropped), and each of (4.3), (4.4) controls one order of the
    pair only. It can fall below the exact pDP (see the chapter's errata).

    ``form="corrected"``: :math:`\log(2/\delta) \to 2\log(2/\delta)` (then
    :math:`P(|Z|>t) \le 2e^{-t^2/2} = \delta`), and the maximum of the (4.3) form
    (tail under :math:`P_S`) and the (4.4) form (tail under :math:`P_{S+z}`), which by
    Lemma B.6 bound the two orders of Def 2.2: a valid upper bound on
    :func:`ops_pdp_epsilon`. The two printed forms are **not** equal (Remark 4.2's
    switch of θ̂ to θ̂′ included): with :math:`\mu' = \mu/(1+\mu)` and
    :math:`r' = r/(1+\mu)`, (4.4) is (4.3) with the first term replaced by
    :math:`\tfrac12|\log(1+\mu) - \gamma\mu r^2/(1+\mu)^2|` and the others shrunk.
    ``inf`` for a member whose removal leaves H singular. Not private.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    target_x : array_like
        Features x of the target record z.
    target_y : array_like
        Label y of the target record z.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    gamma : float
        Inverse temperature γ > 0 of OPS: θ is drawn from N(θ̂, H⁻¹/γ).
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    member : array_like
        ``True`` when the target is in the data set (its removal), ``False`` when it is added.
    form : str, default 'printed'
        ``"printed"`` (Thm 4.1 as printed, not valid everywhere) or ``"corrected"`` (the tail step repaired and the maximum of both forms).
    """
    if form not in ("printed", "corrected"):
        raise ValueError(f"form must be 'printed' or 'corrected'; got {form!r}")
    delta = float(check_probability(delta, "delta"))
    w, a, inf, scalar, ex = _pair_params(X, y, target_x, target_y, lam, gamma, member)
    g, lev, r, mem = ex["gamma"], ex["lev"], ex["r"], ex["member"]
    with np.errstate(divide="ignore", invalid="ignore"):
        # out-of-sample (smaller set) and in-sample (larger set) quantities of every target
        mu_out = np.where(mem, lev / (1.0 - lev), lev)
        r_out = np.where(mem, r / (1.0 - lev), r)
        mu_in = np.where(mem, lev, lev / (1.0 + lev))
        r_in = np.where(mem, r, r / (1.0 + lev))
        L2 = math.log(2.0 / delta)
        if form == "printed":
            out = np.where(mem, _thm44(mu_in, r_in, g, L2), _thm41(mu_out, r_out, g, L2))
        else:
            out = np.maximum(_thm41(mu_out, r_out, g, 2 * L2), _thm44(mu_in, r_in, g, 2 * L2))
    return _finish(np.where(inf, np.inf, out), scalar)


# ============================================================================ DP of OPS
def _theta_norm_bound(n: int, lam: float, x_bound: float, y_bound: float, lam_min: float) -> float:
    """Bound on ||theta_hat_S|| over the smaller sets S of the class (at most n - 1 records)."""
    # ||H_S^{-1} X_S^T|| = max_s s/(s^2 + lam) over the singular values s of X_S:
    # s^2 >= lam_min and s^2 <= ||X_S||_F^2 <= (n-1) x_bound^2
    s_lo = math.sqrt(lam_min)
    s_hi = max(x_bound * math.sqrt(max(n - 1, 0)), s_lo)
    if lam == 0.0:
        f_max = 1.0 / s_lo
    else:
        s = min(max(math.sqrt(lam), s_lo), s_hi)
        f_max = s / (s * s + lam) if s > 0 else 0.0
    return y_bound * math.sqrt(max(n - 1, 0)) * f_max


def _worst_case(n: int, lam: float, gamma: float, x_bound: float, y_bound: float, lam_min: float):
    """(w, a, mu_max, r_max) at the corner of Prop 4.3(1) redone: largest leverage and residual."""
    h = lam + lam_min
    mu_max = x_bound * x_bound / h
    r_max = y_bound + x_bound * _theta_norm_bound(n, lam, x_bound, y_bound, lam_min)
    mu_a = min(mu_max, 1.0)  # sqrt(mu)/(1+mu) peaks at mu = 1
    a = r_max * math.sqrt(gamma * mu_a) / (1.0 + mu_a)
    w = mu_max / (1.0 + mu_max)
    return w, a, mu_max, r_max


def _record_corner(x_norm: np.ndarray, y_abs: np.ndarray, n: int, lam: float, gamma: float, x_bound: float,
                   y_bound: float, lam_min: float) -> tuple[np.ndarray, np.ndarray]:
    """(w, a) of :func:`_worst_case` for records of norm ``x_norm`` and label ``y_abs`` (the others at the bounds)."""
    mu_max = x_norm * x_norm / (lam + lam_min)
    r_max = y_abs + x_norm * _theta_norm_bound(n, lam, x_bound, y_bound, lam_min)
    mu_a = np.minimum(mu_max, 1.0)
    return mu_max / (1.0 + mu_max), r_max * np.sqrt(gamma * mu_a) / (1.0 + mu_a)


def _record_targets(target_x: Any, target_y: Any, x_bound: float, y_bound: float | None
                    ) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """(norms of the records, |labels|, scalar): records checked to lie in the event's class."""
    tx = as_finite_array(target_x, "target_x")
    scalar = tx.ndim == 1
    tx = np.atleast_2d(tx)
    if tx.ndim != 2:
        raise ValueError(f"target_x must have shape (m, d) or (d,); got {np.shape(target_x)}")
    x_norm = np.linalg.norm(tx, axis=1)
    if np.any(x_norm > x_bound * (1.0 + 1e-12)):
        raise ValueError("target_x: a record lies outside the event's class (norm above x_bound); the bound holds "
                         "for records of the class only")
    if y_bound is None:
        return np.minimum(x_norm, x_bound), None, scalar
    ty = np.atleast_1d(as_finite_array(target_y, "target_y"))
    if ty.shape != (tx.shape[0],):
        raise ValueError(f"target_y must have one label per record ({tx.shape[0]}); got shape {np.shape(target_y)}")
    y_abs = np.abs(ty)
    if np.any(y_abs > y_bound * (1.0 + 1e-12)):
        raise ValueError("target_y: a label lies outside the event's class (above y_bound); the bound holds for "
                         "records of the class only")
    return np.minimum(x_norm, x_bound), np.minimum(y_abs, y_bound), scalar


def _check_dp_args(n, lam, x_bound, y_bound, lam_min):
    n = check_int_at_least(n, "n", 1)
    lam = float(check_nonnegative(lam, "lam"))
    x_bound = float(check_positive(x_bound, "x_bound"))
    y_bound = float(check_nonnegative(y_bound, "y_bound"))
    lam_min = float(check_nonnegative(lam_min, "lam_min"))
    if lam + lam_min <= 0:
        raise ValueError("lam + lam_min must be > 0: with both 0 the leverage of a newcomer is unbounded "
                         "(no DP guarantee); got lam=0, lam_min=0")
    return n, lam, x_bound, y_bound, lam_min


def ops_dp_epsilon(delta: ArrayLike, *, n: int, lam: float, gamma: float, x_bound: float = 1.0,
                   y_bound: float = 1.0, lam_min: float = 0.0) -> np.ndarray:
    r"""(ε, δ)-DP of OPS over data sets of at most n records (Prop 4.3(1) of Wang 2019, redone exactly).

    Class: records with :math:`\lVert x\rVert \le` ``x_bound`` and :math:`|y| \le` ``y_bound``;
    every neighbouring pair (S, S+z) with :math:`|S+z| \le n` whose smaller set has
    :math:`\lambda_{\min}(X_S^\top X_S) \ge` ``lam_min``; fixed ``lam`` and ``gamma`` (if λ
    depended on n, as :math:`\lambda_n` does in the source, neighbours would run
    different mechanisms). With :math:`h = \lambda + \lambda_{\min}`:

    * leverage :math:`\mu \le \mu_{\max} = x_b^2/h`;
    * residual :math:`|r| \le y_b + x_b\lVert\hat\theta_S\rVert \le y_b + x_b y_b\sqrt{n-1}\,
      \max_s \frac{s}{s^2+\lambda}` over :math:`s^2 \in [\lambda_{\min}, (n-1)x_b^2]`
      (:math:`1/(2\sqrt\lambda)` when the peak is feasible; Lemma A.1's :math:`\sqrt{2/h}` is looser).

    The exact pDP depends on the pair only through :math:`w = \mu/(1+\mu)` and
    :math:`a = |r|\sqrt{\gamma\mu}/(1+\mu)` and increases in each (checked on a grid in the
    tests), so its supremum is at most its value at :math:`w(\mu_{\max})` and
    :math:`a = r_{\max}\sqrt\gamma\max_{\mu\le\mu_{\max}}\sqrt\mu/(1+\mu)` — the corner
    (largest leverage, largest residual) when :math:`\mu_{\max} \le 1`. That value is
    returned (tight δ(ε) inverted, Def 2.2 both directions). Data-independent.

    Parameters
    ----------
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    n : int
        Number of records n.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    gamma : float
        Inverse temperature γ > 0 of OPS: θ is drawn from N(θ̂, H⁻¹/γ).
    y_bound : float, default 1.0
        Public bound on the absolute value :math:`|y|` of the labels.
    x_bound : float, default 1.0
        Public bound on ‖x‖ of every record.
    lam_min : float, default 0.0
        Public lower bound on λ_min(XᵀX) of the smaller data set of every pair.
    """
    n, lam, x_bound, y_bound, lam_min = _check_dp_args(n, lam, x_bound, y_bound, lam_min)
    gamma = float(check_positive(gamma, "gamma"))
    delta = check_probability(delta, "delta")
    w, a, *_ = _worst_case(n, lam, gamma, x_bound, y_bound, lam_min)
    out = _pair_epsilon(delta, np.full(delta.shape, w), np.full(delta.shape, a))
    return out[()] if out.ndim == 0 else out


def ops_lam_floor(eps: float, delta: float, *, x_bound: float = 1.0) -> float:
    r"""The smallest :math:`\lambda + \lambda_{\min}` at which OPS can meet (ε, δ) at all (to relative 1e-9, on the safe side).

    A newcomer's leverage :math:`\mu \le x_b^2/(\lambda + \lambda_{\min})` alone (residual 0, a = 0
    in the exact pair of this module) gives δ(ε) > 0 for every γ; this is the λ at which that
    part reaches δ, by bisection on μ (δ increases with μ). :func:`ops_gamma_for_dp` refuses
    below it; data-independent.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    x_bound : float, default 1.0
        Public bound on ‖x‖ of every record.
    """
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    x_bound = float(check_positive(x_bound, "x_bound"))
    e_arr = np.array([eps])

    def feasible(mu: float) -> bool:
        w = mu / (1.0 + mu)
        return max(d[0] for d in _pair_delta(e_arr, np.array([w]), np.array([0.0]))) < delta

    lo, hi = 0.0, 1.0
    while feasible(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e12:
            return 0.0
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        if feasible(mid):
            lo = mid
        else:
            hi = mid
    return x_bound * x_bound / lo if lo > 0 else math.inf


def ops_gamma_for_dp(eps: float, delta: float, *, n: int, lam: float, x_bound: float = 1.0,
                     y_bound: float = 1.0, lam_min: float = 0.0) -> float:
    r"""Largest γ with :func:`ops_dp_epsilon` ≤ ε (never on the unsafe side).

    ε grows with γ only through :math:`a \propto \sqrt\gamma`; the leverage part
    (:math:`w = \mu_{\max}/(1+\mu_{\max})`) does not depend on γ, so if even
    :math:`\gamma \to 0` leaves δ(ε) > δ, no γ works: ``ValueError`` (raise ``lam`` or
    ``lam_min``). The largest feasible a is found by bisection on δ(ε; a), increasing
    in a; the returned γ is re-checked with :func:`ops_dp_epsilon`.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    n : int
        Number of records n.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    y_bound : float, default 1.0
        Public bound on the absolute value :math:`|y|` of the labels.
    x_bound : float, default 1.0
        Public bound on ‖x‖ of every record.
    lam_min : float, default 0.0
        Public lower bound on λ_min(XᵀX) of the smaller data set of every pair.
    """
    n, lam, x_bound, y_bound, lam_min = _check_dp_args(n, lam, x_bound, y_bound, lam_min)
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    w, a1, mu_max, r_max = _worst_case(n, lam, 1.0, x_bound, y_bound, lam_min)  # a(γ) = a1 sqrt(γ)
    e_arr, w_arr = np.array([eps]), np.array([w])

    def dval(a: float) -> float:
        return float(np.max(_pair_delta(e_arr, w_arr, np.array([a]))))

    if dval(0.0) >= delta:
        raise ValueError(f"eps={eps} is not reachable at delta={delta} for any gamma > 0: the leverage bound "
                         f"x_bound^2/(lam + lam_min) = {mu_max:.4g} alone costs more; increase lam or lam_min")
    if a1 == 0.0:
        return math.inf
    lo, hi = 0.0, 1.0
    while dval(hi) < delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if dval(mid) < delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    gamma = (lo / a1) ** 2
    while float(ops_dp_epsilon(delta, n=n, lam=lam, gamma=gamma, x_bound=x_bound, y_bound=y_bound,
                               lam_min=lam_min)) > eps:
        gamma *= 1.0 - 1e-10
    return gamma


# ============================================================================ the events
_OPS_KEYS = ("n", "lam", "gamma", "x_bound", "y_bound", "lam_min")


def _strict_count(value: Any, name: str) -> int:
    """A record count from a file or a parameter: an int (not bool, not a float), >= 1."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1; got {value!r}")
    return int(value)


@dataclass(frozen=True)
class OPSEvent(PrivacyEvent):
    r"""One OPS sample (:func:`ops_fit`) on a data set of the DP class of :func:`ops_dp_epsilon`.

    The class: at most ``n`` records, rows :math:`\lVert x\rVert \le` ``x_bound``, labels
    :math:`|y| \le` ``y_bound``, and the smaller set of every neighbouring pair with
    :math:`\lambda_{\min}(X_S^\top X_S) \ge` ``lam_min``; fixed ``lam`` and ``gamma``. Every pair
    of the class is dominated by the pair :math:`(\mathcal N(0, 1), \mathcal N(a, 1 - w))` of
    its worst corner (Wang 2019, Prop 4.3(1), redone exactly in :func:`ops_dp_epsilon`), in
    both orders. Alone (or with Gaussians of μ = 0) its ε is that pair's exact profile
    inverted (:func:`ops_dp_epsilon`); composed with other events, its Rényi divergences of
    both orders (closed form, the larger one at each order).

    Parameters
    ----------
    n : int
        The public bound on the number of records of the larger set of a pair.
    lam, gamma : float
        OPS's ridge λ >= 0 and inverse temperature γ > 0.
    x_bound, y_bound : float
        Public bounds on :math:`\lVert x\rVert` (> 0) and :math:`|y|` (>= 0).
    lam_min : float
        Public lower bound on λ_min(X_S^T X_S) of the smaller set (>= 0; ``lam + lam_min > 0``).
    """

    kind: ClassVar[str] = "ops"
    exact_accounting: ClassVar[str] = "ops-exact-profile"
    n: int
    lam: float
    gamma: float
    x_bound: float
    y_bound: float
    lam_min: float = 0.0

    def __post_init__(self) -> None:
        s = object.__setattr__
        s(self, "n", _strict_count(self.n, "n"))
        for k in ("lam", "gamma", "x_bound", "y_bound", "lam_min"):
            s(self, k, strict_real(getattr(self, k), k, allow_zero=k in ("lam", "y_bound", "lam_min")))
        if self.lam + self.lam_min <= 0:
            raise ValueError("lam + lam_min must be > 0: with both 0 the leverage of a newcomer is unbounded "
                             "(no DP guarantee)")

    def params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _OPS_KEYS}

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> OPSEvent:
        check_json_keys(params, where, required=_OPS_KEYS)
        return cls(n=_strict_count(params["n"], f"{where}: n"),
                   **{k: strict_real(params[k], f"{where}: {k}", allow_zero=k in ("lam", "y_bound", "lam_min"))
                      for k in _OPS_KEYS[1:]})

    @property
    def worst_pair(self) -> tuple[float, float]:
        r"""(w, a) of the dominating pair :math:`(\mathcal N(0,1), \mathcal N(a, 1 - w))`."""
        w, a, *_ = _worst_case(self.n, self.lam, self.gamma, self.x_bound, self.y_bound, self.lam_min)
        return w, a

    def rdp(self, orders: ArrayLike) -> np.ndarray:
        w, a = self.worst_pair
        return _pair_rdp(np.asarray(orders, dtype=float), w, a)

    def epsilon_with_gaussian(self, delta: float, *, mu: float) -> float | None:
        if mu != 0:
            return None
        return float(ops_dp_epsilon(delta, n=self.n, lam=self.lam, gamma=self.gamma, x_bound=self.x_bound,
                                    y_bound=self.y_bound, lam_min=self.lam_min))

    def record_epsilon(self, target_x: ArrayLike, target_y: ArrayLike, *, delta: float) -> np.ndarray:
        r"""Each record's (ε, δ)-pDP, bounded over every data set of the class: publishable.

        Wang 2019, Def 2.2 and Prop 4.3(1) redone per record: for a record
        :math:`z = (x, y)` of the class (as a member or as a newcomer) and every data set of
        the class, the leverage is :math:`\mu \le \lVert x\rVert^2/(\lambda + \lambda_{\min})` and
        the residual :math:`|r| \le |y| + \lVert x\rVert \lVert\hat\theta_S\rVert`, with
        :math:`\lVert\hat\theta_S\rVert` bounded as in :func:`ops_dp_epsilon` from the other
        records' bounds. The exact pDP increases in the pair's w and a, so its value at that
        record's corner bounds the record's pDP on every data set of the class: a function of
        the record and the event's public parameters alone, never of the other records — a
        person may be told it, and anyone may compute it for any record. At
        :math:`\lVert x\rVert` = ``x_bound`` and :math:`|y|` = ``y_bound`` it is the event's DP
        ε (:func:`ops_dp_epsilon`); a record with :math:`x = 0` gets 0. A record outside the
        class (norm or label above the bounds) is refused.

        Parameters
        ----------
        target_x : array_like, shape (m, d) or (d,)
            The records' rows, as the mechanism reads them (intercept column included).
        target_y : array_like, shape (m,) or scalar
            Their labels, as the mechanism reads them.
        delta : float
            δ of each record's (ε, δ)-pDP, in (0, 1).
        """
        delta = float(check_probability(delta, "delta"))
        x_norm, y_abs, scalar = _record_targets(target_x, target_y, self.x_bound, self.y_bound)
        w, a = _record_corner(x_norm, y_abs, self.n, self.lam, self.gamma, self.x_bound, self.y_bound, self.lam_min)
        out = _pair_epsilon(np.full(w.shape, delta), w, a)
        return out[0] if scalar else out


_ADAOPS_KEYS = ("sigma_lam", "eps_ops", "delta_ops", "delta_fail")


def _adaops_delta(eps: float, mu: float, eps0: float, delta0: float, delta_fail: float) -> float:
    """δ(ε) of a Gaussian of parameter μ composed with an (ε0, δ0)-DP step, plus δ_fail (:class:`AdaOPSEvent`)."""
    p = float(special.expit(eps0))
    dg = gaussian.delta_from_mu(np.array([eps - eps0, eps + eps0]), np.array([mu, mu]))
    return delta_fail + delta0 + (1.0 - delta0) * (p * float(dg[0]) + (1.0 - p) * float(dg[1]))


def _adaops_epsilon_vec(delta: float, mu: np.ndarray, eps0: float, delta0: float, delta_fail: float) -> np.ndarray:
    """Smallest ε with :func:`_adaops_delta` ≤ δ for each Gaussian parameter in ``mu`` (bisection, safe side)."""
    p = float(special.expit(eps0))

    def dval(e: np.ndarray) -> np.ndarray:
        dg_lo = gaussian.delta_from_mu(e - eps0, mu)
        dg_hi = gaussian.delta_from_mu(e + eps0, mu)
        return delta_fail + delta0 + (1.0 - delta0) * (p * dg_lo + (1.0 - p) * dg_hi)

    lo = np.zeros(mu.shape)
    hi = np.full(mu.shape, max(eps0, 1.0))
    done = dval(lo) <= delta
    for _ in range(64):
        grow = (dval(hi) > delta) & ~done
        if not grow.any():
            break
        lo[grow], hi[grow] = hi[grow], 2.0 * hi[grow]
    for _ in range(200):
        if np.all(done | (hi - lo <= 1e-12 * hi)):
            break
        mid = 0.5 * (lo + hi)
        above = dval(mid) > delta
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return np.where(done, 0.0, hi)


@dataclass(frozen=True)
class AdaOPSEvent(PrivacyEvent):
    r"""What :func:`adaops_fit` releases: a noisy :math:`\lambda_{\min}`, then an OPS sample calibrated on it.

    Step 1 is a Gaussian mechanism of parameter :math:`\mu_\lambda = 1/` ``sigma_lam``
    (sensitivity 1, Weyl). Step 2 is, for every released :math:`\tilde\lambda` outside a set
    :math:`B` of outputs, an OPS sample that is (``eps_ops``, ``delta_ops``)-DP on the pair
    (γ is calibrated for the class its λ guarantees, :func:`adaops_fit`), and
    :math:`P(\tilde\lambda \in B) \le` ``delta_fail`` under either neighbour ("the margin
    fails"). Hence, for every output set S, :math:`P_D(S) \le P_D(S \setminus B) + \delta_{\rm fail}`,
    and on the complement of B the two steps are an adaptive composition whose steps are
    dominated by the Gaussian pair and by the (ε₀, δ₀) pair of Kairouz, Oh & Viswanath (2015,
    Thm 2.1 in the form of dominating pairs). Their composition has the exact profile

    .. math:: \delta(\varepsilon) = \delta_{\rm fail} + \delta_0 + (1 - \delta_0)\big(
              p\,\delta_\mu(\varepsilon - \varepsilon_0) + (1 - p)\,\delta_\mu(\varepsilon + \varepsilon_0)\big),
              \qquad p = \frac{e^{\varepsilon_0}}{1 + e^{\varepsilon_0}},

    with :math:`\delta_\mu` the Gaussian profile (``pdpkit.gaussian.delta_from_mu``, also at
    negative arguments). It is never above the source's sum
    :math:`(\varepsilon_\lambda + \varepsilon_{\rm ops}, \delta_\lambda + \delta_{\rm ops} +
    \delta_{\rm fail})` (Wang 2019, Prop 4.4). A further Gaussian composes exactly (its μ² adds
    to :math:`\mu_\lambda^2`); the event has neither an RDP curve nor a privacy-loss
    distribution (its δ parts), so an accountant refuses to compose it with other events
    (:class:`pdpkit.events.UnsupportedEventError`).

    Parameters
    ----------
    sigma_lam : float
        Noise of the private :math:`\lambda_{\min}` (> 0).
    eps_ops, delta_ops : float
        The OPS step's guarantee (ε₀ > 0, δ₀ in (0, 1)).
    delta_fail : float
        The probability bound of the failure set (in (0, 1)).
    """

    kind: ClassVar[str] = "adaops"
    exact_accounting: ClassVar[str] = "adaops-exact-profile"
    sigma_lam: float
    eps_ops: float
    delta_ops: float
    delta_fail: float

    def __post_init__(self) -> None:
        s = object.__setattr__
        s(self, "sigma_lam", strict_real(self.sigma_lam, "sigma_lam"))
        s(self, "eps_ops", strict_real(self.eps_ops, "eps_ops"))
        for k in ("delta_ops", "delta_fail"):
            v = strict_real(getattr(self, k), k)
            if not v < 1.0:
                raise ValueError(f"{k} must lie in (0, 1); got {v!r}")
            s(self, k, v)

    def params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _ADAOPS_KEYS}

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> AdaOPSEvent:
        check_json_keys(params, where, required=_ADAOPS_KEYS)
        return cls(**{k: strict_real(params[k], f"{where}: {k}") for k in _ADAOPS_KEYS})

    def delta(self, eps: float, *, mu: float = 0.0) -> float:
        r"""The exact δ(ε) above, with a further Gaussian of parameter ``mu`` composed.

        Parameters
        ----------
        eps : float
            The ε (nats, >= 0).
        mu : float
            A further Gaussian's parameter (>= 0).
        """
        m = math.sqrt(self.sigma_lam ** -2 + float(mu) ** 2)
        return _adaops_delta(float(eps), m, self.eps_ops, self.delta_ops, self.delta_fail)

    def record_epsilon(self, target_x: ArrayLike, *, delta: float) -> np.ndarray:
        r"""Each record's (ε, δ)-pDP of AdaOPS, a function of its row and the public parameters alone: publishable.

        Step 1 releases :math:`\lambda_{\min}(X^\top X)` with Gaussian noise σ_λ; adding or
        removing a row x moves it by at most :math:`\lVert x\rVert^2` (Weyl, a rank-one
        update), so for that record step 1 is a Gaussian of parameter
        :math:`\lVert x\rVert^2/\sigma_\lambda` (at most ``1/sigma_lam`` on the unit ball).
        Step 2 is (``eps_ops``, ``delta_ops``)-DP outside the failure set, whatever
        :math:`\tilde\lambda`; the composition of the event (:meth:`delta`) with that parameter
        is the record's profile, inverted at ``delta`` (never on the unsafe side). Rows of the
        unit ball (AdaOPS's domain: the rows it fitted, divided by their bound); a row of norm 1
        gets the event's DP ε, a row x = 0 step 2's share only. The label does not enter: the
        OPS step's calibration holds uniformly over the labels' class.

        Parameters
        ----------
        target_x : array_like, shape (m, d) or (d,)
            The records' rows in AdaOPS's domain (norm at most 1).
        delta : float
            δ of each record's (ε, δ)-pDP; above ``delta_ops + delta_fail``.
        """
        delta = float(check_probability(delta, "delta"))
        x_norm, _, scalar = _record_targets(target_x, None, 1.0, None)
        if delta <= (self.delta_fail + self.delta_ops) * (1.0 + 1e-12):
            out = np.full(x_norm.shape, math.inf)
        else:
            mu = np.maximum(x_norm * x_norm / self.sigma_lam, 1e-300)  # (mu = 0: the limit, on the safe side)
            out = _adaops_epsilon_vec(delta, mu, self.eps_ops, self.delta_ops, self.delta_fail)
        return out[0] if scalar else out

    def epsilon_with_gaussian(self, delta: float, *, mu: float) -> float:
        delta = float(delta)
        floor = self.delta_fail + self.delta_ops
        if delta <= floor * (1.0 + 1e-12):
            return math.inf
        if self.delta(0.0, mu=mu) <= delta:
            return 0.0
        lo, hi = 0.0, max(self.eps_ops, 1.0)
        while self.delta(hi, mu=mu) > delta:
            lo, hi = hi, 2.0 * hi
        while hi - lo > 1e-12 * hi:
            mid = 0.5 * (lo + hi)
            if self.delta(mid, mu=mu) > delta:
                lo = mid
            else:
                hi = mid
        return hi


# ============================================================================ AdaOPS
@dataclass(frozen=True)
class AdaOPSBudget:
    r"""How AdaOPS spends (ε, δ): ε = ``eps_lambda + eps_ops``, δ = ``delta_lambda + delta_fail + delta_ops``.

    Attributes
    ----------
    eps_lambda : float
        ε spent on the private λ_min (step 1).
    delta_lambda : float
        δ spent on the private λ_min.
    delta_fail : float
        Probability that the margin of step 2 fails.
    eps_ops : float
        ε of the OPS sample (step 3).
    delta_ops : float
        δ of the OPS sample.
    """

    eps_lambda: float
    delta_lambda: float
    delta_fail: float
    eps_ops: float
    delta_ops: float


@dataclass(frozen=True, repr=False)
class AdaOPSResult:
    r"""Output of :func:`adaops_fit`: everything in it is the (ε, δ)-DP release or public.

    Attributes
    ----------
    theta : numpy.ndarray
        The OPS sample, shape (d,).
    lam, gamma : float
        Regularization and inverse temperature used (functions of ``lam_min_noisy``).
    lam_min_noisy : float
        :math:`\tilde\lambda = \lambda_{\min}(X^\top X) + \sigma_\lambda Z` (private release).
    sigma_lam, margin, target : float
        Noise scale of step 1, the margin of step 2 and :math:`n_{\rm public}/(d\kappa)`.
    n_public : int
    epsilon, delta : float
        Total guarantee.
    budget : AdaOPSBudget
    """

    theta: np.ndarray
    lam: float
    gamma: float
    lam_min_noisy: float
    sigma_lam: float
    margin: float
    target: float
    n_public: int
    epsilon: float
    delta: float
    budget: AdaOPSBudget

    @property
    def event(self) -> AdaOPSEvent:
        """What this fit released, as an event (:class:`AdaOPSEvent`): an accountant charges it."""
        return AdaOPSEvent(sigma_lam=self.sigma_lam, eps_ops=self.budget.eps_ops, delta_ops=self.budget.delta_ops,
                           delta_fail=self.budget.delta_fail)

    def __repr__(self) -> str:
        return (f"AdaOPSResult(theta={self.theta!r}, lam={self.lam:.6g}, gamma={self.gamma:.6g}, "
                f"lam_min_noisy={self.lam_min_noisy:.6g}, epsilon={self.epsilon:g}, delta={self.delta:g})")


def adaops_budget(eps: float, delta: float) -> AdaOPSBudget:
    """The fixed split used by :func:`adaops_fit`: ε/2 + ε/2 and δ/4 + δ/4 + δ/2.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    """
    return AdaOPSBudget(eps_lambda=eps / 2, delta_lambda=delta / 4, delta_fail=delta / 4, eps_ops=eps / 2,
                        delta_ops=delta / 2)


def adaops_event(eps: float, delta: float, *, budget: AdaOPSBudget | None = None) -> AdaOPSEvent:
    """The :class:`AdaOPSEvent` of :func:`adaops_fit` at (ε, δ) with ``budget`` (default :func:`adaops_budget`).

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    budget : AdaOPSBudget, optional
        How the steps share it (default: the source's split, :func:`adaops_budget`).
    """
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    b = adaops_budget(eps, delta) if budget is None else budget
    if not isinstance(b, AdaOPSBudget):
        raise TypeError(f"budget must be an AdaOPSBudget; got {type(b).__name__}")
    sigma_lam = float(gaussian.gaussian_sigma(b.eps_lambda, delta=b.delta_lambda, sensitivity=1.0))
    return AdaOPSEvent(sigma_lam=sigma_lam, eps_ops=b.eps_ops, delta_ops=b.delta_ops, delta_fail=b.delta_fail)


def adaops_tight_budget(eps: float, delta: float) -> AdaOPSBudget:
    r"""The source's split with ε_ops raised until the exact composition (:class:`AdaOPSEvent`) meets (ε, δ).

    :func:`adaops_budget` adds the two steps' ε; the exact profile of their composition is
    smaller, so the OPS step can take more: the largest ``eps_ops`` (to relative 1e-9) with
    the event's ε at δ at most ε (checked). The λ step and the δ parts are unchanged.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    """
    base = adaops_budget(float(check_positive(eps, "eps")), float(check_probability(delta, "delta")))
    sigma_lam = adaops_event(eps, delta).sigma_lam

    def eps_of(e_ops: float) -> float:
        return AdaOPSEvent(sigma_lam=sigma_lam, eps_ops=e_ops, delta_ops=base.delta_ops,
                           delta_fail=base.delta_fail).epsilon_with_gaussian(delta, mu=0.0)

    lo, hi = base.eps_ops, float(eps)
    if eps_of(hi) <= eps:
        lo = hi
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        if eps_of(mid) <= eps:
            lo = mid
        else:
            hi = mid
    assert eps_of(lo) <= eps * (1.0 + 1e-12)
    return AdaOPSBudget(eps_lambda=base.eps_lambda, delta_lambda=base.delta_lambda, delta_fail=base.delta_fail,
                        eps_ops=lo, delta_ops=base.delta_ops)


def adaops_check_kappa(*, kappa: float, n_public: int, d: int, budget: AdaOPSBudget) -> None:
    r"""``ValueError`` naming ``kappa`` when AdaOPS cannot meet ``budget`` at any γ (data-independent).

    The leverage bound :math:`d\kappa/n_{\rm public}` alone (a = 0 in the exact pair of
    :mod:`pdpkit.ops`) must leave δ(ε_ops) below δ_ops; :func:`adaops_fit` checks it before it
    touches the data, and an estimator before it charges an accountant.

    Parameters
    ----------
    kappa : float
        The target condition bound (> 0).
    n_public : int
        The public bound on the number of records.
    d : int
        The number of coefficients.
    budget : AdaOPSBudget
        The split of (ε, δ).
    """
    kappa = float(check_positive(kappa, "kappa"))
    target = check_int_at_least(n_public, "n_public", 1) / (check_int_at_least(d, "d", 1) * kappa)
    w_max = (1.0 / target) / (1.0 + 1.0 / target)
    d0 = _pair_delta(np.array([budget.eps_ops]), np.array([w_max]), np.array([0.0]))
    if max(d0[0][0], d0[1][0]) >= budget.delta_ops:
        raise ValueError(f"kappa={kappa:g} is too large: the leverage bound d*kappa/n_public = {1 / target:.4g} "
                         f"alone exceeds the OPS budget (eps_ops={budget.eps_ops:g}, "
                         f"delta_ops={budget.delta_ops:g}); decrease kappa")


def adaops_fit(X: ArrayLike, y: ArrayLike, eps: float, delta: float, *, kappa: float, n_public: int | None = None,
               rng: int | np.random.Generator | None = None, budget: AdaOPSBudget | None = None) -> AdaOPSResult:
    r"""AdaOPS (Wang 2019, Alg 1 and Prop 4.4), corrected: an (ε, δ)-DP OPS sample.

    Domain: rows :math:`\lVert x\rVert \le 1`, :math:`|y| \le 1`; ``n_public`` ≥ ``len(X)``
    is a public bound on the number of records (default ``len(X)``: then the record
    count is treated as public). Budget (:class:`AdaOPSBudget`): ε/2 + ε/2, δ/4 + δ/4 + δ/2.

    1. :math:`\tilde\lambda = \lambda_{\min}(X^\top X) + \sigma_\lambda Z` with σ_λ the tight
       Gaussian calibration for (ε_λ, δ_λ) at sensitivity 1 (Weyl: adding or removing
       a row with ‖x‖ ≤ 1 moves :math:`\lambda_{\min}` by at most 1).
    2. ``target`` :math:`= n_{\rm public}/(d\kappa)`; ``lam`` :math:`= \max\{0, \text{target} - \tilde\lambda + \text{margin}\}`
       (Alg 1 prints ``min``, which is never a valid regularizer), with
       ``margin`` :math:`= 1 + \sigma_\lambda\Phi^{-1}(1-\delta_{\rm fail})`: then with probability
       ≥ 1 − δ_fail, :math:`\sigma_\lambda Z \le \text{margin} - 1`, and the smaller set S of
       every pair containing D (its λ_min is at least :math:`\lambda_{\min}(D) - 1`) has
       :math:`\lambda_{\min}(X_S^\top X_S) + \text{lam} \ge \text{target}`.
    3. γ = :func:`ops_gamma_for_dp` (ε_ops, δ_ops) over pairs with at most ``n_public + 1``
       records and ``lam_min = max(target − lam, 0)``: the exact OPS pDP is ≤ (ε_ops, δ_ops)
       on every such pair.
    4. Total: on the complement of the failure event the pair of releases is an adaptive
       composition, (ε_λ + ε_ops, δ_λ + δ_ops); the failure event costs δ_fail under
       either neighbour: (ε, δ)-DP.

    ``ValueError`` naming ``kappa`` when the leverage bound :math:`d\kappa/n_{\rm public}` alone
    exceeds the OPS budget (checked before the data are touched); no θ is ever
    released without its guarantee.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    kappa : float
        Target bound on the condition of the regularized problem: λ is chosen so that every leverage is at most dκ/``n_public``.
    n_public : int, optional
        Public upper bound on the number of records (``None``: ``len(X)``, i.e. the count is treated as public).
    budget : AdaOPSBudget, optional
        How the steps share (ε, δ): default the source's split (:func:`adaops_budget`);
        :func:`adaops_tight_budget` spends the same total by its exact composition
        (:class:`AdaOPSEvent`). A budget whose exact composition exceeds (ε, δ) is refused.
    """
    X, y = _check_xy(X, y)
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    kappa = float(check_positive(kappa, "kappa"))
    n, d = X.shape
    if n_public is None:
        n_public = n
    n_public = check_int_at_least(n_public, "n_public", 1)
    if n_public < n:
        raise ValueError(f"n_public must be >= len(X) = {n} (a public bound on the number of records); got {n_public}")
    if np.any(np.einsum("ij,ij->i", X, X) > 1.0 + 1e-12):
        raise ValueError("rows of X must have norm <= 1 (AdaOPS's domain); rescale X")
    if np.any(np.abs(y) > 1.0):
        raise ValueError("labels y must satisfy |y| <= 1 (AdaOPS's domain); rescale y")
    gen = as_generator(rng)
    event = _checked_adaops_event(float(eps), float(delta), budget)
    budget = adaops_budget(eps, delta) if budget is None else budget
    target = n_public / (d * kappa)
    adaops_check_kappa(kappa=kappa, n_public=n_public, d=d, budget=budget)
    sigma_lam = event.sigma_lam
    margin = 1.0 + sigma_lam * float(-special.ndtri(budget.delta_fail))
    from .analyze_gauss import private_lambda_min

    lam_noisy = float(private_lambda_min(X.T @ X, sigma=sigma_lam, rng=gen))
    lam = max(0.0, target - lam_noisy + margin)
    lam_min_cls = max(target - lam, 0.0)
    gamma = ops_gamma_for_dp(budget.eps_ops, budget.delta_ops, n=n_public + 1, lam=lam, x_bound=1.0, y_bound=1.0,
                             lam_min=lam_min_cls)
    L, mean = _factor_or_regularize(X, y, lam)
    theta = mean + sla.solve_triangular(L.T, gen.standard_normal(d), lower=False, check_finite=False) / math.sqrt(gamma)
    theta.setflags(write=False)
    return AdaOPSResult(theta=theta, lam=lam, gamma=gamma, lam_min_noisy=lam_noisy, sigma_lam=sigma_lam,
                        margin=margin, target=target, n_public=n_public, epsilon=eps, delta=delta, budget=budget)


@functools.lru_cache(maxsize=256)
def _checked_adaops_event(eps: float, delta: float, budget: AdaOPSBudget | None) -> AdaOPSEvent:
    """:func:`adaops_event`, refused when its steps compose above (ε, δ); public numbers only, so cached."""
    event = adaops_event(eps, delta, budget=budget)
    if event.epsilon_with_gaussian(delta, mu=0.0) > eps * (1.0 + 1e-12):
        raise ValueError(f"budget: its steps compose to more than eps={eps:g} at delta={delta:g}")
    return event


def _factor_or_regularize(X, y, lam):
    """λ = 0 was chosen: X^T X is then well conditioned w.h.p.; if it is numerically singular the
    guarantee's event failed, and we refuse to release."""
    try:
        return _factor(X, y, lam)
    except ValueError:
        raise ValueError("AdaOPS chose lam = 0 but X^T X is singular (the failure event of step 2 occurred); "
                         "nothing is released") from None


# ============================================================================ Lemma 3.1
def erm_per_instance_shift_nonprivate(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, target_x: ArrayLike,
                                      target_y: ArrayLike, *, lam: float, member: ArrayLike, method: str = "exact",
                                      progress: bool | None = None) -> np.ndarray:
    r"""Per-instance parameter shift :math:`\hat\theta(D\pm z) - \hat\theta(D)` of a regularized GLM (not private).

    Objective :math:`J(\theta; D) = \sum_i f(x_i^\top\theta; y_i) + \frac\lambda2\lVert\theta\rVert^2`
    (:mod:`pdpkit.losses`). Wang 2019, Lemma 3.1: with θ̂ fit without z and θ̂′ with z,
    :math:`\hat\theta - \hat\theta' = [\int\nabla^2 J_{+z}]^{-1}\nabla\ell(\hat\theta, z)
    = +[\int\nabla^2 J]^{-1}\nabla\ell(\hat\theta', z)` — the printed second identity
    has a spurious minus sign (the chapter checks both numerically).

    ``method="exact"``: refit on the neighbour (:func:`pdpkit.objpert.erm_fit_nonprivate`,
    one solve per target). ``method="one_step"``: one Newton step from θ̂(D) on the
    neighbour's objective with the Hessian at θ̂(D) (the lemma with the integral
    frozen at its endpoint), by Sherman–Morrison for all targets at once:
    :math:`+f'\,H^{-1}x/(1 - f''\mu)` for removing a member,
    :math:`-f'\,H^{-1}x/(1 + f''\mu)` for adding a newcomer, with f′, f″ at
    :math:`x^\top\hat\theta(D)` and :math:`\mu = x^\top H^{-1}x`. Exact for the squared loss.
    Returns shape (m, d) ((d,) for one target); rows are ``inf`` where a removal
    leaves the Hessian singular. ``progress``: a bar over the exact refits (one per target).

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    loss : str | GLMLoss
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    target_x : array_like
        Features x of the target record z.
    target_y : array_like
        Label y of the target record z.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    member : array_like
        ``True`` when the target is in the data set (its removal), ``False`` when it is added.
    progress : bool, optional
        A tqdm progress bar (``None``: only when a person watches; ``PDPKIT_PROGRESS=0`` turns it off).
    method : str, default 'exact'
        ``"exact"`` (refit on the neighbour) or ``"one_step"`` (one Newton step from θ̂(D)).
    """
    from . import objpert
    from .losses import get_loss

    if method not in ("exact", "one_step"):
        raise ValueError(f"method must be 'exact' or 'one_step'; got {method!r}")
    loss = get_loss(loss)
    X = as_finite_array(X, "X", ndim=2)
    y = loss.check_labels(np.asarray(y, dtype=float), "y")
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got shape {y.shape}")
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y must have the same number of rows; got {X.shape[0]} and {y.shape[0]}")
    lam = float(check_positive(lam, "lam"))
    tx, _, scalar = _targets(target_x, None, X.shape[1])
    ty = loss.check_labels(np.atleast_1d(np.asarray(target_y, dtype=float)), "target_y")
    if ty.shape != (tx.shape[0],):
        raise ValueError(f"target_y must have one label per target ({tx.shape[0]}); got shape {np.shape(target_y)}")
    mem = check_member_flags(member, tx.shape[0])
    check_member_records(X, y, tx, ty, mem)
    theta = objpert.erm_fit_nonprivate(X, y, loss, lam=lam)
    if method == "exact":
        out = np.empty(tx.shape)
        for j in _progress(range(tx.shape[0]), total=tx.shape[0], desc="exact refits", progress=progress):
            if mem[j]:
                i = int(np.flatnonzero(np.all(X == tx[j], axis=1) & (y == ty[j]))[0])
                Xn, yn = np.delete(X, i, axis=0), np.delete(y, i)
            else:
                Xn, yn = np.vstack([X, tx[j]]), np.append(y, ty[j])
            out[j] = objpert.erm_fit_nonprivate(Xn, yn, loss, lam=lam, tol=1e-13) - theta
        return out[0] if scalar else out
    t_all = X @ theta
    H = (X * loss.d2(t_all, y)[:, None]).T @ X
    H[np.diag_indices(X.shape[1])] += lam
    Lc = sla.cholesky(H, lower=True, check_finite=False)
    V = sla.cho_solve((Lc, True), tx.T, check_finite=False)  # H^{-1} x, (d, m)
    mu = np.einsum("ij,ji->i", tx, V)
    tt = tx @ theta
    g1, g2 = loss.d1(tt, ty), loss.d2(tt, ty)
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = np.where(mem, g1 / (1.0 - g2 * mu), -g1 / (1.0 + g2 * mu))
    out = (V * coef).T
    out[mem & (g2 * mu >= 1.0 - _MEMBER_H_TOL)] = np.inf
    return out[0] if scalar else out


# ============================================================================ Prop 2.9
def pdp_generalization_bound(eps: ArrayLike, delta: ArrayLike) -> float:
    r"""On-average generalization bound of Prop 2.9 (Wang 2019) from a table of pDP values.

    ``eps[j, k]`` is the pDP :math:`\varepsilon(W_j, z_k)` of target :math:`z_k` relative
    to data set :math:`W_j` of n − 1 records (rows: independent data sets
    :math:`W_j \sim \mathcal D^{n-1}`; columns: independent targets :math:`z \sim \mathcal D`);
    ``delta`` is a scalar or an array of the same shape. For a loss in [0, 1]:

    .. math:: \mathrm{Gen} \le \mathbb E_W\big(\mathbb E_z[e^{\varepsilon}\mid W]\big)^2 - 1
              + \mathbb E\,\delta + \mathbb E_W\big(\mathbb E_z[e^{\varepsilon}\mid W]\,\mathbb E_z[\delta\mid W]\big).

    The proof's stability step should read :math:`e^{\varepsilon'+\varepsilon''} - 1` and
    :math:`e^{\varepsilon'}\delta''` (it prints :math:`e^{\varepsilon'} + \varepsilon''` and
    :math:`\varepsilon'\delta''`): chaining :math:`A(W+z') \to A(W) \to A(W+z'')` with the
    two orders of Def 2.2 gives :math:`E f \le e^{\varepsilon'+\varepsilon''}E' f + e^{\varepsilon'}\delta'' + \delta'`.
    The expectations are replaced by the table's averages (a plug-in estimate).

    Parameters
    ----------
    eps : array_like
        ε of the (ε, δ) guarantee, in nats.
    delta : array_like
        δ of the (ε, δ) guarantee, in (0, 1).
    """
    e = check_nonnegative(eps, "eps")
    if e.ndim != 2 or e.size == 0:
        raise ValueError(f"eps must be a non-empty 2-d array (data sets x targets); got shape {np.shape(eps)}")
    dl = as_finite_array(delta, "delta")
    if np.any((dl < 0) | (dl >= 1)):
        raise ValueError("delta must lie in [0, 1)")
    dl = np.broadcast_to(dl, e.shape)
    m = np.exp(e).mean(axis=1)
    md = dl.mean(axis=1)
    return float(np.mean(m * m) - 1.0 + dl.mean() + np.mean(m * md))
