r"""Approximate minima perturbation (AMP) with gradient clipping, and its privacy accounting.

Redberg, Koskela & Wang (2023), §4, Alg 1 and Thm 4.1 (App. F): :class:`ClippedGLMLoss` and
:func:`amp_fit` implement the mechanism. Alg 1 minimizes the
perturbed objective of ObjPert built from clipped-gradient losses (gradient norm at most
``C``, smoothness β kept, Thm F.2–F.3) only approximately — until the perturbed gradient
is at most τ — and releases the approximate minimizer :math:`\tilde\theta` plus
:math:`\mathcal N(0, \sigma_{\rm out}^2 I_d)`. Writing
:math:`\tilde\theta = \theta^P + (\tilde\theta - \theta^P)` with
:math:`\|\tilde\theta - \theta^P\| \le \tau/\lambda` (strong convexity), Alg 1 is the
adaptive composition of ObjPert (Lipschitz constant ``C``) with a Gaussian mechanism of
sensitivity :math:`2\tau/\lambda` and noise :math:`\sigma_{\rm out}` (the source's Remark
4.2 and App. D.3.1). Hence:

* :func:`amp_rdp` — Thm 4.1: ObjPert's RDP (:func:`pdpkit.accounting.objpert_rdp`) plus
  :math:`2\tau^2\alpha/(\sigma_{\rm out}^2\lambda^2)`;
* :func:`amp_delta` — the exact hockey-stick divergence of the composed dominating pair:
  the ObjPert privacy loss :math:`Y = \varepsilon_0 + a^2/2 + a|Z|` plus an independent
  Gaussian loss :math:`\mathcal N(\mu^2/2, \mu^2)`, :math:`\mu = 2\tau/(\lambda\sigma_{\rm out})`, so
  :math:`\delta(\varepsilon) = \mathbb E_{|Z|}[\delta_{\mu}(\varepsilon - Y)]`, a one-dimensional
  integral of the Gaussian profile :math:`\delta_\mu` (:func:`pdpkit.gaussian.gaussian_delta`);
* :func:`amp_epsilon`, :func:`amp_calibrate` — inversion and the calibration rule of §5,
  under RDP (as the source) or the exact profile;
* the DP-SGD baseline's accounting, through dp_accounting: :func:`dpsgd_event`,
  :func:`dpsgd_noise_multiplier` (optionally paying for hyperparameter tuning with the
  Poisson repeat-and-select of Papernot & Steinke 2022) and :func:`poisson_select_mean`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, optimize

from dataclasses import dataclass, field

from ._solver import _check_data, _check_loss, _freeze
from ._validation import as_finite_array, as_generator, check_int_at_least, check_nonnegative, check_positive, check_probability
from .losses import GLMLoss
from .accounting import objpert_constants, output_delta_one, objpert_rdp
from .gaussian import delta_from_mu, gaussian_rdp, gaussian_sigma

__all__ = [
    "ClippedGLMLoss",
    "AMPResult",
    "amp_fit",
    "amp_rdp",
    "amp_delta",
    "amp_epsilon",
    "amp_calibrate",
    "dpsgd_event",
    "dpsgd_noise_multiplier",
    "poisson_select_mean",
    "dpsgd_fit",
]

_SQRT_2PI = math.sqrt(2.0 * math.pi)


# ---------------------------------------------------------------- clipped losses
class ClippedGLMLoss:
    r"""The clipped-gradient loss :math:`f_C` of a convex GLM loss (Song and coauthors 2020, Lemma 5.1;
    Redberg, Koskela & Wang 2023, Thm F.2–F.3).

    For a row of norm :math:`r = \|x\|`, :math:`f_C(\cdot\,; y, r)` equals :math:`f` where
    :math:`|f'| \le C/r` and continues linearly with slope :math:`\pm C/r` beyond the points
    :math:`u_L \le u_H` where :math:`f' = \mp C/r`. It is convex, its gradient
    :math:`f_C'\,x` has norm at most ``C`` (so ``lipschitz = C`` for any row), and
    :math:`0 \le f_C'' \le f''` keeps the smoothness β of ``loss`` (Thm F.3); the gradient is
    the clipped gradient :math:`\min\{1, C/\|\nabla\ell\|\}\nabla\ell` of DP-SGD.

    The attributes are the constants the privacy analysis (:func:`amp_delta`, ``C`` and
    ``beta``) needs for rows of norm at most ``norm_bound`` = R: ``lipschitz`` = C (any row)
    and ``smoothness`` = :math:`\beta R^2`, the bound on :math:`f_C''\|x\|^2` — not the loss's
    per-unit β, which would understate the curvature of longer rows. :func:`amp_fit`
    refuses rows beyond ``norm_bound``.

    Parameters
    ----------
    loss : str | GLMLoss
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    C : float
        Clipping bound C of the derivative: the clipped loss has :math:`|f_C'|` ≤ C/r for rows of norm r.
    norm_bound : float, default 1.0
        Public bound R on the Euclidean norm of every feature row.
    """

    def __init__(self, loss: str | GLMLoss, C: float, *, norm_bound: float = 1.0) -> None:
        self.loss = _check_loss(loss)
        self.C = float(check_positive(C, "C"))
        self.norm_bound = float(check_positive(norm_bound, "norm_bound"))
        self.lipschitz = self.C
        self.smoothness = self.loss.smoothness * self.norm_bound ** 2
        self.name = f"clipped {self.loss.name} (C = {self.C:g}, rows of norm <= {self.norm_bound:g})"

    def __repr__(self) -> str:
        return (f"<ClippedGLMLoss of {self.loss.name!r}: C={self.C:g}, norm_bound={self.norm_bound:g}, "
                f"beta={self.smoothness:g}>")

    def _bounds(self, y: np.ndarray, row_norm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(u_L, u_H) per row: f'(u_L) = -C/r, f'(u_H) = C/r (-inf / +inf where never reached).

        A bracket doubled from [-1, 1] up to 60 times, then bisection. Every step acts on
        each row alone, so it runs once per distinct (y, r) pair (keyed by their bits) and
        is spread back; f' is nondecreasing (a convex loss), so its value at the farthest
        bracket point, 2**60 from the origin, tells which rows never reach their target
        (those get -inf / +inf at once); the bisection stops at its fixed point (a step that
        changes no bracket changes none after it). The result is that of the plain
        elementwise computation, to the last bit.
        """
        y, r = np.broadcast_arrays(np.asarray(y, dtype=float), np.asarray(row_norm, dtype=float))
        shape = y.shape
        uy, iy = np.unique(np.ascontiguousarray(y.ravel()).view(np.int64), return_inverse=True)
        ur, ir = np.unique(np.ascontiguousarray(r.ravel()).view(np.int64), return_inverse=True)
        pairs, inverse = np.unique(iy.reshape(-1) * ur.size + ir.reshape(-1), return_inverse=True)
        inverse = inverse.reshape(-1)
        y, row_norm = uy[pairs // ur.size].view(float), ur[pairs % ur.size].view(float)
        with np.errstate(divide="ignore"):
            s = np.where(row_norm > 0, self.C / np.where(row_norm > 0, row_norm, 1.0), np.inf)
        d1 = self.loss._d1
        out = []
        for sign in (-1.0, 1.0):
            target = sign * s
            edge = d1(np.full(y.shape, sign * 2.0**60), y)
            never = edge >= target if sign < 0 else edge <= target  # f' never crosses target
            u = np.full(y.shape, sign * np.inf)
            act = np.isfinite(target) & ~never
            if np.any(act):
                ya, ta = y[act], target[act]
                lo = np.full(ya.shape, -1.0)
                hi = np.full(ya.shape, 1.0)
                for _ in range(60):  # bracket f'(lo) < target < f'(hi) where possible
                    bad_lo = d1(lo, ya) >= ta
                    bad_hi = d1(hi, ya) <= ta
                    if not (np.any(bad_lo) or np.any(bad_hi)):
                        break
                    lo = np.where(bad_lo, 2.0 * lo, lo)
                    hi = np.where(bad_hi, 2.0 * hi, hi)
                for _ in range(200):
                    mid = 0.5 * (lo + hi)
                    below = d1(mid, ya) < ta
                    lo_next = np.where(below, mid, lo)
                    hi_next = np.where(below, hi, mid)
                    if not (np.any(lo_next != lo) or np.any(hi_next != hi)):  # NaN never stops
                        break
                    lo, hi = lo_next, hi_next
                u[act] = 0.5 * (lo + hi)
            out.append(u[inverse].reshape(shape))
        return out[0], out[1]

    def _prepare(self, t: ArrayLike, y: ArrayLike, row_norm: ArrayLike):
        t = as_finite_array(t, "t")
        y = self.loss.check_labels(y)
        r = check_nonnegative(row_norm, "row_norm")
        t, y, r = np.broadcast_arrays(t, y, r)
        return t, y, r

    def value(self, t: ArrayLike, y: ArrayLike, row_norm: ArrayLike) -> np.ndarray:
        """:math:`f_C(t; y)` for rows of norm ``row_norm`` (elementwise, broadcasting).

        Parameters
        ----------
        t : array_like
            Score t = xᵀθ (array; broadcast against ``y``).
        y : array_like
            Labels, one per row of ``X`` (±1 for classification, real for regression).
        row_norm : array_like
            Norm r = ‖x‖ of each row (the clipping threshold on f' is C/r).
        """
        t, y, r = self._prepare(t, y, row_norm)
        uL, uH = self._bounds(y, r)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(r > 0, self.C / np.where(r > 0, r, 1.0), np.inf)
            inner = self.loss._value(np.clip(t, uL, uH), y)
            below = t < uL
            above = t > uH
            out = np.where(below, self.loss._value(np.where(below, uL, 0.0), y) - s * (t - np.where(below, uL, 0.0)), inner)
            out = np.where(above, self.loss._value(np.where(above, uH, 0.0), y) + s * (t - np.where(above, uH, 0.0)), out)
        return out

    def d1(self, t: ArrayLike, y: ArrayLike, row_norm: ArrayLike) -> np.ndarray:
        r""":math:`f_C'(t; y) = \operatorname{clip}(f'(t; y), -C/r, C/r)`.

        Parameters
        ----------
        t : array_like
            Score t = xᵀθ (array; broadcast against ``y``).
        y : array_like
            Labels, one per row of ``X`` (±1 for classification, real for regression).
        row_norm : array_like
            Norm r = ‖x‖ of each row (the clipping threshold on f' is C/r).
        """
        t, y, r = self._prepare(t, y, row_norm)
        return self._d1_d2(t, y, r)[0]

    def d2(self, t: ArrayLike, y: ArrayLike, row_norm: ArrayLike) -> np.ndarray:
        """:math:`f_C''`: :math:`f''` where the gradient is not clipped, 0 where it is.

        Parameters
        ----------
        t : array_like
            Score t = xᵀθ (array; broadcast against ``y``).
        y : array_like
            Labels, one per row of ``X`` (±1 for classification, real for regression).
        row_norm : array_like
            Norm r = ‖x‖ of each row (the clipping threshold on f' is C/r).
        """
        t, y, r = self._prepare(t, y, row_norm)
        return self._d1_d2(t, y, r)[1]

    def _d1_d2(self, t: np.ndarray, y: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d1, d2 = self.loss._d1_d2(t, y)
        with np.errstate(divide="ignore"):
            s = np.where(r > 0, self.C / np.where(r > 0, r, 1.0), np.inf)
        clipped = np.abs(d1) > s
        return np.clip(d1, -s, s), np.where(clipped, 0.0, d2)


@dataclass(frozen=True, eq=False)
class AMPResult:
    r"""Output of :func:`amp_fit`. ``theta`` is the release :math:`\tilde\theta + \mathcal N(0, \sigma_{\rm out}^2 I)`;
    ``grad_norm_nonprivate`` is the perturbed-gradient norm at :math:`\tilde\theta`
    (:math:`\le\tau`; a function of the data and of ``b``: not for publication) and ``n_iter``
    the number of iterations (data-dependent too); both are left out of the ``repr``.

    Attributes
    ----------
    theta : numpy.ndarray
        The released coefficients: the solver's point plus the output noise.
    grad_norm_nonprivate : float
        Norm of the perturbed gradient at the solver's point (≤ τ; data-dependent, not for publication).
    n_iter : int
        Number of solver iterations (data-dependent).
    lam : float
        Ridge coefficient λ used.
    sigma : float
        Standard deviation σ of the objective noise b.
    sigma_out : float
        Standard deviation of the output noise.
    tau : float
        Gradient-norm tolerance τ of the solver.
    C : float
        Clipping threshold C.
    beta : float, default nan
        Smoothness bound β of the clipped loss.
    norm_bound : float, default 1.0
        Public bound R on the row norms.
    """

    theta: np.ndarray
    grad_norm_nonprivate: float = field(repr=False)
    n_iter: int = field(repr=False)
    lam: float
    sigma: float
    sigma_out: float
    tau: float
    C: float
    beta: float = math.nan
    norm_bound: float = 1.0


def amp_fit(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, *, lam: float, sigma: float, sigma_out: float,
            tau: float, clip: float | None = None, rng=None, b: ArrayLike | None = None,
            max_iter: int = 500, norm_bound: float = 1.0) -> AMPResult:
    r"""Approximate minima perturbation with gradient clipping (Redberg, Koskela & Wang 2023, Alg 1).

    Minimizes :math:`\sum_i f_C(x_i^\top\theta; y_i) + \frac{\lambda}{2}\|\theta\|^2 + b^\top\theta`,
    :math:`b \sim \mathcal N(0, \sigma^2 I_d)` (or the given ``b``), by damped Newton steps on the
    clipped objective until its gradient norm, computed in float64, is at most ``tau``, and
    releases the point plus :math:`\mathcal N(0, \sigma_{\rm out}^2 I_d)`. ``clip`` is the
    clipping threshold C; ``None`` uses the loss's own Lipschitz constant (rows must then
    have norm at most 1). Every row must have norm at most ``norm_bound`` = R (``ValueError``
    otherwise). Its privacy is :func:`amp_rdp` / :func:`amp_delta` with ``C`` and
    ``beta`` = :math:`\beta R^2` as the result records them (``result.C``, ``result.beta``).
    Raises ``RuntimeError`` — and releases nothing — if τ is not reached in ``max_iter``
    iterations.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    loss : str | GLMLoss
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sigma_out : float
        Standard deviation of the output noise added to the solver's point.
    tau : float
        Public gradient-norm tolerance τ of the solver (the output noise pays for it).
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    norm_bound : float, default 1.0
        Public bound R on the Euclidean norm of every feature row.
    clip : float, optional
        Clipping threshold C (``None``: the loss's own Lipschitz constant; rows must then have norm at most 1).
    b : array_like, optional
        The objective noise b to use instead of a fresh draw (for tests and experiments only: a given b carries no guarantee).
    max_iter : int, default 500
        Largest number of damped Newton steps before the solver gives up (``RuntimeError``).
    """
    base = _check_loss(loss)
    X, y = _check_data(X, y, base)
    d = X.shape[1]
    lam = float(check_positive(lam, "lam"))
    sigma = float(check_positive(sigma, "sigma"))
    sigma_out = float(check_positive(sigma_out, "sigma_out"))
    tau = float(check_nonnegative(tau, "tau"))
    max_iter = check_int_at_least(max_iter, "max_iter", 1)
    row_norm = np.sqrt(np.einsum("ij,ij->i", X, X))
    R = float(check_positive(norm_bound, "norm_bound"))
    if row_norm.size and row_norm.max() > R * (1.0 + 1e-12):
        raise ValueError(f"every row of X must have norm <= norm_bound={R:g} (the clipped loss's curvature bound "
                         "beta * norm_bound**2 assumes it)")
    if clip is None:
        if not math.isfinite(base.lipschitz):
            raise ValueError(f"clip must be given for the {base.name!r} loss, whose gradient is unbounded")
        if row_norm.size and row_norm.max() > 1.0 + 1e-12:
            raise ValueError("rows of X must have norm <= 1 when clip is None (or pass clip=C)")
        C = float(base.lipschitz)
    else:
        C = float(check_positive(clip, "clip"))
    closs = ClippedGLMLoss(base, C, norm_bound=R)
    gen = as_generator(rng)
    if b is None:
        b = gen.normal(0.0, sigma, size=d)
    else:
        b = as_finite_array(b, "b", ndim=1)
        if b.shape != (d,):
            raise ValueError(f"b must have shape ({d},); got {b.shape}")
    uL, uH = closs._bounds(y, row_norm)
    s = np.where(row_norm > 0, C / np.where(row_norm > 0, row_norm, 1.0), np.inf)

    def objective(theta: np.ndarray) -> float:
        z = X @ theta
        zc = np.clip(z, uL, uH)
        vals = base._value(zc, y) + np.where(z < uL, -s * (z - zc), 0.0) + np.where(z > uH, s * (z - zc), 0.0)
        return float(np.sum(vals) + 0.5 * lam * theta @ theta + b @ theta)

    theta = np.zeros(d)
    gnorm = math.inf
    for it in range(max_iter + 1):
        z = X @ theta
        g1, g2 = closs._d1_d2(z, y, row_norm)
        grad = X.T @ g1 + lam * theta + b
        gnorm = float(np.linalg.norm(grad))
        if gnorm <= tau:
            break
        if it == max_iter:
            raise RuntimeError(f"AMP did not reach the gradient threshold tau = {tau:g} in max_iter={max_iter} "
                               "iterations; nothing was released: increase max_iter, tau or lam")
        H = (X * g2[:, None]).T @ X + lam * np.eye(d)
        step = np.linalg.solve(H, grad)
        f0, t_step = objective(theta), 1.0
        slope = float(grad @ step)
        while objective(theta - t_step * step) > f0 - 1e-4 * t_step * slope and t_step > 1e-12:
            t_step *= 0.5
        theta = theta - t_step * step
    released = theta + gen.normal(0.0, sigma_out, size=d)
    return AMPResult(theta=_freeze(released), grad_norm_nonprivate=gnorm, n_iter=it, lam=lam, sigma=sigma,
                     sigma_out=sigma_out, tau=tau, C=C, beta=closs.smoothness, norm_bound=R)


def _amp_constants(C, beta, lam, sigma, sigma_out, tau, sharp) -> tuple[float, float, float]:
    """(eps0, a, mu): ObjPert's constants with L = C, and the output mechanism's mu."""
    eps0, a = objpert_constants(C, beta, lam, sigma, sharp)
    sigma_out = float(check_positive(sigma_out, "sigma_out"))
    tau = float(check_nonnegative(tau, "tau"))
    return eps0, a, 2.0 * tau / (float(lam) * sigma_out)


def amp_rdp(alpha: ArrayLike, *, C: float, beta: float, lam: float, sigma: float, sigma_out: float,
            tau: float, sharp: bool = False) -> np.ndarray:
    r"""RDP of Alg 1 (Redberg, Koskela & Wang 2023, Thm 4.1).

    .. math::

       \varepsilon(\alpha) = \varepsilon_{\rm ObjPert}(\alpha; L = C)
         + \frac{2\tau^2\alpha}{\sigma_{\rm out}^2\lambda^2},

    the RDP of objective perturbation (:func:`pdpkit.accounting.objpert_rdp`, Thm 3.2 with
    the clipping threshold as Lipschitz constant) composed with the Gaussian mechanism of
    sensitivity :math:`2\tau/\lambda`. Vectorized over α ≥ 1.

    Parameters
    ----------
    alpha : array_like
        Rényi order α ≥ 1.
    C : float
        Clipping bound C of the derivative: the clipped loss has :math:`|f_C'|` ≤ C/r for rows of norm r.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sigma_out : float
        Standard deviation of the output noise added to the solver's point.
    tau : float
        Public gradient-norm tolerance τ of the solver (the output noise pays for it).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    _amp_constants(C, beta, lam, sigma, sigma_out, tau, sharp)
    obj = objpert_rdp(alpha, L=C, beta=beta, lam=lam, sigma=sigma, sharp=sharp)
    if float(tau) == 0.0:
        return obj
    return obj + gaussian_rdp(alpha, sensitivity=2.0 * float(tau) / float(lam), sigma=float(sigma_out))


_delta_one = output_delta_one  # ObjPert's dominating loss plus the output Gaussian's (pdpkit.accounting)


def amp_delta(eps: ArrayLike, *, C: float, beta: float, lam: float, sigma: float, sigma_out: float,
              tau: float, sharp: bool = False) -> np.ndarray:
    r"""Privacy profile of Alg 1: ObjPert's dominating pair composed exactly with the output Gaussian.

    :math:`\delta(\varepsilon) = \int_0^\infty 2\varphi(t)\,
    \delta_\mu(\varepsilon - \varepsilon_0 - a^2/2 - a t)\,dt` with :math:`a = C/\sigma`,
    :math:`\mu = 2\tau/(\lambda\sigma_{\rm out})` and :math:`\delta_\mu` the Gaussian mechanism's
    profile (for every real argument). With τ = 0 it is
    :func:`pdpkit.accounting.objpert_delta`. Adaptive quadrature to relative accuracy
    about 1e-10, one integral per ε.

    Parameters
    ----------
    eps : array_like
        ε of the (ε, δ) guarantee, in nats.
    C : float
        Clipping bound C of the derivative: the clipped loss has :math:`|f_C'|` ≤ C/r for rows of norm r.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sigma_out : float
        Standard deviation of the output noise added to the solver's point.
    tau : float
        Public gradient-norm tolerance τ of the solver (the output noise pays for it).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    """
    eps0, a, mu = _amp_constants(C, beta, lam, sigma, sigma_out, tau, sharp)
    e = np.atleast_1d(as_finite_array(eps, "eps")).astype(float)
    out = np.array([_delta_one(float(x), eps0, a, mu) for x in e.ravel()]).reshape(e.shape)
    return out[0] if np.ndim(eps) == 0 else out


def amp_epsilon(delta: float, *, C: float, beta: float, lam: float, sigma: float, sigma_out: float,
                tau: float, sharp: bool = False, accounting: str = "rdp") -> float:
    r"""ε of Alg 1 at δ: Thm 4.1 converted over continuous α (``"rdp"``, as the source)
    or the smallest ε with :func:`amp_delta` ≤ δ (``"pld"``, the exact composition).

    The ``"rdp"`` conversion is the improved one of Canonne, Kamath & Steinke (2020, Prop 12),
    :math:`\varepsilon = \rho(\alpha) + \log(1 - 1/\alpha) - \log(\delta\alpha)/(\alpha - 1)`,
    minimized over α > 1.

    Parameters
    ----------
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    C : float
        Clipping bound C of the derivative: the clipped loss has :math:`|f_C'|` ≤ C/r for rows of norm r.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    lam : float
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    sigma : float
        Standard deviation σ > 0 of the Gaussian noise (for objective perturbation: of each coordinate of b).
    sigma_out : float
        Standard deviation of the output noise added to the solver's point.
    tau : float
        Public gradient-norm tolerance τ of the solver (the output noise pays for it).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    accounting : str, default 'rdp'
        ``"rdp"`` (Thm 4.1 converted, as the source) or ``"pld"`` (the exact composition of the two profiles).
    """
    delta = float(check_probability(delta, "delta"))
    eps0, a, mu = _amp_constants(C, beta, lam, sigma, sigma_out, tau, sharp)
    kw = dict(C=C, beta=beta, lam=lam, sigma=sigma, sigma_out=sigma_out, tau=tau, sharp=sharp)
    if accounting == "rdp":
        def eps_of(log_am1: float) -> float:
            al = 1.0 + math.exp(log_am1)
            rho = float(amp_rdp(al, **kw))
            return rho + math.log1p(-1.0 / al) - math.log(delta * al) / (al - 1.0)

        grid = np.linspace(math.log(0.02), math.log(5000.0), 60)
        vals = np.array([eps_of(g) for g in grid])
        j = int(np.argmin(vals))
        res = optimize.minimize_scalar(eps_of, bounds=(grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]),
                                       method="bounded", options={"xatol": 1e-10})
        return max(0.0, min(float(res.fun), float(vals[j])))
    if accounting == "pld":
        c = eps0 + 0.5 * a * a
        fn = lambda e: math.log(max(_delta_one(e, eps0, a, mu), 1e-300)) - math.log(delta)
        lo, hi = c - 10.0, c + 1.0
        while fn(lo) < 0:
            lo -= 10.0
        while fn(hi) > 0:
            hi += 2.0 * (1.0 + hi - lo)
        e = optimize.brentq(fn, lo, hi, xtol=1e-12, rtol=4 * np.finfo(float).eps)
        for _ in range(64):  # never on the unsafe side
            if _delta_one(e, eps0, a, mu) <= delta:
                return e
            e += max(abs(e), 1.0) * 1e-11
        return e  # pragma: no cover
    raise ValueError(f"accounting must be 'rdp' or 'pld'; got {accounting!r}")


def amp_calibrate(eps: float, delta: float, *, C: float, beta: float, sigma_out: float, tau: float,
                  f: float = 1.3, accounting: str = "rdp", sharp: bool = False) -> tuple[float, float]:
    r"""(λ, σ) for (ε, δ)-DP Alg 1 by the rule of §5 under the chosen accounting.

    σ = ``f`` × the Gaussian mechanism's σ at sensitivity ``C``
    (:func:`pdpkit.gaussian.gaussian_sigma`); λ is the smallest regularization with
    :func:`amp_epsilon` ≤ ε, found by bisection on log λ (both the log-determinant term and
    the output mechanism's sensitivity :math:`2\tau/\lambda` decrease in λ), rounded up.
    ``ValueError`` naming ``sigma_out`` when no λ suffices.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    C : float
        Clipping bound C of the derivative: the clipped loss has :math:`|f_C'|` ≤ C/r for rows of norm r.
    beta : float
        Smoothness bound β ≥ f'' of the GLM loss.
    sigma_out : float
        Standard deviation of the output noise added to the solver's point.
    tau : float
        Public gradient-norm tolerance τ of the solver (the output noise pays for it).
    f : float, default 1.3
        Factor by which σ exceeds the σ of the Gaussian mechanism with the same (ε, δ) (the source's rule is 1.3).
    sharp : bool, default False
        Use the sharp constant log(1 + β/λ), valid for every λ > 0, instead of the source's −log(1 − β/λ), which needs λ > β.
    accounting : str, default 'rdp'
        ``"rdp"`` (Thm 4.1 converted, as the source) or ``"pld"`` (the exact composition of the two profiles).
    """
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    f = float(check_positive(f, "f"))
    if f <= 1.0:
        raise ValueError(f"f must be > 1; got {f}")
    sigma = f * float(gaussian_sigma(eps, delta, sensitivity=float(check_positive(C, "C"))))
    beta_f = float(check_nonnegative(beta, "beta"))

    def eps_at(lam: float) -> float:
        return amp_epsilon(delta, C=C, beta=beta_f, lam=lam, sigma=sigma, sigma_out=sigma_out, tau=tau,
                           sharp=sharp, accounting=accounting)

    floor = beta_f * (1.0 + 1e-9) if (beta_f > 0 and not sharp) else 1e-12
    hi = max(1.0, 2.0 * floor)
    for _ in range(80):
        if eps_at(hi) <= eps:
            break
        hi *= 4.0
    else:
        raise ValueError(f"sigma_out is too small (or tau too large): no lambda reaches eps = {eps:g}")
    lo = floor
    if eps_at(lo * (1 + 1e-9)) <= eps:
        return lo * (1 + 1e-9), sigma
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if eps_at(mid) <= eps:
            hi = mid
        else:
            lo = mid
        if hi / lo < 1 + 1e-7:
            break
    return hi, sigma


# ---------------------------------------------------------------- DP-SGD baseline
def dpsgd_event(*, noise_multiplier: float, sample_rate: float, steps: int, select_mean: float | None = None):
    r"""The dp_accounting event of DP-SGD: ``steps`` Poisson-subsampled Gaussian steps.

    With ``select_mean``, the whole training is repeated a Poisson(``select_mean``) number of
    times and the best run released (``RepeatAndSelectDpEvent`` with infinite shape:
    Papernot & Steinke 2022, Thm 2), which is what honest hyperparameter tuning costs.

    Parameters
    ----------
    noise_multiplier : float
        Noise multiplier of DP-SGD (noise standard deviation over the clipping norm).
    sample_rate : float
        Poisson subsampling rate q of DP-SGD.
    steps : int
        Number of DP-SGD steps.
    select_mean : float, optional
        Mean μ of the Poisson distribution of the number of tuning runs (honest hyper-parameter selection).
    """
    from dp_accounting import dp_event

    nm = float(check_positive(noise_multiplier, "noise_multiplier"))
    q = float(check_probability(sample_rate, "sample_rate"))
    from ._validation import check_int_at_least

    steps = check_int_at_least(steps, "steps", 1)
    event = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(nm)), steps)
    if select_mean is not None:
        event = dp_event.RepeatAndSelectDpEvent(event, float(check_positive(select_mean, "select_mean")), np.inf)
    return event


def dpsgd_noise_multiplier(eps: float, delta: float, *, sample_rate: float, steps: int,
                           select_mean: float | None = None, orders: Sequence[float] | None = None) -> float:
    r"""Smallest DP-SGD noise multiplier (noise std / clipping norm) for (ε, δ)-DP.

    Accounted by dp_accounting's ``RdpAccountant`` (add/remove neighbours) at ``orders`` (its
    default orders when ``None``) and calibrated by ``dp_accounting.calibrate_dp_mechanism``;
    with ``select_mean`` the cost of tuning by Poisson repeat-and-select is included.

    Parameters
    ----------
    eps : float
        ε of the (ε, δ) guarantee, in nats.
    delta : float
        δ of the (ε, δ) guarantee, in (0, 1).
    sample_rate : float
        Poisson subsampling rate q of DP-SGD.
    steps : int
        Number of DP-SGD steps.
    select_mean : float, optional
        Mean μ of the Poisson distribution of the number of tuning runs (honest hyper-parameter selection).
    orders : Sequence[float], optional
        The Rényi orders α > 1 of the accountant (``None``: dp_accounting's defaults, 1.1 to 1024).
    """
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    from absl import logging as absl_logging

    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    verbosity = absl_logging.get_verbosity()
    absl_logging.set_verbosity(absl_logging.ERROR)  # the bracket search visits orders that fail to converge
    make_event = lambda m: dpsgd_event(noise_multiplier=m, sample_rate=sample_rate, steps=steps,
                                       select_mean=select_mean)
    if orders is None:
        make_accountant = RdpAccountant
    else:
        alphas = [float(a) for a in orders]
        if not alphas or not all(math.isfinite(a) and a > 1 for a in alphas):
            raise ValueError(f"orders must be finite Rényi orders above 1; got {orders!r}")
        make_accountant = lambda: RdpAccountant(alphas)
    try:
        try:
            nm = dp_accounting.calibrate_dp_mechanism(
                make_accountant, make_event, eps, delta, dp_accounting.ExplicitBracketInterval(1e-2, 1e3), tol=1e-4)
        except ValueError:  # tiny eps with large sampling rates needs a noise multiplier above 1e3
            nm = dp_accounting.calibrate_dp_mechanism(
                make_accountant, make_event, eps, delta, dp_accounting.ExplicitBracketInterval(1e3, 1e7), tol=1e-4)
    finally:
        absl_logging.set_verbosity(verbosity)
    return float(nm)


def poisson_select_mean(grid_size: int, *, prob: float = 0.9) -> float:
    r"""Mean μ of the Poisson number K of tuning runs with :math:`P(K > \text{grid\_size}) = \text{prob}`.

    The honest DP-SGD baseline of Redberg, Koskela & Wang (2023), §5 and Table 5: instead of
    trying each of ``grid_size`` learning rates once (which is not private), it tries a
    Poisson(μ) number of random candidates and pays for it with the repeat-and-select
    theorem of Papernot & Steinke (2022); μ is chosen so that it makes more attempts than
    the grid has points with probability ``prob`` (μ ≈ 15.41 for 10 points and 0.9).

    Parameters
    ----------
    grid_size : int
        Number of points of the hyper-parameter grid that the non-private search would try.
    prob : float, default 0.9
        Probability that the Poisson number of runs exceeds ``grid_size``.
    """
    from scipy import stats

    from ._validation import check_int_at_least

    m = check_int_at_least(grid_size, "grid_size", 1)
    prob = float(check_probability(prob, "prob"))
    return float(optimize.brentq(lambda mu: stats.poisson.sf(m, mu) - prob, 1e-9, 10.0 * m + 100.0,
                                 xtol=1e-12))


def dpsgd_fit(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, *, noise_multiplier: float, clip: float,
              sample_rate: float, steps: int, lr: float, lam: float = 0.0, rng=None) -> np.ndarray:
    r"""DP-SGD for a GLM loss (Abadi and coauthors 2016): Poisson-subsampled, per-example clipped gradients,
    Gaussian noise of standard deviation ``noise_multiplier * clip``, Adam updates.

    Each step samples every row independently with probability ``sample_rate``, clips each
    per-example gradient :math:`f'(x_i^\top\theta)x_i` to norm ``clip``, adds
    :math:`\mathcal N(0, (\text{noise\_multiplier}\cdot\text{clip})^2 I_d)` to their sum, divides by
    the expected batch size and takes an Adam step (plus :math:`\lambda\theta`). Its privacy is
    :func:`dpsgd_event` (dp_accounting); the noise multiplier comes from
    :func:`dpsgd_noise_multiplier`. Vectorized over the batch; returns the final iterate.

    Parameters
    ----------
    X : array_like
        Feature rows, shape (n, d).
    y : array_like
        Labels, one per row of ``X`` (±1 for classification, real for regression).
    loss : str | GLMLoss
        The GLM loss: a :class:`pdpkit.losses.GLMLoss` or its name (``"logistic"``, ``"squared"``, ``"robust_log"``, ``"huber"``).
    noise_multiplier : float
        Noise multiplier of DP-SGD (noise standard deviation over the clipping norm).
    sample_rate : float
        Poisson subsampling rate q of DP-SGD.
    steps : int
        Number of DP-SGD steps.
    lam : float, default 0.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    rng : int, numpy.random.Generator or None, optional
        Seed, numpy Generator or ``None`` (fresh OS entropy) for the randomness.
    clip : float
        Clipping norm of the per-example gradients.
    lr : float
        Learning rate of the Adam updates.
    """
    base = _check_loss(loss)
    X, y = _check_data(X, y, base)
    n, d = X.shape
    nm = float(check_positive(noise_multiplier, "noise_multiplier"))
    C = float(check_positive(clip, "clip"))
    q = float(check_probability(sample_rate, "sample_rate"))
    steps = check_int_at_least(steps, "steps", 1)
    lr = float(check_positive(lr, "lr"))
    lam = float(check_nonnegative(lam, "lam"))
    gen = as_generator(rng)
    row_norm = np.sqrt(np.einsum("ij,ij->i", X, X))
    theta, m1, m2 = np.zeros(d), np.zeros(d), np.zeros(d)
    b1, b2, eps_adam = 0.9, 0.999, 1e-8
    expected = q * n
    for t in range(1, steps + 1):
        # Poisson sampling: a Binomial(n, q) batch size, then a uniform subset of that size
        # (the same law as n independent coin flips, at a tenth of the cost for small q).
        batch = gen.choice(n, size=int(gen.binomial(n, q)), replace=False, shuffle=False)
        g = gen.normal(0.0, nm * C, size=d)
        if batch.size:
            xb, yb = X[batch], y[batch]
            d1 = base._d1(xb @ theta, yb)
            norms = np.abs(d1) * row_norm[batch]
            scale = np.minimum(1.0, C / np.maximum(norms, 1e-300))
            g = g + xb.T @ (d1 * scale)
        g = g / expected + lam * theta
        m1 = b1 * m1 + (1 - b1) * g
        m2 = b2 * m2 + (1 - b2) * g * g
        theta = theta - lr * (m1 / (1 - b1**t)) / (np.sqrt(m2 / (1 - b2**t)) + eps_adam)
    return theta
