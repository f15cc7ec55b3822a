r"""Objective perturbation (ObjPert): an exact solver and the ex-post per-instance privacy of its output.

Notation (all losses summed, never averaged). For a data set :math:`D = \{(x_i, y_i)\}_{i=1}^n`
and a GLM loss :math:`f` (:mod:`pdpkit.losses`),

.. math::

   J(\theta; D) = \sum_{i=1}^n f(x_i^\top\theta; y_i) + \frac{\lambda}{2}\|\theta\|_2^2,

.. math::

   \theta^P = \operatorname{argmin}_\theta\; J(\theta; D) + b^\top\theta,
   \quad b \sim \mathcal N(0, \sigma^2 I_d).

The first-order condition gives :math:`b = -\nabla J(\theta^P; D)` *exactly*; the map
:math:`b \mapsto \theta^P` is a bijection (strict convexity), and the change of
variables gives the exact output density

.. math::

   \log p_D(\theta) = \log \mathcal N\!\left(-\nabla J(\theta; D);\, 0, \sigma^2 I_d\right)
   + \log\det \nabla^2 J(\theta; D)

(Redberg & Wang 2021, App. E.1, proof of Thm 6; lecture notes on objective perturbation,
Lemma 10.1), implemented by :func:`objpert_log_density`. Because the privacy proof needs
the *exact* minimizer, :func:`objpert_fit` raises rather than return a point whose
perturbed-gradient norm is above its tolerance.

Ex-post per-instance privacy (Redberg & Wang 2021, Thm 6 and Cor 7; signs derived in the
book chapter "Ex-post per-instance privacy of ObjPert"): with :math:`H = \nabla^2 J(\theta^P; D)`,
:math:`b = -\nabla J(\theta^P; D)` and, for a GLM target :math:`z = (x, y)`,
:math:`g = f'(x^\top\theta^P; y)\,x`, :math:`\mu = f''(x^\top\theta^P; y)\,x^\top H^{-1}x`,

* adding :math:`z \notin D`:
  :math:`\epsilon_1 = \left|-\log(1 + \mu) + \frac{\|g\|^2}{2\sigma^2} - \frac{g^\top b}{\sigma^2}\right|`,
* removing :math:`z \in D`:
  :math:`\epsilon_1 = \left|-\log(1 - \mu) + \frac{\|g\|^2}{2\sigma^2} + \frac{g^\top b}{\sigma^2}\right|`,

where the quantity inside the absolute value is :math:`\log p_D(\theta^P) - \log p_{D_{\pm z}}(\theta^P)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
import scipy.linalg as sla

from ._validation import (
    check_member_flags,
    as_finite_array,
    as_generator,
    check_int_at_least,
    check_positive,
    check_probability,
)
from ._solver import (
    _Rows,
    _scratch,
    _as_rows,
    _check_data,
    _check_general_targets,
    _check_loss,
    _check_norm_bound,
    _check_rows,
    _chol_lower,
    _evaluate,
    _freeze,
    _grad_scale,
    _is_dask,
    _map_reduce,
    _map_rows,
    _solve,
)
from ._validation import _HASH_MULT
from .events import ObjPertEvent
from .losses import GLMLoss, Squared

__all__ = [
    "ObjPertResult",
    "ExPostTerms",
    "objpert_fit",
    "erm_fit_nonprivate",
    "ex_post_pdp",
    "ex_post_pdp_terms",
    "ex_post_pdp_general",
    "objpert_hessian",
    "objpert_log_density",
    "released_state_nonprivate",
    "pdp_bound_data_independent",
    "objpert_epsilon_classic",
    "objpert_sigma_classic",
    "objpert_calibrate_classic",
    "DEFAULT_GRAD_TOL",
    "DEFAULT_OUTPUT_MU",
    "output_mu",
    "default_sigma_out",
    "WeightedLoss",
    "weighted_labels",
]

_CHUNK = 8192  # rows per block in the vectorized target computations


# ============================================================================ results
@dataclass(frozen=True, eq=False)
class ObjPertResult:
    r"""Output of :func:`objpert_fit` — **not publishable as a whole**.

    What may be published is the release (:func:`pdpkit.release.objpert_release`): ``theta_released``, the solver's point plus the
    output noise :math:`\mathcal N(0, \sigma_{\rm out}^2 I_d)` that pays for the solver's
    tolerance, with the public parameters and the guarantee. Everything else is internal state
    of the mechanism, kept for the ex-post analysis and left out of the ``repr``: ``theta``
    (the solver's point, within :math:`\tau/\lambda` of the exact minimizer; its stopping
    point depends on the data, so it carries no guarantee of its own), ``b`` (with ``theta``
    it gives :math:`\sum_i f'(x_i^\top\theta)x_i`), ``grad_norm``, ``n_iter`` and ``n``.

    Attributes
    ----------
    theta_released : numpy.ndarray
        The private release :math:`\tilde\theta = \hat\theta + \mathcal N(0, \sigma_{\rm out}^2 I_d)`
        (shape ``(d,)``, read-only).
    theta : numpy.ndarray
        The solver's point :math:`\hat\theta`, :math:`\|\nabla J(\hat\theta; D) + b\| \le \tau`
        (certified in float64): the point the ex-post analysis of the book's chapters uses.
        Internal; not a release.
    b : numpy.ndarray
        The linear noise term :math:`b` of the objective (internal, not a release).
    grad_norm : float
        The computed :math:`\|\nabla J(\hat\theta; D) + b\|_2` (internal).
    grad_tol : float
        τ, the public absolute bound on the true perturbed-gradient norm at ``theta``.
    sigma_out : float
        The output noise's scale :math:`\sigma_{\rm out}` (public).
    n_iter : int
        Newton iterations used (internal).
    lam, sigma : float
        Regularization :math:`\lambda` and noise scale :math:`\sigma`.
    loss : GLMLoss
        The loss object.
    method : str
        ``"newton"``, ``"newton-cg"`` or ``"closed-form"``.
    n : int
        Number of records fitted (internal).
    hessian_cholesky : numpy.ndarray or None
        Lower-triangular Cholesky factor of :math:`H = \nabla^2 J(\hat\theta; D)` at
        ``theta`` (read-only), kept when :func:`objpert_fit` is called with
        ``keep_hessian=True`` so that :func:`ex_post_pdp` and the privacy report reuse it;
        ``None`` otherwise (they then factor :math:`H` themselves). The result is immutable.
    norm_bound : float or None
        The bound on the rows' Euclidean norms that :func:`objpert_fit` enforced, or ``None``
        when the check was explicitly skipped (then no DP guarantee applies).
    """

    theta_released: np.ndarray
    theta: np.ndarray = field(repr=False)
    b: np.ndarray = field(repr=False)
    grad_norm: float = field(repr=False)
    grad_tol: float
    sigma_out: float
    n_iter: int = field(repr=False)
    lam: float
    sigma: float
    loss: GLMLoss
    method: str = field(repr=False)
    n: int = field(repr=False)
    hessian_cholesky: np.ndarray | None = field(default=None, repr=False)
    norm_bound: float | None = None

    @property
    def d(self) -> int:
        """Dimension of :math:`\\theta`."""
        return int(self.theta.shape[0])

    @property
    def output_mu(self) -> float:
        r"""μ of the output noise: sensitivity :math:`2\tau/\lambda` over :math:`\sigma_{\rm out}` (public)."""
        return output_mu(grad_tol=self.grad_tol, lam=self.lam, sigma_out=self.sigma_out)

    @property
    def event(self) -> ObjPertEvent | None:
        """What this fit released, as a :class:`pdpkit.events.ObjPertEvent` (``None`` without a norm bound).

        The loss's constants at the fitted rows' bound ``norm_bound`` (L R and β R²), λ, σ and
        the output noise's μ: charge it to an accountant, or compose it with other events.
        """
        if self.norm_bound is None or not (math.isfinite(self.loss.lipschitz) and math.isfinite(self.loss.smoothness)):
            return None
        R = float(self.norm_bound)
        return ObjPertEvent(L=self.loss.lipschitz * R, beta=self.loss.smoothness * R * R, lam=self.lam,
                            sigma=self.sigma, mu_out=self.output_mu)


#: The output noise's default μ = (2τ/λ)/σ_out: the solver's tolerance costs the guarantee
#: about 1e-5 in ε at (1, 1e-6) (exact composition, :func:`pdpkit.accounting.objpert_output_epsilon`).
DEFAULT_OUTPUT_MU = 1e-3
#: Default τ: the public bound on the true perturbed-gradient norm of the solver's point.
DEFAULT_GRAD_TOL = 1e-8


def output_mu(*, grad_tol: float, lam: float, sigma_out: float) -> float:
    r"""The Gaussian parameter :math:`\mu = (2\tau/\lambda)/\sigma_{\rm out}` of ObjPert's output noise.

    Two solver points within :math:`\tau/\lambda` of their exact minimizers, on neighbouring
    data sets with the same exact minimizer, are at most :math:`2\tau/\lambda` apart (strong
    convexity): the output noise is a Gaussian mechanism of that sensitivity (Redberg, Koskela
    & Wang 2023, Alg 1 and App. D.3.1).

    Parameters
    ----------
    grad_tol : float
        τ > 0, the public absolute bound on the perturbed-gradient norm at the solver's point.
    lam : float
        Regularization :math:`\lambda > 0` of the objective.
    sigma_out : float
        Standard deviation :math:`\sigma_{\rm out} > 0` of the output noise on each coordinate.

    Returns
    -------
    float
        μ > 0; the output noise alone is μ-GDP.
    """
    tau = float(check_positive(grad_tol, "grad_tol"))
    return 2.0 * tau / (float(check_positive(lam, "lam")) * float(check_positive(sigma_out, "sigma_out")))


def default_sigma_out(*, grad_tol: float, lam: float, mu: float = DEFAULT_OUTPUT_MU) -> float:
    r""":math:`\sigma_{\rm out} = 2\tau/(\lambda\mu)`, by default with :math:`\mu` = :data:`DEFAULT_OUTPUT_MU`.

    The output noise scale that makes the solver's tolerance cost a Gaussian mechanism of
    parameter μ (the inverse of :func:`output_mu`).

    Parameters
    ----------
    grad_tol : float
        τ > 0, the public absolute bound on the perturbed-gradient norm at the solver's point.
    lam : float
        Regularization :math:`\lambda > 0` of the objective.
    mu : float
        Target Gaussian parameter μ > 0 of the output noise; default
        :data:`DEFAULT_OUTPUT_MU` (1e-3). Smaller μ: larger noise, smaller privacy cost.
    """
    tau = float(check_positive(grad_tol, "grad_tol"))
    return 2.0 * tau / (float(check_positive(lam, "lam")) * float(check_positive(mu, "mu")))


@dataclass(frozen=True, eq=False)
class ExPostTerms:
    r"""The three signed terms of :math:`\log p_D(\theta^P) - \log p_{D_{\pm z}}(\theta^P)`.

    ``log_det`` is :math:`-\log(1 \pm \mu)` (the log-determinant ratio :math:`\log\det H - \log\det H_{D_{\pm z}}`),
    ``grad_sq`` is :math:`\|g\|^2/(2\sigma^2)` and ``cross`` is :math:`\mp g^\top b/\sigma^2`
    (upper sign: adding a non-member; lower sign: removing a member). ``total`` is their
    sum and ``epsilon`` its absolute value, the ex-post pDP :math:`\epsilon_1`. ``mu`` is the
    generalized leverage :math:`f''\,x^\top H^{-1} x` (GLMs) and ``member`` the boolean
    membership per target.

    Attributes
    ----------
    log_det : numpy.ndarray, shape (m,)
        :math:`-\log(1 \pm \mu)` per target, the log-determinant ratio of the Hessians.
    grad_sq : numpy.ndarray, shape (m,)
        :math:`\|g\|^2/(2\sigma^2) \ge 0` per target (:math:`g` the target's loss gradient).
    cross : numpy.ndarray, shape (m,)
        :math:`\mp g^\top b/\sigma^2` per target, the term that depends on the noise :math:`b`.
    mu : numpy.ndarray of shape (m,) or None
        Generalized leverage :math:`\mu = f''\,x^\top H^{-1} x \ge 0` per target (GLMs);
        ``None`` where it is not defined.
    member : numpy.ndarray of bool, shape (m,)
        ``True``: the target is in :math:`D` (neighbour by removal); ``False``: by addition.
    """

    log_det: np.ndarray
    grad_sq: np.ndarray
    cross: np.ndarray
    mu: np.ndarray | None
    member: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """Signed log-density ratio :math:`\\log p_D - \\log p_{D\\pm z}`."""
        return self.log_det + self.grad_sq + self.cross

    @property
    def epsilon(self) -> np.ndarray:
        """The ex-post pDP :math:`\\epsilon_1 = |\\text{total}|`."""
        return np.abs(self.total)


# ========================================================================= weights
class WeightedLoss(GLMLoss):
    r"""A GLM loss with a weight per record: :math:`f_v(t; (y, v)) = v\,f(t; y)`, :math:`v \in [0, 1]`.

    Its labels are complex numbers :math:`y + i v` (:func:`weighted_labels`): one array
    carries each record's label and weight through every pass over the rows (the solver's,
    the ex-post analysis', the privacy report's), which read labels block by block with the
    rows. Its derivatives are :math:`v` times the unweighted loss's.

    **Privacy.** ObjPert's analyses use each record only through the first two derivatives
    of its loss: the tight profile (Redberg, Koskela & Wang 2023, Thm 3.1, whose proof, like
    that of Thm 3.2, bounds :math:`\|\nabla\ell(\theta; z)\|_2 \le L` and
    :math:`f''(x^\top\theta; y)\,x^\top H^{-1}x \le \beta/\lambda`) and the ex-post pDP
    (Redberg & Wang 2021, Thm 6 and Cor 7, App. E.1: :math:`g = f'x` and :math:`f''x^\top H^{-1}x`
    of the record added or removed). A record of weight :math:`v \le 1` enters with
    :math:`v f'` and :math:`v f''`, so the constants of the unweighted loss (``lipschitz``
    :math:`L`, ``smoothness`` :math:`\beta`, per unit :math:`\|x\|`) bound the weighted one:
    with neighbours that add or remove one record :math:`(x, y, v)`, every guarantee of
    :mod:`pdpkit.accounting` holds unchanged. The ratio :math:`|f'''|/f''`
    (``self_concordance``) does not depend on :math:`v`.

    **A public weight bound W.** Weights :math:`w_i \in [0, W]` on the objective
    :math:`\sum_i w_i f(x_i^\top\theta; y_i) + \frac\lambda2\|\theta\|^2 + b^\top\theta`,
    :math:`b \sim \mathcal N(0, \sigma^2 I)`: each term :math:`w f` is :math:`WL`-Lipschitz and
    :math:`W\beta`-smooth, so the guarantee is Thm 3.1's with :math:`L \to WL`,
    :math:`\beta \to W\beta`. Dividing the objective by :math:`W` changes neither its minimizer
    nor, with :math:`\tau \to \tau/W`, the solver's point: it is this loss with
    :math:`v_i = w_i/W`, :math:`\lambda/W` and the noise :math:`b/W \sim \mathcal N(0, (\sigma/W)^2 I)`.
    Thm 3.1 depends on its constants only through :math:`L/\sigma` and :math:`\beta/\lambda`
    (:math:`\tilde\epsilon = \epsilon - \log(1 - \beta/\lambda)`,
    :math:`\hat\epsilon = \tilde\epsilon - L^2/(2\sigma^2)`, the Gaussian of mean 1 and
    variance :math:`\sigma^2/L^2`), so the two views have one profile:
    ``ObjPertEvent(L=W*L, beta=W*beta, lam=lam, sigma=sigma)`` and
    ``ObjPertEvent(L=L, beta=beta, lam=lam/W, sigma=sigma/W)`` agree (``tests/test_weights.py``).
    The estimators (:mod:`pdpkit.estimators`) fit the second.

    Parameters
    ----------
    loss : str or GLMLoss
        The unweighted loss (with a bounded gradient: not ``"squared"``).
    """

    def __init__(self, loss: str | GLMLoss) -> None:
        base = _check_loss(loss)
        if isinstance(base, WeightedLoss):
            base = base.base
        if isinstance(base, Squared) or not math.isfinite(base.lipschitz):
            raise ValueError(f"loss {base.name!r} has an unbounded gradient: a weighted ObjPert with it has no "
                             "guarantee")
        self.base = base
        self.name = base.name
        self.lipschitz = base.lipschitz
        self.smoothness = base.smoothness
        self.d3_bound = base.d3_bound
        self.self_concordance = base.self_concordance

    def __repr__(self) -> str:
        return (f"<weighted GLM loss {self.name!r} (weights in [0, 1]): L={self.lipschitz:g}, "
                f"beta={self.smoothness:g}>")

    def check_labels(self, y: Any, name: str = "y") -> np.ndarray:
        """Complex labels ``y + 1j * v``: ``y`` in the loss's domain, ``v`` finite in [0, 1] (errors name ``name``).

        Parameters
        ----------
        y : Any
            Complex labels (:func:`weighted_labels`).
        name : str, default 'y'
            The parameter's name in the error message.
        """
        arr = np.asarray(y)
        if arr.dtype.kind != "c":
            raise TypeError(f"{name} must hold complex labels y + 1j*weight for a weighted loss "
                            "(pdpkit.objpert.weighted_labels)")
        arr = arr.astype(np.complex128, copy=False)
        self.base.check_labels(arr.real, name)
        v = arr.imag
        if not (np.all(np.isfinite(v)) and np.all(v >= 0.0) and np.all(v <= 1.0)):
            raise ValueError(f"{name}: every weight must be finite and in [0, 1] (the weights divided by their "
                             "public bound)")
        return arr

    def symbolic(self, t: Any, y: Any) -> Any:
        import sympy as sp

        return sp.Symbol("v", nonnegative=True) * self.base.symbolic(t, y)

    def _value(self, t, y):
        return np.imag(y) * self.base._value(t, np.real(y))

    def _d1(self, t, y):
        return np.imag(y) * self.base._d1(t, np.real(y))

    def _d2(self, t, y):
        return np.imag(y) * self.base._d2(t, np.real(y))

    def _d3(self, t, y):
        return np.imag(y) * self.base._d3(t, np.real(y))

    def _d1_d2(self, t, y):
        v = np.imag(y)
        d1, d2 = self.base._d1_d2(t, np.real(y))
        return v * d1, v * d2

    def _sum_d1_d2(self, t, y):
        v = np.imag(y)
        yr = np.real(y)
        fs, d1, d2 = self.base._sum_d1_d2(t, yr)
        if not np.all(v == 1.0):  # weights of one: the unweighted sums, to the last bit
            fs = float(np.sum(v * self.base._value(t, yr)))
        return fs, v * d1, v * d2


def weighted_labels(y: ArrayLike, weights: ArrayLike) -> np.ndarray:
    r"""The labels of a :class:`WeightedLoss`: ``y + 1j * weights`` (the weights in [0, 1], checked by the loss).

    Parameters
    ----------
    y : array_like, shape (n,)
        Labels in the unweighted loss's domain.
    weights : array_like, shape (n,) or scalar
        Each record's weight :math:`v_i \in [0, 1]` (its weight divided by the public bound W).

    Returns
    -------
    numpy.ndarray of complex128, shape (n,)
    """
    yr = np.asarray(y, dtype=np.float64)
    v = np.broadcast_to(np.asarray(weights, dtype=np.float64), yr.shape)
    out = np.empty(yr.shape, dtype=np.complex128)
    out.real = yr
    out.imag = v
    return out


def _float_labels(target_y: Any, loss: GLMLoss) -> np.ndarray:
    """Target labels as float64 (complex128 for a weighted loss), at least one-dimensional."""
    dtype = np.complex128 if isinstance(loss, WeightedLoss) else np.float64
    return np.atleast_1d(np.asarray(target_y, dtype=dtype))


# ======================================================================= validation
_NO_TOL = object()


def objpert_fit(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, *, lam: float, sigma: float,
                rng: int | np.random.Generator | None = None, b: ArrayLike | None = None,
                grad_tol: float = DEFAULT_GRAD_TOL, sigma_out: float | None = None,
                max_iter: int | None = None, method: str = "auto", norm_bound: float | None = 1.0,
                keep_hessian: bool = False, tol: Any = _NO_TOL) -> ObjPertResult:
    r"""Objective perturbation: :math:`\theta^P = \operatorname{argmin}_\theta J(\theta; D) + b^\top\theta`.

    Minimizes :math:`\sum_i f(x_i^\top\theta; y_i) + \frac{\lambda}{2}\|\theta\|^2 + b^\top\theta`
    with :math:`b \sim \mathcal N(0, \sigma^2 I_d)` (or the given ``b``) — Algorithm 1 of
    Redberg & Wang 2021 with :math:`r = 0`; Chaudhuri et al. 2011, Kifer et al. 2012.

    The solver is damped Newton (Armijo backtracking) with the exact Hessian
    :math:`X^\top \operatorname{diag}(f'') X + \lambda I` formed by blocked SYRK and factored by
    Cholesky; for large :math:`n` it is warm-started on a random sixteenth of the rows, uses
    that subset's Hessian while far from the minimizer and reuses a factorization while the
    margins :math:`x_i^\top\theta` barely move (quasi-self-concordance bounds the Hessian's
    change). For large :math:`d` it is truncated Newton-CG with exact Hessian-vector products;
    for the squared loss the closed form :math:`(X^\top X + \lambda I)^{-1}(X^\top y - b)` with
    iterative refinement.

    **What is released.** ObjPert's privacy proof is for the exact minimizer
    :math:`\theta^P`; a solver returns a point :math:`\hat\theta` whose stopping depends on the
    data. The solver therefore stops at a *public, absolute* tolerance τ = ``grad_tol``: the
    true :math:`\|\nabla J(\hat\theta; D) + b\|_2 \le \tau` is certified in float64 (the
    computed norm plus a rigorous bound on its rounding error), so
    :math:`\|\hat\theta - \theta^P\| \le \tau/\lambda`. The release is
    :math:`\tilde\theta = \hat\theta + \mathcal N(0, \sigma_{\rm out}^2 I_d)`
    (``theta_released``): given :math:`\theta^P`, :math:`\hat\theta` is a deterministic function of
    the data within :math:`\tau/\lambda` of it, so the output noise is a Gaussian mechanism
    of sensitivity :math:`2\tau/\lambda` composed adaptively with ObjPert — approximate minima
    perturbation (Redberg, Koskela & Wang 2023, Alg 1, App. D.3.1; Iyengar et al. 2019). The
    guarantee composes the two exactly (:func:`pdpkit.accounting.objpert_output_epsilon`). At
    the defaults (τ = 1e-8, :math:`\mu = 2\tau/(\lambda\sigma_{\rm out}) = 10^{-3}`) this costs
    about 1e-5 in ε at (1, 1e-6), and :math:`\sigma_{\rm out} = 2\cdot10^{-5}/\lambda` does not
    change a model's accuracy. No starting point is ever released as such.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Features (finite): a numpy array, a ``numpy.memmap`` or a Dask array (with the
        ``dask`` extra). The rows are read block by block, never copied: extra memory
        :math:`O(d^2 + \text{block} \cdot d)`; on a Dask array every pass is a tree
        reduction over its chunks on the workers.
    y : array_like, shape (n,)
        Labels in the loss's domain (``loss.check_labels``); a Dask array with ``X``.
    loss : str or GLMLoss
        A loss from :mod:`pdpkit.losses` or its name.
    lam : float
        Regularization :math:`\lambda > 0` (makes :math:`J` strongly convex).
    sigma : float
        Noise scale :math:`\sigma > 0`.
    rng : int, numpy.random.Generator or None
        Source of the noise ``b`` (an int seeds a fresh generator; ``None``: fresh entropy).
    b : array_like, shape (d,), optional
        Use this noise vector instead of sampling (e.g. for exact-density checks).
    grad_tol : float
        τ > 0, the public absolute bound on the true perturbed-gradient norm (above). Paid for
        by the output noise; a larger τ needs a proportionally larger ``sigma_out``.
    sigma_out : float or None
        Scale of the output noise (> 0); ``None``: :func:`default_sigma_out`, i.e.
        μ = :data:`DEFAULT_OUTPUT_MU`. Drawn from a stream spawned from ``rng``, so the draws
        of ``rng`` itself are those of ``b`` alone.
    max_iter : int or None
        ``None`` (default): no limit that depends on the data. The fast Newton phase gets
        200 iterations (``pdpkit._solver._FAST_ITER``), then plain damped Newton continues with a
        budget that provably suffices (self-concordance of the perturbed objective, Boyd &
        Vandenberghe §9.6.4): whether a fit succeeds never depends on a record (how many
        iterations it takes does, and is not released). An integer caps the iterations; a fit
        that reaches the cap raises ``RuntimeError`` — whether it does depends on the data, so
        a cap is for experiments on the solver, never for a release.
    method : {"auto", "newton", "newton-cg", "closed-form"}
        ``"auto"``: closed form for the squared loss; otherwise chosen by cost: full Newton
        while a Hessian (:math:`nd^2` flops) costs less than the Hessian-vector passes of
        Newton-CG would (about :math:`d \le 150`), Newton-CG beyond.
    norm_bound : float or None
        Every row must satisfy :math:`\|x_i\|_2 \le` ``norm_bound`` (up to a relative
        :math:`10^{-12}` for rounding) — the assumption of every DP guarantee of ObjPert
        (:func:`objpert_epsilon_classic`, :mod:`pdpkit.accounting`, with ``L`` and ``beta``
        for rows of norm at most ``norm_bound``). Default 1. A row beyond it raises
        ``ValueError`` (naming no row, value or count: :func:`pdpkit.check.check_nonprivate`
        finds it). ``None`` skips the check and must be
        asked for explicitly; the result then records ``norm_bound=None`` and carries no
        guarantee.
    keep_hessian : bool
        Also factor the exact Hessian at the returned point (one more :math:`O(nd^2)` pass);
        otherwise :func:`ex_post_pdp` computes and caches it on first use.

    tol : removed
        The former relative tolerance (its threshold depended on the data, which no guarantee
        pays for): passing it is a ``TypeError`` naming ``grad_tol``.

    Returns
    -------
    ObjPertResult
        With ``theta_released`` (what :func:`pdpkit.release.objpert_release` publishes) and the
        internal state (``theta``, ``b``, ...) of the ex-post analysis.
    """
    loss = _check_loss(loss)
    X, y, stats = _check_rows(X, y, loss)  # rows read by blocks: X is never copied
    n, d = X.shape
    lam = float(check_positive(lam, "lam"))
    sigma = float(check_positive(sigma, "sigma"))
    if tol is not _NO_TOL:
        raise TypeError("objpert_fit takes no 'tol': the solver stops at grad_tol, an absolute and public bound "
                        "on the perturbed gradient that the output noise sigma_out pays for")
    if lam > 1e100 or sigma > 1e100:
        raise ValueError(f"lam and sigma must be at most 1e100 (float64 overflows beyond); got lam={lam:g}, "
                         f"sigma={sigma:g}")
    grad_tol = _scalar(grad_tol, "grad_tol")
    sigma_out = default_sigma_out(grad_tol=grad_tol, lam=lam) if sigma_out is None else _scalar(sigma_out,
                                                                                                 "sigma_out")
    if max_iter is not None:
        max_iter = check_int_at_least(max_iter, "max_iter", 1)
    elif not (math.isfinite(loss.self_concordance) or isinstance(loss, Squared)):
        raise ValueError(f"loss {loss.name!r} has no finite self-concordance constant, so no iteration budget is "
                         "proven for it: give max_iter (a cap whose failure depends on the data: not for a release)")
    if norm_bound is not None:
        norm_bound = _check_norm_bound(X, norm_bound, stats=stats)
    gen = as_generator(rng)
    if b is None:
        b = gen.normal(0.0, sigma, size=d)
    else:
        b = as_finite_array(b, "b", ndim=1)
        if b.shape[0] != d:
            raise ValueError(f"b must have shape ({d},) to match X's {d} columns; got {b.shape}")
    theta, gnorm, _tau, n_iter, method, chol = _solve(X, y, loss, lam, b, grad_tol, max_iter, method,
                                                      want_hessian=bool(keep_hessian))
    if chol is not None:
        chol.flags.writeable = False
    try:
        out_gen = gen.spawn(1)[0]  # an independent stream: rng's own draws stay those of b
    except (AttributeError, TypeError, ValueError):  # pragma: no cover - a generator without a seed sequence
        out_gen = gen
    released = theta + out_gen.normal(0.0, sigma_out, size=d)
    return ObjPertResult(theta_released=_freeze(released), theta=_freeze(theta), b=_freeze(b), grad_norm=gnorm,
                         grad_tol=grad_tol, sigma_out=sigma_out, n_iter=n_iter, lam=lam, sigma=sigma, loss=loss,
                         method=method, n=n, hessian_cholesky=chol, norm_bound=norm_bound)


def _scalar(value: Any, name: str) -> float:
    """A finite scalar > 0 (a string, bool or array is a TypeError naming the parameter)."""
    if isinstance(value, (str, bytes, bool, np.bool_)) or np.ndim(value) != 0:
        raise TypeError(f"{name} must be a real number > 0; got {value!r}")
    return float(check_positive(value, name))


def erm_fit_nonprivate(X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, *, lam: float, tol: float = 1e-10,
                       max_iter: int = 200, method: str = "auto") -> np.ndarray:
    r"""The **non-private** regularized ERM minimizer :math:`\operatorname{argmin}_\theta J(\theta; D)`.

    Same solver as :func:`objpert_fit` with :math:`b = 0`, stopped at
    :math:`\|\nabla J\| \le \text{tol}\cdot\max(1, n\max_i\|x_i\|\tilde L)` (a data-dependent
    scale, acceptable here because nothing private rests on it; ``RuntimeError`` if not reached).
    The result is a function of the data without noise: not differentially private.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Features (finite).
    y : array_like, shape (n,)
        Labels in the loss's domain (``loss.check_labels``).
    loss : str or GLMLoss
        A loss from :mod:`pdpkit.losses` or its name.
    lam : float
        Regularization :math:`\lambda > 0`.
    tol : float
        Relative stopping tolerance > 0 on the gradient norm (scaled as above); default 1e-10.
    max_iter : int
        Maximum number of Newton iterations, ≥ 1; default 200.
    method : {"auto", "newton", "newton-cg", "closed-form"}
        The solver, as in :func:`objpert_fit`; default ``"auto"``.

    Returns
    -------
    numpy.ndarray, shape (d,)
        The minimizer (non-private).
    """
    loss = _check_loss(loss)
    X, y = _check_data(X, y, loss)
    lam = float(check_positive(lam, "lam"))
    tol = float(check_positive(tol, "tol"))
    max_iter = check_int_at_least(max_iter, "max_iter", 1)
    theta, *_ = _solve(X, y, loss, lam, np.zeros(X.shape[1]), tol * _grad_scale(X, y, loss), max_iter, method,
                       want_hessian=False, certify=False)
    return theta


# ==================================================================== output density
def objpert_log_density(theta: ArrayLike, X: ArrayLike, y: ArrayLike, loss: str | GLMLoss, *, lam: float,
                        sigma: float) -> np.ndarray:
    r"""Exact log-density of ObjPert's output :math:`\theta^P` at ``theta``.

    By the change of variables :math:`b = -\nabla J(\theta; D)` (a bijection because
    :math:`J` is :math:`\lambda`-strongly convex, with Jacobian :math:`-\nabla^2 J`),

    .. math::

       \log p_D(\theta) = -\frac{\|\nabla J(\theta; D)\|^2}{2\sigma^2} - \frac d2\log(2\pi\sigma^2)
       + \log\det\nabla^2 J(\theta; D)

    (Redberg & Wang 2021, App. E.1; lecture notes, Lemma 10.1). Any :math:`d`; vectorized over
    the leading axes of ``theta``. The data set may be empty (``X`` of shape ``(0, d)``),
    in which case :math:`\theta^P = -b/\lambda` is Gaussian. A function of the data:
    an analysis tool, not a private release.

    Parameters
    ----------
    theta : array_like, shape (..., d)
        Points at which to evaluate the density.
    X, y, loss, lam, sigma
        As in :func:`objpert_fit`. Small data are evaluated for many points at once (blocks
        of points sized by :math:`\max(nd, d^2)`); large, memmapped or Dask data by one pass
        per point.

    Returns
    -------
    numpy.ndarray, shape (...)
        :math:`\log p_D(\theta)`.
    """
    loss = _check_loss(loss)
    rows, y, _stats = _check_rows(X, y, loss)
    n, d = rows.shape
    lam = float(check_positive(lam, "lam"))
    sigma = float(check_positive(sigma, "sigma"))
    T = as_finite_array(theta, "theta")
    if T.ndim == 0 or T.shape[-1] != d:
        raise ValueError(f"theta must have last axis of length d={d} (X's columns); got shape {T.shape}")
    lead = T.shape[:-1]
    T = T.reshape(-1, d)
    m = T.shape[0]
    out = np.empty(m)
    const = -0.5 * d * math.log(2.0 * math.pi * sigma * sigma)
    if rows.dask or n * d > 4_000_000:
        # large data: one pass per point (gradient and Hessian by blocks), memory O(d^2 + block)
        for j in range(m):
            _F, _Fs, G, Hu, _ = _evaluate(rows, y, loss, T[j], lam, np.zeros(d), 1.0, True)
            Lc = np.linalg.cholesky(np.triu(Hu) + np.triu(Hu, 1).T)
            out[j] = const - float(G @ G) / (2.0 * sigma * sigma) + 2.0 * float(np.sum(np.log(np.diagonal(Lc))))
        return out.reshape(lead)
    X = rows.materialize()
    y = np.asarray(y)
    # points per block: the block's margins (c, n) and Hessians (c, d, d) stay within ~16 MB
    chunk = max(1, min(m, 2_000_000 // max(1, n * max(d, 2), d * d)))
    eye = np.eye(d)
    for s in range(0, m, chunk):
        Tc = T[s:s + chunk]
        Z = Tc @ X.T  # (c, n)
        D1, D2 = loss._d1_d2(Z, y[None, :])
        G = D1 @ X + lam * Tc  # grad J
        H = np.einsum("cn,ni,nj->cij", D2, X, X, optimize=True) + lam * eye
        Lc = np.linalg.cholesky(H)
        logdet = 2.0 * np.sum(np.log(np.diagonal(Lc, axis1=-2, axis2=-1)), axis=-1)
        out[s:s + chunk] = const - np.einsum("ci,ci->c", G, G) / (2.0 * sigma * sigma) + logdet
    return out.reshape(lead)


# ===================================================================== ex-post pDP
def _fitted_data(result: ObjPertResult, X: Any, y: Any, want_h: bool = False,
                 margins_out: np.ndarray | None = None) -> tuple[_Rows, Any, np.ndarray, Any]:
    """Validate the data against the fit; return (rows, y, grad J(theta; D), upper H or None): two passes.

    ``margins_out`` (rows in memory or on disk): an (n,) array that receives every record's
    margin :math:`x_i^\top\theta`, formed by the gradient's pass anyway.
    """
    if not isinstance(result, ObjPertResult):
        raise TypeError(f"result must be an ObjPertResult from objpert_fit; got {type(result).__name__}")
    loss = result.loss
    rows, y, stats = _check_rows(X, y, loss)
    n, d = rows.shape
    if d != result.d or n != result.n:
        raise ValueError(f"X has shape {rows.shape}: not the data set result was fitted on (its d = {result.d}, or "
                         "its number of rows, differ)")
    theta = result.theta
    curv = None if margins_out is None else (None, margins_out)
    gradJ, H = _evaluate(rows, y, loss, theta, result.lam, np.zeros(d), 1.0, want_h, curv_out=curv)[2:4]
    resid = float(np.linalg.norm(gradJ + result.b))
    if resid > 2.0 * result.grad_tol + 1e-12 * scale_from(rows, y, loss, stats):
        raise ValueError("X and y are not the data set result was fitted on (the perturbed gradient at "
                         "result.theta is above the fit's tolerance)")
    return rows, y, gradJ, H


def scale_from(rows: _Rows, y: Any, loss: GLMLoss, stats: tuple) -> float:
    """:func:`pdpkit._solver._grad_scale` from the check pass's largest row norm (no extra pass over X)."""
    if rows.n == 0:
        return 1.0
    if math.isfinite(loss.lipschitz):
        lip = loss.lipschitz
    else:
        ymax = float(abs(y).max().compute()) if _is_dask(y) else float(np.max(np.abs(y)))
        lip = max(1.0, ymax)
    return max(1.0, rows.n * math.sqrt(max(stats[1], 0.0)) * lip)


