r"""Releasing one parameter: local output perturbation and private linear functionals.

Asi, Duchi & Talwar (source 004) release :math:`\theta(D)` or one linear functional
:math:`u^\top\theta(D)` of a (quasi-)self-concordant GLM with Gaussian noise scaled to
the *local* sensitivity, after privately certifying that the data's Hessian is well
conditioned (a propose–test–release scheme, their Alg 1 and Lemmas 2.2–2.5); when the
certificate fails they release :math:`\bot`.

Convention (the book's; see :mod:`pdpkit.stability`): summed loss
:math:`J(\theta; D) = \sum_i f(x_i^\top\theta; y_i) + \frac\lambda2\|\theta\|^2`,
add/remove neighbours (``neighbours="replace"`` optional), rows with
:math:`\|x_i\|_2 \le r` (``norm_bound``). Eigenvalues ``eig`` are those of the summed
**data** Hessian :math:`\sum_i f''(x_i^\top\theta)x_ix_i^\top` (no :math:`\lambda`);
:math:`\Lambda = \text{eig} + \lambda`.

* :func:`noise_multiplier` — the Gaussian noise multiplier :math:`\sigma(\epsilon, \delta)`
  at sensitivity 1: the tight analytic calibration (Balle & Wang 2018), the source's
  eq. (7), or its closed-form upper bound :math:`\sigma_{\rm naive}` (§2.2).
* :func:`local_output_perturbation` — Alg 3 / Thm 1: Alg 2 at :math:`(\epsilon/2, \delta/2)`,
  then :math:`\theta(D) + \sigma(\epsilon/2, \delta/2)\,t(\hat\lambda + \lambda)\,\mathcal N(0, I_d)`.
* :func:`smooth_output_perturbation` — Alg 7 / Prop 7.1 for a generic smooth loss.
* :func:`release_linear_functional` — Alg 5 (Prop 8.1, Cor 3.6 recounted): Alg 2, Alg 4, a
  mean shift and a variance ratio, each at :math:`\epsilon_4 = \epsilon/4`.
* :func:`local_sensitivity_release_nonprivate` — the source's idealized baseline (§4,
  item 2): noise at the *true* local sensitivity; **not** private.
* ``data_fit_nonprivate`` — :math:`\theta(D)` and the data Hessian (**not** private),
  passed as ``fit=`` to share one fit between several of the mechanisms above on one data
  set (their outputs are unchanged).

Every mechanism returns a :class:`LocalRelease`; :math:`\bot` is ``value=None`` (or NaN
rows when ``size=m`` repeats the mechanism ``m`` times with fresh noise).

The released point :math:`\hat\theta` is the minimizer computed to gradient norm
:math:`\tau = 10^{-12}\,n\,r\,L` (float64). The noise scale is inflated by
:math:`2\tau/(\hat\lambda + \lambda)` — the largest distance, by strong convexity, between
the computed and the exact minimizers on two neighbours — so the mean-shift guarantees hold
for the computed point; the certified eigenvalues and :math:`\omega(u \mid D)` are taken at
the computed point (a relative change of order :math:`c\,r\,\tau/\Lambda`, far below the
noise's own rounding).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from ._solver import _check_data, _check_loss, _check_norm_bound, _hessian, _newton, _NoConvergence
from ._validation import as_finite_array, as_generator, check_int_at_least, check_nonnegative, check_positive, check_probability
from .gaussian import gaussian_sigma
from .losses import GLMLoss

__all__ = [
    "LocalRelease",
    "noise_multiplier",
    "local_output_perturbation",
    "smooth_output_perturbation",
    "release_linear_functional",
    "local_sensitivity_release_nonprivate",
    "GatedRelease",
    "gated_release_budget",
    "release_if_accepted",
    "DataFit",
    "data_fit_nonprivate",
]

_NOISE = ("analytic", "eq7", "naive")
_NEIGHBOURS = ("add_remove", "replace")
_DOMAINS = ("l2", "linf")
_SOLVER_TOL = 1e-12  # relative gradient tolerance of the fit (see the module docstring)


# ============================================================================ result
@dataclass(frozen=True, eq=False)
class LocalRelease:
    r"""Output of the mechanisms of :mod:`pdpkit.single`.

    Attributes
    ----------
    value : numpy.ndarray, float or None
        The release: a vector (:math:`\theta`), a float (:math:`u^\top\theta`), or
        ``None`` for :math:`\bot`. With ``size=m``: shape ``(m, d)`` or ``(m,)``, NaN where
        :math:`\bot`.
    released : bool or numpy.ndarray of bool
        False where the mechanism returned :math:`\bot`.
    scale : float or numpy.ndarray
        Standard deviation of the added Gaussian noise (NaN where :math:`\bot`).
    lambda_min, lambda_max : float or numpy.ndarray
        The private certified bounds on the data Hessian's extreme eigenvalues (no
        :math:`\lambda`); NaN where not computed. Part of the private output.
    eps, delta : float
        The total :math:`(\epsilon, \delta)`-DP guarantee (:math:`\infty` for the
        non-private baseline).
    parts : tuple of (str, float, float)
        The budget of each step, ``(name, eps_i, delta_i)``; the ``eps_i`` add up to
        ``eps`` and the ``delta_i`` to ``delta`` (basic composition, Lemmas 2.2 and 2.5).
    """

    value: Any
    released: Any
    scale: Any
    lambda_min: Any
    lambda_max: Any
    eps: float
    delta: float
    parts: tuple

    def __repr__(self) -> str:
        if np.ndim(self.released) == 0:
            what = "⊥" if not self.released else f"value={np.round(self.value, 6)!r}"
        else:
            what = f"{int(np.sum(self.released))}/{np.size(self.released)} released"
        return f"LocalRelease({what}, eps={self.eps:g}, delta={self.delta:g})"


# ==================================================================== noise multiplier
def _eq7_log_tail(sigma: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """log[Φ(−σε − 1/2σ) + Φ(−σε + 1/2σ)], the left side of eq. (7), without underflow."""
    a = special.log_ndtr(-sigma * eps + 0.5 / sigma)
    b = special.log_ndtr(-sigma * eps - 0.5 / sigma)
    return np.logaddexp(a, b)


def _naive(eps: np.ndarray, delta: np.ndarray) -> np.ndarray:
    c = np.sqrt(2.0 * np.log(2.0 / delta))
    return (c + np.sqrt(c * c + 2.0 * eps)) / (2.0 * eps)


def noise_multiplier(eps: ArrayLike, delta: ArrayLike, *, method: str = "analytic") -> np.ndarray | float:
    r"""Gaussian noise multiplier :math:`\sigma(\epsilon, \delta)` at sensitivity 1.

    Releasing :math:`q(D) + \Delta\,\sigma\,\mathcal N(0, I)` with :math:`\Delta` the
    :math:`\ell_2` sensitivity of :math:`q` is :math:`(\epsilon, \delta)`-DP for each of:

    * ``"analytic"`` — the smallest such :math:`\sigma` (Balle & Wang 2018;
      :func:`pdpkit.gaussian.gaussian_sigma`): :math:`\delta` is attained exactly.
    * ``"eq7"`` — Asi, Duchi & Talwar, eq. (7):
      :math:`\inf\{\sigma : \Phi(-\sigma\epsilon - \frac1{2\sigma}) + \Phi(-\sigma\epsilon + \frac1{2\sigma}) \le \delta\}`,
      the probability that the privacy loss exceeds :math:`\epsilon` in absolute value
      (Lemma 2.3, App. A.1.2). Sufficient, not tight: it bounds the hockey-stick divergence
      :math:`\Pr[L > \epsilon] - e^\epsilon\Pr'[L > \epsilon]` by :math:`\Pr[|L| \ge \epsilon]`.
      The left side is decreasing in :math:`\sigma` (its derivative is
      :math:`-\varphi(a)[(1 - e^{-\epsilon})/2\sigma^2 + \epsilon(1 + e^{-\epsilon})] < 0`),
      so the infimum is the unique root, found by bisection in :math:`\log\sigma` between the
      analytic and the naive values (relative accuracy :math:`10^{-14}`).
    * ``"naive"`` — the closed form of §2.2,
      :math:`\sigma_{\rm naive} = \frac{\sqrt{2\log(2/\delta)} + \sqrt{2\log(2/\delta) + 2\epsilon}}{2\epsilon}`,
      from :math:`\Phi(-t) \le e^{-t^2/2}`.

    Always analytic :math:`\le` eq7 :math:`\le` naive.

    Parameters
    ----------
    eps : array_like
        :math:`\epsilon > 0`.
    delta : array_like
        :math:`\delta \in (0, 1)`.
    method : {"analytic", "eq7", "naive"}

    Returns
    -------
    float or numpy.ndarray
        :math:`\sigma` (broadcast over ``eps`` and ``delta``).
    """
    if method not in _NOISE:
        raise ValueError(f"method must be one of {_NOISE}; got {method!r}")
    eps = check_positive(eps, "eps")
    delta = check_probability(delta, "delta")
    if eps.ndim == 0 and delta.ndim == 0:  # scalars: each (eps, delta, method) is solved once per process
        return _noise_multiplier_scalar(float(eps), float(delta), method)
    return _noise_multiplier(eps, delta, method)


@functools.lru_cache(maxsize=1024)
def _noise_multiplier_scalar(eps: float, delta: float, method: str) -> float:
    return float(_noise_multiplier(np.array(eps), np.array(delta), method))


def _noise_multiplier(eps: np.ndarray, delta: np.ndarray, method: str) -> np.ndarray | float:
    """:func:`noise_multiplier` on validated arrays."""
    eps, delta = np.broadcast_arrays(eps, delta)
    if method == "analytic":
        out = np.asarray(gaussian_sigma(eps, delta=delta, sensitivity=1.0), dtype=float)
    elif method == "naive":
        out = _naive(eps, delta)
    else:
        lo = np.log(np.asarray(gaussian_sigma(eps, delta=delta, sensitivity=1.0), dtype=float)) - 1e-9
        hi = np.log(_naive(eps, delta)) + 1e-9
        log_d = np.log(delta)
        for _ in range(80):  # bracket width <= log(naive/analytic) ~ 1, halved 80 times
            mid = 0.5 * (lo + hi)
            ok = _eq7_log_tail(np.exp(mid), eps) <= log_d
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        out = np.exp(hi)  # the upper end always satisfies (7)
    return float(out) if out.ndim == 0 else out


# ======================================================================== internals
def _st():
    """The stability module (layer 2), imported on first use."""
    from . import stability

    return stability


def _check_option(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def _check_size(size: Any) -> int | None:
    return None if size is None else check_int_at_least(size, "size", 1)


def _check_bounded_loss(loss: Any) -> GLMLoss:
    """The loss, which must have a bounded derivative (else no local sensitivity bound)."""
    loss = _check_loss(loss)
    if not math.isfinite(loss.lipschitz):
        raise ValueError(f"loss {loss.name!r} has an unbounded gradient (lipschitz = inf): no local "
                         "sensitivity bound; use a loss with bounded f' (robust_log, logistic, huber)")
    return loss


def _check_common(X, y, loss, eps, delta, lam, norm_bound, neighbours, noise):
    """Shared validation (everything before any noise is drawn)."""
    loss = _check_bounded_loss(loss)
    X, y = _check_data(X, y, loss)
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    lam = float(check_nonnegative(lam, "lam"))
    R = _check_norm_bound(X, norm_bound)
    _check_option(neighbours, "neighbours", _NEIGHBOURS)
    _check_option(noise, "noise", _NOISE)
    return loss, X, y, eps, delta, lam, R


def fit_to_tolerance(X: np.ndarray, y: np.ndarray, loss: GLMLoss, lam: float, R: float) -> tuple[np.ndarray, np.ndarray, float]:
    """θ(D) to gradient norm τ = 1e-12·n·R·L, the curvatures f''(x_iᵀθ) and τ."""
    n, d = X.shape
    tau = _SOLVER_TOL * max(1.0, n * R * loss.lipschitz)
    try:
        try:
            theta, _z, w, gnorm, _ = _newton(X, y, loss, lam, np.zeros(d), tau, 200, "newton")
        except np.linalg.LinAlgError:  # a singular sub-sampled warm-start Hessian (lam = 0): no sub-sampling
            theta, _z, w, gnorm, _ = _newton(X, y, loss, lam, np.zeros(d), tau, 500, "newton-cg")
    except (_NoConvergence, np.linalg.LinAlgError) as exc:
        raise RuntimeError(f"{exc} (lam={lam:g}: with lam=0 the data Hessian must be nonsingular)") from None
    return theta, w, tau


def _sym(H_upper: np.ndarray) -> np.ndarray:
    return np.triu(H_upper) + np.triu(H_upper, 1).T


def _data_hessian(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The summed data Hessian Σ f'' x xᵀ (full symmetric), by blocked SYRK."""
    return _sym(_hessian(X, w, 0.0))


