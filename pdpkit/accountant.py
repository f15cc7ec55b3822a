r"""One accountant for a session of releases: a ledger of events, composed tightly, with a budget that refuses.

A practitioner's workflow releases more than one model: a private scaler's statistics, the
K one-vs-rest models of a multiclass classifier, a privacy report, the runs of a private
model selection — and, beside pdpkit, perhaps a DP-SGD run or a Laplace histogram. Every
record takes part in all of them, so their guarantees compose.
:class:`PrivacyAccountant` keeps the **ledger** — one :class:`Charge` per release, holding
the release's :class:`pdpkit.events.PrivacyEvent` — and is the one place where events are
composed (:func:`compose`), by what each event can do, never by its name:

* every **Gaussian part** (a Gaussian mechanism, ObjPert's output noise, a report's noisy
  statistics) is described by :math:`\mu = \Delta/s`; any number of them, adaptively
  composed, is exactly one Gaussian mechanism with :math:`\mu^2 = \sum_i \mu_i^2` (Dong, Roth
  & Su 2022, Cor 3.3): ``"gaussian"`` when nothing else is in the ledger;
* **one** other event that has an exact composition with a Gaussian
  (:meth:`pdpkit.events.PrivacyEvent.epsilon_with_gaussian`: one ObjPert fit, by quadrature
  of its dominating pair, :func:`pdpkit.accounting.objpert_output_epsilon`): that exact ε
  (``"objpert-profile+gaussians"``);
* otherwise, when every event has a privacy-loss distribution, the smaller of two valid
  bounds: dp_accounting's pessimistic PLD composition (connect-the-dots, FFT; Doroshenko et
  al. 2022) and the RDP composition where every event has an RDP curve (``"pld+rdp"``, or
  ``"pld"``);
* with an event that has only an RDP curve (a private selection, Papernot & Steinke 2022),
  everything in Rényi DP (``"rdp"``);
* an event with neither is refused (:class:`pdpkit.events.UnsupportedEventError`).

Neighbouring data sets differ by adding or removing one record. A charge is checked against
the budget **before** any noise is drawn: one that would take the total above
``(epsilon, delta)`` raises :class:`BudgetExceededError` and leaves the ledger unchanged.
:meth:`PrivacyAccountant.charging` draws the noise *inside* the check-and-record step, so a
charge is recorded exactly when its noise was drawn (see the persistent ledger below).
:meth:`PrivacyAccountant.spent` is the total as a :class:`pdpkit.events.Guarantee` whose
parts are the ledger's entries; the release file stores the ledger (:meth:`Charge.to_dict`)
and :meth:`pdpkit.release.Release.verify` recomputes the total with :func:`compose`.

**dp_accounting, both ways.** :meth:`PrivacyAccountant.charge` takes dp_accounting's
``GaussianDpEvent``, ``LaplaceDpEvent``, ``PoissonSampledDpEvent`` of those,
``SelfComposedDpEvent`` and ``ComposedDpEvent`` (:func:`pdpkit.events.from_dp_event`), and
:meth:`PrivacyAccountant.dp_event` exports the ledger as one ``ComposedDpEvent`` (ObjPert and
selections as :class:`pdpkit.events.PdpkitDpEvent`, which carries its PLD and RDP).

**A budget that lasts.** ``PrivacyAccountant(eps, delta, path="budget.sqlite")`` keeps its
ledger in SQLite (the standard library's ``sqlite3``): see :mod:`pdpkit.ledger` for the file,
its integrity check and its transactions. Several processes charging one file never exceed
its budget together.
"""

from __future__ import annotations

import contextlib
import functools
import math
import secrets
import threading
import warnings
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._display import fmt_up as _up
from ._validation import check_json_keys, check_mu, check_probability
from ._validation import strict_delta as _delta
from ._validation import strict_real as _real
from .accounting import objpert_output_calibrate, rdp_to_epsilon
from .events import (
    PLD_INTERVAL,
    RDP_ORDERS,
    GaussianEvent,
    Guarantee,
    GuaranteePart,
    ObjPertEvent,
    PrivacyEvent,
    RepeatAndSelectEvent,
    SelfComposedEvent,
    UnsupportedEventError,
    event_from_dict,
    from_dp_event,
)
from .events import ComposedEvent as _ComposedEvent
# importing the OPS events registers their kinds: a ledger or release that names them reads back
from .ops import AdaOPSEvent as _AdaOPSEvent  # noqa: F401
from .ops import OPSEvent as _OPSEvent  # noqa: F401

__all__ = [
    "Charge",
    "BudgetExceededError",
    "DetachedAccountantError",
    "PrivacyAccountant",
    "compose",
    "ledger_guarantee",
    "calibrate_event",
    "PlanPart",
    "BudgetPlan",
    "plan_budget",
    "objpert_calibrate_composed",
]

_ACC_GAUSS = "gaussian"
_ACC_PLD = "pld+rdp"
_ACC_PLD_ONLY = "pld"
_ACC_RDP = "rdp"