def released_state_nonprivate(result: ObjPertResult, X: ArrayLike, y: ArrayLike) -> ObjPertResult:
    r"""The fit seen from its release: ``theta`` = :math:`\tilde\theta` and :math:`b = -\nabla J(\tilde\theta; D)`.

    :math:`\tilde\theta` (``result.theta_released``) is the exact ObjPert minimizer for the noise
    :math:`\tilde b = -\nabla J(\tilde\theta; D)`, so the ex-post analysis of the returned result
    (:func:`ex_post_pdp`, :func:`ex_post_pdp_terms`) is ObjPert's privacy loss
    :math:`\log p_D(\tilde\theta) - \log p_{D_{\pm z}}(\tilde\theta)` *at the released point* — the
    quantity a privacy report (:func:`pdpkit.report.privacy_report`, computed at
    :math:`\tilde\theta`) bounds. Holds :math:`\tilde b`, a function of the data: not for publication.

    Parameters
    ----------
    result : ObjPertResult
        The fit.
    X, y : array_like
        The data set it was fitted on (a numpy array, a memmap or a Dask array).
    """
    rows, y, _gradJ, _H = _fitted_data(result, X, y)
    th = result.theta_released
    b_rel = -_evaluate(rows, y, result.loss, th, result.lam, np.zeros(rows.d), 1.0, False)[2]
    return ObjPertResult(theta_released=th, theta=th, b=_freeze(b_rel), grad_norm=0.0, grad_tol=result.grad_tol,
                         sigma_out=result.sigma_out, n_iter=0, lam=result.lam, sigma=result.sigma, loss=result.loss,
                         method=result.method, n=result.n, hessian_cholesky=None, norm_bound=result.norm_bound)


