r"""Self-concordant stability: parameter-change bounds, recursions and private eigenvalue bounds.

Asi, Duchi & Talwar (source 004), §2.1–2.2, §5, §6 and the lemmas of §8, in the book's
convention: summed loss :math:`J(\theta; D) = \sum_i f(x_i^\top\theta; y_i) +
\frac{\lambda}{2}\|\theta\|^2`, add/remove neighbours (``neighbours="replace"`` optional).
Every ``eig`` argument is an eigenvalue of the summed **data** Hessian
:math:`\sum_i f''(x_i^\top\theta; y_i)\,x_i x_i^\top` (no :math:`\lambda`), and
:math:`\Lambda = \mathrm{eig} + \lambda`.

Translation from the source (which averages and uses replace-one): its
:math:`n\lambda_{\rm reg} \to \lambda`, :math:`n\lambda_{\min}(P_n) \to \mathrm{eig}`,
:math:`G_i/n \to G_i`, :math:`\tau_2 = 2G_0/n \to \tau = G_0` (add/remove) or
:math:`2G_0` (replace). For :math:`\|x\| \le r`: :math:`G_0 = L r`, :math:`G_1 = \beta r^2`.

* (9) :math:`t(\Lambda) = \bigl(1 - \sqrt{1 - 4\alpha r\tau/\Lambda}\bigr)/(2\alpha r)`
  (:func:`parameter_change_bound`, Prop 5.4 / Cor 3.1);
* (C1) :math:`\mathrm{eig} + \lambda/\rho \ge 2\alpha r\tau/(\rho(1-\rho)) + G_1/\rho`
  (:func:`condition_c1`);
* (10) :math:`R(\mathrm{eig}) = \max\bigl(0, \mathrm{eig}\,[1 - \varphi(r\,t(\mathrm{eig}+\lambda))]_+ - G_1\bigr)`,
  0 where (C1) fails (:func:`qsc_lambda_min_recursion`, Cor 5.2);
* (12) the increasing recursion for :math:`\lambda_{\max}` (:func:`qsc_lambda_max_recursion`);
* Cor 6.2 for generic smooth losses (:func:`smooth_lambda_min_recursion`);
* Alg 6 / Prop 6.1 (and Alg 4's upper form): :func:`recursive_release`; Alg 2 + Alg 4:
  :func:`private_eigen_bounds`;
* (3b), (11) and the ratio certificate (26): :func:`directional_sensitivity`,
  :func:`local_modulus`, :func:`modulus_ratio_bound` (non-private analysis quantities).

A recursion only needs to be **monotone** (nondecreasing) for Prop 6.1: if
:math:`\lambda(D') \ge R(\lambda(D))` for every ordered neighbouring pair, then
:math:`R^k(\lambda(D')) \ge R^{k+1}(\lambda(D))` and the lengths differ by at most one;
the acceleration property of Lemma 6.1 is not needed (and fails for (10) when
:math:`\lambda > 0`, see the chapter's errata).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg

from ._solver import _check_data, _check_loss, _check_norm_bound, _grad_scale, _hessian, _solve
from ._validation import as_finite_array, as_generator, check_nonnegative, check_positive, check_probability
from .losses import GLMLoss, Huber, Logistic, RobustLog, Squared
from .objpert import erm_fit_nonprivate

__all__ = [
    "StabilityConstants",
    "stability_constants",
    "qsc_phi",
    "qsc_alpha",
    "condition_c1",
    "parameter_change_bound",
    "smooth_parameter_change_bound",
    "Recursion",
    "qsc_lambda_min_recursion",
    "qsc_lambda_max_recursion",
    "smooth_lambda_min_recursion",
    "recursion_from_function",
    "RecursiveRelease",
    "recursive_release",
    "EigenBounds",
    "private_eigen_bounds",
    "directional_sensitivity",
    "local_modulus",
    "modulus_ratio_bound",
    "modulus_ratio_bound_as_printed",
    "modulus_perturbation_bound",
]

_PHIS = ("exp", "tight")
_MAX_STEPS = 10**8  # backward-sequence length cap (0.8 GB of float64)
_NEIGHBOURS = ("add_remove", "replace")
_DOMAINS = ("l2", "linf")


def _check_option(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}; got {value!r}")
    return value


def _check_rho(rho: Any) -> float:
    rho = float(as_finite_array(rho, "rho"))
    if not 0.5 <= rho < 1.0:
        raise ValueError(f"rho must lie in [1/2, 1); got {rho!r}")
    return rho


def _check_eps_delta(eps: Any, delta: Any) -> tuple[float, float]:
    eps = float(check_positive(eps, "eps"))
    delta = float(check_probability(delta, "delta"))
    return eps, delta


# ====================================================================== self-concordance
def qsc_phi(loss: str | GLMLoss, s: ArrayLike, *, phi: str = "exp") -> np.ndarray:
    r"""The quasi-self-concordance function :math:`\varphi(s)` of (5a), :math:`s \ge 0`.

    ``phi="exp"``: :math:`\varphi(s) = e^{cs} - 1` with :math:`c` = ``loss.self_concordance``
    (Lemma 2.1(i): :math:`|f'''| \le c f''` gives :math:`e^{-c|s|}f''(t) \le f''(t+s) \le
    e^{c|s|}f''(t)`). ``phi="tight"``: the smallest :math:`\varphi` with
    :math:`f''(t)[1-\varphi(|s|)]_+ \le f''(t+s) \le f''(t)(1+\varphi(|s|))` for all
    :math:`t`, from the definition: for the logistic and robust log losses
    (:math:`f'' \propto \cosh^{-2}(u/2)`) the supremum of :math:`f''(t+s)/f''(t)` is
    :math:`e^{s}` (approached as :math:`t \to \mp\infty`), so "tight" equals "exp"; for the
    pseudo-Huber loss (:math:`f'' = q^{-3}`, :math:`q = \sqrt{1+(r/\delta)^2}`) the supremum
    is attained where :math:`uv = 1` and equals :math:`m^3` with
    :math:`m = (s/\delta + \sqrt{s^2/\delta^2 + 4})/2`; for the squared loss :math:`\varphi = 0`.

    Parameters
    ----------
    loss : str or GLMLoss
        The loss (its ``self_concordance`` :math:`c` for "exp").
    s : array_like
        Arguments :math:`s \ge 0`.
    phi : {"exp", "tight"}
        Which :math:`\varphi`.

    Returns an array shaped like ``s``.
    """
    loss = _check_loss(loss)
    phi = _check_option(phi, "phi", _PHIS)
    s = check_nonnegative(s, "s")
    c = float(loss.self_concordance)
    if phi == "exp":
        if not math.isfinite(c):
            raise ValueError(f"loss {loss.name!r} has no finite self_concordance constant; phi='exp' needs one")
        return np.expm1(c * s)
    if isinstance(loss, (Logistic, RobustLog)):
        return np.expm1(s)
    if isinstance(loss, Squared):
        return np.zeros_like(s)
    if isinstance(loss, Huber):
        v = s / loss.scale
        m = 0.5 * (v + np.sqrt(v * v + 4.0))
        return m**3 - 1.0
    raise ValueError(f"phi='tight' is implemented for the logistic, robust_log, huber and squared losses, not {loss.name!r}; use phi='exp'")


def qsc_alpha(loss: str | GLMLoss, *, rho: float = 0.5, phi: str = "exp") -> float:
    r"""The smallest :math:`\alpha` of (8): :math:`\varphi(t) \le \alpha t` for :math:`t \le (1-\rho)/\alpha`.

    Every implemented :math:`\varphi` is convex with :math:`\varphi(0) = 0`, so
    :math:`\varphi(t)/t` is nondecreasing and (8) holds iff
    :math:`\varphi((1-\rho)/\alpha) \le 1 - \rho`: :math:`\alpha = (1-\rho)/\varphi^{-1}(1-\rho)`.
    For "exp": :math:`\alpha = c(1-\rho)/\log(2-\rho)` (:math:`c = 1`, :math:`\rho = 1/2`:
    1.2332, the source's value below (8)).

    Parameters
    ----------
    loss : str or GLMLoss
    rho : float
        :math:`\rho \in [1/2, 1)`.
    phi : {"exp", "tight"}

    Returns
    -------
    float
        The smallest :math:`\alpha \ge 0` satisfying (8).
    """
    loss = _check_loss(loss)
    rho = _check_rho(rho)
    phi = _check_option(phi, "phi", _PHIS)
    c = float(loss.self_concordance)
    if phi == "exp" or isinstance(loss, (Logistic, RobustLog)):
        if phi == "exp" and not math.isfinite(c):
            raise ValueError(f"loss {loss.name!r} has no finite self_concordance constant")
        c = c if phi == "exp" else 1.0
        return c * (1.0 - rho) / math.log(2.0 - rho)
    if isinstance(loss, Squared):
        return 0.0
    if isinstance(loss, Huber):
        m = (2.0 - rho) ** (1.0 / 3.0)
        return (1.0 - rho) / (loss.scale * (m - 1.0 / m))
    qsc_phi(loss, 0.0, phi=phi)  # raises the informative error
    raise AssertionError("unreachable")  # pragma: no cover


# ====================================================================== constants
@dataclass(frozen=True)
class StabilityConstants:
    r"""Constants of the stability analysis (frozen; :func:`stability_constants`).

    ``G0 = L·r`` (gradient bound), ``G1 = β·r²`` (per-example Hessian bound),
    ``tau`` = :math:`\sup\|\nabla J(\theta;D) - \nabla J(\theta;D')\|` = ``G0``
    (add/remove) or ``2·G0`` (replace), ``alpha`` from (8).

    Attributes
    ----------
    loss : GLMLoss
        The GLM loss.
    norm_bound : float
        Public bound r on the row norms.
    lam : float
        Ridge coefficient λ ≥ 0 of the objective.
    rho : float
        The constant ρ ∈ [1/2, 1) of condition (C1).
    phi : str
        Name of the q.s.c. function φ (``"exp"`` or ``"tight"``).
    neighbours : str
        ``"add_remove"`` or ``"replace"``.
    alpha : float
        The q.s.c. constant α of (8).
    G0 : float
        Gradient bound G₀ = L·r.
    G1 : float
        Per-example Hessian bound G₁ = β·r².
    tau : float
        Neighbour constant τ: G₀ (add/remove) or 2G₀ (replace).
    """

    loss: GLMLoss
    norm_bound: float
    lam: float
    rho: float
    phi: str
    neighbours: str
    alpha: float
    G0: float
    G1: float
    tau: float


def stability_constants(loss: str | GLMLoss, *, norm_bound: float, lam: float = 0.0, rho: float = 0.5,
                        neighbours: str = "add_remove", phi: str = "exp") -> StabilityConstants:
    r"""Collect :math:`\alpha, G_0, G_1, \tau` for a GLM loss on :math:`\|x\| \le r` = ``norm_bound``.

    Raises ``ValueError`` for a loss with unbounded gradient (``lipschitz`` infinite, e.g.
    the squared loss), ``lam < 0``, :math:`\rho \notin [1/2, 1)` (for :math:`\rho < 1/2`
    (C1) does not make (9) real, see the chapter) and unknown option strings.

    Parameters
    ----------
    loss : str or GLMLoss
        A GLM loss with finite ``lipschitz`` and ``smoothness``.
    norm_bound : float
        :math:`r`, a public bound on every row's Euclidean norm.
    lam : float
        Regularization :math:`\lambda \ge 0` of the summed objective.
    rho : float
        :math:`\rho \in [1/2, 1)` of (8) and (C1).
    neighbours : {"add_remove", "replace"}
    phi : {"exp", "tight"}
        The q.s.c. function (:func:`qsc_phi`).

    Returns
    -------
    StabilityConstants
    """
    loss = _check_loss(loss)
    r = float(check_positive(norm_bound, "norm_bound"))
    lam = float(check_nonnegative(lam, "lam"))
    rho = _check_rho(rho)
    neighbours = _check_option(neighbours, "neighbours", _NEIGHBOURS)
    phi = _check_option(phi, "phi", _PHIS)
    if not math.isfinite(loss.lipschitz):
        raise ValueError(f"loss {loss.name!r} has an unbounded gradient (lipschitz = inf); the stability bounds need a Lipschitz loss")
    if not math.isfinite(loss.smoothness):
        raise ValueError(f"loss {loss.name!r} has an unbounded second derivative (smoothness = inf)")
    alpha = qsc_alpha(loss, rho=rho, phi=phi)
    G0 = float(loss.lipschitz) * r
    G1 = float(loss.smoothness) * r * r
    tau = G0 if neighbours == "add_remove" else 2.0 * G0
    return StabilityConstants(loss=loss, norm_bound=r, lam=lam, rho=rho, phi=phi, neighbours=neighbours,
                              alpha=alpha, G0=G0, G1=G1, tau=tau)


def _check_consts(consts: Any) -> StabilityConstants:
    if not isinstance(consts, StabilityConstants):
        raise TypeError(f"consts must be a StabilityConstants (from stability_constants); got {type(consts).__name__}")
    return consts


def _c1_threshold(consts: StabilityConstants) -> float:
    """The smallest eig satisfying (C1)."""
    a, r, rho = consts.alpha, consts.norm_bound, consts.rho
    return 2.0 * a * r * consts.tau / (rho * (1.0 - rho)) + consts.G1 / rho - consts.lam / rho


def condition_c1(eig_min: ArrayLike, consts: StabilityConstants) -> np.ndarray:
    r"""Condition (C1) in our convention: :math:`\mathrm{eig} + \lambda/\rho \ge 2\alpha r\tau/(\rho(1-\rho)) + G_1/\rho`.

    Source (C1) with :math:`n\lambda_{\min}(P_n) \to \mathrm{eig}`, :math:`4G_0/n \to 2\tau`,
    :math:`G_1/n \to G_1`. Vectorized; returns a boolean array.

    Parameters
    ----------
    eig_min : array_like
        Smallest eigenvalue(s) of the summed data Hessian (no :math:`\lambda`).
    consts : StabilityConstants
    """
    consts = _check_consts(consts)
    e = as_finite_array(eig_min, "eig_min")
    return e >= _c1_threshold(consts)


def _t_of_Lambda(Lam: np.ndarray, consts: StabilityConstants) -> np.ndarray:
    """(9) in the rationalized form 2τ/(Λ(1+√(1−4αrτ/Λ))) (stable, and right for α = 0)."""
    x = 4.0 * consts.alpha * consts.norm_bound * consts.tau / Lam
    return 2.0 * consts.tau / (Lam * (1.0 + np.sqrt(1.0 - x)))


def parameter_change_bound(eig_min: ArrayLike, consts: StabilityConstants) -> np.ndarray:
    r"""The parameter change bound :math:`t(\mathrm{eig} + \lambda)` of (9); ``inf`` where (C1) fails.

    Prop 5.4 / Cor 3.1 in our convention: for every neighbour :math:`D'` of a data set with
    smallest data-Hessian eigenvalue :math:`\ge` ``eig_min`` satisfying (C1),
    :math:`\|\theta(D) - \theta(D')\| \le t(\mathrm{eig}_{\min} + \lambda)`,
    :math:`t(\Lambda) = (1 - \sqrt{1 - 4\alpha r\tau/\Lambda})/(2\alpha r)`.
    Vectorized.

    Parameters
    ----------
    eig_min : array_like
        (Lower bounds on) the smallest data-Hessian eigenvalue.
    consts : StabilityConstants

    Returns
    -------
    ndarray
        :math:`t`, ``inf`` where (C1) fails.
    """
    consts = _check_consts(consts)
    e = as_finite_array(eig_min, "eig_min")
    ok = condition_c1(e, consts)
    out = np.full(e.shape, np.inf)
    if np.any(ok):
        out[ok] = _t_of_Lambda(e[ok] + consts.lam, consts)
    return out


def _smooth_constants(G0: Any, G2: Any, lam: Any, n_max: Any, neighbours: Any) -> tuple[float, float, float, float]:
    """Checked (G0, summed G2 = n_max·G2, lam, tau) of the smooth (non-q.s.c.) analysis, §6.2 / Props 5.1–5.2."""
    G0 = float(check_positive(G0, "G0"))
    G2 = float(check_nonnegative(G2, "G2")) * float(check_positive(n_max, "n_max"))
    lam = float(check_nonnegative(lam, "lam"))
    neighbours = _check_option(neighbours, "neighbours", _NEIGHBOURS)
    return G0, G2, lam, (G0 if neighbours == "add_remove" else 2.0 * G0)


def smooth_parameter_change_bound(eig_min: ArrayLike, *, G0: float, G2: float, n_max: float, lam: float = 0.0,
                                  neighbours: str = "add_remove") -> np.ndarray:
    r"""Prop 5.2 (with Prop 5.1's existence condition) for generic smooth losses, our convention.

    :math:`\|\theta(D) - \theta(D')\| \le (\Lambda - \sqrt{\Lambda^2 - 4G_2^{\Sigma}\tau})/(2G_2^{\Sigma})`,
    :math:`\Lambda = \mathrm{eig} + \lambda`, :math:`\tau = G_0` or :math:`2G_0`;
    ``inf`` where (C2) :math:`\Lambda \ge \max(3G_1, \sqrt{6 G_2^{\Sigma}\tau})` — here in the form
    :math:`\Lambda^2 \ge 4G_2^\Sigma\tau` needed for a real root — fails.

    :math:`G_2^{\Sigma} = n_{\max} G_2` is the Lipschitz constant of the **summed** data
    Hessian: the source's averaged :math:`G_2` (per example, e.g. ``d3_bound``·r³) becomes
    :math:`nG_2` when the losses are summed, and under add/remove :math:`n` is private, so
    ``n_max`` — a public upper bound on the number of examples — is required (pass
    ``n_max=1`` with the summed constant as ``G2`` if that is what you have).

    Parameters
    ----------
    G0 : float
        Lipschitz constant G₀ of the loss in θ (a bound on the per-record gradient norm).
    n_max : float
        Public upper bound on the number of records (n itself is private under add/remove).
    lam : float, default 0.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    neighbours : str, default 'add_remove'
        ``"add/remove"`` or ``"replace"``: the neighbour relation of the guarantee (it sets τ = G₀ or 2G₀).
    eig_min : array_like
        A lower bound on λ_min of the data Hessian (without λ).
    G2 : float
        Lipschitz constant G₂ of a single example's Hessian in θ.
    """
    e = as_finite_array(eig_min, "eig_min")
    G0, G2, lam, tau = _smooth_constants(G0, G2, lam, n_max, neighbours)
    Lam = e + lam
    with np.errstate(invalid="ignore", divide="ignore"):
        disc = Lam * Lam - 4.0 * G2 * tau
        ok = (Lam > 0) & (disc >= 0)
        out = np.full(e.shape, np.inf)
        # rationalized root 2τ/(Λ + √disc)
        out[ok] = 2.0 * tau / (Lam[ok] + np.sqrt(disc[ok]))
    return out


# ====================================================================== recursions
class Recursion:
    r"""A monotone recursion :math:`R` for the recursive release of §6 (Alg 6, Prop 6.1).

    ``kind="decreasing"``: :math:`R(x) \le x`, floored at ``limit`` (the set's infimum,
    usually 0); length :math:`N(x) = \min\{N \ge 0 : R^N(x) \le \text{limit}\}`, inverse
    :math:`(R^m)^{-1}(\text{limit}) = \sup\{x : R^m(x) \le \text{limit}\}`.
    ``kind="increasing"``: :math:`R(x) \ge x`, capped at ``limit`` (Alg 4's form); length
    :math:`\min\{N : R^N(x) \ge \text{limit}\}`, inverse
    :math:`\inf\{x \ge \text{lower}: R^m(x) \ge \text{limit}\}`.

    ``R`` must be nondecreasing (that, and the one-step bound, is all Prop 6.1 needs).
    ``__call__`` is vectorized. ``length`` is exact and ``inverse`` conservative (never above
    the exact value for a decreasing recursion, never below for an increasing one; within
    :math:`10^{-9}` relative). Both use the backward sequence :math:`b_0 = \text{limit}`,
    :math:`b_j = R^{-1}(b_{j-1})` — :math:`N(x) = \min\{j : x \le b_j\}`,
    :math:`(R^m)^{-1} = b_m` — computed once and cached: a few exact scalar inversions near
    the limit, then blocks of :math:`B` steps solved together by Newton's method on the
    system :math:`R(b_j) = b_{j-1}`, whose Jacobian is bidiagonal, so each Newton step is a
    first-order linear recurrence solved with cumulative sums (vectorized over the block).

    Parameters
    ----------
    fn : Callable[[numpy.ndarray], numpy.ndarray]
        The vectorized nondecreasing map R.
    kind : str, default 'decreasing'
        ``"decreasing"`` (R(x) ≤ x, toward ``limit`` from above) or ``"increasing"`` (R(x) ≥ x, toward ``limit`` from below).
    limit : float, default 0.0
        The floor (decreasing) or cap (increasing) the recursion reaches.
    lower : float, default 0.0
        Lower end of the domain of an increasing recursion.
    description : str, default ''
        A short text for the repr.
    """

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray], *, kind: str = "decreasing", limit: float = 0.0,
                 lower: float = 0.0, description: str = "") -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable; got {type(fn).__name__}")
        self.kind = _check_option(kind, "kind", ("decreasing", "increasing"))
        self.limit = float(as_finite_array(limit, "limit"))
        self.lower = float(as_finite_array(lower, "lower"))
        if self.kind == "increasing" and self.lower > self.limit:
            raise ValueError(f"lower must be <= limit for an increasing recursion; got lower={lower}, limit={limit}")
        self._fn = fn
        self.description = description
        # decreasing view: g(y) = R(y) (decreasing) or -R(-y) (increasing), limit L, upper end hi
        if self.kind == "decreasing":
            self._L, self._hi = self.limit, math.inf
        else:
            self._L, self._hi = -self.limit, -self.lower
        self._b = np.array([self._L])
        self._done = False  # True once b reached hi (every larger start has the last length)

    def __repr__(self) -> str:
        return f"<Recursion {self.kind}, limit={self.limit:g}{': ' + self.description if self.description else ''}>"

    # -- evaluation
    def __call__(self, x: ArrayLike) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            v = np.array(self._fn(x), dtype=float)
        if self.kind == "decreasing":  # fmin/fmax also send NaN to the limit side
            np.fmin(v, x, out=v)
            return np.fmax(v, self.limit, out=v)
        np.fmax(v, x, out=v)
        return np.fmin(v, self.limit, out=v)

    def _g(self, y: np.ndarray) -> np.ndarray:
        if self.kind == "decreasing":
            return self(y)
        return -self(-y)

    # -- the backward sequence
    def _rinv_scalar(self, yv: float, step: float) -> float:
        """sup{x in [yv, hi] : g(x) <= yv} by bracketing and grid bisection (exact to a few ulp)."""
        lo = yv
        hi_lim = self._hi
        step = max(step, 1e-12 * max(1.0, abs(yv)))
        hi = yv + step
        while True:
            if hi >= hi_lim:
                hi = hi_lim
                if float(self._g(np.array([hi]))[0]) <= yv:
                    return hi
                break
            if float(self._g(np.array([hi]))[0]) > yv:
                break
            lo = hi
            step *= 2.0
            hi = yv + step
            if step > 1e300:
                raise ValueError("the recursion does not move: R(x) > limit-side fixed point; its length is infinite")
        for _ in range(40):
            if not hi - lo > 4.0 * np.spacing(max(abs(lo), abs(hi))):
                break
            grid = np.linspace(lo, hi, 65)
            gv = self._g(grid)
            ok = np.nonzero(gv <= yv)[0]
            i = int(ok[-1]) if ok.size else 0
            lo, hi = grid[i], grid[min(i + 1, 64)]
        return float(lo)

    def _newton_block(self, b2: float, b1: float, B: int, incs: np.ndarray) -> np.ndarray | None:
        j = np.arange(1, B + 1, dtype=float)
        inc = b1 - b2
        slope = float(incs[-1] - incs[0]) / max(len(incs) - 1, 1) if len(incs) > 2 else 0.0
        x = b1 + j * inc + 0.5 * j * (j + 1) * slope
        Q = None
        eps16 = 16.0 * np.finfo(float).eps
        for _ in range(30):
            if not (np.isfinite(x[-1]) and x[-1] < self._hi and x[0] > b1):
                return None
            gx = self._g(x)
            res = gx.copy()  # residuals of g(b_j) = b_{j-1}
            res[0] -= b1
            res[1:] -= x[:-1]
            if float(np.max(np.abs(res))) <= eps16 * max(abs(float(x[-1])), abs(b1)) + 1e-300:
                if np.all(np.diff(x) > 0) and b1 > self._L:
                    return x
                return None
            # secant slopes of g between consecutive points (left end: g(b1), computed once);
            # the slopes of the first iterate are kept (a chord method: the guess is close)
            if Q is None:
                g_b1 = float(self._g(np.array([b1]))[0])
                dg = np.empty_like(x)
                dg[0] = gx[0] - g_b1
                np.subtract(gx[1:], gx[:-1], out=dg[1:])
                dx = np.empty_like(x)
                dx[0] = x[0] - b1
                np.subtract(x[1:], x[:-1], out=dx[1:])
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    D = np.divide(dg, dx, out=dg)
                    if not (np.all(D > 0) and np.all(np.isfinite(D))):
                        return None
                    # Newton: D_i delta_i - delta_{i-1} = -res_i, so Q_i delta_i = -sum_k Q_{k-1} res_k
                    Q = np.cumprod(D, out=D)
                if not (np.isfinite(Q[-1]) and 1e-250 < Q.min() and Q.max() < 1e250):
                    return None
            with np.errstate(over="ignore", invalid="ignore"):
                res[1:] *= Q[:-1]
                delta = np.cumsum(res, out=res)
                delta /= Q
            x -= delta
        return None

    def _extend(self, *, index: int | None = None, value: float | None = None) -> None:
        """Grow the backward sequence until len > index or b[-1] >= value (or b reaches hi)."""
        b = [self._b]
        last = self._b[-2:] if self._b.size >= 2 else self._b
        n_have = self._b.size
        B = 32
        tail = list(self._b[-8:])

        def need() -> bool:
            if self._done:
                return False
            if index is not None and n_have <= index:
                return True
            if value is not None and tail[-1] < value:
                return True
            return False

        while need():
            if n_have > _MAX_STEPS:
                raise ValueError(f"the recursion needs more than {_MAX_STEPS:.0e} steps here; "
                                 "its step is too small relative to the start (rescale the statistic)")
            cur = tail[-1]
            if cur >= self._hi:
                self._done = True
                break
            blk = None
            if len(tail) >= 3 and cur > self._L and tail[-2] > self._L:
                incs = np.diff(np.asarray(tail[-8:]))
                blk = self._newton_block(tail[-2], cur, B, incs)
            if blk is not None:
                b.append(blk)
                n_have += blk.size
                tail = (tail + list(blk[-8:]))[-8:]
                B = min(2 * B, 1 << 18)
                continue
            B = max(B // 2, 32)
            step = (tail[-1] - tail[-2]) * 2.0 if len(tail) >= 2 and tail[-1] > tail[-2] else 1.0
            nxt = self._rinv_scalar(cur, step)
            if nxt <= cur:
                if nxt >= self._hi:
                    self._done = True
                    break
                raise ValueError("the recursion has a fixed point above its limit; its length is infinite")
            b.append(np.array([nxt]))
            n_have += 1
            tail = (tail + [nxt])[-8:]
            if nxt >= self._hi:
                self._done = True
        del last
        self._b = np.concatenate(b)

    # -- public
    def length(self, start: ArrayLike) -> Any:
        r"""The exact length :math:`N(x)`: the number of steps until the limit is reached.

        Scalar in, ``int`` out (an array of ints for an array). For a decreasing recursion
        :math:`N(x) = \min\{N \ge 0 : R^N(x) \le \text{limit}\}`; increasing:
        :math:`\min\{N : R^N(x) \ge \text{limit}\}`.

        Parameters
        ----------
        start : array_like
            Starting point(s) x.
        """
        s = as_finite_array(start, "start")
        y = s if self.kind == "decreasing" else -s
        top = float(np.max(y)) if y.size else self._L
        self._extend(value=top)
        if self._b[-1] < top:
            raise ValueError("the recursion never reaches its limit from this start (length infinite)")
        out = np.searchsorted(self._b, y, side="left")
        if out.ndim == 0:
            return int(out)
        return out.astype(np.int64)

    def inverse(self, m: ArrayLike) -> np.ndarray:
        r"""The inverse :math:`(R^m)^{-1}(\text{limit})`, vectorized over integer ``m`` ≥ 0.

        Conservative: for a decreasing recursion never above the exact
        :math:`\sup\{x : R^m(x) \le \text{limit}\}`, for an increasing one never below the
        exact :math:`\inf\{x \ge \text{lower} : R^m(x) \ge \text{limit}\}`; within
        :math:`10^{-9}` (relative to :math:`\max(1, |x|)`).

        Parameters
        ----------
        m : array_like
            Number(s) of steps m ≥ 0.
        """
        m_arr = np.asarray(m)
        if m_arr.dtype.kind not in "iu":
            if m_arr.dtype.kind != "f" or not np.all(np.isfinite(m_arr)) or np.any(m_arr != np.floor(m_arr)):
                raise ValueError("m must be a non-negative integer (array)")
        m_arr = m_arr.astype(np.int64)
        if np.any(m_arr < 0):
            raise ValueError(f"m must be >= 0; got {m!r}")
        top = int(m_arr.max()) if m_arr.size else 0
        self._extend(index=top)
        idx = np.minimum(m_arr, self._b.size - 1)
        b = self._b[idx]
        b = np.where(idx > 0, b - 1e-11 * np.maximum(1.0, np.abs(b)), b)
        out = b if self.kind == "decreasing" else -b
        if self.kind == "increasing":
            out = np.maximum(out, self.lower)
        else:
            out = np.maximum(out, self.limit)
        return out if out.ndim else float(out)


def qsc_lambda_min_recursion(consts: StabilityConstants) -> Recursion:
    r"""Recursion (10) for the smallest data-Hessian eigenvalue of a quasi-self-concordant GLM (Cor 5.2).

    :math:`R(\mathrm{eig}) = \max\bigl(0,\ \mathrm{eig}\,[1 - \varphi(r\,t(\mathrm{eig}+\lambda))]_+ - G_1\bigr)`
    where (C1) holds at ``eig``, else 0. By Cor 5.2 (Weyl after the
    Hessian sandwich :math:`[1-\varphi(rt)]_+ H(\theta) - G_1 I \preceq H'(\theta')`),
    :math:`\mathrm{eig}_{\min}(D') \ge R(\mathrm{eig}_{\min}(D))` for every neighbour;
    :math:`R` is nondecreasing, so Prop 6.1 applies.

    Parameters
    ----------
    consts : StabilityConstants
        The constants of :func:`stability_constants`.
    """
    consts = _check_consts(consts)
    thr = _c1_threshold(consts)
    loss, phi, r, G1, lam = consts.loss, consts.phi, consts.norm_bound, consts.G1, consts.lam

    c_exp = float(loss.self_concordance) * r if phi == "exp" else None

    def _one_minus_phi(t: np.ndarray) -> np.ndarray:
        if c_exp is not None:  # 1 - (e^{c r t} - 1), without the argument checks
            return 2.0 - np.exp(c_exp * t)
        return 1.0 - qsc_phi(loss, r * t, phi=phi)

    def fn(e: np.ndarray) -> np.ndarray:
        e = np.asarray(e, dtype=float)
        if e.size and e.min() >= thr:  # the common case: (C1) holds everywhere
            t = _t_of_Lambda(e + lam, consts)
            v = e * np.maximum(0.0, _one_minus_phi(t)) - G1
            return np.maximum(v, 0.0, out=v) if isinstance(v, np.ndarray) else np.maximum(v, 0.0)
        ok = e >= thr
        out = np.zeros(e.shape)
        if np.any(ok):
            eo = e[ok]
            t = _t_of_Lambda(eo + lam, consts)
            out[ok] = np.maximum(0.0, eo * np.maximum(0.0, _one_minus_phi(t)) - G1)
        return out

    return Recursion(fn, kind="decreasing", limit=0.0, description="(10), lambda_min of a q.s.c. GLM")


def qsc_lambda_max_recursion(consts: StabilityConstants, eig_min_cert: float, *, cap: float) -> Recursion:
    r"""Recursion (12) for the largest data-Hessian eigenvalue (Alg 4), increasing, capped at ``cap``.

    :math:`R(\mathrm{eig}) = \min\bigl(\mathrm{eig}\,(1 + \varphi(r\,t(\hat\lambda_{\min} + \lambda))) + G_1,\ \text{cap}\bigr)`,
    ``cap`` a **public** bound on :math:`\lambda_{\max}` of every data set (the source's
    :math:`G_1`, i.e. :math:`nG_1` summed — but :math:`n` is private under add/remove).
    Valid when ``eig_min_cert`` :math:`\le \mathrm{eig}_{\min}(D)` and (C1) holds there; where
    (C1) fails at ``eig_min_cert`` the recursion is the constant ``cap`` (no information).
    Both directions of the one-step bound follow from :math:`\|\theta - \theta'\| \le
    t(\Lambda(D))`: :math:`H'(\theta') \preceq (1+\varphi)H(\theta) + G_1` and
    :math:`H(\theta) \preceq H'(\theta) + G_1 \preceq (1+\varphi)H'(\theta') + G_1`.

    Parameters
    ----------
    consts : StabilityConstants
        The constants of :func:`stability_constants`.
    eig_min_cert : float
        A certified lower bound on λ_min of the data Hessian (from Alg 2).
    cap : float
        Public upper bound on λ_max of every data set's Hessian.
    """
    consts = _check_consts(consts)
    e0 = float(as_finite_array(eig_min_cert, "eig_min_cert"))
    cap = float(check_positive(cap, "cap"))
    t = float(parameter_change_bound(e0, consts)) if e0 >= 0 else math.inf
    G1 = consts.G1
    if math.isfinite(t):
        q = 1.0 + float(qsc_phi(consts.loss, consts.norm_bound * t, phi=consts.phi))

        def fn(e: np.ndarray) -> np.ndarray:
            return np.minimum(np.asarray(e, dtype=float) * q + G1, cap)
    else:
        def fn(e: np.ndarray) -> np.ndarray:
            return np.full(np.shape(e), cap)

    return Recursion(fn, kind="increasing", limit=cap, lower=0.0, description="(12), lambda_max of a q.s.c. GLM")


def smooth_lambda_min_recursion(*, G0: float, G1: float, G2: float, n_max: float, lam: float = 0.0,
                                neighbours: str = "add_remove") -> Recursion:
    r"""Cor 6.2 (from Cor 5.1) for generic smooth losses, on the data-eigenvalue scale.

    :math:`R(\mathrm{eig}) = \max\bigl(\tfrac{\Lambda}{2}[1 + \sqrt{1 - 4G_2^\Sigma\tau/\Lambda^2}] - G_1 - \lambda,\ 0\bigr)`,
    :math:`\Lambda = \mathrm{eig} + \lambda`, with :math:`\sqrt{x} = -\infty` for :math:`x < 0`
    (then :math:`R = 0`), :math:`G_2^\Sigma = n_{\max}G_2`: ``G2`` and the required ``n_max``
    as in :func:`smooth_parameter_change_bound`.
    Nondecreasing, so Prop 6.1 applies.

    Parameters
    ----------
    G0 : float
        Lipschitz constant G₀ of the loss in θ (a bound on the per-record gradient norm).
    n_max : float
        Public upper bound on the number of records (n itself is private under add/remove).
    lam : float, default 0.0
        Ridge coefficient λ > 0 of the objective: (λ/2)‖θ‖² is added to the summed losses.
    neighbours : str, default 'add_remove'
        ``"add/remove"`` or ``"replace"``: the neighbour relation of the guarantee (it sets τ = G₀ or 2G₀).
    G1 : float
        Per-example Hessian bound G₁ = β·r².
    G2 : float
        Lipschitz constant G₂ of a single example's Hessian in θ.
    """
    G1 = float(check_nonnegative(G1, "G1"))
    G0, G2, lam, tau = _smooth_constants(G0, G2, lam, n_max, neighbours)
    a = 4.0 * G2 * tau

    def fn(e: np.ndarray) -> np.ndarray:
        e = np.asarray(e, dtype=float)
        Lam = e + lam
        out = np.zeros(e.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            disc = Lam * Lam - a
            ok = (Lam > 0) & (disc >= 0)
            out[ok] = np.maximum(0.5 * (Lam[ok] + np.sqrt(disc[ok])) - G1 - lam, 0.0)
        return out

    return Recursion(fn, kind="decreasing", limit=0.0, description="Cor 6.2, generic smooth loss")


def recursion_from_function(fn: Callable[[np.ndarray], np.ndarray], *, floor: float | None = None,
                            cap: float | None = None) -> Recursion:
    r"""Wrap a vectorized nondecreasing ``fn`` as a :class:`Recursion`.

    Exactly one of ``floor`` (a decreasing recursion toward ``floor``, :math:`R(x) \le x`) or
    ``cap`` (an increasing one toward ``cap``, lower end 0) must be given.

    Parameters
    ----------
    fn : Callable[[numpy.ndarray], numpy.ndarray]
        The vectorized nondecreasing map R.
    floor : float, optional
        Floor of a decreasing recursion (give this or ``cap``).
    cap : float, optional
        Cap of an increasing recursion (give this or ``floor``).
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    if (floor is None) == (cap is None):
        raise ValueError("give exactly one of floor (decreasing recursion) or cap (increasing recursion)")
    if floor is not None:
        return Recursion(fn, kind="decreasing", limit=float(as_finite_array(floor, "floor")))
    return Recursion(fn, kind="increasing", limit=float(as_finite_array(cap, "cap")), lower=min(0.0, float(cap)))


# ====================================================================== Alg 6 / Prop 6.1
@dataclass(frozen=True)
class RecursiveRelease:
    r"""Output of :func:`recursive_release`: the private length ``n_hat`` and ``bound``.

    ``bound`` :math:`\le` the statistic (decreasing recursion) or :math:`\ge` it
    (increasing) with probability :math:`\ge 1 - \delta`; ``k`` = :math:`\log(1/2\delta)/\varepsilon`.
    Both ``n_hat`` and ``bound`` are :math:`\varepsilon`-DP (pure).

    Attributes
    ----------
    n_hat : Any
        The private length N̂ (ε-DP).
    bound : Any
        The certified bound on the statistic derived from ``n_hat``.
    eps : float
        ε of the release (pure DP).
    delta : float
        Probability that ``bound`` is on the wrong side of the statistic.
    k : float
        The shift k = log(1/2δ)/ε subtracted from the noisy length.
    """

    n_hat: Any
    bound: Any
    eps: float
    delta: float
    k: float


def recursive_release(value: float, recursion: Recursion, eps: float, delta: float, *, rng: Any = None,
                      size: int | None = None) -> RecursiveRelease:
    r"""Alg 6 / Prop 6.1 (Alg 2, and Alg 4's upper form): a private one-sided bound on ``value``.

    :math:`\hat N = N(\text{value}) + \mathrm{Lap}(1/\varepsilon)`,
    :math:`k = \log(1/2\delta)/\varepsilon`, ``bound`` = ``recursion.inverse``
    :math:`(\max(0, \lfloor\hat N - k\rfloor))`. The floor makes the failure probability
    exactly :math:`P(W \ge \log(1/2\delta)) = \delta` (:math:`W \sim \mathrm{Lap}(1)`); the
    ceiling would give :math:`\delta e^{\varepsilon}`. Alg 4 uses :math:`\hat N` (its
    printed step iii has the non-private :math:`N`). ``size`` repeats the mechanism.

    Parameters
    ----------
    value : float
        The statistic :math:`\lambda(D)` (non-private input).
    recursion : Recursion
        A nondecreasing recursion with :math:`\lambda(D') \ge R(\lambda(D))` (decreasing kind)
        or :math:`\lambda(D') \le R(\lambda(D))` (increasing kind) for every ordered pair of
        neighbours — Prop 6.1's only requirement.
    eps, delta : float
        :math:`\varepsilon > 0` (pure DP) and the failure probability :math:`\delta \in (0, 1)`.
    rng : int, Generator or None
    size : int or None
        Number of independent repetitions (arrays out).

    Returns
    -------
    RecursiveRelease
    """
    if not isinstance(recursion, Recursion):
        raise TypeError(f"recursion must be a Recursion; got {type(recursion).__name__}")
    value = float(as_finite_array(value, "value"))
    eps, delta = _check_eps_delta(eps, delta)
    if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1):
        raise ValueError(f"size must be None or a positive integer; got {size!r}")
    gen = as_generator(rng)
    N = recursion.length(value)
    k = math.log(1.0 / (2.0 * delta)) / eps
    n_hat = N + gen.laplace(0.0, 1.0 / eps, size=size)
    m = np.maximum(0, np.floor(np.asarray(n_hat) - k)).astype(np.int64)
    bound = recursion.inverse(m)
    if size is None:
        return RecursiveRelease(float(n_hat), float(bound), eps, delta, k)
    return RecursiveRelease(np.asarray(n_hat, dtype=float), np.asarray(bound, dtype=float), eps, delta, k)


# ====================================================================== Alg 2 + Alg 4
@dataclass(frozen=True)
class EigenBounds:
    r"""Private certified bounds on the data Hessian's extreme eigenvalues at :math:`\theta(D)`.

    ``lambda_min`` :math:`\le \lambda_{\min}` and ``lambda_max`` :math:`\ge \lambda_{\max}`
    (of :math:`\sum f'' xx^\top`, no :math:`\lambda`), jointly with probability
    :math:`\ge 1 - \delta`; ``lambda_max`` is NaN when no ``cap`` was given.

    Attributes
    ----------
    lambda_min : Any
        Certified lower bound on λ_min of the data Hessian (without λ).
    lambda_max : Any
        Certified upper bound on λ_max (NaN when no ``cap`` was given).
    """

    lambda_min: Any
    lambda_max: Any


def fit_and_hessian(X: np.ndarray, y: np.ndarray, loss: GLMLoss, lam: float) -> tuple[np.ndarray, np.ndarray]:
    if lam > 0:
        theta = erm_fit_nonprivate(X, y, loss, lam=lam)
    else:
        theta, *_ = _solve(X, y, loss, 0.0, np.zeros(X.shape[1]), 1e-10 * _grad_scale(X, y, loss), 200, "auto",
                           want_hessian=False, certify=False)
    w = loss.d2(X @ theta, y)
    H = _hessian(X, np.asarray(w, dtype=float), 0.0)
    H = np.triu(H) + np.triu(H, 1).T
    return theta, H


def private_eigen_bounds(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, eps: float, delta: float, *, lam: float,
                         norm_bound: float, cap: float | None = None, rng: Any = None,
                         size: int | None = None) -> EigenBounds:
    r"""Alg 2 (private lower bound on :math:`\lambda_{\min}`) and, with ``cap``, Alg 4.

    Fits :math:`\theta(D)` (non-privately), forms the data Hessian, and runs
    :func:`recursive_release` with recursion (10) at :math:`(\varepsilon, \delta)`; with a public
    ``cap`` on :math:`\lambda_{\max}` the budget is halved: Alg 2 at :math:`(\varepsilon/2,
    \delta/2)`, then Alg 4 with recursion (12) at the certified :math:`\hat\lambda_{\min}` and
    :math:`(\varepsilon/2, \delta/2)`. Privacy: Alg 2 is pure :math:`\varepsilon`-DP
    (Prop 6.1); Alg 4 is pure DP on the good set :math:`\{\hat\lambda_{\min} \le
    \lambda_{\min}\}`, so the pair is :math:`(\varepsilon, \delta/2)`-DP by Lemma 2.2, and both
    bounds hold with probability :math:`\ge 1 - \delta`. Uses (ρ = 1/2, φ = exp, add/remove).

    Raises ``ValueError`` (before any noise) for bad data, rows beyond ``norm_bound``,
    ``eps <= 0``, δ ∉ (0, 1), ``lam < 0``, an unbounded-gradient loss, or ``cap`` below the
    data's :math:`\lambda_{\max}`.

    Parameters
    ----------
    X, y : array_like
        Data (rows of norm at most ``norm_bound``) and labels.
    loss : str or GLMLoss
        A q.s.c. GLM loss with bounded gradient.
    eps, delta : float
        Total budget :math:`\varepsilon > 0`, :math:`\delta \in (0, 1)`.
    lam : float
        Regularization :math:`\lambda \ge 0`.
    norm_bound : float
        Public :math:`r`.
    cap : float or None
        Public upper bound on :math:`\lambda_{\max}` of every data set (then Alg 4 runs).
    rng : int, Generator or None
    size : int or None
        Independent repetitions of the mechanism (one fit).

    Returns
    -------
    EigenBounds
    """
    loss = _check_loss(loss)
    X, y = _check_data(X, y, loss)
    eps, delta = _check_eps_delta(eps, delta)
    lam = float(check_nonnegative(lam, "lam"))
    r = _check_norm_bound(X, norm_bound)
    consts = stability_constants(loss, norm_bound=r, lam=lam)
    if cap is not None:
        cap = float(check_positive(cap, "cap"))
    if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1):
        raise ValueError(f"size must be None or a positive integer; got {size!r}")
    _theta, H = fit_and_hessian(X, y, loss, lam)
    ev = np.linalg.eigvalsh(H)
    eig_min, eig_max = max(float(ev[0]), 0.0), max(float(ev[-1]), 0.0)
    if cap is not None and cap < eig_max:
        raise ValueError(f"cap must be a public upper bound on lambda_max of the data Hessian; cap={cap:g} < lambda_max")
    gen = as_generator(rng)
    if cap is None:
        rel = recursive_release(eig_min, qsc_lambda_min_recursion(consts), eps, delta, rng=gen, size=size)
        lo = rel.bound
        hi = np.nan if size is None else np.full(size, np.nan)
        return EigenBounds(lo, hi)
    e2, d2 = eps / 2.0, delta / 2.0
    rel = recursive_release(eig_min, qsc_lambda_min_recursion(consts), e2, d2, rng=gen, size=size)
    lows = np.atleast_1d(np.asarray(rel.bound, dtype=float))
    highs = np.empty_like(lows)
    for v in np.unique(lows):
        rows = np.nonzero(lows == v)[0]
        rec = qsc_lambda_max_recursion(consts, float(v), cap=cap)
        r2 = recursive_release(eig_max, rec, e2, d2, rng=gen, size=rows.size)
        highs[rows] = np.minimum(np.asarray(r2.bound, dtype=float), cap)
    if size is None:
        return EigenBounds(float(lows[0]), float(highs[0]))
    return EigenBounds(lows, highs)


# ====================================================================== §8: directional quantities
def _check_H_u(H_data: ArrayLike, u: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    H = as_finite_array(H_data, "H_data", ndim=2)
    if H.shape[0] != H.shape[1]:
        raise ValueError(f"H_data must be square; got shape {H.shape}")
    u = as_finite_array(u, "u")
    if u.ndim not in (1, 2) or u.shape[-1] != H.shape[0]:
        raise ValueError(f"u must have length d={H.shape[0]} (or shape (k, d)); got shape {u.shape}")
    if np.any(np.linalg.norm(u, axis=-1) == 0):
        raise ValueError("u must be nonzero")
    return H, u


def _solve_targets(H: np.ndarray, lam: float, u: np.ndarray) -> np.ndarray:
    A = 0.5 * (H + H.T) + lam * np.eye(H.shape[0])
    try:
        c = linalg.cho_factor(A, lower=True, check_finite=False)
    except linalg.LinAlgError:
        raise ValueError("H_data + lam*I must be positive definite") from None
    return linalg.cho_solve(c, u.T, check_finite=False).T


def directional_sensitivity(H_data: ArrayLike, u: ArrayLike, consts: StabilityConstants, *,
                            domain: str = "l2") -> Any:
    r"""The directional sensitivity (3b) :math:`\Delta(D, u) = \sup_{g} u^\top H^{-1} g`, our convention.

    :math:`H = H_{\rm data} + \lambda I`; the change of :math:`\nabla J` between neighbours is
    one gradient (add/remove) or a difference of two (replace), so
    ``domain="l2"`` (:math:`\|g\|_2 \le G_0`): :math:`\Delta = c\,G_0\|H^{-1}u\|_2`;
    ``domain="linf"`` (rows in the box :math:`[-r/\sqrt d, r/\sqrt d]^d`, so
    :math:`\|g\|_\infty \le G_0/\sqrt d`): :math:`\Delta = c\,(G_0/\sqrt d)\|H^{-1}u\|_1`;
    :math:`c = 1` (add/remove) or 2 (replace). ``u`` of shape (d,) or (k, d) (one Cholesky).
    Non-private (a function of the data).

    Parameters
    ----------
    H_data : array_like, shape (d, d)
        Summed data Hessian at :math:`\theta(D)` (no :math:`\lambda`).
    u : array_like, shape (d,) or (k, d)
        Nonzero target direction(s).
    consts : StabilityConstants
    domain : {"l2", "linf"}
        The gradient set: an :math:`\ell_2` ball, or the box of rows in :math:`[-r/\sqrt d, r/\sqrt d]^d`.

    Returns
    -------
    float or ndarray
    """
    consts = _check_consts(consts)
    domain = _check_option(domain, "domain", _DOMAINS)
    H, u = _check_H_u(H_data, u)
    v = _solve_targets(H, consts.lam, u)
    cn = 1.0 if consts.neighbours == "add_remove" else 2.0
    d = H.shape[0]
    if domain == "l2":
        out = cn * consts.G0 * np.linalg.norm(v, axis=-1)
    else:
        out = cn * consts.G0 / math.sqrt(d) * np.sum(np.abs(v), axis=-1)
    return float(out) if np.ndim(out) == 0 else out


def local_modulus(H_data: ArrayLike, u: ArrayLike, consts: StabilityConstants, *, domain: str = "l2") -> Any:
    r"""The local modulus (11) :math:`\omega(u|D) = \Delta(D,u) + \frac{\tau}{\Lambda}\frac{\gamma}{1-\gamma}\|u\|`.

    :math:`\Lambda = \lambda_{\min}(H_{\rm data}) + \lambda`, :math:`\gamma = \alpha r\,t(\Lambda)`
    (Cor 3.3 / Lemma 5.2: :math:`|u^\top(\theta(D') - \theta(D))| \le \omega(u|D)` for every
    neighbour); ``inf`` where (C1) fails. Non-private.

    Parameters
    ----------
    H_data, u, consts, domain
        As in :func:`directional_sensitivity`.
    """
    consts = _check_consts(consts)
    H, u = _check_H_u(H_data, u)
    delta_u = np.asarray(directional_sensitivity(H, u, consts, domain=domain))
    eig_min = float(np.linalg.eigvalsh(0.5 * (H + H.T))[0])
    t = float(parameter_change_bound(max(eig_min, 0.0), consts))
    if not math.isfinite(t):
        out = np.full(delta_u.shape, np.inf)
    else:
        Lam = eig_min + consts.lam
        g = consts.alpha * consts.norm_bound * t
        out = delta_u + consts.tau / Lam * g / (1.0 - g) * np.linalg.norm(u, axis=-1)
    return float(out) if np.ndim(out) == 0 else out


def _certs_and_dimension(eig_min_cert: ArrayLike, eig_max_cert: ArrayLike, domain: str,
                         d: int | None) -> tuple[np.ndarray, np.ndarray, float]:
    """Broadcast certificates and the dimension factor d_p of the gradient set (d on the cube, 1 on the ball)."""
    domain = _check_option(domain, "domain", _DOMAINS)
    if domain == "linf":
        if d is None or isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError(f"d must be a positive integer for domain='linf'; got {d!r}")
        dd = float(d)
    else:
        dd = 1.0
    lo = as_finite_array(eig_min_cert, "eig_min_cert")
    hi = as_finite_array(eig_max_cert, "eig_max_cert")
    lo, hi = np.broadcast_arrays(lo, hi)
    return lo, hi, dd


def modulus_ratio_bound(eig_min_cert: ArrayLike, eig_max_cert: ArrayLike, consts: StabilityConstants, *,
                        domain: str = "l2", d: int | None = None) -> Any:
    r"""The certificate :math:`r^2` of (26): :math:`1/(1+r^2) \le \omega(u|D)^2/\omega(u|D')^2 \le 1+r^2`.

    For every unit ``u`` and every neighbour :math:`D'`, whenever ``eig_min_cert``
    :math:`\le \lambda_{\min}` and ``eig_max_cert`` :math:`\ge \lambda_{\max}` of the data
    Hessian of :math:`D` and (C1) holds at ``eig_min_cert`` and at :math:`R(\cdot)` of it.
    Derivation: with :math:`\lambda_0 =` eig_min_cert + λ,
    :math:`\lambda_1 =` eig_max_cert + λ, :math:`\kappa = \lambda_1/\lambda_0`,
    :math:`t = t(\lambda_0)`, :math:`\gamma = \alpha r t`, :math:`\eta = \beta r^2/\lambda_0`:
    Lemma 8.1's sandwich gives :math:`H_1 = H_0^{1/2}(I + M)H_0^{1/2}` with
    :math:`\|M\| \le \mu = \gamma + \eta`, hence
    :math:`\|H_1^{-1}u - H_0^{-1}u\| \le \sqrt{\kappa}\,\frac{\mu}{1-\mu}\|H_0^{-1}u\|`
    (:math:`\sqrt{\kappa d}` and :math:`\|\cdot\|_1` for ``linf``); the correction terms of
    (11) are at most :math:`\kappa\frac{\gamma}{1-\gamma}\Delta` at :math:`D` and
    :math:`\kappa\frac{\lambda_0}{\lambda_0'}\frac{\gamma'}{1-\gamma'}\Delta` at :math:`D'`
    (:math:`\lambda_0' = R(\text{eig\_min\_cert}) + \lambda`, :math:`\gamma' = \alpha r t(\lambda_0')`;
    times :math:`\sqrt d` for ``linf``). So
    :math:`\omega'/\omega \le U = 1 + s\frac{\mu}{1-\mu} + \kappa_d\frac{\lambda_0}{\lambda_0'}\frac{\gamma'}{1-\gamma'}`
    and :math:`\ge L = (1 - s\frac{\mu}{1-\mu})/(1 + \kappa_d\frac{\gamma}{1-\gamma})`,
    :math:`r^2 = \max(U^2, L^{-2}) - 1` (``inf`` when :math:`L \le 0` or a condition fails).
    Vectorized over the certificates. Non-private.

    The source's Props 8.2–8.3 and (14) have :math:`\kappa(s_1 + s_2 r)` in place of
    :math:`\sqrt\kappa\,\mu/(1-\mu)`; this direct perturbation bound is smaller and scale
    invariant (:math:`\eta = \beta r^2/\lambda_0` is dimensionless).

    Parameters
    ----------
    eig_min_cert, eig_max_cert : array_like
        Certified lower / upper bounds on the data Hessian's extreme eigenvalues.
    consts : StabilityConstants
    domain : {"l2", "linf"}
    d : int or None
        The dimension, required for ``"linf"``.

    Returns
    -------
    float or ndarray
        :math:`r^2` (``inf`` where nothing can be certified).
    """
    consts = _check_consts(consts)
    lo, hi, dd = _certs_and_dimension(eig_min_cert, eig_max_cert, domain, d)
    lam, r, a = consts.lam, consts.norm_bound, consts.alpha
    beta = float(consts.loss.smoothness)
    lam0 = lo + lam
    lam1 = np.maximum(hi, lo) + lam
    t = parameter_change_bound(np.maximum(lo, 0.0), consts)
    R = qsc_lambda_min_recursion(consts)(np.maximum(lo, 0.0))
    t1 = parameter_change_bound(R, consts)
    out = np.full(lo.shape, np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        kappa = lam1 / lam0
        gam = a * r * t
        gam1 = a * r * t1
        eta = beta * r * r / lam0
        mu = gam + eta
        lam0p = R + lam
        ok = np.isfinite(t) & np.isfinite(t1) & (lo >= 0) & (mu < 1) & (gam1 < 1) & (lam0 > 0) & (lam0p > 0)
        s = np.sqrt(kappa * dd)
        kd = kappa * math.sqrt(dd)
        pert = s * mu / (1.0 - mu)
        U = 1.0 + pert + kd * lam0 / lam0p * gam1 / (1.0 - gam1)
        L = (1.0 - pert) / (1.0 + kd * gam / (1.0 - gam))
        ok &= L > 0
        r2 = np.maximum(U * U, 1.0 / (L * L)) - 1.0
    out[ok] = r2[ok]
    return float(out) if out.ndim == 0 else out


def modulus_ratio_bound_as_printed(eig_min_cert: ArrayLike, eig_max_cert: ArrayLike, consts: StabilityConstants, *,
                                   n: int, domain: str = "l2", d: int | None = None) -> Any:
    r"""The source's certificate (13)–(14) **as printed** — for comparison only; Alg 5 does not use it.

    Asi, Duchi & Talwar, (13) and (14a) (``domain="l2"``) or (14b) with :math:`p = \infty`,
    :math:`d_p = d` (``domain="linf"``), in the source's averaged convention:
    :math:`\lambda_0 = (\text{eig\_min\_cert} + \lambda)/n`,
    :math:`\lambda_1 = (\text{eig\_max\_cert} + \lambda)/n`, :math:`\kappa = \lambda_1/\lambda_0`,
    :math:`t = t(\lambda_0)` of (9), :math:`R(\lambda_0)` the recursion (10) (both from ``consts``:
    pass ``neighbours="replace"`` for the source's replace-one :math:`\tau = 2G_0`),
    :math:`\beta = \frac{\|h''\|_\infty}{[1 - \alpha t]_+}\frac{r^2}{n\lambda_0}`,
    :math:`\gamma = \alpha r t`, :math:`\gamma' = \alpha r\,t(R(\lambda_0))`,
    :math:`s_1 = 1/[1 - \alpha r t]_+ - 1`,
    :math:`s_2 = \frac{\|h''\|_\infty}{n(1 - \beta)[1 - \alpha r t]_+}`; (14a) is

    .. math::
        \max\Bigl\{\frac{1 + \kappa\frac{\gamma}{1+\gamma}}{1 - \kappa(s_1 + s_2 r)},\;
        1 + \kappa(s_1 + s_2 r) + \frac{\lambda_1}{R(\lambda_0)}\frac{\gamma'}{1 - \gamma'}\Bigr\}^2 - 1

    and (14b) puts :math:`\sqrt{d_p}\kappa s_1 + 2d_ps_2/\lambda_0` for :math:`\kappa(s_1 + s_2 r)`
    and :math:`\sqrt{d_p}` before both :math:`\gamma` terms. The printed :math:`[1 - \alpha t]_+`
    (not :math:`\alpha r t`), :math:`\gamma/(1+\gamma)` and :math:`s_2 r` are kept as printed (the
    chapter "Releasing one parameter" lists why they are errata). Returns the left side
    (``inf`` where a denominator is not positive or (C1) fails); Alg 5 as printed releases
    when it is at most :math:`2\epsilon/(1 + \Phi^{-1}(1 - \delta/2)^2)`. Non-private.

    Parameters
    ----------
    eig_min_cert, eig_max_cert : array_like
        Certified lower / upper bounds on the summed data Hessian's extreme eigenvalues.
    consts : StabilityConstants
    n : int
        The number of records (the source averages its losses).
    domain : {"l2", "linf"}
        (14a) or (14b) with :math:`p = \infty`.
    d : int or None
        The dimension, required for ``"linf"``.
    """
    consts = _check_consts(consts)
    domain = _check_option(domain, "domain", _DOMAINS)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer; got {n!r}")
    lo, hi, dp = _certs_and_dimension(eig_min_cert, eig_max_cert, domain, d)
    a, r, h2, lam = consts.alpha, consts.norm_bound, float(consts.loss.smoothness), consts.lam
    out = np.full(lo.shape, np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e0 = np.maximum(lo, 0.0)
        lam0 = (e0 + lam) / n
        lam1 = (np.maximum(hi, lo) + lam) / n
        t = parameter_change_bound(e0, consts)
        Rec = qsc_lambda_min_recursion(consts)(e0)
        R0 = (Rec + lam) / n
        t1 = parameter_change_bound(Rec, consts)
        beta = h2 / np.maximum(1.0 - a * t, 0.0) * r * r / (n * lam0)
        gam, gam1 = a * r * t, a * r * t1
        s1 = 1.0 / np.maximum(1.0 - a * r * t, 0.0) - 1.0
        s2 = h2 / (n * (1.0 - beta) * np.maximum(1.0 - a * r * t, 0.0))
        kap = lam1 / lam0
        sq = math.sqrt(dp)
        pert = kap * (s1 + s2 * r) if domain == "l2" else sq * kap * s1 + 2.0 * dp * s2 / lam0
        up = (1.0 + sq * kap * gam / (1.0 + gam)) / (1.0 - pert)
        low = 1.0 + pert + sq * lam1 / R0 * gam1 / (1.0 - gam1)
        ok = (np.isfinite(t) & np.isfinite(t1) & (lo >= 0) & (beta < 1) & (a * r * t < 1) & (gam1 < 1)
              & (pert < 1) & (R0 > 0))
        val = np.maximum(up, low) ** 2 - 1.0
    out[ok] = val[ok]
    return float(out) if out.ndim == 0 else out


def modulus_perturbation_bound(eig_min_cert: ArrayLike, eig_max_cert: ArrayLike, consts: StabilityConstants, *,
                               route: str = "pdpkit", domain: str = "l2", d: int | None = None) -> Any:
    r"""A bound :math:`P` with :math:`|\Delta_1/\Delta_0 - 1| \le P` for the directional sensitivities of neighbours.

    :math:`\Delta_j = \sup_{v \in \mathcal V} u^\top H_j^{-1}v` (:math:`\|H_j^{-1}u\|_2` on an
    :math:`\ell_2` ball, :math:`\|H_j^{-1}u\|_1` on the cube), :math:`H_0` the Hessian (with
    :math:`\lambda`) of :math:`D` at :math:`\theta(D)`, :math:`H_1` that of a neighbour at
    :math:`\theta(D')`, for every unit ``u``, whenever ``eig_min_cert`` :math:`\le \lambda_{\min}`,
    ``eig_max_cert`` :math:`\ge \lambda_{\max}` and (C1) holds. With :math:`\lambda_0, \lambda_1,
    \kappa, t, \gamma = \alpha r t` as in :func:`modulus_ratio_bound`:

    * ``route="pdpkit"`` — :math:`\sqrt{\kappa d_p}\,\mu/(1 - \mu)`, :math:`\mu = \gamma + \beta r^2/\lambda_0`
      (the perturbation term of :func:`modulus_ratio_bound`; :math:`d_p = d` on the cube, 1 on the ball);
    * ``route="source"`` — the source's own route, Lemma 8.2 (self-similarity with
      :math:`s_1 = 1/(1 - \gamma) - 1` and, in the summed convention,
      :math:`s_2 = \beta_2/((1 - \beta')(1 - \gamma)^2)`, :math:`\beta' = \beta_2 r^2/((1 - \gamma)\lambda_0)`,
      :math:`\beta_2 = \|h''\|_\infty`) followed by Lemma 8.3 on the ball,
      :math:`\frac{s_1}{2}(1 + \kappa) + s_2\kappa r^2/\lambda_0` (its
      :math:`\sup_x \lambda_{\max}\|H_0^{-1}x\|^2 \le \kappa r^2/\lambda_0`), or Lemma 8.5 on the
      cube (:math:`\mathcal V = \mathcal X`, :math:`c = 1`, :math:`\mathrm{rad}_2/\mathrm{ins}_2 = \sqrt d`),
      :math:`s_1\sqrt d\,\kappa + 2s_2 r^2/\lambda_0`.

    ``inf`` where a condition fails. Vectorized. Non-private.

    Parameters
    ----------
    eig_min_cert, eig_max_cert : array_like
        Certified lower / upper bounds on the data Hessian's extreme eigenvalues.
    consts : StabilityConstants
    route : {"pdpkit", "source"}
    domain : {"l2", "linf"}
    d : int or None
        The dimension, required for ``"linf"``.
    """
    consts = _check_consts(consts)
    route = _check_option(route, "route", ("pdpkit", "source"))
    domain = _check_option(domain, "domain", _DOMAINS)
    lo, hi, dd = _certs_and_dimension(eig_min_cert, eig_max_cert, domain, d)
    lam, r, a = consts.lam, consts.norm_bound, consts.alpha
    h2 = float(consts.loss.smoothness)
    out = np.full(lo.shape, np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lam0 = lo + lam
        kappa = (np.maximum(hi, lo) + lam) / lam0
        gam = a * r * parameter_change_bound(np.maximum(lo, 0.0), consts)
        if route == "pdpkit":
            mu = gam + h2 * r * r / lam0
            val = np.sqrt(kappa * dd) * mu / (1.0 - mu)
            ok = mu < 1
        else:
            beta = h2 * r * r / ((1.0 - gam) * lam0)
            s1 = 1.0 / (1.0 - gam) - 1.0
            s2 = h2 / ((1.0 - beta) * (1.0 - gam) ** 2)
            if domain == "l2":
                val = 0.5 * s1 * (1.0 + kappa) + s2 * kappa * r * r / lam0
            else:
                val = s1 * math.sqrt(dd) * kappa + 2.0 * s2 * r * r / lam0
            ok = (beta < 1) & (gam < 1)
        ok &= np.isfinite(gam) & (lo >= 0) & (lam0 > 0)
    out[ok] = val[ok]
    return float(out) if out.ndim == 0 else out
