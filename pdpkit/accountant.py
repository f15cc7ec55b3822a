r"""One accountant for a session of releases: a ledger of mechanisms, composed tightly, with a budget that refuses.

A practitioner's workflow releases more than one model: a private scaler's statistics, the
K one-vs-rest models of a multiclass classifier, a privacy report, the runs of a private
model selection. Every record takes part in all of them, so their guarantees compose.
:class:`PrivacyAccountant` keeps the **ledger** — one :class:`Charge` per mechanism, with
exactly the public parameters its privacy analysis needs — and computes the total
:math:`(\varepsilon, \delta)` of everything charged so far (:func:`compose`):

* **Gaussian mechanisms** (a private statistic, the output noise of approximate minima
  perturbation, a report's noisy statistics) are described by :math:`\mu = \Delta/s`; any
  number of them, adaptively composed, is exactly one Gaussian mechanism with
  :math:`\mu^2 = \sum_i \mu_i^2` (Dong, Roth & Su 2022, Cor 3.3).
* **Objective perturbation** (one fit) is described by its dominating pair
  (:func:`pdpkit.accounting.objpert_dominating_pair`; Redberg, Koskela & Wang 2023, Thm 3.1
  as corrected in :mod:`pdpkit.accounting`). One ObjPert fit with every Gaussian is composed
  exactly by quadrature (:func:`pdpkit.accounting.objpert_output_epsilon`); several are
  composed through dp_accounting's privacy-loss distributions
  (:func:`pdpkit.accounting.objpert_pld`, pessimistic connect-the-dots, composed by FFT;
  Doroshenko et al. 2022) and, independently, through Rényi DP (Thm 3.2 of the same paper);
  the smaller of the two valid bounds is the total.
* **Private selection** (:class:`pdpkit.selection.SelectionCharge`, Papernot & Steinke 2022)
  is analysed in Rényi DP only; with one in the ledger the whole ledger is composed in RDP.

Neighbouring data sets differ by adding or removing one record. Every ``charge_*`` method
checks the budget **before** anything is released: a charge that would take the total above
``(epsilon, delta)`` raises :class:`BudgetExceededError` and leaves the ledger unchanged,
so the caller draws no noise. :meth:`PrivacyAccountant.spent` is the total as a
:class:`Guarantee` whose parts are the ledger's entries; the release file stores the ledger
(:meth:`Charge.to_dict`) and :meth:`pdpkit.release.Release.verify` recomputes the total from it.

:class:`Guarantee` and :class:`GuaranteePart` (re-exported by :mod:`pdpkit.release`) are the
guarantee objects every pdpkit release carries.
"""

from __future__ import annotations

import functools
import math
import secrets
import threading
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._display import fmt_up as _up
from ._validation import check_json_keys as _keys
from ._validation import check_probability
from .accounting import (
    _check_mu,
    objpert_output_epsilon,
    objpert_pld,
    objpert_rdp,
    rdp_to_epsilon,
)

__all__ = [
    "GuaranteePart",
    "Guarantee",
    "Charge",
    "BudgetExceededError",
    "DetachedAccountantError",
    "PrivacyAccountant",
    "compose",
    "ledger_guarantee",
    "objpert_calibrate_composed",
    "RDP_ORDERS",
    "PLD_INTERVAL",
]

#: The Rényi orders used wherever the ledger is composed in RDP.
RDP_ORDERS: tuple[float, ...] = tuple(
    [1.0 + x for x in (0.01, 0.05, 0.1, 0.25, 0.5, 0.75)]
    + [float(x) for x in np.concatenate([np.arange(2.0, 16.0, 0.5), np.arange(16.0, 64.0, 2.0),
                                         [64.0, 80.0, 96.0, 128.0, 192.0, 256.0, 512.0, 1024.0]])])

#: Grid step (nats) of the privacy-loss distributions used to compose several ObjPert fits.
PLD_INTERVAL = 1e-4

_KINDS = ("gaussian", "objpert", "selection")
_ACC_EXACT = "objpert-profile+gaussians"
_ACC_GAUSS = "gaussian"
_ACC_PLD = "pld+rdp"
_ACC_RDP = "rdp"