def _state(result: ObjPertResult, X: Any, y: Any,
           margins_out: np.ndarray | None = None) -> tuple[_Rows, Any, np.ndarray, np.ndarray]:
    """Validate the data against the fit; return (rows, y, b_exact, L) with b_exact = -grad J(theta; D)."""
    if not isinstance(result, ObjPertResult):
        raise TypeError(f"result must be an ObjPertResult from objpert_fit; got {type(result).__name__}")
    L = result.hessian_cholesky
    need = L is None or L.shape != (result.d, result.d)
    rows, y, gradJ, H = _fitted_data(result, X, y, want_h=need, margins_out=margins_out)
    if need:
        L = _chol_lower(H)
    return rows, y, -gradJ, L


def target_rows(target_x: Any, target_y: Any, loss: GLMLoss, d: int) -> tuple[_Rows, Any, bool]:
    """Targets as rows read by blocks (arrays, memmaps, Dask arrays or the estimator's rows) and their labels."""
    if isinstance(target_x, _Rows) or _is_dask(target_x):
        tr = _as_rows(target_x)
        if tr.d != d:
            raise ValueError(f"target_x must have shape (m, {d}) or ({d},); got {tr.shape}")
        if _is_dask(target_y):
            ty = target_y
        else:
            ty = loss.check_labels(_float_labels(target_y, loss), "target_y")
        if ty.ndim != 1 or ty.shape[0] != tr.n:
            raise ValueError(f"target_y must have one label per target ({tr.n}); got shape {np.shape(target_y)}")
        return tr, ty, False
    tx, ty, scalar = _targets(target_x, target_y, loss, d)
    return _Rows(tx), ty, scalar