def as_event(event: Any) -> PrivacyEvent:
    """A pdpkit event from a :class:`pdpkit.events.PrivacyEvent` or a dp_accounting ``DpEvent``."""
    if isinstance(event, PrivacyEvent):
        return event
    from dp_accounting import dp_event as _dpe

    if isinstance(event, _dpe.DpEvent):
        return from_dp_event(event)
    raise TypeError(f"event must be a pdpkit.events.PrivacyEvent or a dp_accounting DpEvent; "
                    f"got {type(event).__name__}")


# ------------------------------------------------------------------ the ledger entry
@dataclass(frozen=True)
class Charge:
    r"""One entry of a ledger: a named release, its event, how many times it ran, and the δ its own ε is stated at.

    ``count`` identical events (e.g. the K one-vs-rest fits) are one entry. ``delta`` is the
    δ at which the entry's own ε is stated in :meth:`PrivacyAccountant.spent`'s parts (for
    information; the total is composed from the events). In a file:
    ``{"name", "kind", "params", "count", "delta"}`` with the event's ``kind`` and ``params``.

    Parameters
    ----------
    name : str
        What was released (shown in the ledger).
    event : PrivacyEvent or dp_accounting DpEvent
        The mechanism (:mod:`pdpkit.events`).
    count : int
        How many identical events the entry stands for (1 to 10000).
    delta : float
        The δ at which the entry's own ε is stated, in (0, 1).
    """

    name: str
    event: PrivacyEvent
    count: int = 1
    delta: float = 1e-6

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError("a charge's name must be a non-empty string")
        object.__setattr__(self, "event", as_event(self.event))
        if isinstance(self.count, (bool, np.bool_)) or not isinstance(self.count, (int, np.integer)) \
                or self.count < 1 or self.count > 10_000:
            raise ValueError(f"count must be an integer in [1, 10000]; got {self.count!r}")
        object.__setattr__(self, "count", int(self.count))
        object.__setattr__(self, "delta", _delta(self.delta, f"charge {self.name!r}: delta"))

    @property
    def kind(self) -> str:
        """The event's kind (``"gaussian"``, ``"objpert"``, ``"selection"``, …)."""
        return self.event.kind

    @property
    def params(self) -> dict[str, Any]:
        """The event's public parameters."""
        return self.event.params()

    @property
    def gaussian_mu2(self) -> float:
        """The sum of μ² of this entry's Gaussian parts (ObjPert's output noise included)."""
        return self.count * _split(self.event)[1]

    def rdp(self, orders: Any) -> np.ndarray:
        """Rényi DP of the entry (all ``count`` events) at ``orders``.

        Parameters
        ----------
        orders : array_like
            Rényi orders (> 1).
        """
        out = self.event.rdp(np.asarray(orders, dtype=float))
        if out is None:
            raise UnsupportedEventError(f"charge {self.name!r}: a {self.kind} event has no RDP curve")
        return self.count * np.asarray(out, dtype=float)

    def epsilon(self, delta: float | None = None) -> float:
        """This entry alone: its ε at ``delta`` (default: the entry's own δ).

        Parameters
        ----------
        delta : float, optional
            The δ to state ε at.
        """
        return compose((self,), self.delta if delta is None else delta)[0]

    def dp_event(self) -> Any:
        """The entry as a dp_accounting ``DpEvent`` (self-composed ``count`` times)."""
        ev = self.event.dp_event()
        if self.count == 1:
            return ev
        from dp_accounting import dp_event as _dpe

        return _dpe.SelfComposedDpEvent(event=ev, count=self.count)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the form the release file stores)."""
        return {"name": self.name, "kind": self.kind, "params": self.params, "count": self.count,
                "delta": self.delta}

    @classmethod
    def from_dict(cls, data: Any) -> Charge:
        """Inverse of :meth:`to_dict`, strict.

        Parameters
        ----------
        data : dict
            A dict as :meth:`to_dict` writes it.
        """
        check_json_keys(data, "ledger entry", required=("name", "kind", "params", "count", "delta"))
        name = data["name"]
        where = f"charge {name!r}" if isinstance(name, str) else "ledger entry"
        event = event_from_dict({"kind": data["kind"], "params": data["params"]}, where)
        return cls(name=name, event=event, count=data["count"], delta=data["delta"])


@functools.lru_cache(maxsize=4096)
def _charge_of(text: str) -> Charge:
    """A ledger file's entry (its canonical JSON text) as a Charge, parsed once per distinct entry."""
    import json

    return Charge.from_dict(json.loads(text))


# ------------------------------------------------------------------ composition
def _split(event: PrivacyEvent) -> tuple[list[tuple[PrivacyEvent, int]], float]:
    """(non-Gaussian parts with their counts, total μ² of the Gaussian parts) of one event, flattened."""
    if isinstance(event, SelfComposedEvent):
        parts, mu2 = _split(event.event)
        return [(e, c * event.count) for e, c in parts], mu2 * event.count
    if isinstance(event, _ComposedEvent):
        parts, mu2 = [], 0.0
        for e in event.events:
            p, m = _split(e)
            parts += p
            mu2 += m
        return parts, mu2
    core, mu2 = event.split()
    return ([] if core is None else [(core, 1)]), float(mu2)