# ------------------------------------------------------------------ strict types
def _real(value: Any, name: str, *, positive: bool = True, allow_zero: bool = False) -> float:
    """A real number (int or float, not bool or str), finite, > 0 (or >= 0)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number; got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite; got {value!r}")
    if positive and not (v > 0 or (allow_zero and v == 0)):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}; got {value!r}")
    return v


def _delta(value: Any, name: str) -> float:
    v = _real(value, name)
    if not v < 1.0:
        raise ValueError(f"{name} must lie in (0, 1); got {value!r}")
    return v


# ------------------------------------------------------------------ guarantees
@dataclass(frozen=True)
class GuaranteePart:
    """One mechanism's share of a guarantee: its name, its own (ε, δ) and the accounting used.

    Parameters
    ----------
    name : str
        What was released (``"model"``, ``"report"``, a ledger entry's name).
    epsilon : float
        The part's ε alone, at its own ``delta``.
    delta : float
        The part's δ, in (0, 1).
    accounting : str
        The analysis that gives this part's (ε, δ).
    """

    name: str
    epsilon: float
    delta: float
    accounting: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError("a guarantee part's name must be a non-empty string")
        if not isinstance(self.accounting, str) or not self.accounting:
            raise TypeError("a guarantee part's accounting must be a non-empty string")
        object.__setattr__(self, "epsilon", _real(self.epsilon, f"guarantee part {self.name!r}: epsilon",
                                                  allow_zero=True))
        object.__setattr__(self, "delta", _delta(self.delta, f"guarantee part {self.name!r}: delta"))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"name": self.name, "epsilon": self.epsilon, "delta": self.delta, "accounting": self.accounting}


@dataclass(frozen=True)
class Guarantee:
    r"""An :math:`(\varepsilon, \delta)`-DP guarantee, the accounting that proves it, and its parts.

    Neighbouring data sets differ by adding or removing one record. ``parts`` lists what the
    guarantee is the total of (the model and the report, or an accountant's ledger), each
    with its own (ε, δ) alone; ``epsilon`` is their composition at the total ``delta`` under
    ``accounting``.

    Parameters
    ----------
    epsilon : float
        The total ε (>= 0).
    delta : float
        The total δ, in (0, 1).
    accounting : str
        The analysis that composes the parts.
    parts : tuple of GuaranteePart
        What the total is made of.
    """

    epsilon: float
    delta: float
    accounting: str = _ACC_EXACT
    parts: tuple[GuaranteePart, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _real(self.epsilon, "guarantee.epsilon", allow_zero=True))
        object.__setattr__(self, "delta", _delta(self.delta, "guarantee.delta"))
        if not isinstance(self.accounting, str) or not self.accounting:
            raise TypeError("guarantee.accounting must be a non-empty string naming the analysis")
        parts = tuple(self.parts)
        if not all(isinstance(p, GuaranteePart) for p in parts):
            raise TypeError("guarantee.parts must be GuaranteePart objects")
        object.__setattr__(self, "parts", parts)

    def __str__(self) -> str:
        # ε and δ are upper bounds: shown rounded up (4 and 3 significant digits), never below the guarantee
        head = f"({_up(self.epsilon, 4)}, {_up(self.delta, 3)})-DP [{self.accounting}, add/remove one record]"
        if len(self.parts) > 1:
            head += " = " + " + ".join(f"{p.name} ({_up(p.epsilon, 4)}, {_up(p.delta, 3)})" for p in self.parts)
        return head

    def part(self, name: str) -> GuaranteePart:
        """The part called ``name`` (``KeyError`` if absent).

        Parameters
        ----------
        name : str
            The part's name.
        """
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"epsilon": self.epsilon, "delta": self.delta, "accounting": self.accounting,
                "parts": [p.to_dict() for p in self.parts]}

    @classmethod
    def from_dict(cls, data: Any) -> Guarantee:
        """Inverse of :meth:`to_dict`, strict: unknown or missing fields are a ``ValueError`` naming them.

        Parameters
        ----------
        data : dict
            A dict as :meth:`to_dict` writes it.
        """
        _keys(data, "guarantee", required=("epsilon", "delta", "accounting", "parts"))
        parts = data["parts"]
        if not isinstance(parts, list):
            raise TypeError("guarantee.parts must be a list")
        out = []
        for i, p in enumerate(parts):
            _keys(p, f"guarantee.parts[{i}]", required=("name", "epsilon", "delta", "accounting"))
            out.append(GuaranteePart(name=p["name"], epsilon=p["epsilon"], delta=p["delta"],
                                     accounting=p["accounting"]))
        return cls(epsilon=data["epsilon"], delta=data["delta"], accounting=data["accounting"], parts=tuple(out))


# ------------------------------------------------------------------ the ledger
_OBJPERT_KEYS = ("L", "beta", "lam", "sigma", "mu_out")


@dataclass(frozen=True)
class Charge:
    r"""One entry of a ledger: a mechanism every record took part in, with the public parameters of its analysis.

    * ``kind="gaussian"``: ``params = {"mu": μ}`` — a Gaussian mechanism of sensitivity Δ and
      noise s, :math:`\mu = \Delta/s` (several statistics released at once: the root sum of
      squares of their μ).
    * ``kind="objpert"``: ``params = {"L", "beta", "lam", "sigma", "mu_out"}`` — one ObjPert fit
      with per-record constants L (gradient) and β (curvature) at the rows' norm bound, the
      sharp log-determinant constant, followed by output noise of parameter ``mu_out``
      (0 for none).
    * ``kind="selection"``: ``params`` = :meth:`pdpkit.selection.SelectionCharge.to_dict` —
      Papernot–Steinke repeat-and-select over ObjPert candidates.

    ``count`` identical mechanisms (e.g. the K one-vs-rest fits) are one entry. ``delta`` is
    the δ at which the entry's own ε is stated in :meth:`PrivacyAccountant.spent`'s parts
    (for information; the total is composed from the parameters).

    Parameters
    ----------
    name : str
        What was released (shown in the ledger).
    kind : str
        ``"gaussian"``, ``"objpert"`` or ``"selection"``.
    params : dict
        The mechanism's public parameters, as above.
    count : int
        How many identical mechanisms the entry stands for (>= 1).
    delta : float
        The δ at which the entry's own ε is stated, in (0, 1).
    """

    name: str
    kind: str
    params: dict[str, Any]
    count: int = 1
    delta: float = 1e-6
    _key: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        s = object.__setattr__
        if not isinstance(self.name, str) or not self.name:
            raise TypeError("a charge's name must be a non-empty string")
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}; got {self.kind!r}")
        if isinstance(self.count, (bool, np.bool_)) or not isinstance(self.count, (int, np.integer)) \
                or self.count < 1 or self.count > 10_000:
            raise ValueError(f"count must be an integer in [1, 10000]; got {self.count!r}")
        s(self, "count", int(self.count))
        s(self, "delta", _delta(self.delta, f"charge {self.name!r}: delta"))
        p = self.params
        if self.kind == "gaussian":
            _keys(p, f"charge {self.name!r}: params", required=("mu",))
            mu = _check_mu(_real(p["mu"], f"charge {self.name!r}: mu"))
            s(self, "params", {"mu": mu})
            s(self, "_key", (mu,))
        elif self.kind == "objpert":
            _keys(p, f"charge {self.name!r}: params", required=_OBJPERT_KEYS)
            vals = {k: _real(p[k], f"charge {self.name!r}: {k}", allow_zero=k in ("beta", "mu_out"))
                    for k in _OBJPERT_KEYS}
            _check_mu(vals["mu_out"])
            s(self, "params", vals)
            s(self, "_key", tuple(vals[k] for k in _OBJPERT_KEYS))
        else:
            from .selection import SelectionCharge

            sel = p if isinstance(p, SelectionCharge) else SelectionCharge.from_dict(p)
            s(self, "params", sel.to_dict())
            s(self, "_key", ("selection", repr(sel.to_dict())))

    # the parameters as the composition needs them
    @property
    def gaussian_mu2(self) -> float:
        """The sum of μ² of this entry's Gaussian mechanisms (ObjPert's output noise included)."""
        if self.kind == "gaussian":
            return self.count * self.params["mu"] ** 2
        if self.kind == "objpert":
            return self.count * self.params["mu_out"] ** 2
        return 0.0

    def selection(self):
        """The :class:`pdpkit.selection.SelectionCharge` of a ``"selection"`` entry."""
        from .selection import SelectionCharge

        return SelectionCharge.from_dict(self.params)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """Rényi DP of the entry (all ``count`` mechanisms) at ``orders``.

        Parameters
        ----------
        orders : array_like
            Rényi orders (> 1).
        """
        al = np.asarray(orders, dtype=float)
        if self.kind == "gaussian":
            return self.count * al * self.params["mu"] ** 2 / 2.0
        if self.kind == "objpert":
            p = self.params
            out = objpert_rdp(al, L=p["L"], beta=p["beta"], lam=p["lam"], sigma=p["sigma"], sharp=True)
            return self.count * (np.asarray(out) + al * p["mu_out"] ** 2 / 2.0)
        return self.count * np.asarray(self.selection().rdp(al), dtype=float)

    def epsilon(self, delta: float | None = None) -> float:
        """This entry alone: its ε at ``delta`` (default: the entry's own δ).

        Parameters
        ----------
        delta : float, optional
            The δ to state ε at.
        """
        return compose((self,), self.delta if delta is None else delta)[0]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the form the release file stores)."""
        return {"name": self.name, "kind": self.kind, "params": dict(self.params), "count": self.count,
                "delta": self.delta}

    @classmethod
    def from_dict(cls, data: Any) -> Charge:
        """Inverse of :meth:`to_dict`, strict.

        Parameters
        ----------
        data : dict
            A dict as :meth:`to_dict` writes it.
        """
        _keys(data, "ledger entry", required=("name", "kind", "params", "count", "delta"))
        return cls(name=data["name"], kind=data["kind"], params=data["params"], count=data["count"],
                   delta=data["delta"])


# ------------------------------------------------------------------ composition
def _gauss_epsilon(mu: float, delta: float) -> float:
    from .gaussian import gaussian_epsilon

    return float(gaussian_epsilon(delta, sensitivity=mu, sigma=1.0))


@functools.lru_cache(maxsize=256)
def _objpert_pld(L: float, beta: float, lam: float, sigma: float):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return objpert_pld(L=L, beta=beta, lam=lam, sigma=sigma, sharp=True, value_discretization_interval=PLD_INTERVAL)


def _pld_epsilon(objperts: list[Charge], mu2: float, delta: float) -> float:
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    with warnings.catch_warnings():  # scipy's logsumexp warns on exact zeros inside dp_accounting
        warnings.simplefilter("ignore", RuntimeWarning)
        total = None
        for c in objperts:
            p = c.params
            one = _objpert_pld(p["L"], p["beta"], p["lam"], p["sigma"])
            part = one.self_compose(c.count) if c.count > 1 else one
            total = part if total is None else total.compose(part)
        if mu2 > 0:
            g = pld_mod.from_gaussian_mechanism(1.0 / math.sqrt(mu2), sensitivity=1.0, pessimistic_estimate=True,
                                                value_discretization_interval=PLD_INTERVAL)
            total = g if total is None else total.compose(g)
        return float(total.get_epsilon_for_delta(delta))


def _rdp_epsilon(ledger: tuple[Charge, ...], delta: float) -> float:
    orders = np.asarray(RDP_ORDERS)
    if any(c.kind == "selection" for c in ledger):  # the selection's own, finer grid as well
        from .selection import _ORDERS

        orders = np.union1d(orders, np.asarray(_ORDERS)[np.asarray(_ORDERS) > 1.0])
    rdp = np.zeros_like(orders)
    for c in ledger:
        rdp = rdp + c.rdp(orders)
    return float(rdp_to_epsilon(orders, rdp, delta=delta)[0])


def compose(ledger: Any, delta: float) -> tuple[float, str]:
    r"""The total ε at ``delta`` of every mechanism in ``ledger``, and the accounting that gives it.

    * Gaussians only: the Gaussian mechanism's exact profile at :math:`\mu^2 = \sum\mu_i^2`
      (``"gaussian"``).
    * One ObjPert fit and any Gaussians: the exact composition of ObjPert's dominating pair
      with the Gaussian (:func:`pdpkit.accounting.objpert_output_epsilon`,
      ``"objpert-profile+gaussians"``).
    * Several ObjPert fits: the smaller of dp_accounting's pessimistic PLD composition and the
      RDP composition (``"pld+rdp"``); both are upper bounds.
    * A private selection in the ledger: everything in RDP (``"rdp"``).

    Parameters
    ----------
    ledger : sequence of Charge
        The mechanisms (any order; composition is commutative).
    delta : float
        The total δ, in (0, 1).

    Returns
    -------
    (float, str)
        ε and the accounting's name.
    """
    ledger = tuple(ledger)
    if not ledger:
        raise ValueError("the ledger is empty: nothing was released")
    if not all(isinstance(c, Charge) for c in ledger):
        raise TypeError("ledger entries must be Charge objects")
    delta = float(check_probability(delta, "delta"))
    return _compose_cached(tuple(sorted((c.kind, c._key, c.count) for c in ledger)), delta, ledger)


def _compose_cached(signature: tuple, delta: float, ledger: tuple[Charge, ...]) -> tuple[float, str]:
    key = (signature, delta)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _compose(ledger, delta)
        if len(_CACHE) > 512:
            _CACHE.clear()
        _CACHE[key] = hit
    return hit


_CACHE: dict[tuple, tuple[float, str]] = {}


def _compose(ledger: tuple[Charge, ...], delta: float) -> tuple[float, str]:
    mu2 = sum(c.gaussian_mu2 for c in ledger)
    objperts = [c for c in ledger if c.kind == "objpert"]
    if any(c.kind == "selection" for c in ledger):
        return _rdp_epsilon(ledger, delta), _ACC_RDP
    n_fits = sum(c.count for c in objperts)
    mu = _check_mu(math.sqrt(mu2))
    if n_fits == 0:
        return _gauss_epsilon(mu, delta), _ACC_GAUSS
    if n_fits == 1:
        p = objperts[0].params
        return float(objpert_output_epsilon(delta, L=p["L"], beta=p["beta"], lam=p["lam"], sigma=p["sigma"], mu=mu,
                                            sharp=True)), _ACC_EXACT
    eps_pld = _pld_epsilon(objperts, mu2, delta)
    eps_rdp = _rdp_epsilon(ledger, delta)
    return max(min(eps_pld, eps_rdp), 0.0), _ACC_PLD


# ------------------------------------------------------------------ the accountant
class BudgetExceededError(ValueError):
    """A release would take the accountant's total above its budget; nothing was charged or released."""


class DetachedAccountantError(RuntimeError):
    """A charge on a pickled copy of an accountant in another process: refused, nothing was released."""


#: The accountants alive in this process, by session id: an accountant unpickled here is the live one.
_LIVE: weakref.WeakValueDictionary[str, PrivacyAccountant] = weakref.WeakValueDictionary()


def _restore_accountant(session: str, epsilon: float, delta: float, ledger: list) -> PrivacyAccountant:
    """Unpickling: the live accountant of ``session`` in this process, else a detached copy that refuses charges."""
    live = _LIVE.get(session)
    if live is not None:
        return live
    acc = PrivacyAccountant.__new__(PrivacyAccountant)
    acc.epsilon, acc.delta = float(epsilon), float(delta)
    acc._ledger = [Charge.from_dict(c) for c in ledger]
    acc._session = session
    acc._detached = True
    acc._lock = threading.Lock()
    return acc


class PrivacyAccountant:
    r"""A privacy budget :math:`(\varepsilon, \delta)` for a session of releases, and its ledger.

    Give it to pdpkit's estimators, transformers, reports and selection (``accountant=``):
    each charges its mechanisms here before drawing any noise, and a charge that would
    exceed the budget raises :class:`BudgetExceededError` (the ledger is unchanged and the
    caller releases nothing). :meth:`spent` is the tight total of everything charged
    (:func:`compose`), at the budget's δ.

    Parameters
    ----------
    epsilon : float
        The budget's ε (> 0).
    delta : float
        The budget's δ, in (0, 1): every total is stated at this δ.

    Examples
    --------
    >>> acc = PrivacyAccountant(1.0, 1e-6)
    >>> acc.charge_gaussian(mu=0.2, name="feature means")  # its place in the ledger
    0
    >>> round(acc.spent().epsilon, 3) < 1.0
    True
    """

    def __init__(self, epsilon: float, delta: float) -> None:
        self.epsilon = _real(epsilon, "epsilon")
        if self.epsilon > 500.0:
            raise ValueError(f"epsilon must be at most 500 (a larger epsilon protects nothing); got {epsilon!r}")
        self.delta = _delta(delta, "delta")
        self._ledger: list[Charge] = []
        self._session = secrets.token_hex(16)
        self._detached = False
        self._lock = threading.Lock()  # a check and its write are one step (threads of joblib, a server)
        _LIVE[self._session] = self

    def __reduce__(self) -> tuple:
        # Pickling (joblib's process pools, multiprocessing, a saved estimator) must not make a second
        # budget: unpickled in the process that holds this accountant it IS this accountant; anywhere
        # else it is a detached copy that shows the ledger as it was and refuses every charge.
        return (_restore_accountant, (self._session, self.epsilon, self.delta, [c.to_dict() for c in self._ledger]))

    @property
    def detached(self) -> bool:
        """Whether this is a copy of a session's accountant made by pickling in another process (it refuses charges)."""
        return self._detached

    def __deepcopy__(self, memo: dict) -> PrivacyAccountant:
        # One session, one budget: scikit-learn's clone (GridSearchCV, cross_val_score) deep-copies an
        # estimator's parameters; a copied accountant would let each clone spend the whole budget again.
        return self

    def __copy__(self) -> PrivacyAccountant:
        return self

    def __repr__(self) -> str:
        # budget and spending are both caps, rounded up alike: spent <= budget still reads so
        budget = f"budget=({_up(self.epsilon, 4)}, {_up(self.delta, 3)})"
        if not self._ledger:
            return f"PrivacyAccountant({budget}, nothing spent)"
        g = self.spent()
        spent = f"spent=({_up(g.epsilon, 4)}, {_up(g.delta, 3)})"
        return f"PrivacyAccountant({budget}, {spent}, {len(self._ledger)} entries)"

    @property
    def ledger(self) -> tuple[Charge, ...]:
        """Every charge so far, in order."""
        return tuple(self._ledger)

    def total_epsilon(self, extra: Any = ()) -> float:
        """ε at the budget's δ of the ledger plus the charges ``extra`` (0 for an empty ledger).

        Parameters
        ----------
        extra : sequence of Charge
            Charges to add hypothetically.
        """
        entries = tuple(self._ledger) + tuple(extra)
        return compose(entries, self.delta)[0] if entries else 0.0

    def would_exceed(self, charges: Any) -> bool:
        """Whether adding ``charges`` (a :class:`Charge` or a sequence) would exceed the budget.

        Parameters
        ----------
        charges : Charge or sequence of Charge
            The prospective entries.
        """
        extra = (charges,) if isinstance(charges, Charge) else tuple(charges)
        return self.total_epsilon(extra) > self.epsilon * (1.0 + 1e-12)

    def remaining(self) -> float:
        """The budget's ε minus the total spent (by composition: later charges cost less than alone)."""
        return max(self.epsilon - self.total_epsilon(), 0.0)

    def charge(self, charges: Any) -> int:
        """Add ``charges`` to the ledger, or raise :class:`BudgetExceededError` and add nothing.

        Returns the ledger position of the first added entry: a charged release draws its noise
        from the stream of that position (``pdpkit._validation.charged_generator``), so
        two releases of one ledger never share noise, whatever seeds their callers passed. A
        detached copy (:attr:`detached`) refuses with :class:`DetachedAccountantError`.

        Parameters
        ----------
        charges : Charge or sequence of Charge
            The entries to add (all or none).
        """
        extra = (charges,) if isinstance(charges, Charge) else tuple(charges)
        if not all(isinstance(c, Charge) for c in extra):
            raise TypeError("charges must be Charge objects")
        if self._detached:
            raise DetachedAccountantError(
                "this PrivacyAccountant is a copy made by pickling in another process (for example by joblib "
                "when n_jobs > 1): a charge here would never reach the session's ledger, so it is refused and "
                "nothing was released. Fit in the session's process (n_jobs=1, or joblib's threading backend), "
                "or fit without an accountant and charge its release to the session's accountant yourself")
        with self._lock:
            after = self.total_epsilon(extra)
            if after > self.epsilon * (1.0 + 1e-12):
                names = ", ".join(repr(c.name) for c in extra)
                raise BudgetExceededError(
                    f"charging {names} would spend epsilon = {_up(after)} at delta = {_up(self.delta, 3)}, above "
                    f"the budget epsilon = {self.epsilon:.4g}: nothing was released; lower this release's epsilon "
                    f"(or raise its noise) or start a new accountant with a larger budget")
            position = len(self._ledger)
            self._ledger.extend(extra)
            return position

    def charge_gaussian(self, *, mu: float, name: str, count: int = 1, delta: float | None = None) -> int:
        r"""Charge ``count`` Gaussian mechanisms of parameter :math:`\mu = \Delta/s` each.

        Parameters
        ----------
        mu : float
            Sensitivity over noise standard deviation (>= 0).
        name : str
            What is released.
        count : int
            How many such mechanisms.
        delta : float, optional
            δ at which the entry's own ε is listed (default: the budget's).
        """
        return self.charge(Charge(name=name, kind="gaussian", params={"mu": mu}, count=count,
                           delta=self.delta if delta is None else delta))

    def charge_objpert(self, *, L: float, beta: float, lam: float, sigma: float, name: str, mu_out: float = 0.0,
                       count: int = 1, delta: float | None = None) -> int:
        r"""Charge ``count`` ObjPert fits (constants L and β at the rows' bound, sharp constant) with output noise μ.

        Parameters
        ----------
        L : float
            Per-record gradient bound at the fitted rows' norm bound.
        beta : float
            Per-record curvature bound at the fitted rows' norm bound.
        lam : float
            Regularization λ.
        sigma : float
            The objective noise's standard deviation σ.
        name : str
            What is released.
        mu_out : float
            μ of the output noise (approximate minima perturbation), 0 for none.
        count : int
            How many such fits (every record in each).
        delta : float, optional
            δ at which the entry's own ε is listed (default: the budget's).
        """
        return self.charge(Charge(name=name, kind="objpert",
                           params={"L": L, "beta": beta, "lam": lam, "sigma": sigma, "mu_out": mu_out},
                           count=count, delta=self.delta if delta is None else delta))

    def charge_selection(self, selection: Any, *, name: str, delta: float | None = None) -> int:
        """Charge a private selection (:class:`pdpkit.selection.SelectionCharge`).

        Parameters
        ----------
        selection : SelectionCharge
            The selection's public parameters.
        name : str
            What is released.
        delta : float, optional
            δ at which the entry's own ε is listed (default: the budget's).
        """
        return self.charge(Charge(name=name, kind="selection", params=selection,
                           delta=self.delta if delta is None else delta))

    def spent(self) -> Guarantee:
        """The total guarantee of the ledger at the budget's δ, with one part per entry."""
        if not self._ledger:
            raise ValueError("nothing has been charged yet")
        return ledger_guarantee(self._ledger, self.delta)


def ledger_guarantee(ledger: Any, delta: float) -> Guarantee:
    """The total :class:`Guarantee` of ``ledger`` at ``delta``, one part per entry (each alone at its own δ).

    Parameters
    ----------
    ledger : sequence of Charge
        The entries.
    delta : float
        The total δ.
    """
    ledger = tuple(ledger)
    eps, acc = compose(ledger, delta)
    parts = tuple(GuaranteePart(name=c.name, epsilon=c.epsilon(), delta=c.delta, accounting=compose((c,), c.delta)[1])
                  for c in ledger)
    return Guarantee(epsilon=eps, delta=float(delta), accounting=acc, parts=parts)


# ------------------------------------------------------------------ calibration of several fits
def _fits_epsilon(e0: float, a: float, L: float, count: int, mu_out: float, delta: float, *, rdp_only: bool) -> float:
    """ε of ``count`` ObjPert fits with log-determinant constant e0 and L/σ = a (σ = L/a, λ from e0)."""
    beta = 1.0
    lam = beta / math.expm1(e0)
    c = Charge(name="model", kind="objpert", params={"L": L, "beta": beta, "lam": lam, "sigma": L / a,
                                                    "mu_out": mu_out}, count=count, delta=delta)
    if rdp_only:
        return _rdp_epsilon((c,), delta)
    return compose((c,), delta)[0]


def objpert_calibrate_composed(eps: float, delta: float, *, L: float, beta: float, count: int, mu_out: float,
                               f: float = 1.3) -> tuple[float, float]:
    r"""(λ, σ) such that ``count`` ObjPert fits, each followed by output noise μ, are together (ε, δ)-DP.

    Every record takes part in every fit (e.g. the K one-vs-rest problems of a multiclass
    classifier), so the fits compose (:func:`compose`: dp_accounting's PLD, or RDP where
    smaller). σ is ``f`` times the Gaussian mechanism's σ for sensitivity :math:`L\sqrt{k}`
    (grown by ``f`` while even λ → ∞ would miss the target); the log-determinant constant
    :math:`\varepsilon_0 = \log(1 + \beta/\lambda)` (sharp) is then the largest that meets the
    target, found by bisection in RDP (cheap, conservative) and refined with the PLD. The
    result is checked: ``compose`` of the returned parameters is at most ``eps``.
    ``count = 1`` is :func:`pdpkit.accounting.objpert_output_calibrate`.

    Parameters
    ----------
    eps, delta : float
        The target for all fits together.
    L, beta : float
        Per-record constants at the fitted rows' norm bound.
    count : int
        Number of fits (>= 1).
    mu_out : float
        μ of each fit's output noise.
    f : float
        σ's factor over the Gaussian mechanism's (> 1).
    """
    from .accounting import objpert_output_calibrate
    from .gaussian import gaussian_sigma

    eps = _real(eps, "eps")
    delta = _delta(delta, "delta")
    L = _real(L, "L")
    beta = _real(beta, "beta", allow_zero=True)
    mu_out = _check_mu(_real(mu_out, "mu_out", allow_zero=True))
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"count must be an integer >= 1; got {count!r}")
    count = int(count)
    if count == 1:
        return objpert_output_calibrate(eps, delta, L=L, beta=beta, mu=mu_out, sharp=True)
    if beta == 0.0:
        raise ValueError("beta must be > 0 for several fits (a loss with curvature)")
    sigma = f * float(gaussian_sigma(eps, delta, sensitivity=L * math.sqrt(count)))
    tiny = 1e-12
    for _ in range(200):
        if _fits_epsilon(tiny, L / sigma, L, count, mu_out, delta, rdp_only=False) <= 0.95 * eps:
            break
        sigma *= f
    else:
        raise ValueError(f"no sigma reaches (eps={eps:g}, delta={delta:g}) for {count} fits; raise eps or delta")
    a = L / sigma
    # bisection on log e0: RDP first (cheap and conservative), then the PLD from there
    lo, hi = math.log(tiny), math.log(eps)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _fits_epsilon(math.exp(mid), a, L, count, mu_out, delta, rdp_only=True) <= eps:
            lo = mid
        else:
            hi = mid
    hi = math.log(eps)
    for _ in range(14):
        mid = 0.5 * (lo + hi)
        if _fits_epsilon(math.exp(mid), a, L, count, mu_out, delta, rdp_only=False) <= eps:
            lo = mid
        else:
            hi = mid
    e0 = math.exp(lo)
    lam = beta / math.expm1(e0)
    for _ in range(64):  # the check, with the real beta and lam
        c = Charge(name="model", kind="objpert", params={"L": L, "beta": beta, "lam": lam, "sigma": sigma,
                                                        "mu_out": mu_out}, count=count, delta=delta)
        if compose((c,), delta)[0] <= eps:
            return float(lam), float(sigma)
        lam *= 1.0 + 1e-6
    raise ValueError(f"calibration for {count} fits did not meet eps={eps:g}")  # pragma: no cover