@dataclass(frozen=True, eq=False)
class DataFit:
    r"""**Non-private**: :math:`\theta(D)` and the data Hessian there, exactly as the mechanisms of this module compute them.

    Made by ``data_fit_nonprivate``. Passed as ``fit=`` to the mechanisms run on the
    same data, it lets several of them share one fit; their outputs are then identical, bit
    for bit, to the outputs without it (the fit draws no randomness). It is a function of
    the data with no privacy: it is never released.

    Attributes
    ----------
    X, y : Any
        The objects the fit was computed from; a mechanism given ``fit=`` checks that it
        was given these very objects.
    loss : GLMLoss
        The loss of the fit.
    lam : float
        Ridge coefficient λ ≥ 0 of the fit.
    norm_bound : float
        The public row-norm bound r (it sets the solver's tolerance τ).
    theta : numpy.ndarray
        θ(D), to gradient norm τ (read-only).
    curvatures : numpy.ndarray
        f''(x_iᵀθ) per row (read-only).
    tau : float
        The solver's gradient tolerance τ = 10⁻¹²·n·r·L.
    hessian : numpy.ndarray
        The summed data Hessian Σ f''(x_iᵀθ) x_i x_iᵀ, full symmetric, without λ (read-only).
    eigenvalues : numpy.ndarray
        Its eigenvalues, ascending (read-only).
    """

    X: Any
    y: Any
    loss: GLMLoss
    lam: float
    norm_bound: float
    theta: np.ndarray
    curvatures: np.ndarray
    tau: float
    hessian: np.ndarray
    eigenvalues: np.ndarray

    def __repr__(self) -> str:
        n, d = self.curvatures.shape[0], self.theta.shape[0]
        return f"DataFit(n={n}, d={d}, loss={self.loss.name!r}, lam={self.lam:g}, norm_bound={self.norm_bound:g})"