def _targets(target_x: Any, target_y: Any, loss: GLMLoss, d: int) -> tuple[np.ndarray, np.ndarray, bool]:
    try:
        tx = target_x if isinstance(target_x, np.ndarray) else np.asarray(target_x, dtype=np.float64)
        if tx.dtype != np.float64:
            tx = tx.astype(np.float64)
        ty = _float_labels(target_y, loss)
    except (TypeError, ValueError) as exc:
        raise TypeError("target_x and target_y must be numeric (array-like of floats)") from exc
    scalar = tx.ndim == 1
    if scalar:
        tx = tx[None, :]
    if tx.ndim != 2 or tx.shape[1] != d:
        raise ValueError(f"target_x must have shape (m, {d}) or ({d},); got {np.shape(target_x)}")
    if ty.ndim != 1 or ty.shape[0] != tx.shape[0]:
        raise ValueError(f"target_y must have one label per target ({tx.shape[0]}); got shape {np.shape(target_y)}")
    ty = loss.check_labels(ty, "target_y")
    return tx, ty, scalar


def ex_post_pdp_terms(result: ObjPertResult, X: ArrayLike, y: ArrayLike, target_x: ArrayLike, target_y: ArrayLike, *, member: ArrayLike) -> ExPostTerms:
    r"""The three signed terms of the ex-post pDP of every target (see :func:`ex_post_pdp`).

    Returns an :class:`ExPostTerms` whose ``epsilon`` equals :func:`ex_post_pdp`. Member targets
    are checked to be records of ``(X, y)`` as there (``ValueError`` naming ``target_x`` otherwise).

    Parameters
    ----------
    result : ObjPertResult
        The fit.
    X, y : array_like
        The data set :math:`D` it was fitted on (numpy, memmap or Dask arrays, read by blocks).
    target_x : array_like, shape (m, d) or (d,)
        Target feature vectors.
    target_y : array_like, shape (m,) or scalar
        Target labels.
    member : bool or array of bool, shape (m,)
        ``True``: :math:`z \in D` (neighbour by removal; the target must be a record of
        ``(X, y)``); ``False``: :math:`z \notin D` (neighbour by addition).

    Returns
    -------
    ExPostTerms
        The signed terms per target, not private (functions of the data and the output).
    """
    if not isinstance(result, ObjPertResult):
        raise TypeError(f"result must be an ObjPertResult from objpert_fit; got {type(result).__name__}")
    loss = result.loss
    trows, ty, _ = target_rows(target_x, target_y, loss, result.d)
    m = trows.n
    mem = check_member_flags(member, m)
    # members to find among the records (in memory or on disk; not the very same array) are
    # matched by their margins x^T theta, which the data's gradient check and the terms' own
    # product form anyway; the targets are checked finite in that product, and members matched,
    # before any term is returned
    keyed = (bool(m and mem.any()) and not (_is_dask(X) or trows.dask) and target_x is not X
             and getattr(X, "shape", (0,))[0] == result.n)
    dkeys = np.empty(result.n) if keyed else None
    rows, y, b, L = _state(result, X, y, margins_out=dkeys)
    d = rows.d
    Linv = sla.solve_triangular(L, np.eye(d), lower=True, check_finite=False)
    M = np.empty((d, d + 2))
    M[:, :d] = Linv.T
    M[:, d] = result.theta
    M[:, d + 1] = b
    uniform = bool(mem[0]) if m and (mem.all() or not mem.any()) else None
    out = _map_rows(trows, ty, _k_expost, (loss, M, result.sigma ** 2, mem if uniform is None else uniform, keyed),
                    ncols=4 + keyed)
    if keyed:
        keys = _record_keys(out[:, 4], ty)
        dkeys = _record_keys(dkeys, y, out=dkeys)
    _check_members(rows, y, trows, ty, mem, keys if keyed else None, dkeys)
    log_det, grad_sq, cross, mu_all = (out[:, j] for j in range(4))
    arg = np.where(mem, -mu_all, mu_all)
    if np.any(arg <= -1.0):
        i = int(np.flatnonzero(arg <= -1.0)[0])
        raise ValueError(
            f"target {i}: 1 - f''·x^T H^-1 x = {1 + arg[i]:.3e} <= 0, so removing it would leave a non-convex "
            "objective; a member of D with lam > 0 always has f''·x^T H^-1 x < 1 — is it really in D?")
    for name, arr in (("log_det", log_det), ("grad_sq", grad_sq), ("cross", cross)):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"ex-post pDP term {name} is not finite (overflow); target_x is too large")
    return ExPostTerms(log_det=log_det, grad_sq=grad_sq, cross=cross, mu=mu_all, member=mem)