def _flatten(ledger: tuple[Charge, ...]) -> tuple[list[tuple[PrivacyEvent, int]], float]:
    cores: dict[tuple, list] = {}
    mu2 = 0.0
    for c in ledger:
        parts, m = _split(c.event)
        mu2 += c.count * m
        for e, k in parts:
            slot = cores.setdefault(e.key, [e, 0])
            slot[1] += k * c.count
    return [(e, k) for e, k in cores.values()], mu2


def _orders_for(cores: list[tuple[PrivacyEvent, int]]) -> np.ndarray:
    orders = np.asarray(RDP_ORDERS)
    for e, _ in cores:
        if e.extra_orders:
            orders = np.union1d(orders, np.asarray(e.extra_orders))
    return orders


def _rdp_epsilon(cores: list[tuple[PrivacyEvent, int]], mu2: float, delta: float) -> float | None:
    orders = _orders_for(cores)
    rdp = orders * mu2 / 2.0
    for e, k in cores:
        r = e.rdp(orders)
        if r is None:
            return None
        rdp = rdp + k * np.asarray(r, dtype=float)
    finite = np.isfinite(rdp)  # a divergence may be infinite above some order (OPS's pair): those orders say nothing
    if not np.any(finite):
        return math.inf
    return float(rdp_to_epsilon(orders[finite], rdp[finite], delta=delta)[0])


def _pld_epsilon(cores: list[tuple[PrivacyEvent, int]], mu2: float, delta: float) -> float | None:
    from .events import GaussianEvent as _G

    with warnings.catch_warnings():  # scipy's logsumexp warns on exact zeros inside dp_accounting
        warnings.simplefilter("ignore", RuntimeWarning)
        total = None
        for e, k in cores:
            one = e.pld()
            if one is None:
                return None
            part = one.self_compose(k) if k > 1 else one
            total = part if total is None else total.compose(part)
        if mu2 > 0:
            g = _G(mu=check_mu(math.sqrt(mu2))).pld()
            total = g if total is None else total.compose(g)
        return float(total.get_epsilon_for_delta(delta))


def _compose(ledger: tuple[Charge, ...], delta: float) -> tuple[float, str]:
    cores, mu2 = _flatten(ledger)
    mu = check_mu(math.sqrt(mu2))
    if not cores:
        if mu2 == 0:
            return 0.0, _ACC_GAUSS
        from .gaussian import gaussian_epsilon

        return float(gaussian_epsilon(delta, sensitivity=mu, sigma=1.0)), _ACC_GAUSS
    if len(cores) == 1 and cores[0][1] == 1:
        exact = cores[0][0].epsilon_with_gaussian(delta, mu=mu)
        if exact is not None:
            return float(exact), cores[0][0].exact_accounting
    if all(e.has_pld for e, _ in cores):
        eps_pld = _pld_epsilon(cores, mu2, delta)
        eps_rdp = _rdp_epsilon(cores, mu2, delta) if all(e.has_rdp for e, _ in cores) else None
        if eps_rdp is None:
            return max(eps_pld, 0.0), _ACC_PLD_ONLY
        return max(min(eps_pld, eps_rdp), 0.0), _ACC_PLD
    if not all(e.has_rdp for e, _ in cores):
        no_rdp = sorted({e.kind for e, _ in cores if not e.has_rdp})
        no_pld = sorted({e.kind for e, _ in cores if not e.has_pld})
        raise UnsupportedEventError(
            f"these events cannot be composed: {', '.join(no_rdp)} has no RDP curve and {', '.join(no_pld)} "
            "has no privacy-loss distribution")
    return _rdp_epsilon(cores, mu2, delta), _ACC_RDP


def compose(ledger: Any, delta: float) -> tuple[float, str]:
    r"""The total ε at ``delta`` of every event in ``ledger``, and the accounting that gives it.

    * Gaussian parts only: the Gaussian mechanism's exact profile at :math:`\mu^2 = \sum\mu_i^2`
      (``"gaussian"``).
    * One ObjPert fit (or another event with an exact composition with a Gaussian) and any
      Gaussians: that exact ε (``"objpert-profile+gaussians"``).
    * Otherwise, when every event has a privacy-loss distribution: the smaller of
      dp_accounting's pessimistic PLD composition and the RDP composition (``"pld+rdp"``; both
      are upper bounds), or the PLD alone where an event has no RDP (``"pld"``).
    * An event with an RDP curve only (a private selection) in the ledger: everything in RDP
      (``"rdp"``).

    Parameters
    ----------
    ledger : sequence of Charge
        The entries (any order; composition is commutative).
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
    signature = tuple(sorted((c.event.key, c.count) for c in ledger))
    return _compose_cached(signature, delta, ledger)


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


def ledger_guarantee(ledger: Any, delta: float) -> Guarantee:
    """The total :class:`pdpkit.events.Guarantee` of ``ledger`` at ``delta``, one part per entry (each alone at its own δ).

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