def _fit(X: np.ndarray, y: np.ndarray, loss: GLMLoss, lam: float, R: float):
    """θ, f'', τ, the data Hessian and its ascending eigenvalues (the work a ``fit=`` saves)."""
    theta, w, tau = fit_to_tolerance(X, y, loss, lam, R)
    H = _data_hessian(X, w)
    return theta, w, tau, H, np.linalg.eigvalsh(H)


def data_fit_nonprivate(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, *, lam: float,
                        norm_bound: float) -> DataFit:
    r"""**Non-private** :math:`\theta(D)`, the data Hessian and its eigenvalues, for ``fit=`` of the mechanisms.

    The mechanisms of this module (``local_output_perturbation``,
    ``smooth_output_perturbation``, ``release_linear_functional``,
    ``local_sensitivity_release_nonprivate``) each fit :math:`\theta(D)` and form the
    Hessian; given the ``DataFit`` of the same ``X``, ``y``, ``loss``, ``lam`` and
    ``norm_bound`` they use it instead, with identical outputs. Inputs are validated as by
    the mechanisms.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d), with Euclidean norms at most ``norm_bound``.
    y : array_like
        Labels, one per row of ``X``, in the loss's domain.
    loss : str | GLMLoss
        A loss with bounded f' (``"robust_log"``, ``"logistic"``, ``"huber"``).
    lam : float
        Ridge coefficient λ ≥ 0 (summed convention).
    norm_bound : float
        Public bound r on the rows' Euclidean norms (checked).

    Returns
    -------
    DataFit
        θ(D) to gradient norm τ = 10⁻¹²·n·r·L, the curvatures, τ, the data Hessian and its eigenvalues.
    """
    loss_c = _check_bounded_loss(loss)
    Xc, yc = _check_data(X, y, loss_c)
    lam = float(check_nonnegative(lam, "lam"))
    R = _check_norm_bound(Xc, norm_bound)
    parts = _fit(Xc, yc, loss_c, lam, R)
    for a in parts[:2] + parts[3:]:
        a.setflags(write=False)
    theta, w, tau, H, ev = parts
    return DataFit(X=X, y=y, loss=loss_c, lam=lam, norm_bound=R, theta=theta, curvatures=w, tau=float(tau),
                   hessian=H, eigenvalues=ev)


def _fit_of(fit: Any, X_in: Any, y_in: Any, X: np.ndarray, y: np.ndarray, loss: GLMLoss, lam: float, R: float):
    """:func:`_fit` of the validated data, or the same five values from ``fit`` (checked to be of these data)."""
    if fit is None:
        return _fit(X, y, loss, lam, R)
    if not isinstance(fit, DataFit):
        raise TypeError(f"fit must be a DataFit (from data_fit_nonprivate) or None; got {type(fit).__name__}")
    if fit.X is not X_in or fit.y is not y_in:
        raise ValueError("fit was computed from other X, y objects: pass the very arrays given to data_fit_nonprivate")
    if not (fit.loss is loss or fit.loss == loss) or fit.lam != lam or fit.norm_bound != R:
        raise ValueError(f"fit has loss={fit.loss.name!r}, lam={fit.lam:g}, norm_bound={fit.norm_bound:g}; "
                         f"the mechanism has loss={loss.name!r}, lam={lam:g}, norm_bound={R:g}")
    return fit.theta, fit.curvatures, fit.tau, fit.hessian, fit.eigenvalues