def _and(a: bool, b: bool) -> bool:
    return a and b


def _k_expost(Xe: np.ndarray, yc: np.ndarray, off: int, loss: GLMLoss, M: np.ndarray, s2: float,
              mem: Any, margins: bool = False) -> np.ndarray:
    """Per target of one block: (log_det, grad_sq, cross, mu) columns, and the margin x^T theta if ``margins``.

    ``ValueError`` if a target is not finite. A removal with :math:`f''\\,x^\\top H^{-1}x \\ge 1`
    gets a log_det of -inf or NaN here; the caller refuses it (after the membership check,
    which names a target that is not a record).
    """
    d = M.shape[0]
    xx = np.einsum("ij,ij->i", Xe, Xe)
    if not np.isfinite(xx).all() and not np.isfinite(Xe).all():
        raise ValueError("target_x must be finite (no NaN or inf)")
    out = np.empty((Xe.shape[0], 5 if margins else 4))
    # a row too large overflows here; the caller refuses its non-finite terms
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        V = np.matmul(Xe, M, out=_scratch((Xe.shape[0], M.shape[1]), 1, "products")[0])
        quad = np.einsum("ij,ij->i", V[:, :d], V[:, :d])
        d1, d2 = loss._d1_d2(V[:, d], yc)
        mu = d2 * quad
        rem = mem if isinstance(mem, bool) else mem[off:off + Xe.shape[0]]
        sgn = np.where(rem, -1.0, 1.0) if not isinstance(rem, bool) else (-1.0 if rem else 1.0)
        arg = sgn * mu
        out[:, 0] = -np.log1p(arg)
        out[:, 1] = d1 * d1 * xx / (2.0 * s2)
        out[:, 2] = -sgn * d1 * V[:, d + 1] / s2
    out[:, 3] = mu
    if margins:
        out[:, 4] = V[:, d]
    return out