# ------------------------------------------------------------------ the accountant
class BudgetExceededError(ValueError):
    """A release would take the accountant's total above its budget; nothing was charged or released."""


class DetachedAccountantError(RuntimeError):
    """A charge on a pickled copy of an in-memory accountant in another process: refused, nothing was released."""


#: The in-memory accountants alive in this process, by session id: an accountant unpickled here is the live one.
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
    acc._store = None
    return acc


def _reopen_accountant(path: str) -> PrivacyAccountant:
    """Unpickling a persistent accountant: the same ledger file, opened again (it may charge)."""
    return PrivacyAccountant.open(path)


class PrivacyAccountant:
    r"""A privacy budget :math:`(\varepsilon, \delta)` for a session of releases, and its ledger.

    Give it to pdpkit's estimators, transformers, reports and selection (``accountant=``):
    each charges its event here before drawing any noise, and a charge that would exceed
    the budget raises :class:`BudgetExceededError` (the ledger is unchanged and the caller
    releases nothing). :meth:`spent` is the tight total of everything charged
    (:func:`compose`), at the budget's δ. Other mechanisms are charged with
    :meth:`charge` — a :mod:`pdpkit.events` event or a dp_accounting ``DpEvent``.

    With ``path``, the ledger lives in a SQLite file (:mod:`pdpkit.ledger`) that outlasts
    the session: opening an existing file continues its ledger (the budget must be the
    file's), charges from several processes are serialized by one transaction each, and a
    file whose budget or entries were edited is refused.

    Parameters
    ----------
    epsilon : float
        The budget's ε (> 0, at most 500).
    delta : float
        The budget's δ, in (0, 1): every total is stated at this δ.
    path : str or os.PathLike, optional
        A ledger file (created if absent, with a key file ``path + ".key"`` beside it).

    Examples
    --------
    >>> acc = PrivacyAccountant(1.0, 1e-6)
    >>> acc.charge(GaussianEvent(mu=0.2), name="feature means")  # its place
    0
    >>> round(acc.spent().epsilon, 3) < 1.0
    True
    """

    def __init__(self, epsilon: float, delta: float, *, path: Any = None) -> None:
        self.epsilon = _real(epsilon, "epsilon")
        if self.epsilon > 500.0:
            raise ValueError(f"epsilon must be at most 500 (a larger epsilon protects nothing); got {epsilon!r}")
        self.delta = _delta(delta, "delta")
        self._ledger: list[Charge] = []
        self._session = secrets.token_hex(16)
        self._detached = False
        self._lock = threading.Lock()  # a check and its write are one step (threads of joblib, a server)
        self._store = None
        if path is not None:
            from .ledger import LedgerFile

            self._store = LedgerFile.open_or_create(path, epsilon=self.epsilon, delta=self.delta)
        else:
            _LIVE[self._session] = self

    @classmethod
    def open(cls, path: Any) -> PrivacyAccountant:
        """The accountant of an existing ledger file, with the file's budget (its integrity checked).

        Parameters
        ----------
        path : str or os.PathLike
            The ledger file.
        """
        from .ledger import LedgerFile

        store = LedgerFile.open_existing(path)
        acc = cls.__new__(cls)
        acc.epsilon, acc.delta = store.epsilon, store.delta
        acc._ledger = []
        acc._session = store.ledger_id
        acc._detached = False
        acc._lock = threading.Lock()
        acc._store = store
        return acc

    @property
    def path(self) -> str | None:
        """The ledger file, or ``None`` for an in-memory ledger."""
        return None if self._store is None else self._store.path

    def __reduce__(self) -> tuple:
        if self._store is not None:  # a copy in another process charges the same file
            return (_reopen_accountant, (self._store.path,))
        # Pickling (joblib's process pools, multiprocessing, a saved estimator) must not make a second
        # budget: unpickled in the process that holds this accountant it IS this accountant; anywhere
        # else it is a detached copy that shows the ledger as it was and refuses every charge.
        return (_restore_accountant, (self._session, self.epsilon, self.delta, [c.to_dict() for c in self._ledger]))

    @property
    def detached(self) -> bool:
        """Whether this is a copy of an in-memory accountant made by pickling in another process (it refuses charges)."""
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
        where = "" if self._store is None else f", ledger file {self._store.path!r}"
        ledger = self.ledger
        if not ledger:
            return f"PrivacyAccountant({budget}, nothing spent{where})"
        g = ledger_guarantee(ledger, self.delta)
        spent = f"spent=({_up(g.epsilon, 4)}, {_up(g.delta, 3)})"
        return f"PrivacyAccountant({budget}, {spent}, {len(ledger)} entries{where})"

    @property
    def ledger(self) -> tuple[Charge, ...]:
        """Every charge so far, in order (for a ledger file: everything the file holds, from every process)."""
        if self._store is not None:
            return tuple(_charge_of(d) for d in self._store.read())
        return tuple(self._ledger)

    def supports(self, event: Any) -> bool:
        """Whether ``event`` (pdpkit or dp_accounting) can be charged: it has an analysis that composes with the ledger.

        Parameters
        ----------
        event : PrivacyEvent or dp_accounting DpEvent
            The event.
        """
        try:
            ev = as_event(event)
            compose(self.ledger + (Charge(name="probe", event=ev, delta=self.delta),), self.delta)
        except (UnsupportedEventError, TypeError):
            return False
        except ValueError:
            return True  # accountable; only its size is refused (e.g. a noise scale too small)
        return True

    def total_epsilon(self, extra: Any = ()) -> float:
        """ε at the budget's δ of the ledger plus the charges ``extra`` (0 for an empty ledger).

        Parameters
        ----------
        extra : sequence of Charge
            Charges to add hypothetically.
        """
        entries = self.ledger + tuple(extra)
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

    def _entries(self, event: Any, name: str | None, count: int, delta: float | None) -> tuple[Charge, ...]:
        if isinstance(event, Charge):
            return (event,)
        if isinstance(event, (list, tuple)):
            if not all(isinstance(c, Charge) for c in event):
                raise TypeError("charges must be Charge objects (or one event with name=)")
            return tuple(event)
        if name is None:
            raise TypeError("charge(event, *, name=...): name the release")
        return (Charge(name=name, event=event, count=count, delta=self.delta if delta is None else delta),)

    def _refuse(self, extra: tuple[Charge, ...], after: float) -> BudgetExceededError:
        names = ", ".join(repr(c.name) for c in extra)
        return BudgetExceededError(
            f"charging {names} would spend epsilon = {_up(after)} at delta = {_up(self.delta, 3)}, above "
            f"the budget epsilon = {self.epsilon:.4g}: nothing was released; lower this release's epsilon "
            f"(or raise its noise) or start a new accountant with a larger budget")

    @contextlib.contextmanager
    def charging(self, event: Any, *, name: str | None = None, count: int = 1,
                 delta: float | None = None) -> Iterator[int]:
        """Check the budget, let the caller draw its noise, record the charge: one step.

        ``with acc.charging(event, name=...) as position:`` — the budget is checked on entry
        (:class:`BudgetExceededError`, nothing recorded, before the block runs); the block draws
        the release's noise from the stream of ``position``
        (``pdpkit._validation.charged_generator``); the charge is recorded when the block ends,
        also when it ends with an exception (its noise may have been drawn, and a failure may
        depend on it). For a ledger file the whole step is one SQLite transaction
        (``BEGIN IMMEDIATE``): another process waits, and a process killed before the commit
        records nothing — and released nothing, since a release leaves the block only after it.

        Parameters
        ----------
        event : PrivacyEvent, dp_accounting DpEvent, Charge or sequence of Charge
            What is released.
        name : str
            What the release is called in the ledger (not with Charge objects).
        count : int
            How many identical events.
        delta : float, optional
            δ at which the entry's own ε is listed (default: the budget's).
        """
        extra = self._entries(event, name, count, delta)
        if self._detached:
            raise DetachedAccountantError(
                "this PrivacyAccountant is a copy made by pickling in another process (for example by joblib "
                "when n_jobs > 1): a charge here would never reach the session's ledger, so it is refused and "
                "nothing was released. Fit in the session's process (n_jobs=1, or joblib's threading backend), "
                "give the session a ledger file (PrivacyAccountant(..., path=...)), which copies in other "
                "processes charge too, or fit without an accountant and charge its release yourself")
        if self._store is not None:
            with self._lock, self._store.transaction() as txn:
                ledger = tuple(_charge_of(d) for d in txn.ledger)
                after = compose(ledger + extra, self.delta)[0]
                if after > self.epsilon * (1.0 + 1e-12):
                    raise self._refuse(extra, after)
                position = len(ledger)
                try:
                    yield position
                finally:
                    txn.append(tuple(c.to_dict() for c in extra))
            return
        with self._lock:
            after = self.total_epsilon(extra)
            if after > self.epsilon * (1.0 + 1e-12):
                raise self._refuse(extra, after)
            position = len(self._ledger)
            try:
                yield position
            finally:
                self._ledger.extend(extra)

    def charge(self, event: Any, *, name: str | None = None, count: int = 1, delta: float | None = None) -> int:
        """Add ``event`` to the ledger, or raise :class:`BudgetExceededError` and add nothing.

        Returns the ledger position of the first added entry: a charged release draws its noise
        from the stream of that position (``pdpkit._validation.charged_generator``), so
        two releases of one ledger never share noise, whatever seeds their callers passed.
        (Draw the noise inside :meth:`charging` to make check, draw and record one step.) A
        detached copy (:attr:`detached`) refuses with :class:`DetachedAccountantError`; an event
        without an analysis here with :class:`pdpkit.events.UnsupportedEventError`.

        Parameters
        ----------
        event : PrivacyEvent, dp_accounting DpEvent, Charge or sequence of Charge
            What is released (a sequence of charges is added all or none).
        name : str
            What the release is called in the ledger (not with Charge objects).
        count : int
            How many identical events (e.g. the steps of a DP-SGD run).
        delta : float, optional
            δ at which the entry's own ε is listed (default: the budget's).
        """
        with self.charging(event, name=name, count=count, delta=delta) as position:
            pass
        return position

    def charge_gaussian(self, *, mu: float, name: str, count: int = 1, delta: float | None = None) -> int:
        r"""Charge ``count`` Gaussian mechanisms of parameter :math:`\mu = \Delta/s` each (:class:`pdpkit.events.GaussianEvent`).

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
        return self.charge(GaussianEvent(mu=mu), name=name, count=count, delta=delta)

    def charge_objpert(self, *, L: float, beta: float, lam: float, sigma: float, name: str, mu_out: float = 0.0,
                       count: int = 1, delta: float | None = None) -> int:
        r"""Charge ``count`` ObjPert fits with output noise μ (:class:`pdpkit.events.ObjPertEvent`).

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
        return self.charge(ObjPertEvent(L=L, beta=beta, lam=lam, sigma=sigma, mu_out=mu_out), name=name,
                           count=count, delta=delta)

    def charge_selection(self, selection: RepeatAndSelectEvent, *, name: str, delta: float | None = None) -> int:
        """Charge a private selection (:class:`pdpkit.events.RepeatAndSelectEvent`).

        Parameters
        ----------
        selection : RepeatAndSelectEvent
            The selection's public parameters.
        name : str
            What is released.
        delta : float, optional
            δ at which the entry's own ε is listed (default: the budget's).
        """
        return self.charge(selection, name=name, delta=delta)

    def spent(self) -> Guarantee:
        """The total guarantee of the ledger at the budget's δ, with one part per entry."""
        ledger = self.ledger
        if not ledger:
            raise ValueError("nothing has been charged yet")
        return ledger_guarantee(ledger, self.delta)

    def dp_event(self) -> Any:
        """The ledger as one dp_accounting ``ComposedDpEvent`` (ObjPert and selections as :class:`pdpkit.events.PdpkitDpEvent`)."""
        from dp_accounting import dp_event as _dpe

        return _dpe.ComposedDpEvent(events=[c.dp_event() for c in self.ledger])