def _as_out(values: np.ndarray, size: int | None):
    return values if size is not None else values[0]


def _release(base: np.ndarray, scale: np.ndarray, ok: np.ndarray, gen: np.random.Generator,
             size: int | None) -> Any:
    """base + scale·N(0, I) on the released rows, NaN rows elsewhere (or None when size is None)."""
    m = scale.shape[0]
    base = np.asarray(base, dtype=float)
    z = gen.standard_normal((m,) + base.shape)
    s = np.where(ok, scale, np.nan).reshape((m,) + (1,) * base.ndim)
    vals = base + s * z
    if size is None:
        if not ok[0]:
            return None
        v = vals[0]
        return float(v) if v.ndim == 0 else v
    return vals


def _scalarize(a: np.ndarray, size: int | None):
    a = np.asarray(a, dtype=float)
    return a if size is not None else float(a[0])


def _released(ok: np.ndarray, size: int | None):
    return ok.copy() if size is not None else bool(ok[0])


# ========================================================== Alg 3: local output pert.
def local_output_perturbation(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, eps: float, delta: float, *,
                              lam: float, norm_bound: float, rho: float = 0.5, neighbours: str = "add_remove",
                              phi: str = "exp", noise: str = "analytic", rng: Any = None,
                              size: int | None = None, fit: Any = None) -> LocalRelease:
    r"""Local output perturbation of :math:`\theta(D)` (Asi, Duchi & Talwar, Alg 3, Thm 1).

    1. :math:`\hat\lambda` = Alg 2 at :math:`(\epsilon/2, \delta/2)`: a private lower bound
       on the smallest eigenvalue of the data Hessian at :math:`\theta(D)`, from the
       recursion (10) (:func:`pdpkit.stability.qsc_lambda_min_recursion`,
       :func:`pdpkit.stability.recursive_release`); pure :math:`\epsilon/2`-DP, and
       :math:`\hat\lambda \le \lambda_{\min}` except with probability :math:`\delta/2`.
    2. If (C1) fails at :math:`\hat\lambda` (then :math:`t = \infty`; in particular when
       :math:`\hat\lambda + \lambda = 0`), return :math:`\bot`.
    3. Otherwise return :math:`\theta(D) + \sigma(\epsilon/2, \delta/2)\,t(\hat\lambda + \lambda)\,\mathcal N(0, I_d)`,
       :math:`t` the parameter-change bound (9) (Cor 3.1), which bounds
       :math:`\|\theta(D) - \theta(D')\|_2` on every neighbour when
       :math:`\hat\lambda \le \lambda_{\min}(D)`.

    Privacy: Lemma 2.2 with :math:`W = \hat\lambda` (:math:`(\epsilon/2, 0)`-DP, good set
    :math:`\{\hat\lambda \le \lambda_{\min}\}` of probability :math:`\ge 1 - \delta/2`) and
    the Gaussian step, :math:`(\epsilon/2, \delta/2)`-DP on the good set (Lemma 2.3): in total
    :math:`(\epsilon, \delta)`-DP. (Thm 1 states :math:`(2\epsilon, 2\delta)` for Alg 3 run
    at :math:`(\epsilon, \delta)`: the same accounting.) ``noise`` chooses
    :math:`\sigma(\cdot)` (:func:`noise_multiplier`).

    Parameters
    ----------
    X, y : array_like
        Data; rows with :math:`\|x_i\|_2 \le` ``norm_bound``, labels in the loss's domain.
    loss : str or GLMLoss
        A loss with bounded :math:`f'` and finite self-concordance constant.
    eps, delta : float
        Total privacy budget, :math:`\epsilon > 0`, :math:`\delta \in (0, 1)`.
    lam : float
        Ridge regularization :math:`\lambda \ge 0` (summed convention).
    norm_bound : float
        Public bound :math:`r` on the rows' Euclidean norms (checked).
    rho, neighbours, phi
        Passed to :func:`pdpkit.stability.stability_constants`.
    noise : {"analytic", "eq7", "naive"}
        The Gaussian calibration.
    rng : int, Generator or None
    size : int, optional
        Repeat the whole mechanism ``size`` times with fresh noise (rows of the result).
    fit : DataFit, optional
        ``data_fit_nonprivate(X, y, loss, lam=lam, norm_bound=norm_bound)`` of these very
        ``X`` and ``y``: several mechanisms on one data set then share one fit of
        :math:`\theta(D)`; the output is the same as without it.

    Returns
    -------
    LocalRelease
        ``value`` of shape ``(d,)`` (``(size, d)``), ``lambda_max`` NaN.
    """
    st = _st()
    X_in, y_in = X, y
    loss, X, y, eps, delta, lam, R = _check_common(X, y, loss, eps, delta, lam, norm_bound, neighbours, noise)
    size = _check_size(size)
    consts = st.stability_constants(loss, norm_bound=R, lam=lam, rho=rho, neighbours=neighbours, phi=phi)
    gen = as_generator(rng)
    e2, d2 = eps / 2.0, delta / 2.0
    theta, _w, tau, _H, ev = _fit_of(fit, X_in, y_in, X, y, loss, lam, R)
    eig_min = float(ev[0])
    m = 1 if size is None else size
    rel = st.recursive_release(eig_min, st.qsc_lambda_min_recursion(consts), e2, d2, rng=gen, size=m)
    lam_hat = np.asarray(rel.bound, dtype=float).reshape(m)
    t = np.asarray(st.parameter_change_bound(lam_hat, consts), dtype=float).reshape(m)
    return _local_gaussian_release(theta, t, lam_hat, lam=lam, tau=tau, eps=eps, delta=delta, noise=noise,
                                   gen=gen, size=size, certificate="lambda_min (Alg 2, Prop 6.1)")