def _row_hash(Xe: np.ndarray, yc: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each record (x_i, y_i) of a block, row-major (-0.0 read as 0.0)."""
    d = Xe.shape[1]
    W = (Xe + 0.0).view(np.uint64)
    H = W ^ (W >> np.uint64(31))
    H *= _HASH_MULT[np.arange(d) % _HASH_MULT.size]  # wraps modulo 2**64
    h = H.sum(axis=1, dtype=np.uint64)
    yc = np.asarray(yc)
    parts = (yc.real, yc.imag) if yc.dtype.kind == "c" else (yc,)
    for j, part in enumerate(parts):  # a weighted record's label and weight
        wy = (np.asarray(part, dtype=np.float64) + 0.0).view(np.uint64)
        h += (wy ^ (wy >> np.uint64(31))) * _HASH_MULT[(d + j) % _HASH_MULT.size]
    return h


def _k_hits(Xe: np.ndarray, yc: np.ndarray, off: int, hs: np.ndarray) -> list:
    """[(position in the sorted target hashes, data row)] for the block's records whose hash is a target's."""
    h = _row_hash(Xe, yc)
    o = np.argsort(h)
    pos = np.empty(h.size, dtype=np.intp)
    pos[o] = np.searchsorted(hs, h[o])  # sorted queries walk the sorted hashes once (cache-friendly)
    pos_c = np.minimum(pos, max(hs.size - 1, 0))
    hit = (pos < hs.size) & (hs[pos_c] == h) if hs.size else np.zeros(h.size, dtype=bool)
    i = np.flatnonzero(hit)
    return [(pos[i], off + i)] if i.size else []


def _same_rows(a: _Rows, b: _Rows) -> bool:
    if a.intercept != b.intercept or a.clip != b.clip or a.shape != b.shape:
        return False
    if a.X is b.X:
        return True
    if a.dask and b.dask:
        return a.X.name == b.X.name
    return False


def _k_equal(Xe: np.ndarray, yc: np.ndarray, off: int, other: _Rows, oy: Any) -> bool:
    k = Xe.shape[0]
    return bool(np.array_equal(Xe, other.effective(other.X[off:off + k]))
                and np.array_equal(yc, np.asarray(oy[off:off + k])))


#: The weight of the label in a record's matching key :func:`_record_keys`.
_KEY_LABEL = 0.7548776662466927
#: The weight of a record's weight in its key (a weighted loss's complex labels).
_KEY_WEIGHT = 0.5698402909980532


def _record_keys(margins: np.ndarray, y: Any, out: np.ndarray | None = None) -> np.ndarray:
    """The key of each record (x, y) for sort-merge matching: its margin x^T theta plus a multiple of y.

    Grouping only: every pair it proposes is then compared exactly, so a coincidence (records
    that differ only across theta, or the same margin rounded otherwise) never accepts a target.
    """
    y = np.asarray(y)
    if y.dtype.kind == "c":  # a weighted record: its weight enters the key too
        return np.add(margins, np.real(y) * _KEY_LABEL + np.imag(y) * _KEY_WEIGHT, out=out)
    return np.add(margins, np.multiply(np.asarray(y, dtype=np.float64), _KEY_LABEL), out=out)


#: Largest number of index bits packed below a key for :func:`_key_order` (n up to 4·10⁶): the key
#: keeps 42 of its 64 bits (30 of its mantissa). Beyond, the rows are ordered by an argsort.
_PACK_BITS_MAX = 22
#: How far (in ranks) from a target's key :func:`_match_by_key` looks for its record when the first guess fails.
_KEY_WINDOW = 4


def _ordered_key(k: np.ndarray) -> np.ndarray:
    """Finite float64 keys as int64 in the same order (``-0.0`` just below ``0.0``): a new array."""
    u = np.ascontiguousarray(k, dtype=np.float64).view(np.int64)
    o = u >> 63
    o &= np.int64(0x7FFF_FFFF_FFFF_FFFF)
    o ^= u
    return o


def _key_order(k: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, its keys): the positions in order of their key's top ``64 - bits`` bits, ties by position.

    ``bits`` = 0: an argsort of the whole key. Otherwise the position is packed into the key's
    low ``bits`` bits and the packed integers are sorted (a plain sort, about twice as fast as
    an argsort). The returned keys (the ordered keys shifted right by ``bits``) are sorted.
    """
    o = _ordered_key(k)
    if bits == 0:
        order = np.argsort(o, kind="stable")
        return order, o[order]
    o &= np.int64(-(1 << bits))
    o |= np.arange(o.size, dtype=np.int64)
    o.sort()
    order = (o & np.int64((1 << bits) - 1)).astype(np.intp, copy=False)
    o >>= bits
    return order, o


def _k_pairs_equal(Xe: np.ndarray, yc: np.ndarray, off: int, rows: _Rows, y: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """For a block of targets: whether each equals (row and label, exactly) its candidate data record (-1: none)."""
    c = cand[off:off + Xe.shape[0]]
    ok = c >= 0
    whole = bool(ok.all())
    cc = c if whole else np.where(ok, c, 0)
    # every index is in range: the gather skips numpy's per-element bounds check
    if rows.intercept is None and rows.clip is None and type(rows.X) is np.ndarray and rows.X.dtype == np.float64:
        Xd = np.take(rows.X, cc, axis=0, out=_scratch((Xe.shape[0], Xe.shape[1]), 1, "pairs")[0], mode="clip")
    else:
        Xd = rows.effective(np.take(rows.X, cc, axis=0, mode="clip"))
    yd = np.take(y, cc, mode="clip")
    # exact comparison of the values (finite: -0.0 equals 0.0); a block that pairs whole is
    # compared at once (one comparison that stops at the first difference is not needed then)
    if whole and np.array_equal(Xd, Xe) and np.array_equal(yd, yc):
        return ok
    return ok & (yd == yc) & (Xd == Xe).all(axis=1)


def _match_by_key(rows: _Rows, y: np.ndarray, trows: _Rows, ty: np.ndarray, idx: np.ndarray, keys: np.ndarray,
                  dkeys: np.ndarray) -> np.ndarray:
    """Which member targets ``idx`` equal a data record: keys of both sides sorted and merged, each pair compared exactly.

    The keys (:func:`_record_keys`, from margins that other passes form anyway), two
    sorts of n and m keys, and one pass over the targets that gathers each one's candidate data
    row: memory O(n + m) numbers, never a copy of X. The keys only propose pairs (BLAS may round
    the same row differently at another position, and :func:`_key_order` drops their low bits);
    the exact comparison decides. A target not paired by rank is compared with the records
    within :data:`_KEY_WINDOW` ranks of its key. Returns a boolean mask over ``idx``; targets
    left unpaired go to :func:`_check_members`'s hash path. ``keys``, ``dkeys``: every target's
    and every record's key.
    """
    kD = dkeys
    sub = trows if idx.size == trows.n else trows.like(trows.X[idx])
    tys = ty if idx.size == trows.n else ty[idx]
    kT = keys if idx.size == trows.n else keys[idx]
    if kD.size == 0:
        return np.zeros(kT.size, dtype=bool)
    size = max(kD.size, kT.size)
    bits = (size - 1).bit_length() if size <= 1 << _PACK_BITS_MAX else 0
    oD, sD = _key_order(kD, bits)
    if kT.size == kD.size:
        # the usual case (every record, in another order): the j-th smallest target key pairs with the j-th row
        cand = np.empty(kT.size, dtype=np.intp)
        cand[_key_order(kT, bits)[0]] = oD
        found = _map_rows(sub, tys, _k_pairs_equal, (rows, y, cand)).astype(bool)
        if found.all():
            return found
        miss = np.flatnonzero(~found)
    else:
        found = np.zeros(kT.size, dtype=bool)
        miss = np.arange(kT.size)
    # the records near each remaining target's key: its rank among the records' keys, then the ranks around it
    pos = np.searchsorted(sD, _ordered_key(kT[miss]) >> bits)
    del sD
    left = miss
    for step in range(2 * _KEY_WINDOW + 1):
        j = pos + (step + 1) // 2 * (1 if step % 2 else -1)  # 0, +1, -1, +2, -2, ...
        c = np.where((j >= 0) & (j < kD.size), oD[np.clip(j, 0, kD.size - 1)], -1)
        part = (sub, tys) if left.size == kT.size else (sub.like(sub.X[left]), tys[left])
        hit = _map_rows(*part, _k_pairs_equal, (rows, y, c)).astype(bool)
        found[left[hit]] = True
        left, pos = left[~hit], pos[~hit]
        if not left.size:
            break
    return found


def _check_members(rows: _Rows, y: Any, trows: _Rows, ty: Any, mem: np.ndarray, keys: np.ndarray | None = None,
                   dkeys: np.ndarray | None = None) -> None:
    """``ValueError`` naming ``target_x[j]`` unless every target flagged ``member`` is a record (x_i, y_i).

    The usual call (every row of the data, in order) is one blockwise comparison (none for
    the very same array). Rows in memory or on disk in another order, given ``keys`` and
    ``dkeys`` (:func:`_record_keys` of the targets and the records): a sort-merge on the keys
    proposes one data row per target and the pair is compared exactly (:func:`_match_by_key`;
    memory O(n + m) numbers). Whatever is left (Dask, or keys shared
    by different records): the member targets' 64-bit record hashes are sorted, one pass over
    the data collects the rows whose hash is a target's, and every candidate pair is compared
    exactly (memory O(m + block); a hash collision never accepts a target).
    """
    idx = np.flatnonzero(mem)
    if idx.size == 0:
        return
    if idx.size == rows.n and trows.n == rows.n:
        if _same_rows(rows, trows) and (ty is y or (not _is_dask(y) and np.array_equal(ty, y))):
            return
        if (not (rows.dask or trows.dask) and _k_equal(trows.effective(trows.X[:1]), np.asarray(ty[:1]), 0, rows, y)
                and _map_reduce(trows, ty, _k_equal, (rows, y), combine=_and)):
            return  # the same records in the same order (the first row decides whether to look further)
    if keys is not None and dkeys is not None:
        # rows in memory or on disk: sort-merge on the keys, then an exact comparison of each pair
        found = _match_by_key(rows, np.asarray(y), trows, np.asarray(ty), idx, keys, dkeys)
        idx = idx[~found]  # what the key did not pair (equal keys of different records) goes by hash
        if idx.size == 0:
            return
    if trows.dask:  # a target list in another order: its hashes and rows are gathered here
        trows = trows.like(np.asarray(trows.X.compute()))
        ty = np.asarray(ty.compute()) if _is_dask(ty) else ty
    ty = np.asarray(ty)
    hT = np.empty(idx.size, dtype=np.uint64)
    k = trows.block_rows
    for s in range(0, idx.size, k):
        j = idx[s:s + k]
        hT[s:s + k] = _row_hash(trows.effective(trows.X[j]), ty[j])
    order = np.argsort(hT, kind="stable")
    hs = hT[order]
    hits = _map_reduce(rows, y, _k_hits, (hs,), combine=lambda a, b: a + b)
    found = np.zeros(idx.size, dtype=bool)
    if hits:
        pos = np.concatenate([h[0] for h in hits])
        drow = np.concatenate([h[1] for h in hits])
        # equal-hash runs: a data row is compared with every target of its run
        lo = pos
        run_end = np.searchsorted(hs, hs, side="right")  # end of each equal-hash run
        hi = run_end[pos]
        ycon = y if not _is_dask(y) else None
        for s in range(0, pos.size, k):
            sl = slice(s, s + k)
            dr = drow[sl]
            if rows.dask:
                Xd = rows.effective(np.asarray(rows.X[np.sort(dr)].compute()))
                srt = np.argsort(np.argsort(dr))
                Xd = Xd[srt]
                yd = np.asarray(y[np.sort(dr)].compute())[srt]
            else:
                Xd = rows.effective(rows.X[dr])
                yd = ycon[dr]
            for off in range(int(np.max(hi[sl] - lo[sl]))):
                t = np.minimum(lo[sl] + off, hi[sl] - 1)
                tj = order[t]
                Xt = trows.effective(trows.X[idx[tj]])
                # exact comparison of the values (finite: -0.0 equals 0.0, as in the hash)
                ok = np.all(Xd == Xt, axis=1) & (yd == ty[idx[tj]]) & (lo[sl] + off < hi[sl])
                found[tj[ok]] = True
    if not np.all(found):
        j = int(idx[np.flatnonzero(~found)[0]])
        raise ValueError(f"target_x[{j}] (with target_y[{j}]) is not a record of (X, y), but member=True for it "
                         f"({int(np.count_nonzero(~found))} member target(s) not found): a removal analysis "
                         "needs a record of the data set; pass member=False to analyse adding it")


def objpert_hessian(result: ObjPertResult, X: ArrayLike, y: ArrayLike) -> np.ndarray:
    r"""The Hessian :math:`H = \sum_i f''(x_i^\top\theta^P; y_i)\,x_i x_i^\top + \lambda I` of ObjPert's objective.

    :math:`H = \nabla^2 J(\theta^P; D)`, the same for the perturbed objective (the noise term is linear).

    The matrix at the released point of which Redberg & Wang 2021, Thm 6 (and
    :func:`ex_post_pdp`) use the inverse, and whose smallest eigenvalue the GOE
    machinery (:func:`pdpkit.analyze_gauss.private_lambda_min`, Wang 2018's AnalyzeGauss)
    releases privately. :math:`H` is a function of the data: it is **not** private.

    Parameters
    ----------
    result : ObjPertResult
        The fit.
    X, y : array_like
        The data set it was fitted on (checked: ``ValueError`` if the perturbed gradient at
        ``result.theta`` is not zero on it, as in :func:`ex_post_pdp`); numpy, memmap or Dask
        arrays, read by blocks.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The symmetric positive definite :math:`H` (float64, formed by SYRK on blocks of rows in one pass).
    """
    H = _fitted_data(result, X, y, want_h=True)[3]
    return np.triu(H) + np.triu(H, 1).T


def ex_post_pdp(result: ObjPertResult, X: ArrayLike, y: ArrayLike, target_x: ArrayLike, target_y: ArrayLike, *, member: ArrayLike,
                signed: bool = False) -> np.ndarray | float:
    r"""Exact ex-post per-instance DP :math:`\epsilon_1(\theta^P, D, D_{\pm z})` of every GLM target.

    Redberg & Wang 2021, Thm 6 and Cor 7 (proof in App. E.1), in this package's sign
    convention (derived in the book and checked against the exact output density
    :func:`objpert_log_density`): with :math:`H = \nabla^2 J(\theta^P; D)`,
    :math:`b = -\nabla J(\theta^P; D)`, :math:`g = f'(x^\top\theta^P; y)\,x` and
    :math:`\mu = f''(x^\top\theta^P; y)\,x^\top H^{-1} x`,

    .. math::

       \epsilon_1 = \begin{cases}
       \left|-\log(1 + \mu) + \frac{\|g\|^2}{2\sigma^2} - \frac{g^\top b}{\sigma^2}\right| & z \notin D \text{ (member=False: adding } z),\\
       \left|-\log(1 - \mu) + \frac{\|g\|^2}{2\sigma^2} + \frac{g^\top b}{\sigma^2}\right| & z \in D \text{ (member=True: removing } z),
       \end{cases}

    and the expression inside :math:`|\cdot|` equals :math:`\log p_D(\theta^P) - \log p_{D_{\pm z}}(\theta^P)`.
    It is a function of the data and the output: publishing it is *not* private (that is
    what the privacy report is for).

    One Cholesky factor of :math:`H` (the fit's, if present; otherwise :math:`H` is formed in
    the same pass over the data as the gradient) and one triangular inverse; the targets are
    processed in cache-sized blocks with one matrix product each, no Python loop over targets. :math:`b` is recomputed as :math:`-\nabla J(\theta^P; D)` (exact for the
    released point), and a ``ValueError`` is raised if ``X, y`` are not the fitted data.

    Parameters
    ----------
    result : ObjPertResult
        The fit.
    X, y : array_like
        The data set :math:`D` it was fitted on (numpy, memmap or Dask arrays, read by blocks).
    target_x : array_like, shape (m, d) or (d,)
        Target feature vectors (also a memmap or a Dask array: one value per row, computed
        block by block, gathered as a numpy array).
    target_y : array_like, shape (m,) or scalar
        Target labels.
    member : bool or array of bool, shape (m,)
        ``True``: :math:`z \in D`, neighbour :math:`D \setminus \{z\}`;
        ``False``: :math:`z \notin D`, neighbour :math:`D \cup \{z\}`. Every target with
        ``member=True`` must be a record of ``(X, y)`` (exact equality of the row and its label:
        the data themselves in order are recognised by one blockwise comparison; otherwise the
        targets' record hashes are sorted, one pass over the data finds the candidates, and each
        is compared exactly; memory :math:`O(m + \text{block})`); ``ValueError`` naming
        ``target_x`` and the first offending index otherwise.
    signed : bool
        Return the signed log-ratio :math:`\log p_D - \log p_{D_{\pm z}}` instead of its absolute value.

    Returns
    -------
    numpy.ndarray of shape (m,), or float for a single target given as shape (d,).

    Raises
    ------
    ValueError
        For a member target that is not a record of ``(X, y)``, a removal with
        :math:`1 - \mu \le 0` (impossible for a genuine member with :math:`\lambda > 0`), bad
        shapes, labels outside the loss's domain or non-finite input.
    """
    terms = ex_post_pdp_terms(result, X, y, target_x, target_y, member=member)
    out = terms.total if signed else terms.epsilon
    if np.ndim(target_x) == 1:
        return float(out[0])
    return out


def ex_post_pdp_general(result: ObjPertResult, X: ArrayLike, y: ArrayLike, target_grad: ArrayLike, target_hessian: ArrayLike, *,
                        member: ArrayLike, signed: bool = False) -> np.ndarray | float:
    r"""Ex-post pDP of ObjPert for a smooth convex (not necessarily GLM) per-example loss.

    Redberg & Wang 2021, Thm 6: with :math:`g = \nabla\ell(\theta^P; z)`,
    :math:`G = \nabla^2\ell(\theta^P; z)` (supplied per target),

    .. math::

       \epsilon_1 = \left|-\log\frac{\det(H \pm G)}{\det H} + \frac{\|g\|^2}{2\sigma^2}
       \mp \frac{g^\top b}{\sigma^2}\right|

    (upper signs: adding :math:`z \notin D`; lower signs: removing :math:`z \in D`).
    The log-determinant ratio is :math:`\log\det(I \pm L^{-1} G L^{-\top})` with
    :math:`H = LL^\top`, i.e. the product :math:`\prod_j(1 \pm \mu_j)` of the recursive
    matrix-determinant-lemma expansion. For a GLM, :math:`G = f''xx^\top` and this reduces
    to :func:`ex_post_pdp`. The data set's own loss is the GLM loss of ``result``.

    Parameters
    ----------
    result, X, y, member, signed
        As in :func:`ex_post_pdp`.
    target_grad : array_like, shape (m, d) or (d,)
        :math:`\nabla\ell(\theta^P; z)` per target.
    target_hessian : array_like, shape (m, d, d) or (d, d)
        :math:`\nabla^2\ell(\theta^P; z)` per target (symmetric).

    Raises
    ------
    ValueError
        If :math:`H \pm G` is not positive definite (the neighbour's objective would not be
        strictly convex), for asymmetric Hessians or bad shapes.
    """
    _rows, y, b, L = _state(result, X, y)
    d = _rows.d
    g, G, scalar = _check_general_targets(target_grad, target_hessian, d)
    m = g.shape[0]
    mem = check_member_flags(member, m)
    sgn = np.where(mem, -1.0, 1.0)
    Linv = sla.solve_triangular(L, np.eye(d), lower=True, check_finite=False)
    A = Linv @ G @ Linv.T  # (m, d, d)
    A = 0.5 * (A + np.swapaxes(A, -1, -2))
    B = np.eye(d) + sgn[:, None, None] * A
    try:
        LB = np.linalg.cholesky(B)
    except np.linalg.LinAlgError:
        raise ValueError("H - target_hessian (removal) or H + target_hessian (addition) is not positive definite "
                         "for some target: the neighbouring objective would not be strictly convex") from None
    log_det = -2.0 * np.sum(np.log(np.diagonal(LB, axis1=-2, axis2=-1)), axis=-1)
    s2 = result.sigma ** 2
    total = log_det + np.einsum("ij,ij->i", g, g) / (2.0 * s2) - sgn * (g @ b) / s2
    out = total if signed else np.abs(total)
    return float(out[0]) if scalar else out


# ========================================================== data-independent bounds
def pdp_bound_data_independent(loss: str | GLMLoss, target_x: ArrayLike, *, lam: float, sigma: float, rho: float,
                               theta: ArrayLike | None = None, target_y: ArrayLike | None = None,
                               sharp: bool = False) -> np.ndarray | float:
    r"""Data-independent high-probability bound on the ex-post pDP of ObjPert (GLMs).

    Redberg & Wang 2021, Thm 8 (log-determinant term) with Thm 9's high-probability bound
    on the cross term (:math:`\ell_1` form, Hölder with :math:`\|b\|_\infty`):

    .. math::

       \epsilon_1(\theta^P, D, D_{\pm z}) \le -\log\!\left(1 - \frac{c_2\|x\|_2^2}{\lambda}\right)
       + \frac{c_1^2\|x\|_2^2}{2\sigma^2} + \frac{c_1\|x\|_1\sqrt{2\log(2d/\rho)}}{\sigma},

    simultaneously for all targets, with probability at least :math:`1 - \rho` over
    :math:`b` (the event is :math:`\|b\|_\infty \le \sigma\sqrt{2\log(2d/\rho)}`). Here
    :math:`c_1 = |f'(x^\top\theta^P; y)|` and :math:`c_2 = f''(x^\top\theta^P; y)`
    when ``theta`` (the released :math:`\theta^P`) and ``target_y`` are given — the
    bound then depends on the output and the target only, not on :math:`D` — and the loss's
    worst-case constants :math:`c_1 = L`, :math:`c_2 = \beta` otherwise (a bound that holds
    before seeing the output). The first term is ``inf`` when :math:`c_2\|x\|^2 \ge \lambda`.

    With ``sharp=True`` the first term is replaced by :math:`\log(1 + c_2\|x\|^2/\lambda)`,
    which is also valid and always finite: for an addition :math:`\mu \le c_2\|x\|^2/\lambda`
    because :math:`H \succeq \lambda I`; for a removal, Sherman–Morrison gives
    :math:`-\log(1 - \mu) = \log(1 + c_2 x^\top H_{-z}^{-1} x)` with the neighbour's Hessian
    :math:`H_{-z} \succeq \lambda I`.

    Parameters
    ----------
    loss : str or GLMLoss
    target_x : array_like, shape (m, d) or (d,)
    lam, sigma : float
        Positive regularization and noise scale.
    rho : float
        Failure probability in :math:`(0, 1)`.
    theta : array_like, shape (d,), optional
        The released :math:`\theta^P`.
    target_y : array_like, shape (m,), optional
        Labels (required with ``theta``).
    sharp : bool
        Use the sharper log term.

    Returns
    -------
    numpy.ndarray of shape (m,), or float for a single target of shape (d,).
    """
    loss = _check_loss(loss)
    tx = as_finite_array(target_x, "target_x")
    scalar = tx.ndim == 1
    if scalar:
        tx = tx[None, :]
    if tx.ndim != 2 or tx.shape[1] == 0:
        raise ValueError(f"target_x must have shape (m, d) or (d,); got {np.shape(target_x)}")
    m, d = tx.shape
    lam = float(check_positive(lam, "lam"))
    sigma = float(check_positive(sigma, "sigma"))
    rho = float(check_probability(rho, "rho"))
    if theta is not None:
        th = as_finite_array(theta, "theta", ndim=1)
        if th.shape[0] != d:
            raise ValueError(f"theta must have shape ({d},); got {th.shape}")
        if target_y is None:
            raise ValueError("target_y is required when theta is given")
        ty = _float_labels(target_y, loss)
        if ty.shape != (m,):
            raise ValueError(f"target_y must have shape ({m},); got {np.shape(target_y)}")
        ty = loss.check_labels(ty, "target_y")
        c1, c2 = loss._d1_d2(tx @ th, ty)
        c1 = np.abs(c1)
    else:
        if target_y is not None:
            raise ValueError("target_y is only used together with theta")
        c1 = np.full(m, loss.lipschitz)
        c2 = np.full(m, loss.smoothness)
    xx = np.einsum("ij,ij->i", tx, tx)
    x1 = np.sum(np.abs(tx), axis=1)
    a = c2 * xx / lam
    with np.errstate(divide="ignore", invalid="ignore"):
        if sharp:
            t1 = np.log1p(a)
        else:
            t1 = np.where(a < 1.0, -np.log1p(-np.minimum(a, 1.0 - 1e-300)), np.inf)
        # a zero gradient (c1 = 0 or x = 0) contributes nothing, even with c1 = inf (squared loss)
        t2 = np.where((c1 == 0) | (xx == 0), 0.0, c1 * c1 * xx) / (2.0 * sigma * sigma)
        t3 = np.where((c1 == 0) | (x1 == 0), 0.0, c1 * x1) * math.sqrt(2.0 * math.log(2.0 * d / rho)) / sigma
    out = t1 + t2 + t3
    return float(out[0]) if scalar else out


# ============================================================ classic DP guarantees
def _classic_args(L, beta, lam, delta):
    L = float(check_positive(L, "L"))
    beta = float(as_finite_array(beta, "beta"))
    if beta < 0:
        raise ValueError(f"beta must be >= 0; got {beta!r}")
    lam = float(check_positive(lam, "lam"))
    delta = float(check_probability(delta, "delta"))
    return L, beta, lam, delta


def objpert_epsilon_classic(delta: float, *, L: float, beta: float, lam: float, sigma: float,
                            form: str = "kifer") -> float:
    r"""The classic :math:`(\epsilon, \delta)`-DP guarantee of ObjPert (Gaussian noise), as the smallest :math:`\epsilon`.

    Setting: GLM loss, add/remove neighbours, summed loss, :math:`\lambda` the ridge
    regularization; ``L`` bounds :math:`\|\nabla\ell\|_2` and ``beta`` the eigenvalues of
    :math:`\nabla^2\ell` over the data domain (for :math:`\|x\| \le 1`: ``L = loss.lipschitz``,
    ``beta = loss.smoothness``; for :math:`\|x\| \le R` multiply them by :math:`R` and
    :math:`R^2`).

    ``form="kifer"`` — Redberg, Koskela & Wang, Thm 2.8 (Kifer et al. 2012): ObjPert is
    :math:`(\epsilon, \delta)`-DP when :math:`\lambda \ge 2\beta/\epsilon` and
    :math:`\sigma \ge L\sqrt{8\log(2/\delta) + 4\epsilon}/\epsilon`. Both conditions are
    monotone in :math:`\epsilon`, so the smallest valid :math:`\epsilon` is

    .. math::

       \epsilon = \max\!\left(\frac{2\beta}{\lambda},\;
       \frac{2L^2 + L\sqrt{4L^2 + 8\sigma^2\log(2/\delta)}}{\sigma^2}\right).

    ``form="lecture"`` — the lecture notes on objective perturbation (privacy analysis of
    ObjPert), made explicit for GLMs: the privacy loss is at most
    :math:`\log(1 + \beta/\lambda) + L^2/(2\sigma^2) + |g^\top b|/\sigma^2`, and for a GLM
    :math:`|g^\top b| \le L|u^\top b|` with the *fixed* unit direction :math:`u = x/\|x\|`, so
    :math:`|g^\top b| \le \sigma L\sqrt{2\log(2/\delta)}` except with probability :math:`\delta`:

    .. math::

       \epsilon = \log\!\left(1 + \frac{\beta}{\lambda}\right) + \frac{L^2}{2\sigma^2}
       + \frac{L}{\sigma}\sqrt{2\log(2/\delta)}.

    The two differ in how the budget is split: Kifer et al. bound the log-determinant term by
    :math:`\beta/\lambda \le \epsilon/2` (hence :math:`\lambda \ge 2\beta/\epsilon`) and the
    two Gaussian terms together by :math:`\epsilon/2`, whereas the lecture's form adds the
    three terms as they are, so it is never larger (it uses :math:`\log(1+\beta/\lambda) \le
    \beta/\lambda` and no factor-two split) and needs no condition on :math:`\lambda`. The
    lecture's headline writes :math:`\sqrt{2\log(1/\delta)}` inside an :math:`O(\cdot)`; the
    two-sided Gaussian tail it uses in the proof gives :math:`\log(2/\delta)`, used here. The
    GLM structure matters: without it :math:`g` depends on :math:`b` and the tail bound
    fails (Redberg, Koskela & Wang, App. E, on Kifer et al.'s Lemma 17).

    Parameters
    ----------
    delta : float
        Target δ ∈ (0, 1).
    L : float
        Bound L > 0 on the per-record loss gradient norm :math:`\|\nabla\ell\|_2` over the data
        domain (``loss.lipschitz`` for rows of norm ≤ 1).
    beta : float
        Bound β ≥ 0 on the eigenvalues of the per-record loss Hessian over the data domain
        (``loss.smoothness`` for rows of norm ≤ 1).
    lam : float
        Ridge regularization :math:`\lambda > 0` of the summed objective.
    sigma : float
        Standard deviation σ > 0 of each coordinate of the noise vector b.
    form : {"kifer", "lecture"}
        Which guarantee (above); default ``"kifer"``.

    Returns
    -------
    float
        The smallest :math:`\epsilon` for which the chosen form certifies :math:`(\epsilon, \delta)`-DP.
    """
    L, beta, lam, delta = _classic_args(L, beta, lam, delta)
    sigma = float(check_positive(sigma, "sigma"))
    ld = math.log(2.0 / delta)
    if form == "kifer":
        gauss = (2.0 * L * L + L * math.sqrt(4.0 * L * L + 8.0 * sigma * sigma * ld)) / (sigma * sigma)
        return max(2.0 * beta / lam, gauss)
    if form == "lecture":
        return math.log1p(beta / lam) + L * L / (2.0 * sigma * sigma) + (L / sigma) * math.sqrt(2.0 * ld)
    raise ValueError(f"form must be 'kifer' or 'lecture'; got {form!r}")


def objpert_sigma_classic(eps: float, delta: float, *, L: float, beta: float, lam: float,
                          form: str = "kifer") -> float:
    r"""Smallest noise scale :math:`\sigma` with which ObjPert is :math:`(\epsilon, \delta)`-DP by :func:`objpert_epsilon_classic`.

    ``form="kifer"``: :math:`\sigma = L\sqrt{8\log(2/\delta) + 4\epsilon}/\epsilon`, valid only if
    :math:`\lambda \ge 2\beta/\epsilon` (Redberg, Koskela & Wang, Thm 2.8).
    ``form="lecture"``: solves :math:`L^2/(2\sigma^2) + (L/\sigma)\sqrt{2\log(2/\delta)} = \epsilon - \log(1 + \beta/\lambda)`,
    valid only if :math:`\epsilon > \log(1 + \beta/\lambda)`.

    Parameters
    ----------
    eps : float
        Target ε > 0.
    delta : float
        Target δ ∈ (0, 1).
    L : float
        Bound L > 0 on the per-record loss gradient norm :math:`\|\nabla\ell\|_2` over the data
        domain (``loss.lipschitz`` for rows of norm ≤ 1).
    beta : float
        Bound β ≥ 0 on the eigenvalues of the per-record loss Hessian over the data domain
        (``loss.smoothness`` for rows of norm ≤ 1).
    lam : float
        Ridge regularization :math:`\lambda > 0` of the summed objective.
    form : {"kifer", "lecture"}
        Which guarantee (above); default ``"kifer"``.

    Returns
    -------
    float
        The smallest σ > 0 (standard deviation of each coordinate of b).

    Raises
    ------
    ValueError
        Naming ``lam`` when no :math:`\sigma` achieves :math:`\epsilon` for this :math:`\lambda`.
    """
    L, beta, lam, delta = _classic_args(L, beta, lam, delta)
    eps = float(check_positive(eps, "eps"))
    ld = math.log(2.0 / delta)
    if form == "kifer":
        if lam < 2.0 * beta / eps:
            raise ValueError(f"lam must be >= 2*beta/eps = {2.0 * beta / eps:.6g} for the Kifer et al. guarantee "
                             f"(Redberg, Koskela & Wang, Thm 2.8); got lam={lam:g}: no sigma gives eps={eps:g}")
        return L * math.sqrt(8.0 * ld + 4.0 * eps) / eps
    if form == "lecture":
        rest = eps - math.log1p(beta / lam)
        if rest <= 0:
            raise ValueError(f"lam must exceed beta/(e^eps - 1) = {beta / math.expm1(eps):.6g} for the lecture's "
                             f"guarantee; got lam={lam:g}: no sigma gives eps={eps:g}")
        c = math.sqrt(2.0 * ld)
        a = 2.0 * rest / (c + math.sqrt(c * c + 2.0 * rest))  # positive root of a^2/2 + c a = rest, cancellation-free
        return L / a
    raise ValueError(f"form must be 'kifer' or 'lecture'; got {form!r}")


def objpert_calibrate_classic(eps: float, delta: float, *, loss: str | GLMLoss = "logistic",
                              lam: float | None = None, form: str = "kifer") -> tuple[float, float]:
    r"""Regularization and noise scale of an :math:`(\epsilon, \delta)`-DP ObjPert run.

    For rows with :math:`\|x_i\|_2 \le 1` and a loss with constants
    :math:`L` (``loss.lipschitz``) and :math:`\beta` (``loss.smoothness``). With
    ``lam=None`` and ``form="kifer"``, :math:`\lambda = 2\beta/\epsilon`, the smallest
    regularization Redberg, Koskela & Wang, Thm 2.8 (Kifer et al. 2012) allows; with
    ``form="lecture"`` and ``lam=None``, :math:`\lambda = 2\beta/\epsilon` as well (so the
    two forms are compared at the same :math:`\lambda`). :math:`\sigma` is then the
    smallest noise scale of :func:`objpert_sigma_classic`.

    Parameters
    ----------
    eps : float
        Target ε > 0.
    delta : float
        Target δ ∈ (0, 1).
    loss : str or GLMLoss
        A loss from :mod:`pdpkit.losses` or its name, with a bounded gradient; default
        ``"logistic"``.
    lam : float or None
        Regularization :math:`\lambda > 0`; ``None`` (default): :math:`2\beta/\epsilon`
        (1 for a loss with β = 0).
    form : {"kifer", "lecture"}
        Which guarantee of :func:`objpert_epsilon_classic`; default ``"kifer"``.

    Returns
    -------
    (lam, sigma) : tuple of float

    Raises
    ------
    ValueError
        If the loss has an unbounded gradient (no DP guarantee), or no :math:`\sigma`
        reaches :math:`\epsilon` at the given ``lam``.
    """
    loss = _check_loss(loss)
    eps = float(check_positive(eps, "eps"))
    if not math.isfinite(loss.lipschitz):
        raise ValueError(f"loss {loss.name!r} has an unbounded gradient: ObjPert with it is not DP for any finite eps")
    if lam is None:
        lam = 2.0 * loss.smoothness / eps if loss.smoothness > 0 else 1.0
    lam = float(check_positive(lam, "lam"))
    sigma = objpert_sigma_classic(eps, delta, L=loss.lipschitz, beta=loss.smoothness, lam=lam, form=form)
    return lam, sigma