# ------------------------------------------------------------------ calibration
@dataclass(frozen=True)
class PlanPart:
    """One part of a :class:`BudgetPlan`: the (ε, δ) to give it, alone, and the ledger entries that gives.

    Attributes
    ----------
    name : str
        The part's name in the plan.
    epsilon, delta : float
        What to give the part (its own target, e.g. an estimator's ``epsilon`` and ``delta``).
    charges : tuple of Charge
        What the part charges when calibrated to them.
    """

    name: str
    epsilon: float
    delta: float
    charges: tuple[Charge, ...]


@dataclass(frozen=True)
class BudgetPlan:
    """How to share a budget among the parts of a workflow so that their composition meets it (:func:`plan_budget`).

    Attributes
    ----------
    epsilon, delta : float
        The budget.
    total_epsilon : float
        The composition of all parts' charges at ``delta`` (at most ``epsilon``).
    accounting : str
        How the total was composed (:func:`compose`).
    parts : tuple of PlanPart
        The parts, in the order given.
    """

    epsilon: float
    delta: float
    total_epsilon: float
    accounting: str
    parts: tuple[PlanPart, ...]

    def __getitem__(self, name: str) -> PlanPart:
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def basic_epsilon(self) -> float:
        """The sum of the parts' own ε: what adding them up (basic composition) would have allowed in total."""
        return float(sum(p.epsilon for p in self.parts))

    def __str__(self) -> str:
        lines = [f"budget ({_up(self.epsilon)}, {self.delta:.3g}): composed total epsilon <= {_up(self.total_epsilon)}"
                 f" [{self.accounting}]; the parts' own epsilons add up to {_up(self.basic_epsilon)}"]
        for p in self.parts:
            lines.append(f"  {p.name}: epsilon {p.epsilon:.6g}, delta {p.delta:.3g}")
        return "\n".join(lines)