# ================================================================ Alg 7: smooth losses
def smooth_output_perturbation(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, eps: float, delta: float, *,
                               lam: float, norm_bound: float, n_max: float, neighbours: str = "add_remove",
                               noise: str = "analytic", rng: Any = None, size: int | None = None,
                               fit: Any = None) -> LocalRelease:
    r"""Output perturbation for a generic smooth loss (Asi, Duchi & Talwar, Alg 7, Prop 7.1).

    With :math:`G_0 = L r`, :math:`G_1 = \beta r^2` and :math:`G_2 = \sup|f'''|\,r^3`
    (``loss.d3_bound``), per example:

    1. :math:`\hat\lambda` = Alg 6 at :math:`(\epsilon/2, \delta/2)` with the recursion of
       Cor 6.2 (:func:`pdpkit.stability.smooth_lambda_min_recursion`);
    2. if (C2) fails at :math:`\hat\lambda` (the bound :math:`W` of Prop 5.2,
       :func:`pdpkit.stability.smooth_parameter_change_bound`, is infinite), return
       :math:`\bot`;
    3. otherwise return :math:`\theta(D) + \sigma(\epsilon/2, \delta/2)\,W\,\mathcal N(0, I_d)`.

    In the summed convention the data Hessian is :math:`nG_2`-Lipschitz, and :math:`n` is
    private under add/remove: ``n_max``, a public upper bound on the number of rows
    (checked), replaces it. Same accounting as :func:`local_output_perturbation`:
    :math:`(\epsilon, \delta)`-DP (Prop 7.1). Needs no self-concordance, only a bounded third derivative; its (C2)
    demands :math:`\Lambda \gtrsim \sqrt{G_0G_2}` per example, i.e. :math:`n \gg d^2` on the
    cube (§7.3), against :math:`n \gg d` for Alg 3. Parameters as in
    :func:`local_output_perturbation`.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    loss : str | GLMLoss
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    norm_bound : float
        Public bound R on the Euclidean norm of every feature row.
    n_max : float
        Public upper bound on the number of records (n itself is private under add/remove).
    neighbours : str, default 'add_remove'
        ``"add/remove"`` or ``"replace"``: the neighbour relation of the guarantee (it sets τ = G₀ or 2G₀).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    noise : str, default 'analytic'
        ``"analytic"`` (the tight Gaussian calibration), ``"eq7"`` (the source's eq. (7)) or ``"naive"``.
    size : int, optional
        Number of independent releases to draw (``None``: one).
    fit : DataFit, optional
        ``data_fit_nonprivate(X, y, loss, lam=lam, norm_bound=norm_bound)`` of these very
        ``X`` and ``y``: several mechanisms on one data set then share one fit of
        :math:`\theta(D)`; the output is the same as without it.
    """
    st = _st()
    X_in, y_in = X, y
    loss, X, y, eps, delta, lam, R = _check_common(X, y, loss, eps, delta, lam, norm_bound, neighbours, noise)
    if not math.isfinite(loss.d3_bound) or not math.isfinite(loss.smoothness):
        raise ValueError(f"loss {loss.name!r} needs bounded f'' and f''' for Alg 7")
    n_max = float(check_positive(n_max, "n_max"))
    if X.shape[0] > n_max:
        raise ValueError(f"n_max must be a public upper bound on the number of rows; got n_max={n_max:g} < n")
    size = _check_size(size)
    G0, G1, G2 = loss.lipschitz * R, loss.smoothness * R ** 2, loss.d3_bound * R ** 3
    gen = as_generator(rng)
    e2, d2 = eps / 2.0, delta / 2.0
    theta, _w, tau, _H, ev = _fit_of(fit, X_in, y_in, X, y, loss, lam, R)
    eig_min = float(ev[0])
    m = 1 if size is None else size
    rec = st.smooth_lambda_min_recursion(G0=G0, G1=G1, G2=G2, n_max=n_max, lam=lam, neighbours=neighbours)
    rel = st.recursive_release(eig_min, rec, e2, d2, rng=gen, size=m)
    lam_hat = np.asarray(rel.bound, dtype=float).reshape(m)
    W = np.asarray(st.smooth_parameter_change_bound(lam_hat, G0=G0, G2=G2, n_max=n_max, lam=lam,
                                                     neighbours=neighbours),
                   dtype=float).reshape(m)
    return _local_gaussian_release(theta, W, lam_hat, lam=lam, tau=tau, eps=eps, delta=delta, noise=noise,
                                   gen=gen, size=size, certificate="lambda_min (Alg 6, Cor 6.2)")


