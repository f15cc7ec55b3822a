"""pdpkit.events and the accountant's composition by type: every event against an independent analysis,
dp_accounting's events read and written, and a new mechanism added in one place (this file)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from dp_accounting import dp_event as de
from dp_accounting.pld import pld_privacy_accountant as pld_acc
from dp_accounting.pld import privacy_loss_distribution as pld_mod
from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

from pdpkit import events as ev
from pdpkit.accountant import Charge, PrivacyAccountant, compose, ledger_guarantee
from pdpkit.accounting import objpert_output_epsilon, objpert_pld
from pdpkit.gaussian import gaussian_epsilon

DELTA = 1e-6
OBJPERT = ev.ObjPertEvent(L=1.0, beta=0.25, lam=1.0, sigma=3.0, mu_out=1e-3)


def _eps(*entries: tuple[Any, int], delta: float = DELTA) -> tuple[float, str]:
    return compose([Charge(name=f"e{i}", event=e, count=k) for i, (e, k) in enumerate(entries)], delta)


# ------------------------------------------------------------------ each event's analysis
def test_gaussian_event_is_the_exact_gaussian_and_several_add_their_mu_squared():
    eps, how = _eps((ev.GaussianEvent(mu=0.3), 1), (ev.GaussianEvent(mu=0.4), 1))
    assert how == "gaussian"
    assert eps == pytest.approx(float(gaussian_epsilon(DELTA, sensitivity=0.5, sigma=1.0)), rel=1e-12)
    eps4, _ = _eps((ev.GaussianEvent(mu=0.25), 4))
    assert eps4 == pytest.approx(float(gaussian_epsilon(DELTA, sensitivity=0.5, sigma=1.0)), rel=1e-12)


def test_laplace_rdp_matches_dp_accounting_and_its_pld_the_pure_bound():
    lap = ev.LaplaceEvent(noise_multiplier=2.0)
    orders = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    acc = rdp_acc.RdpAccountant(list(orders))
    acc.compose(de.LaplaceDpEvent(noise_multiplier=2.0))
    np.testing.assert_allclose(lap.rdp(orders), np.asarray(acc._rdp), rtol=1e-10)
    assert np.all(lap.rdp(orders) <= 0.5 + 1e-15)  # never above pure 1/b-DP
    eps, how = _eps((lap, 1))
    assert how == "pld+rdp" and 0.45 < eps <= 0.5 + 1e-4  # Laplace alone: pure ε = Δ/b = 0.5 at δ = 1e-6
    # five Laplace mechanisms: dp_accounting's own PLD accountant agrees
    pl = pld_acc.PLDAccountant(value_discretization_interval=1e-4)
    pl.compose(de.LaplaceDpEvent(noise_multiplier=2.0), 5)
    eps5, _ = _eps((lap, 5))
    assert eps5 == pytest.approx(pl.get_epsilon(DELTA), rel=1e-3) and eps5 < 5 * 0.5


def test_objpert_event_alone_is_the_exact_quadrature_and_its_pld_agrees():
    eps, how = _eps((OBJPERT, 1))
    assert how == "objpert-profile+gaussians"
    assert eps == pytest.approx(objpert_output_epsilon(DELTA, L=1.0, beta=0.25, lam=1.0, sigma=3.0, mu=1e-3,
                                                       sharp=True), rel=1e-12)
    # the event's PLD (dominating pair composed with the output noise) gives the same ε within its grid
    assert float(OBJPERT.pld().get_epsilon_for_delta(DELTA)) == pytest.approx(eps, abs=2e-3)
    core, mu2 = OBJPERT.split()
    assert core == ev.ObjPertEvent(L=1.0, beta=0.25, lam=1.0, sigma=3.0) and mu2 == pytest.approx(1e-6)


def test_nested_compositions_flatten_to_the_same_total():
    g = ev.GaussianEvent(mu=0.2)
    flat, _ = _eps((OBJPERT, 2), (g, 3))
    nested, _ = _eps((ev.ComposedEvent(events=(ev.SelfComposedEvent(event=OBJPERT, count=2),
                                               ev.SelfComposedEvent(event=g, count=3))), 1))
    assert nested == flat


def test_every_event_round_trips_through_json_and_unknown_kinds_are_refused():
    events = [ev.GaussianEvent(mu=0.3), ev.LaplaceEvent(noise_multiplier=1.5), OBJPERT,
              ev.RepeatAndSelectEvent(candidates=((1.0, 0.25, 2.0, 4.0, 1e-3),), score_mu=0.1, mean=5.0, shape=1.0),
              ev.PoissonSampledEvent(sampling_probability=0.01, event=ev.GaussianEvent(mu=1.0)),
              ev.SelfComposedEvent(event=OBJPERT, count=3),
              ev.ComposedEvent(events=(OBJPERT, ev.GaussianEvent(mu=0.1)))]
    for e in events:
        back = ev.event_from_dict(json.loads(json.dumps(e.to_dict(), allow_nan=False)))
        assert back == e and type(back) is type(e)
    with pytest.raises(ValueError, match="kind"):
        ev.event_from_dict({"kind": "no-such-mechanism", "params": {}})
    with pytest.raises(ValueError, match="unknown"):
        ev.event_from_dict({"kind": "gaussian", "params": {"mu": 1.0, "sigma": 2.0}})
    with pytest.raises(TypeError, match="mu"):
        ev.GaussianEvent(mu="1")


def test_an_rdp_only_event_puts_the_whole_ledger_in_rdp_and_an_unaccountable_mix_is_refused():
    sel = ev.RepeatAndSelectEvent(candidates=((1.0, 0.25, 2.0, 4.0, 1e-3),), score_mu=0.1, mean=5.0, shape=1.0)
    eps, how = _eps((sel, 1), (OBJPERT, 1))
    assert how == "rdp"
    orders = np.union1d(np.asarray(ev.RDP_ORDERS), np.asarray(sel.extra_orders))
    from pdpkit.accounting import rdp_to_epsilon

    by_hand = rdp_to_epsilon(orders, sel.rdp(orders) + OBJPERT.rdp(orders), delta=DELTA)[0]
    assert eps == pytest.approx(by_hand, rel=1e-12)
    # a Poisson-sampled Laplace has a PLD but no RDP; a selection has an RDP but no PLD: refused, named
    lap = ev.PoissonSampledEvent(sampling_probability=0.1, event=ev.LaplaceEvent(noise_multiplier=1.0))
    with pytest.raises(ev.UnsupportedEventError, match="poisson-sampled.*selection"):
        _eps((sel, 1), (lap, 1))
    acc = PrivacyAccountant(10.0, DELTA)
    acc.charge(sel, name="selection")
    assert not acc.supports(lap) and acc.supports(OBJPERT)
    with pytest.raises(ev.UnsupportedEventError):
        acc.charge(lap, name="histogram")
    assert len(acc.ledger) == 1  # nothing was charged


# ------------------------------------------------------------------ dp_accounting, both ways
def test_dp_accounting_events_are_read_and_unsupported_ones_refused_by_name():
    acc = PrivacyAccountant(50.0, DELTA)
    assert acc.supports(de.GaussianDpEvent(noise_multiplier=2.0))
    assert acc.supports(de.SelfComposedDpEvent(de.LaplaceDpEvent(noise_multiplier=3.0), 4))
    assert acc.supports(de.PoissonSampledDpEvent(0.01, de.GaussianDpEvent(1.0)))
    for bad, name in ((de.SampledWithoutReplacementDpEvent(1000, 10, de.GaussianDpEvent(1.0)), "replace-one"),
                      (de.NonPrivateDpEvent(), "NonPrivateDpEvent"),
                      (de.RandomizedResponseDpEvent(0.5, 2), "RandomizedResponseDpEvent")):
        assert not acc.supports(bad)
        with pytest.raises(ev.UnsupportedEventError, match=name):
            acc.charge(bad, name="x")
    assert acc.ledger == ()
    acc.charge(de.GaussianDpEvent(noise_multiplier=2.0), name="count")
    assert acc.ledger[0].event == ev.GaussianEvent(mu=0.5)  # read as pdpkit's own Gaussian: composed exactly


def test_dp_sgd_with_an_objpert_fit_composes_between_the_parts_and_the_independent_pld():
    """A DP-SGD run (Poisson-sampled Gaussian, 300 steps) and one ObjPert fit on the same records."""
    sgd = de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.02, de.GaussianDpEvent(1.2)), 300)
    acc = PrivacyAccountant(30.0, DELTA)
    acc.charge(sgd, name="DP-SGD")
    acc.charge(OBJPERT, name="ObjPert")
    total = acc.spent()
    # DP-SGD alone by dp_accounting's own PLD accountant
    alone = pld_acc.PLDAccountant(value_discretization_interval=1e-4)
    alone.compose(sgd)
    eps_sgd = alone.get_epsilon(DELTA)
    eps_obj = _eps((OBJPERT, 1), delta=DELTA / 2)[0]
    basic = pld_acc.PLDAccountant(value_discretization_interval=1e-4)
    basic.compose(sgd)
    assert eps_sgd < total.epsilon < basic.get_epsilon(DELTA / 2) + eps_obj  # above DP-SGD, below basic composition
    # an independent PLD composition: dp_accounting's DP-SGD distribution on a finer grid with ObjPert's
    # dominating pair and the output Gaussian built by pdpkit.accounting on the same grid
    h = 5e-5
    ind = pld_acc.PLDAccountant(value_discretization_interval=h)
    ind.compose(sgd)
    obj = objpert_pld(L=1.0, beta=0.25, lam=1.0, sigma=3.0, sharp=True, value_discretization_interval=h)
    out = pld_mod.from_gaussian_mechanism(1e3, value_discretization_interval=h)
    eps_ind = float(ind._pld.compose(obj).compose(out).get_epsilon_for_delta(DELTA))
    assert total.epsilon == pytest.approx(eps_ind, rel=2e-3)
    assert total.epsilon >= eps_ind * (1 - 2e-3)  # pessimistic on the coarser grid, never far below
    # deliberately wrong: ObjPert's part left out is well below the total
    assert eps_sgd < total.epsilon - 0.1


def test_the_ledger_exports_as_a_dp_event_tree_that_pdpkit_reads_back():
    acc = PrivacyAccountant(30.0, DELTA)
    acc.charge(de.PoissonSampledDpEvent(0.02, de.GaussianDpEvent(1.2)), name="DP-SGD", count=50)
    acc.charge(OBJPERT, name="ObjPert")
    acc.charge_gaussian(mu=0.3, name="counts")
    tree = acc.dp_event()
    assert isinstance(tree, de.ComposedDpEvent) and len(tree.events) == 3
    objpert_part = tree.events[1]
    assert isinstance(objpert_part, de.ComposedDpEvent)
    carrier = objpert_part.events[0]
    assert isinstance(carrier, ev.PdpkitDpEvent) and carrier.kind == "objpert"
    # dp_accounting users compose it through its PLD; dp_accounting's accountant does not know it
    assert not pld_acc.PLDAccountant().supports(carrier)
    direct = carrier.privacy_loss_distribution().compose(pld_mod.from_gaussian_mechanism(1e3))
    assert float(direct.get_epsilon_for_delta(DELTA)) == pytest.approx(_eps((OBJPERT, 1))[0], abs=2e-3)
    # read back, the tree gives the same total
    again = PrivacyAccountant(30.0, DELTA)
    again.charge(tree, name="everything")
    assert again.spent().epsilon == pytest.approx(acc.spent().epsilon, rel=1e-9)


# ------------------------------------------------------------------ a new mechanism, added here only
@dataclass(frozen=True)
class RandomizedResponseEvent(ev.PrivacyEvent):
    """Randomized response on one bit: pure ε₀-DP (the one place this mechanism is described)."""

    kind: ClassVar[str] = "test-randomized-response"
    epsilon0: float

    def params(self) -> dict[str, Any]:
        return {"epsilon0": self.epsilon0}

    @classmethod
    def from_params(cls, params: Any, where: str = "event") -> RandomizedResponseEvent:
        return cls(epsilon0=float(params["epsilon0"]))

    def pld(self) -> Any:
        from dp_accounting.pld import common

        return pld_mod.from_privacy_parameters(common.DifferentialPrivacyParameters(self.epsilon0, 0.0),
                                               value_discretization_interval=ev.PLD_INTERVAL)

    def rdp(self, orders: Any) -> np.ndarray:
        a = np.asarray(orders, dtype=float)
        p = 1.0 / (1.0 + math.exp(-self.epsilon0))
        return np.logaddexp(a * math.log(p) + (1 - a) * math.log1p(-p),
                            a * math.log1p(-p) + (1 - a) * math.log(p)) / (a - 1.0)


def test_a_new_mechanism_is_one_event_class_end_to_end(tmp_path):
    rr = RandomizedResponseEvent(epsilon0=0.5)
    for acc in (PrivacyAccountant(5.0, DELTA), PrivacyAccountant(5.0, DELTA, path=tmp_path / "b.sqlite")):
        assert acc.supports(rr)
        acc.charge(rr, name="survey bit", count=3)
        acc.charge(OBJPERT, name="model")
        g = acc.spent()
        assert g.accounting == "pld+rdp"
        # between the model alone and basic composition of the parts
        assert _eps((OBJPERT, 1))[0] < g.epsilon < 3 * 0.5 + _eps((OBJPERT, 1), delta=DELTA / 2)[0]
        assert g.part("survey bit").epsilon <= 1.5 + 1e-3
        # the ledger's JSON names it and reads it back; the dp_event tree carries it
        entries = [Charge.from_dict(json.loads(json.dumps(c.to_dict()))) for c in acc.ledger]
        assert ledger_guarantee(entries, DELTA) == g
        assert isinstance(acc.dp_event().events[0].event, ev.PdpkitDpEvent)
    reopened = PrivacyAccountant.open(tmp_path / "b.sqlite")
    assert reopened.spent() == g


def test_generic_calibration_finds_the_gaussian_noise():
    from pdpkit.accountant import calibrate_event
    from pdpkit.gaussian import gaussian_sigma

    s, e = calibrate_event(lambda s: ev.GaussianEvent(mu=1.0 / s), 1.0, DELTA, lower=0.1, upper=100.0)
    assert e <= 1.0 and s == pytest.approx(float(gaussian_sigma(1.0, DELTA, sensitivity=1.0)), rel=1e-6)
    b, e = calibrate_event(lambda b: ev.LaplaceEvent(noise_multiplier=b), 0.5, DELTA, lower=0.1, upper=100.0)
    assert e <= 0.5 and b < 2.0  # below the pure-DP scale 1/ε: the δ buys a little
