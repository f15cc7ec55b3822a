"""The package's one calling convention (ARCHITECTURE.md, "Calling convention").

Data arrays, the model (``loss``) and the swept quantity (ε, δ, α, x, p, q, or a target pair
(ε, δ)) may be positional; every mechanism parameter is keyword-only, so that a swapped pair of
floats is a ``TypeError`` and never a silently wrong number. This walks every public function
and public method of every public module with :func:`inspect.signature`; an exception is
allowed only through ``ALLOWED`` below, with its reason. A test then checks that the swapped
calls of issue 13 raise, and that the keyword call gives the right value (against scipy).
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil

import pytest
from scipy import stats

import pdpkit

#: Names of mechanism parameters (and of the settings that sit next to them). A parameter with
#: one of these names must be keyword-only, unless allow-listed below.
MECHANISM = frozenset({
    "sensitivity", "sigma", "L", "beta", "lam", "lams", "rho", "k", "norm_bound", "bound", "gamma", "C",
    "tau", "sigma_out", "variant", "precision", "noise_multiplier", "sample_rate", "steps", "select_mean",
    "clip", "f", "form", "sharp", "method", "y_bound", "tol", "max_iter", "rng", "random_state",
    "progress", "signed", "member", "intercept", "fit_intercept", "label_bound", "theta_scale",
    "noise", "accounting", "floor", "n_starts", "n_samples", "trials", "epochs", "batch_size", "lr",
})
#: Sizes: positional only as the first parameter (swapping n and d is silently wrong).
SIZES = frozenset({"d", "n"})

#: (module, function, parameter) -> why it may stay positional.
ALLOWED = {
    ("pdpkit.experiments.privacy_report", "ReportVsTruth.ratio", "method"):
        "selects which stored result to read, not a mechanism parameter",
    ("pdpkit.report", "rho_parts", "rho"):
        "the total failure probability being split is the function's input (its data), as in a swept quantity",
    ("pdpkit.gaussian", "gaussian_pdp_epsilon", "sensitivity"):
        "the per-person sensitivity array the pDP profile is evaluated at (data, vectorized)",
    ("pdpkit.gaussian", "gaussian_ex_post_bound", "sensitivity"):
        "the per-person sensitivity array the bound is evaluated at (data, vectorized)",
    ("pdpkit.gaussian", "gaussian_classic_epsilon", "sensitivity"):
        "the sensitivity array the classic bound is evaluated at, as in gaussian_pdp_epsilon",
    ("pdpkit.analyze_gauss", "lambda_min_pdp_epsilon", "sensitivity"):
        "the per-person sensitivity array (f''·||x||²), as in gaussian_pdp_epsilon",
    ("pdpkit.analyze_gauss", "analyze_gauss_dp_epsilon", "beta"):
        "the sensitivity bound the classic guarantee is evaluated at, as gaussian_classic_epsilon's",
    ("pdpkit.gaussian", "gaussian_privacy_loss", "noise"):
        "the realized noise vector is data (the output minus the query), not a noise scale",
    ("pdpkit.gaussian", "gaussian_ex_post_pdp", "noise"):
        "the realized noise vector is data (the output minus the query), not a noise scale",
    ("pdpkit.audit", "clopper_pearson", "k"):
        "the observed number of successes (data), not a mechanism parameter",
    ("pdpkit.audit", "clopper_pearson", "n"):
        "the number of trials (data), paired with k",
    ("pdpkit.experiments.output_vs_objective", "AccuracyVsEpsilon.best", "method"):
        "selects which stored result to read ('output' or 'objpert'), not a mechanism parameter",
}


def _public_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(pdpkit.__path__, prefix="pdpkit."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        if info.name in {"pdpkit.cli", "pdpkit.__main__"} or info.ispkg:
            continue
        names.append(info.name)
    return sorted(names)


def _callables():
    """(module name, qualified name, function) of every public function and public method."""
    out = []
    for modname in _public_modules():
        mod = importlib.import_module(modname)
        names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
        for name in names:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and obj.__module__ == modname:
                out.append((modname, name, obj))
            elif inspect.isclass(obj) and obj.__module__ == modname:
                for mname, meth in vars(obj).items():
                    if not mname.startswith("_") and inspect.isfunction(meth):
                        out.append((modname, f"{name}.{mname}", meth))
    return out


CALLABLES = _callables()


def _violations(modname: str, qualname: str, fn) -> list[str]:
    params = [p for p in inspect.signature(fn).parameters.values() if p.name not in ("self", "cls")]
    bad = []
    for i, p in enumerate(params):
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue
        if (modname, qualname, p.name) in ALLOWED:
            continue
        if p.name in MECHANISM or (p.name in SIZES and i > 0):
            bad.append(f"{modname}.{qualname}: {p.name!r} is positional")
    return bad


def test_the_walk_sees_the_package():
    mods = {m for m, _, _ in CALLABLES}
    for m in ("pdpkit.gaussian", "pdpkit.objpert", "pdpkit.goe", "pdpkit.analyze_gauss", "pdpkit.accounting",
              "pdpkit.output_perturbation", "pdpkit.amp", "pdpkit.audit", "pdpkit.datasets",
              "pdpkit.experiments.objpert_ex_post"):
        assert m in mods
    assert len(CALLABLES) > 100


def test_mechanism_parameters_are_keyword_only():
    bad = [v for m, q, fn in CALLABLES for v in _violations(m, q, fn)]
    assert not bad, "mechanism parameters must be keyword-only:\n" + "\n".join(bad)


def test_every_allow_list_entry_is_used_and_positional():
    index = {(m, q): fn for m, q, fn in CALLABLES}
    for (m, q, p), reason in ALLOWED.items():
        assert reason
        fn = index[(m, q)]
        param = inspect.signature(fn).parameters[p]
        assert param.kind is param.POSITIONAL_OR_KEYWORD, (m, q, p)


def test_the_checker_catches_a_positional_mechanism_parameter():
    # test the tester: the old signatures would have been flagged
    def gaussian_epsilon(delta, sensitivity, sigma):  # the pre-convention signature
        return delta

    def make_synthetic_logistic(n, d, *, rng=None):
        return n

    def fine(delta, *, sensitivity, sigma):
        return delta

    assert len(_violations("pdpkit.gaussian", "gaussian_epsilon", gaussian_epsilon)) == 2
    assert _violations("pdpkit.datasets", "make_synthetic_logistic", make_synthetic_logistic)
    assert not _violations("pdpkit.gaussian", "fine", fine)


def _scipy_gaussian_delta(eps, mu):
    """Balle & Wang 2018, Thm 8, for sensitivity/sigma = mu."""
    return stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)


def test_swapped_floats_are_a_type_error():
    from pdpkit import analyze_gauss as ag
    from pdpkit import gaussian as gm
    from pdpkit import goe
    from pdpkit import objpert as op

    swapped = [
        lambda: gm.gaussian_epsilon(1e-5, 2.0, 0.5),
        lambda: gm.gaussian_epsilon(1e-5, 0.5, 2.0),
        lambda: gm.gaussian_delta(1.0, 1.0, 2.0),
        lambda: gm.gaussian_sigma(1.0, 1e-5, 1.0),
        lambda: gm.gaussian_pdp_epsilon(0.5, 2.0, 1e-5),
        lambda: gm.gaussian_rdp(2.0, 1.0, 2.0),
        lambda: goe.goe_lambda1_cdf(1.0, 5),
        lambda: goe.goe_norm_bound(5, 0.05),
        lambda: ag.private_lambda_min([[1.0]], 1.0),
        lambda: ag.analyze_gauss_dp_epsilon(0.25, 1.0, 1e-5),
        lambda: op.objpert_epsilon_classic(1.0, 0.25, 1.0, 1.0, 1e-5),
        lambda: op.objpert_sigma_classic(1.0, 1e-5, 1.0, 0.25, 1.0),
        lambda: op.objpert_fit([[0.5]], [1.0], "logistic", 1.0, 1.0),
    ]
    for call in swapped:
        with pytest.raises(TypeError):
            call()
    # the keyword call is unambiguous and right: the ε it returns has δ(ε) = 1e-5 by scipy
    eps = float(gm.gaussian_epsilon(1e-5, sensitivity=0.5, sigma=2.0))
    assert _scipy_gaussian_delta(eps, 0.25) == pytest.approx(1e-5, rel=1e-9)
    eps_swapped = float(gm.gaussian_epsilon(1e-5, sensitivity=2.0, sigma=0.5))
    assert _scipy_gaussian_delta(eps_swapped, 4.0) == pytest.approx(1e-5, rel=1e-9)
    assert eps_swapped > 20 * eps  # what a silent swap would have cost