def _local_gaussian_release(theta: np.ndarray, change: np.ndarray, lam_hat: np.ndarray, *, lam: float, tau: float,
                            eps: float, delta: float, noise: str, gen: np.random.Generator, size: int | None,
                            certificate: str) -> LocalRelease:
    """Alg 3 / Alg 7's last step: θ plus Gaussian noise at the certified parameter change, or ⊥.

    ``change`` is the certified bound on ‖θ(D) − θ(D′)‖ at each certified λ̂ (inf: not
    certified → ⊥); the solver's gradient tolerance ``tau`` adds 2τ/(λ̂ + λ). Half of the
    budget went to the certificate, half goes here.
    """
    e2, d2 = eps / 2.0, delta / 2.0
    m = lam_hat.shape[0]
    ok = np.isfinite(change) & (lam_hat + lam > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sens = np.where(ok, change + 2.0 * tau / (lam_hat + lam), np.nan)
    scale = noise_multiplier(e2, d2, method=noise) * sens
    value = _release(theta, scale, ok, gen, size)
    parts = ((certificate, e2, d2), ("Gaussian step (Lemma 2.3, Obs 2.4)", e2, d2))
    return LocalRelease(value=value, released=_released(ok, size), scale=_scalarize(scale, size),
                        lambda_min=_scalarize(lam_hat, size), lambda_max=_scalarize(np.full(m, np.nan), size),
                        eps=eps, delta=delta, parts=parts)


# =========================================================== Alg 5: a linear functional
def _check_u(u: Any, d: int) -> np.ndarray:
    u = as_finite_array(u, "u", ndim=1)
    if u.shape[0] != d:
        raise ValueError(f"u must have length {d} (the number of columns of X); got {u.shape[0]}")
    if not np.any(u != 0):
        raise ValueError("u must be a nonzero vector")
    return u


def _functional_budget(eps: float, delta: float) -> tuple[float, float]:
    r""":math:`(\epsilon_4, \delta_4) = (\epsilon/4, \delta/(4 + e^{\epsilon/4}))`, the per-step budget of Alg 5."""
    e4 = eps / 4.0
    return e4, delta / (4.0 + math.exp(e4))


def _release_threshold(eps4: float, delta4: float) -> float:
    r"""The largest ratio bound :math:`r^2` Prop 8.1 / Lemma A.1 (iii) allow: :math:`2\epsilon_4/(1 + \Phi^{-1}(1 - \delta_4/2)^2)` (14)."""
    z = stats.norm.isf(delta4 / 2.0)
    return 2.0 * eps4 / (1.0 + z * z)


def release_linear_functional(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, u: ArrayLike, eps: float,
                              delta: float, *, lam: float, norm_bound: float, cap: float, domain: str = "l2",
                              rho: float = 0.5, neighbours: str = "add_remove", phi: str = "exp",
                              noise: str = "analytic", rng: Any = None, size: int | None = None,
                              fit: Any = None) -> LocalRelease:
    r"""Release :math:`u^\top\theta(D)` with noise at its local modulus (Asi, Duchi & Talwar, Alg 5).

    Four private steps, each at :math:`\epsilon_4 = \epsilon/4`,
    :math:`\delta_4 = \delta/(4 + e^{\epsilon_4})`:

    1. :math:`\hat\lambda_{\min}` = Alg 2 (recursion (10)) — pure :math:`\epsilon_4`-DP,
       fails (:math:`\hat\lambda_{\min} > \lambda_{\min}`) with probability :math:`\le \delta_4`;
    2. :math:`\hat\lambda_{\max}` = Alg 4 (recursion (12) at :math:`\hat\lambda_{\min}`, with
       the public bound ``cap`` :math:`\ge \lambda_{\max}`) — :math:`\epsilon_4`-DP when step 1
       succeeded (else its count is not 1-stable: :math:`\delta_4`), fails with probability
       :math:`\le \delta_4`;
    3. test: release only if (C1) holds at :math:`\hat\lambda_{\min}` and the ratio bound
       :math:`r^2` of :func:`pdpkit.stability.modulus_ratio_bound` at the certified bounds is
       at most :math:`\bar r^2` :math:`= 2\epsilon_4/(1 + \Phi^{-1}(1 - \delta_4/2)^2)`
       (14); otherwise :math:`\bot`;
    4. :math:`T = u^\top\theta(D) + \sigma(\epsilon_4, \delta_4)\,\omega(u \mid D)\,Z`, with
       :math:`\omega` the local modulus (11) (:func:`pdpkit.stability.local_modulus`).

    On the good event (both bounds valid), :math:`|u^\top(\theta(D) - \theta(D'))| \le \omega(u \mid D)`
    (Cor 3.3) makes the mean shift :math:`(\epsilon_4, \delta_4)`-DP (Lemma A.1 (i)), and
    the ratio bound makes the change of variance :math:`(\epsilon_4, \delta_4)`-DP (Lemma
    A.1 (iii)); chained as in App. A.1.4 they give :math:`(2\epsilon_4, (1 + e^{\epsilon_4})\delta_4)`.
    Lemma 2.2 adds the two certificates: :math:`(2\epsilon_4, \delta_4)` for the pair and
    :math:`\gamma = 2\delta_4`. Total :math:`(4\epsilon_4, (4 + e^{\epsilon_4})\delta_4) = (\epsilon, \delta)`.
    Cor 3.6 / Thm 2 count :math:`3\epsilon`: one :math:`\epsilon` short (the chapter's
    errata). ``parts`` lists the four steps.

    Parameters
    ----------
    u : array_like, shape (d,)
        Nonzero direction (not normalized: the release is :math:`u^\top\theta`).
    cap : float
        Public upper bound on the data Hessian's largest eigenvalue (e.g.
        :math:`n\beta r^2`); ``ValueError`` if it is below it.
    domain : {"l2", "linf"}
        Gradient set of Props 8.2 (an :math:`\ell_2` ball) or 8.3 (a cube).
    X, y, loss, eps, delta, lam, norm_bound, rng, size, ...
        As in :func:`local_output_perturbation`.
    rho : float, default 0.5
        Failure probability ρ of the high-probability bound, in (0, 1).
    neighbours : str, default 'add_remove'
        ``"add/remove"`` or ``"replace"``: the neighbour relation of the guarantee (it sets τ = G₀ or 2G₀).
    phi : str, default 'exp'
        The q.s.c. function φ of the loss: ``"exp"`` (φ(t) = eᵗ − 1, the source's) or ``"tight"`` (the loss's own).
    noise : str, default 'analytic'
        ``"analytic"`` (the tight Gaussian calibration), ``"eq7"`` (the source's eq. (7)) or ``"naive"``.
    fit : DataFit, optional
        ``data_fit_nonprivate(X, y, loss, lam=lam, norm_bound=norm_bound)`` of these very
        ``X`` and ``y``: several mechanisms on one data set then share one fit of
        :math:`\theta(D)`; the output is the same as without it.

    Returns
    -------
    LocalRelease
        ``value`` a float (``(size,)``).
    """
    st = _st()
    X_in, y_in = X, y
    loss, X, y, eps, delta, lam, R = _check_common(X, y, loss, eps, delta, lam, norm_bound, neighbours, noise)
    n, d = X.shape
    u = _check_u(u, d)
    _check_option(domain, "domain", _DOMAINS)
    cap = float(check_positive(cap, "cap"))
    size = _check_size(size)
    consts = st.stability_constants(loss, norm_bound=R, lam=lam, rho=rho, neighbours=neighbours, phi=phi)
    theta, _w, tau, H, ev = _fit_of(fit, X_in, y_in, X, y, loss, lam, R)
    eig_min, eig_max = float(ev[0]), float(ev[-1])
    if cap < eig_max:
        raise ValueError(f"cap must be a public upper bound on the data Hessian's largest eigenvalue; "
                         f"got cap={cap:g} below it (use e.g. n * loss.smoothness * norm_bound**2)")
    gen = as_generator(rng)
    e4, d4 = _functional_budget(eps, delta)
    m = 1 if size is None else size
    lo = np.asarray(st.recursive_release(eig_min, st.qsc_lambda_min_recursion(consts), e4, d4, rng=gen,
                                         size=m).bound, dtype=float).reshape(m)
    c1 = np.asarray(st.condition_c1(lo, consts), dtype=bool).reshape(m)
    hi = np.full(m, np.nan)
    for v in np.unique(lo[c1]):  # Alg 4's recursion depends on the certified lambda_min
        rows = np.flatnonzero(c1 & (lo == v))
        rec = st.qsc_lambda_max_recursion(consts, float(v), cap=cap)
        hi[rows] = np.minimum(np.asarray(st.recursive_release(eig_max, rec, e4, d4, rng=gen,
                                                              size=rows.size).bound, dtype=float), cap)
    r2 = np.full(m, np.inf)
    if np.any(c1):
        r2[c1] = np.asarray(st.modulus_ratio_bound(lo[c1], hi[c1], consts, domain=domain, d=d),
                            dtype=float).reshape(-1)
    ok = c1 & (r2 <= _release_threshold(e4, d4))
    omega = float(st.local_modulus(H, u, consts, domain=domain)) if np.any(ok) else np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        om = np.where(ok, omega + 2.0 * tau * float(np.linalg.norm(u)) / (lo + lam), np.nan)
    scale = noise_multiplier(e4, d4, method=noise) * om
    value = _release(np.asarray(u @ theta), scale, ok, gen, size)
    parts = (("lambda_min (Alg 2, Prop 6.1)", e4, d4),
             ("lambda_max (Alg 4), given a valid lambda_min", e4, 2.0 * d4),
             ("mean shift (Cor 3.3, Lemma A.1 i)", e4, d4),
             ("variance ratio (Prop 8.2/8.3, Lemma A.1 iii)", e4, math.exp(e4) * d4))
    return LocalRelease(value=value, released=_released(ok, size), scale=_scalarize(scale, size),
                        lambda_min=_scalarize(lo, size), lambda_max=_scalarize(hi, size),
                        eps=eps, delta=delta, parts=parts)


# ======================================================== §4 item 2: idealized baseline
def local_sensitivity_release_nonprivate(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, eps: float,
                                         delta: float, *, lam: float, norm_bound: float, u: ArrayLike | None = None,
                                         domain: str = "l2", neighbours: str = "add_remove",
                                         noise: str = "analytic", rng: Any = None,
                                         size: int | None = None, fit: Any = None) -> LocalRelease:
    r"""The idealized, **non-private** baseline of Asi, Duchi & Talwar §4 (item 2).

    Releases :math:`\theta(D) + \sigma(\epsilon, \delta)\,\Delta(D)\,\mathcal N(0, I_d)` or, with
    ``u``, :math:`u^\top\theta(D) + \sigma(\epsilon, \delta)\,\Delta(D, u)\,\mathcal N(0, 1)`,
    where :math:`\Delta` are the sensitivities (3a)/(3b) at the data's own Hessian
    :math:`H = \sum_i f''x_ix_i^\top + \lambda I` — in our convention, for an :math:`\ell_2`
    ball of gradients of radius :math:`\tau` (:math:`G_0 = Lr` add/remove, :math:`2G_0`
    replace): :math:`\Delta(D) = \tau/\lambda_{\min}(H)`, and :math:`\Delta(D, u)` =
    :func:`pdpkit.stability.directional_sensitivity`. The noise depends on the data without
    privacy: this is a reference curve ("the best one could hope for"), not a mechanism;
    ``eps`` and ``delta`` only set :math:`\sigma(\epsilon, \delta)`. ``LocalRelease.eps`` is
    ``inf``.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    loss : str | GLMLoss
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    norm_bound : float
        Public bound R on the Euclidean norm of every feature row.
    neighbours : str, default 'add_remove'
        ``"add/remove"`` or ``"replace"``: the neighbour relation of the guarantee (it sets τ = G₀ or 2G₀).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    u : array_like, optional
        Direction of the linear functional uᵀθ (``None``: release the whole θ).
    domain : str, default 'l2'
        ``"l2"`` or ``"linf"``: the gradient set of Cor 3.5 (the shape of the per-example gradients).
    noise : str, default 'analytic'
        ``"analytic"`` (the tight Gaussian calibration), ``"eq7"`` (the source's eq. (7)) or ``"naive"``.
    size : int, optional
        Number of independent releases to draw (``None``: one).
    fit : DataFit, optional
        ``data_fit_nonprivate(X, y, loss, lam=lam, norm_bound=norm_bound)`` of these very
        ``X`` and ``y``: several mechanisms on one data set then share one fit of
        :math:`\theta(D)`; the output is the same as without it.
    """
    st = _st()
    X_in, y_in = X, y
    loss, X, y, eps, delta, lam, R = _check_common(X, y, loss, eps, delta, lam, norm_bound, neighbours, noise)
    n, d = X.shape
    _check_option(domain, "domain", _DOMAINS)
    if u is not None:
        u = _check_u(u, d)
    size = _check_size(size)
    consts = st.stability_constants(loss, norm_bound=R, lam=lam, neighbours=neighbours)
    theta, _w, _tau, H, ev = _fit_of(fit, X_in, y_in, X, y, loss, lam, R)
    if u is None:
        sens = float(consts.tau) / (float(ev[0]) + lam)
        base = theta
    else:
        sens = float(st.directional_sensitivity(H, u, consts, domain=domain))
        base = np.asarray(u @ theta)
    gen = as_generator(rng)
    m = 1 if size is None else size
    ok = np.ones(m, dtype=bool)
    scale = np.full(m, noise_multiplier(eps, delta, method=noise) * sens)
    value = _release(base, scale, ok, gen, size)
    nan = np.full(m, np.nan)
    return LocalRelease(value=value, released=_released(ok, size), scale=_scalarize(scale, size),
                        lambda_min=_scalarize(nan, size), lambda_max=_scalarize(nan, size),
                        eps=math.inf, delta=delta, parts=(("non-private: noise at the true local sensitivity",
                                                           math.inf, 0.0),))


# ============================================================== Alg 1 / Lemma 2.5: test and release
@dataclass(frozen=True, eq=False)
class GatedRelease:
    r"""Output of :func:`release_if_accepted` (Alg 1): the test's output, then the release or :math:`\bot`.

    Attributes
    ----------
    test_output : Any
        :math:`M_0(D)`, released in every case (step i).
    released : bool
        Whether :math:`M_0(D) \in A` (step ii).
    value : Any
        :math:`M_1(D)` when released, ``None`` for :math:`\bot`.
    eps, delta : float
        The guarantee of Lemma 2.5: :math:`(\epsilon_0 + \epsilon, e^{\epsilon_0}\delta_0 + \delta)`.
    """

    test_output: Any
    released: bool
    value: Any
    eps: float
    delta: float

    def __repr__(self) -> str:
        return (f"GatedRelease({'released' if self.released else '⊥'}, eps={self.eps:g}, "
                f"delta={self.delta:g})")


def gated_release_budget(*, test_eps: float, test_delta: float, release_eps: float,
                         release_delta: float) -> tuple[float, float]:
    r"""Lemma 2.5 (Asi, Duchi & Talwar): Alg 1 is :math:`(\epsilon_0 + \epsilon, e^{\epsilon_0}\delta_0 + \delta)`-DP.

    Parameters
    ----------
    test_eps, test_delta : float
        :math:`(\epsilon_0, \delta_0)`: the test :math:`M_0` is :math:`(\epsilon_0, \delta_0)`-DP and, by
        Assumption A.2, accepts a data set outside the good set with probability at most :math:`\delta_0`.
    release_eps, release_delta : float
        :math:`(\epsilon, \delta)`: the release :math:`M_1` is :math:`(\epsilon, \delta)`-close on the
        neighbours of every data set in the good set (Assumption A.1).

    Returns
    -------
    (float, float)
        :math:`(\epsilon_0 + \epsilon, e^{\epsilon_0}\delta_0 + \delta)`.
    """
    e0 = float(check_nonnegative(test_eps, "test_eps"))
    d0 = float(check_probability(test_delta, "test_delta"))
    e1 = float(check_nonnegative(release_eps, "release_eps"))
    d1 = float(check_probability(release_delta, "release_delta"))
    return e0 + e1, math.exp(e0) * d0 + d1


def release_if_accepted(data: Any, test: Any, accept: Any, release: Any, *, test_eps: float, test_delta: float,
                        release_eps: float, release_delta: float, rng: Any = None) -> GatedRelease:
    r"""The test/release scheme (Asi, Duchi & Talwar, Alg 1), with its guarantee (Lemma 2.5).

    i. Release :math:`m_0 = M_0(D)` = ``test(data, gen)``. ii. If ``accept(m_0)`` (:math:`m_0 \in A`),
    release :math:`M_1(D)` = ``release(data, m_0, gen)``; otherwise :math:`\bot`. The output is
    :math:`(m_0, M_1(D))` or :math:`(m_0, \bot)`.

    Guarantee (Lemma 2.5): :math:`(\epsilon_0 + \epsilon, e^{\epsilon_0}\delta_0 + \delta)`-DP when

    * :math:`M_0` is :math:`(\epsilon_0, \delta_0)`-DP;
    * (A.1) there is a statistic :math:`\lambda(D)` and a good set :math:`G` such that, for every
      accepted :math:`m_0`, :math:`M_1(\cdot, m_0)` is :math:`(\epsilon, \delta)`-close on every
      neighbouring pair whose first member has :math:`\lambda(D) \in G`;
    * (A.2) when :math:`\lambda(D) \notin G`, :math:`P(M_0(D) \in A) \le \delta_0`.

    These are properties of the callables, which this function cannot check: it implements
    the scheme and reports the total of Lemma 2.5 (:func:`gated_release_budget`) from the
    declared budgets. Alg 3 and Alg 5 (:func:`local_output_perturbation`,
    :func:`release_linear_functional`) are instances with the test a private eigenvalue bound.

    Parameters
    ----------
    data : Any
        The data set, passed to ``test`` and ``release``.
    test : callable
        ``test(data, gen)`` → :math:`m_0`, the :math:`(\epsilon_0, \delta_0)`-DP test.
    accept : callable
        ``accept(m_0)`` → bool: membership in the acceptance set :math:`A` (no data access).
    release : callable
        ``release(data, m_0, gen)`` → the release :math:`M_1`.
    test_eps, test_delta, release_eps, release_delta : float
        The declared budgets (:func:`gated_release_budget`).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    """
    eps, delta = gated_release_budget(test_eps=test_eps, test_delta=test_delta, release_eps=release_eps,
                                      release_delta=release_delta)
    for name, fn in (("test", test), ("accept", accept), ("release", release)):
        if not callable(fn):
            raise TypeError(f"{name} must be callable; got {type(fn).__name__}")
    gen = as_generator(rng)
    m0 = test(data, gen)
    ok = bool(accept(m0))
    value = release(data, m0, gen) if ok else None
    return GatedRelease(test_output=m0, released=ok, value=value, eps=eps, delta=delta)
