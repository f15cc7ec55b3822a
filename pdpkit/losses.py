r"""Generalized-linear-model losses with exact derivatives and their constants.

A GLM loss is :math:`\ell(\theta; x, y) = f(x^\top\theta; y)`. Each loss below is an
object with vectorized, numerically stable methods

* :meth:`GLMLoss.value` — :math:`f(t; y)`,
* :meth:`GLMLoss.d1`, :meth:`GLMLoss.d2`, :meth:`GLMLoss.d3` — the first three
  derivatives in :math:`t`,
* :meth:`GLMLoss.check_labels` — a ``ValueError`` naming ``y`` for labels outside the
  loss's domain,

and the constants per unit :math:`\|x\|_2` that the privacy theorems use:

* ``lipschitz`` — :math:`L = \sup_t |f'(t; y)|` (``math.inf`` if unbounded), so that
  :math:`\|\nabla\ell\|_2 \le L\|x\|_2`;
* ``smoothness`` — :math:`\beta = \sup_t f''(t; y)`, so that
  :math:`\nabla^2\ell \preceq \beta\|x\|_2^2 I`;
* ``d3_bound`` — :math:`\sup_t |f'''(t; y)|`;
* ``self_concordance`` — :math:`\sup_t |f'''(t; y)| / f''(t; y)` (the constant :math:`c`
  of Asi, Duchi & Talwar, Lemma 2.1 (i): :math:`f''` changes by at most a factor
  :math:`e^{c|s|}` when :math:`t` moves by :math:`s`).

The four losses (module-level instances; constants :math:`L`, :math:`\beta`,
self-concordance):

* ``logistic`` — :math:`\log(1 + e^{-yt})`, labels :math:`y \in \{-1, +1\}`;
  :math:`1`, :math:`1/4`, :math:`1`.
* ``squared`` — :math:`(y - t)^2/2`, real labels; :math:`\infty`, :math:`1`, :math:`0`.
* ``robust_log`` — :math:`h(y - t)` with :math:`h(u) = \log(1+e^u) + \log(1+e^{-u})`,
  real labels; :math:`1`, :math:`1/2`, :math:`1`.
* ``huber`` — the pseudo-Huber loss :math:`\delta^2(\sqrt{1 + ((y-t)/\delta)^2} - 1)`
  (:class:`Huber`, here :math:`\delta = 1`), real labels; :math:`\delta`, :math:`1`,
  :math:`3/(2\delta)`.

``robust_log`` is the smooth robust-regression loss of Asi, Duchi & Talwar (Example 1,
Example 3); its derivatives are bounded by 1, 1/2 and :math:`1/(3\sqrt3)`. The Huber
loss proper is only once differentiable, so ``huber`` is the pseudo-Huber loss, which is
:math:`C^\infty`, behaves like :math:`(y-t)^2/2` for :math:`|y - t| \ll \delta` and like
:math:`\delta|y - t|` for :math:`|y - t| \gg \delta`.

The squared loss has an **unbounded gradient** (:math:`L = \infty`): no output- or
objective-perturbation guarantee that needs :math:`L` applies to it unless the data
*and the parameter* are bounded; the book uses it only on bounded data, where the
ex-post per-instance guarantees (which need no :math:`L`) are what is reported.

All methods broadcast ``t`` against ``y``. They agree with a 60-digit evaluation to a
relative :math:`10^{-12}` for :math:`|t|` up to :math:`10^4` (``log1p``/``expit``-type stable
forms) and stay finite without overflow or ``RuntimeWarning`` for :math:`|t|` up to
:math:`10^{300}` (the squared loss's *value* overflows beyond about :math:`10^{150}`). Every method checks the labels with
:meth:`GLMLoss.check_labels`; the solvers in :mod:`pdpkit.objpert` check once and then
call the unchecked private kernels.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import expit

from ._validation import as_finite_array, check_positive

__all__ = [
    "GLMLoss",
    "Logistic",
    "Squared",
    "RobustLog",
    "Huber",
    "logistic",
    "squared",
    "robust_log",
    "huber",
    "get_loss",
]


class GLMLoss:
    r"""Base class of a GLM loss :math:`f(t; y)` with :math:`t = x^\top\theta`.

    Subclasses implement the private kernels ``_value``, ``_d1``, ``_d2``, ``_d3`` (and may
    override ``_d1_d2`` to share work) on arrays that have already been checked, and set
    the class constants ``name``, ``lipschitz``, ``smoothness``, ``d3_bound`` and
    ``self_concordance`` (see the module docstring for their meaning).
    """

    name: str = "glm"
    lipschitz: float = math.inf
    smoothness: float = math.inf
    d3_bound: float = math.inf
    self_concordance: float = math.inf

    # ----------------------------------------------------------------- public API
    def check_labels(self, y: Any, name: str = "y") -> np.ndarray:
        """Return ``y`` as a float array after checking it lies in the loss's label domain.

        Raises ``ValueError`` naming the parameter (``name``, default ``"y"``) for NaN/inf
        or labels outside the domain.

        Parameters
        ----------
        y : Any
            Labels, one per row of ``X`` (±1 for classification, real for regression).
        name : str, default 'y'
            The parameter's name in the error message.
        """
        return as_finite_array(y, name)

    def value(self, t: Any, y: Any) -> np.ndarray:
        """The loss :math:`f(t; y)` (elementwise, broadcasting ``t`` against ``y``).

        Parameters
        ----------
        t : Any
            Score t = xᵀθ (array; broadcast against ``y``).
        y : Any
            Labels, one per row of ``X`` (±1 for classification, real for regression).
        """
        t, y = self._prepare(t, y)
        return self._value(t, y)

    def d1(self, t: Any, y: Any) -> np.ndarray:
        r"""First derivative :math:`\partial_t f(t; y)`.

        Parameters
        ----------
        t : Any
            Score t = xᵀθ (array; broadcast against ``y``).
        y : Any
            Labels, one per row of ``X`` (±1 for classification, real for regression).
        """
        t, y = self._prepare(t, y)
        return self._d1(t, y)

    def d2(self, t: Any, y: Any) -> np.ndarray:
        r"""Second derivative :math:`\partial_t^2 f(t; y)` (:math:`\ge 0`: every loss here is convex).

        Parameters
        ----------
        t : Any
            Score t = xᵀθ (array; broadcast against ``y``).
        y : Any
            Labels, one per row of ``X`` (±1 for classification, real for regression).
        """
        t, y = self._prepare(t, y)
        return self._d2(t, y)

    def d3(self, t: Any, y: Any) -> np.ndarray:
        r"""Third derivative :math:`\partial_t^3 f(t; y)`.

        Parameters
        ----------
        t : Any
            Score t = xᵀθ (array; broadcast against ``y``).
        y : Any
            Labels, one per row of ``X`` (±1 for classification, real for regression).
        """
        t, y = self._prepare(t, y)
        return self._d3(t, y)

    def symbolic(self, t: Any, y: Any) -> Any:
        """The loss as a sympy expression in the sympy symbols ``t`` and ``y``.

        Used by the book to derive the derivatives and constants with sympy; the numeric
        methods are written independently (stable forms) and tested against it.

        Parameters
        ----------
        t : Any
            Score t = xᵀθ (array; broadcast against ``y``).
        y : Any
            Labels, one per row of ``X`` (±1 for classification, real for regression).
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<GLM loss {self.name!r}: L={self.lipschitz:g}, beta={self.smoothness:g}, self_concordance={self.self_concordance:g}>"

    # ------------------------------------------------------------- private kernels
    def _prepare(self, t: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        try:
            t_arr = np.asarray(t, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"t must be numeric (array-like of floats); got {type(t).__name__}") from exc
        if np.any(np.isnan(t_arr)):
            raise ValueError("t must not contain NaN")
        y_arr = self.check_labels(y)
        try:
            np.broadcast_shapes(t_arr.shape, y_arr.shape)
        except ValueError as exc:
            raise ValueError(f"t (shape {t_arr.shape}) and y (shape {y_arr.shape}) must broadcast") from exc
        return t_arr, y_arr

    def _d1_d2(self, t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._d1(t, y), self._d2(t, y)

    def _sum_d1_d2(self, t: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(sum of f, f', f'') at the margins ``t`` (a loss may share work between them)."""
        return (float(np.sum(self._value(t, y))), *self._d1_d2(t, y))

    def _value(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _d1(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _d2(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _d3(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


def _softplus(u: np.ndarray) -> np.ndarray:
    """log(1 + e^u) without overflow: max(u, 0) + log1p(e^{-|u|})."""
    return np.maximum(u, 0.0) + np.log1p(np.exp(-np.abs(u)))


def _sech2_quarter(u: np.ndarray) -> np.ndarray:
    r""":math:`\sigma(u)\sigma(-u) = e^{-|u|}/(1 + e^{-|u|})^2` with full relative accuracy."""
    e = np.exp(-np.abs(u))
    return e / (1.0 + e) ** 2


class Logistic(GLMLoss):
    r"""Logistic loss :math:`f(t; y) = \log(1 + e^{-yt})`, labels :math:`y \in \{-1, +1\}`.

    Derivatives (with :math:`\sigma(u) = 1/(1 + e^{-u})`):
    :math:`f' = -y\,\sigma(-yt)`, :math:`f'' = \sigma(t)\sigma(-t)`,
    :math:`f''' = -f''(t)\tanh(t/2)`. Constants: :math:`L = 1`, :math:`\beta = 1/4`,
    :math:`\sup|f'''| = 1/(6\sqrt3)` and :math:`|f'''|/f'' = |\tanh(t/2)| \le 1`
    (Asi, Duchi & Talwar, Examples 2 and 4).
    """

    name = "logistic"
    lipschitz = 1.0
    smoothness = 0.25
    d3_bound = 1.0 / (6.0 * math.sqrt(3.0))
    self_concordance = 1.0

    def check_labels(self, y: Any, name: str = "y") -> np.ndarray:
        y_arr = as_finite_array(y, name)
        if not np.all((y_arr == 1.0) | (y_arr == -1.0)):
            raise ValueError(f"{name} must contain only the labels -1 and +1 for the logistic loss")
        return y_arr

    def symbolic(self, t: Any, y: Any) -> Any:
        import sympy as sp

        return sp.log(1 + sp.exp(-y * t))

    def _value(self, t, y):
        return _softplus(-y * t)

    def _d1(self, t, y):
        return -y * expit(-y * t)

    def _d2(self, t, y):
        return np.broadcast_to(_sech2_quarter(t), np.broadcast_shapes(np.shape(t), np.shape(y))).copy()

    def _d3(self, t, y):
        d3 = -_sech2_quarter(t) * np.tanh(0.5 * t)
        return np.broadcast_to(d3, np.broadcast_shapes(np.shape(t), np.shape(y))).copy()

    def _d1_d2(self, t, y):
        # One exponential for both: e = exp(-|u|), u = y t.
        u = y * t
        e = np.exp(-np.abs(u))
        inv = 1.0 / (1.0 + e)
        # sigma(-u) = e/(1+e) for u >= 0, 1/(1+e) for u < 0.
        s_neg = np.where(u >= 0, e * inv, inv)
        return -y * s_neg, e * inv * inv

    def _sum_d1_d2(self, t, y):
        # value, f' and f'' from one exponential: f = max(-u, 0) + log1p(e), as _softplus(-u)
        u = y * t
        e = np.exp(-np.abs(u))
        fsum = float(np.sum(np.maximum(-u, 0.0))) + float(np.sum(np.log1p(e)))
        inv = 1.0 / (1.0 + e)
        s_neg = np.where(u >= 0, e * inv, inv)
        return fsum, -y * s_neg, e * inv * inv


class Squared(GLMLoss):
    r"""Squared loss :math:`f(t; y) = (y - t)^2/2`, real labels.

    :math:`f' = t - y`, :math:`f'' = 1`, :math:`f''' = 0`. The gradient is **unbounded**
    (:math:`L = \infty`): guarantees that need a Lipschitz constant do not apply unless
    both the data and the parameter are bounded. :math:`\beta = 1`, self-concordance 0.
    """

    name = "squared"
    lipschitz = math.inf
    smoothness = 1.0
    d3_bound = 0.0
    self_concordance = 0.0

    def symbolic(self, t: Any, y: Any) -> Any:
        return (y - t) ** 2 / 2

    def _value(self, t, y):
        return 0.5 * (y - t) ** 2

    def _d1(self, t, y):
        return t - y

    def _d2(self, t, y):
        return np.ones(np.broadcast_shapes(np.shape(t), np.shape(y)))

    def _d3(self, t, y):
        return np.zeros(np.broadcast_shapes(np.shape(t), np.shape(y)))


class RobustLog(GLMLoss):
    r"""Robust log loss :math:`f(t; y) = h(y - t)`, :math:`h(u) = \log(1+e^u) + \log(1+e^{-u})`.

    Asi, Duchi & Talwar, Example 1 and Example 3. With :math:`u = y - t`:
    :math:`h'(u) = \tanh(u/2)`, :math:`h''(u) = 2\sigma(u)\sigma(-u)`,
    :math:`h'''(u) = -h''(u)\tanh(u/2)`, hence :math:`f' = -\tanh(u/2)`,
    :math:`f'' = h''(u)`, :math:`f''' = h''(u)\tanh(u/2)`. Constants: :math:`L = 1`,
    :math:`\beta = 1/2`, :math:`\sup|f'''| = 1/(3\sqrt3) \approx 0.19245`,
    :math:`|f'''|/f'' \le 1`.
    """

    name = "robust_log"
    lipschitz = 1.0
    smoothness = 0.5
    d3_bound = 1.0 / (3.0 * math.sqrt(3.0))
    self_concordance = 1.0

    def symbolic(self, t: Any, y: Any) -> Any:
        import sympy as sp

        u = y - t
        return sp.log(1 + sp.exp(u)) + sp.log(1 + sp.exp(-u))

    def _value(self, t, y):
        a = np.abs(y - t)
        return a + 2.0 * np.log1p(np.exp(-a))

    def _d1(self, t, y):
        return -np.tanh(0.5 * (y - t))

    def _d2(self, t, y):
        return 2.0 * _sech2_quarter(y - t)

    def _d3(self, t, y):
        u = y - t
        return 2.0 * _sech2_quarter(u) * np.tanh(0.5 * u)

    def _d1_d2(self, t, y):
        u = y - t
        return -np.tanh(0.5 * u), 2.0 * _sech2_quarter(u)


class Huber(GLMLoss):
    r"""Pseudo-Huber (smoothed Huber) loss with scale :math:`\delta`, real labels.

    :math:`f(t; y) = \delta^2\left(\sqrt{1 + (r/\delta)^2} - 1\right)`, :math:`r = y - t`.
    With :math:`s = r/\delta` and :math:`q = \sqrt{1 + s^2}`: :math:`f' = -r/q`,
    :math:`f'' = q^{-3}`, :math:`f''' = 3s/(\delta q^5)`. Constants:
    :math:`L = \delta`, :math:`\beta = 1`, :math:`\sup|f'''| = 48/(25\sqrt5\,\delta)`
    (at :math:`|s| = 1/2`), :math:`\sup|f'''|/f'' = 3/(2\delta)` (at :math:`|s| = 1`).

    Parameters
    ----------
    scale : float
        :math:`\delta > 0`, the residual size where the loss turns from quadratic to linear.
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = float(check_positive(scale, "scale"))
        self.name = "huber" if self.scale == 1.0 else f"huber(scale={self.scale:g})"
        self.lipschitz = self.scale
        self.smoothness = 1.0
        self.d3_bound = 48.0 / (25.0 * math.sqrt(5.0) * self.scale)
        self.self_concordance = 1.5 / self.scale

    def symbolic(self, t: Any, y: Any) -> Any:
        import sympy as sp

        d = sp.nsimplify(self.scale)
        return d**2 * (sp.sqrt(1 + ((y - t) / d) ** 2) - 1)

    def _sq(self, t, y):
        r = y - t
        s = r / self.scale
        return r, s, np.hypot(1.0, s)

    def _value(self, t, y):
        r, s, q = self._sq(t, y)
        # delta^2 (q - 1) = delta^2 s^2 / (q + 1) = r * s * delta / (q + 1): no cancellation, no overflow.
        return (np.abs(r) / (q + 1.0)) * (np.abs(s) * self.scale)

    def _d1(self, t, y):
        _r, s, q = self._sq(t, y)
        return -self.scale * (s / q)

    def _d2(self, t, y):
        _r, _s, q = self._sq(t, y)
        return (1.0 / q) ** 3

    def _d3(self, t, y):
        _r, s, q = self._sq(t, y)
        iq = 1.0 / q
        return (3.0 / self.scale) * (s * iq) * iq**4

    def _d1_d2(self, t, y):
        _r, s, q = self._sq(t, y)
        iq = 1.0 / q
        return -self.scale * (s * iq), iq**3


#: The logistic loss :math:`\log(1 + e^{-yt})`, labels :math:`\pm 1` (an instance of :class:`Logistic`).
logistic = Logistic()
#: The squared loss :math:`(y - t)^2/2`, real labels (an instance of :class:`Squared`).
squared = Squared()
#: The robust log loss :math:`h(y - t)` of Asi, Duchi & Talwar, Example 1 (an instance of :class:`RobustLog`).
robust_log = RobustLog()
#: The pseudo-Huber loss with scale 1 (an instance of :class:`Huber`).
huber = Huber(1.0)

_BY_NAME = {
    "logistic": logistic,
    "squared": squared,
    "robust_log": robust_log,
    "huber": huber,
}


def get_loss(name_or_loss: str | GLMLoss) -> GLMLoss:
    """Return the loss object for a name (``"logistic"``, ``"squared"``, ``"robust_log"``,
    ``"huber"``) or pass a :class:`GLMLoss` instance through unchanged.

    Raises ``ValueError`` for an unknown name and ``TypeError`` for anything else.

    Parameters
    ----------
    name_or_loss : str | GLMLoss
        A loss's name or a :class:`GLMLoss`, returned unchanged.
    """
    if isinstance(name_or_loss, GLMLoss):
        return name_or_loss
    if isinstance(name_or_loss, str):
        try:
            return _BY_NAME[name_or_loss]
        except KeyError:
            raise ValueError(f"loss must be one of {sorted(_BY_NAME)} or a GLMLoss; got {name_or_loss!r}") from None
    raise TypeError(f"loss must be a loss name or a GLMLoss instance; got {type(name_or_loss).__name__}")