def _illinois(g: Any, lo: float, hi: float, g_lo: float, g_hi: float, *, done: Any, max_iter: int,
              guard: float = 0.0) -> float:
    """Narrow ``[lo, hi]`` (``g(lo) <= 0 < g(hi)``, g increasing) by regula falsi with the Illinois rule; the feasible end.

    The next point is the secant's root (kept ``guard`` of the width away from the ends, or the
    midpoint when it falls outside or ``g(hi)`` is infinite); the end kept twice in a row has
    its value halved. Stops when ``done(lo, hi, g(lo))`` or after ``max_iter`` evaluations.
    """
    side = 0
    for _ in range(max_iter):
        if done(lo, hi, g_lo):
            break
        if math.isfinite(g_hi) and g_hi > g_lo:
            x = hi - g_hi * (hi - lo) / (g_hi - g_lo)
            if guard > 0:
                x = min(max(x, lo + guard * (hi - lo)), hi - guard * (hi - lo))
            elif not lo < x < hi:
                x = 0.5 * (lo + hi)
        else:
            x = 0.5 * (lo + hi)
        gx = g(x)
        if gx <= 0:
            lo, g_lo = x, gx
            if side == -1:
                g_hi *= 0.5
            side = -1
        else:
            hi, g_hi = x, gx
            if side == 1:
                g_lo *= 0.5
            side = 1
    return lo


def _part_charges(name: str, got: Any, delta: float) -> tuple[Charge, ...]:
    if isinstance(got, Charge):
        return (got,)
    if isinstance(got, (list, tuple)):
        if not all(isinstance(c, Charge) for c in got):
            raise TypeError(f"part {name!r}: a sequence must hold Charge objects")
        return tuple(got)
    return (Charge(name=name, event=as_event(got), delta=delta),)


def plan_budget(eps: float, delta: float, parts: Any, *, weights: Any = None, rtol: float = 1e-3,
                spent: Any = ()) -> BudgetPlan:
    r"""Share (ε, δ) among the parts of a workflow so that their composition meets it, tightly.

    ``parts`` maps a name to a callable ``(eps_i, delta_i) -> events``: the part calibrated to
    (ε_i, δ_i) alone, as a :class:`pdpkit.events.PrivacyEvent`, a dp_accounting event, a
    :class:`Charge` or a sequence of them — for instance an estimator's
    ``budget_part()`` (:meth:`pdpkit.estimators.ObjPertEstimator.budget_part`). Every part gets
    :math:`\delta_i = \delta/k` and :math:`\varepsilon_i = w_i t` (``weights`` :math:`w_i`,
    default 1); :math:`t` is the largest (to relative ``rtol``, by regula falsi on
    :math:`\log t`) at which the parts' charges, composed by :func:`compose` at δ (PLD, RDP or
    exactly), stay within ε. Composition is tighter than addition, so the parts' own ε usually
    add up to more than ε (:attr:`BudgetPlan.basic_epsilon`); the plan's total is checked.
    ``spent`` (the charges a ledger already holds, e.g. ``accountant.ledger``) plans the rest
    of a session: the parts composed with them stay within ε.

    Parameters
    ----------
    eps, delta : float
        The budget (ε > 0, δ in (0, 1)).
    parts : mapping of str to callable
        Each part's calibration.
    weights : mapping of str to float, optional
        Relative shares of ε (> 0); default equal.
    rtol : float
        Relative precision of the common scale t.
    spent : sequence of Charge
        Charges already made against the same budget (default none); ``total_epsilon``
        then includes them.

    Returns
    -------
    BudgetPlan
        Each part's (ε_i, δ_i) and charges, and the composed total.
    """
    eps = _real(eps, "eps")
    delta = _delta(delta, "delta")
    rtol = _real(rtol, "rtol")
    spent = tuple(spent)
    if not all(isinstance(c, Charge) for c in spent):
        raise TypeError("spent must hold Charge objects (an accountant's ledger)")
    if spent and compose(spent, delta)[0] >= eps:
        raise ValueError(f"the spent charges alone reach eps={eps:g} at delta={delta:g}: nothing is left to plan")
    names = list(parts)
    if not names:
        raise ValueError("parts must name at least one part")
    for n in names:
        if not isinstance(n, str) or not callable(parts[n]):
            raise TypeError("parts must map names (str) to callables (eps_i, delta_i) -> events")
    w = {n: 1.0 for n in names} if weights is None else {n: _real(weights[n], f"weights[{n!r}]") for n in names}
    d_i = delta / len(names)

    def charges_at(t: float) -> tuple[Charge, ...]:
        out: list[Charge] = list(spent)
        for n in names:
            out.extend(_part_charges(n, parts[n](w[n] * t, d_i), d_i))
        return tuple(out)

    def total(t: float) -> float:
        try:
            return compose(charges_at(t), delta)[0]
        except ValueError as exc:  # a part that cannot be calibrated that small or large
            if isinstance(exc, UnsupportedEventError):
                raise
            return math.inf

    w_max = max(w.values())
    lo, hi = eps / sum(w.values()), eps / w_max  # basic composition; the largest part alone at eps
    for _ in range(60):  # the lower end must meet the budget (RDP composition may be looser than adding)
        f_lo = total(lo) - eps
        if f_lo <= 0:
            break
        hi, lo = lo, lo / 2.0
    else:
        raise ValueError(f"no share meets eps={eps:g} at delta={delta:g}")
    f_hi = total(hi * (1.0 - 1e-12)) - eps
    if f_hi <= 0:
        lo = hi * (1.0 - 1e-12)
    # the bracket [lo, hi] (lo meets the budget, hi does not) narrowed on log t by the Illinois variant of
    # regula falsi (the composed epsilon is smooth and increasing in t), by bisection where a side is infinite
    if math.log(hi / lo) > rtol:
        lo = math.exp(_illinois(lambda x: total(math.exp(x)) - eps, math.log(lo), math.log(hi), f_lo, f_hi,
                                done=lambda a, b, g: b - a <= rtol, max_iter=200, guard=0.01))
    final = charges_at(lo)
    tot, how = compose(final, delta)
    if tot > eps * (1.0 + 1e-12):  # pragma: no cover - the bisection keeps the feasible end
        raise RuntimeError("the plan's total exceeds the budget")
    plan_parts = []
    for n in names:
        got = _part_charges(n, parts[n](w[n] * lo, d_i), d_i)
        plan_parts.append(PlanPart(name=n, epsilon=w[n] * lo, delta=d_i, charges=got))
    return BudgetPlan(epsilon=eps, delta=delta, total_epsilon=tot, accounting=how, parts=tuple(plan_parts))


def calibrate_event(family: Any, eps: float, delta: float, *, lower: float, upper: float,
                    rtol: float = 1e-9) -> tuple[float, float]:
    """The parameter at which an event family meets (ε, δ): the smallest p in [lower, upper] with ε(family(p)) <= eps.

    ``family(p)`` returns an event (or a sequence of :class:`Charge`) whose ε at ``delta``
    (:func:`compose`) does not increase with p (p a noise scale). Bisection on log p to
    relative ``rtol``; the returned p is checked (its ε is at most ``eps``). Returns
    ``(p, epsilon)``.

    Parameters
    ----------
    family : callable
        ``p -> PrivacyEvent`` (or sequence of Charge), ε non-increasing in p.
    eps, delta : float
        The target.
    lower, upper : float
        The bracket (0 < lower < upper); ``upper`` must meet the target.
    rtol : float
        Relative tolerance on p.
    """
    eps = _real(eps, "eps")
    delta = _delta(delta, "delta")
    lo, hi = _real(lower, "lower"), _real(upper, "upper")
    if not lo < hi:
        raise ValueError(f"lower must be below upper; got {lower!r}, {upper!r}")

    def epsilon_of(p: float) -> float:
        ev = family(p)
        ledger = tuple(ev) if isinstance(ev, (list, tuple)) else (Charge(name="calibration", event=ev, delta=delta),)
        return compose(ledger, delta)[0]

    if epsilon_of(hi) > eps:
        raise ValueError(f"even upper={upper!r} does not reach eps={eps:g} at delta={delta:g}")
    if epsilon_of(lo) <= eps:
        return lo, epsilon_of(lo)
    a, b = math.log(lo), math.log(hi)
    while b - a > rtol:
        mid = 0.5 * (a + b)
        if epsilon_of(math.exp(mid)) <= eps:
            b = mid
        else:
            a = mid
    p = math.exp(b)
    return p, epsilon_of(p)


def _fits_epsilon(e0: float, a: float, L: float, count: int, mu_out: float, delta: float, *, rdp_only: bool) -> float:
    """ε of ``count`` ObjPert fits with log-determinant constant e0 and L/σ = a (σ = L/a, λ from e0)."""
    beta = 1.0
    lam = beta / math.expm1(e0)
    c = Charge(name="model", event=ObjPertEvent(L=L, beta=beta, lam=lam, sigma=L / a, mu_out=mu_out), count=count,
               delta=delta)
    if rdp_only:
        cores, mu2 = _flatten((c,))
        return _rdp_epsilon(cores, mu2, delta)
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
    from .gaussian import gaussian_sigma

    eps = _real(eps, "eps")
    delta = _delta(delta, "delta")
    L = _real(L, "L")
    beta = _real(beta, "beta", allow_zero=True)
    mu_out = check_mu(_real(mu_out, "mu_out", allow_zero=True))
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
    # the PLD refinement: regula falsi with the Illinois rule on log e0 (ε is smooth in it), keeping a
    # feasible lower end (the RDP answer is feasible: the PLD+RDP ε is at most the RDP one); it stops
    # when the bracket is as narrow as 14 bisection steps would leave it, or when ε(lo) is within
    # 1e-6 of the target — usually after 4 to 6 compositions instead of 14
    hi = math.log(eps)
    width = (hi - lo) / 2.0**14
    g_lo = _fits_epsilon(math.exp(lo), a, L, count, mu_out, delta, rdp_only=False) - eps
    g_hi = _fits_epsilon(math.exp(hi), a, L, count, mu_out, delta, rdp_only=False) - eps
    if g_hi <= 0:
        lo = hi
    lo = _illinois(lambda x: _fits_epsilon(math.exp(x), a, L, count, mu_out, delta, rdp_only=False) - eps,
                   lo, hi, g_lo, g_hi, done=lambda lo_, hi_, g: hi_ - lo_ <= width or g >= -1e-6 * eps,
                   max_iter=40)
    e0 = math.exp(lo)
    lam = beta / math.expm1(e0)
    for _ in range(64):  # the check, with the real beta and lam
        c = Charge(name="model", event=ObjPertEvent(L=L, beta=beta, lam=lam, sigma=sigma, mu_out=mu_out),
                   count=count, delta=delta)
        if compose((c,), delta)[0] <= eps:
            return float(lam), float(sigma)
        lam *= 1.0 + 1e-6
    raise ValueError(f"calibration for {count} fits did not meet eps={eps:g}")  # pragma: no cover

