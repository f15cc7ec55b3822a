"""pdpkit — per-instance differential privacy for objective perturbation.

The package behind the pdpkit book, one module per chapter (layers in ``ARCHITECTURE.md``):

* :mod:`pdpkit.gaussian` — DP, pDP and ex-post pDP; the Gaussian mechanism.
* :mod:`pdpkit.audit` — statistical audits of claimed privacy profiles.
* :mod:`pdpkit.losses` — GLM losses with exact derivatives and constants.
* :mod:`pdpkit.output_perturbation` — a regularized minimizer plus Gaussian noise.
* :mod:`pdpkit.objpert` — exact objective perturbation and its ex-post pDP.
* :mod:`pdpkit.goe` — the law of the GOE's extreme eigenvalues and norm.
* :mod:`pdpkit.analyze_gauss` — Analyze-Gauss with GOE noise, private λ_min.
* :mod:`pdpkit.accounting` — ObjPert's tight privacy profile, RDP, PLD, calibration.
* :mod:`pdpkit.ops` — one-posterior sampling for linear regression: exact pDP, AdaOPS.
* :mod:`pdpkit.stability` — self-concordant stability, recursions, private eigenvalue bounds.
* :mod:`pdpkit.single` — releasing one parameter or one linear functional (local sensitivity).
* :mod:`pdpkit.amp` — accounting of approximate minima perturbation.
* :mod:`pdpkit.report` — the privacy report: a publishable bound on every person's ex-post pDP.
* :mod:`pdpkit.datasets` — the real data sets the sources use, shipped inside.
* :mod:`pdpkit.estimators` — scikit-learn estimators calibrated with the tight accountant.
* :mod:`pdpkit.ops_estimators` — private linear regression: OPS and AdaOPS as scikit-learn regressors.
* :mod:`pdpkit.schema`, :mod:`pdpkit.preprocessing` — a public schema and preprocessing that
  spends nothing (or is accounted).
* :mod:`pdpkit.events` — frozen descriptions of mechanisms (Gaussian, ObjPert, selection, …),
  each with its PLD and RDP; the guarantee objects.
* :mod:`pdpkit.accountant` — one budget for a session of releases, composed tightly.
* :mod:`pdpkit.ledger` — a budget in a SQLite file, shared by processes and sessions.
* :mod:`pdpkit.selection`, :mod:`pdpkit.model_selection` — private choice of λ, paid for.
* :mod:`pdpkit.release` — the release file, its total guarantee and ledger.
* :mod:`pdpkit.signing` — Ed25519 keys and signatures: releases and pages anyone can check.
* :mod:`pdpkit.check` — the curator's non-private diagnostic: the rows a fit would refuse.
* :mod:`pdpkit.cli` — the ``pdpkit`` command line (fit, report, predict, page, check).
* :mod:`pdpkit.page` — the privacy page: each person computes their own bound in the browser.
* :mod:`pdpkit.plotting` — the book's figure style.
* :mod:`pdpkit.experiments` — the computations behind each chapter's figures.

Submodules are imported on first use (PEP 562): ``import pdpkit.gaussian`` loads the
Gaussian mechanism and what it needs, not scikit-learn, pandas, matplotlib or dask.
"""

import importlib
from typing import Any

__version__ = "0.1.0"

#: The submodules, imported on first attribute access (``pdpkit.accountant``).
_SUBMODULES = (
    "accountant",
    "accounting",
    "amp",
    "analyze_gauss",
    "audit",
    "check",
    "cli",
    "datasets",
    "estimators",
    "events",
    "experiments",
    "gaussian",
    "goe",
    "ledger",
    "losses",
    "model_selection",
    "objpert",
    "ops",
    "ops_estimators",
    "output_perturbation",
    "page",
    "plotting",
    "preprocessing",
    "release",
    "report",
    "schema",
    "selection",
    "signing",
    "single",
    "stability",
)

__all__ = [*_SUBMODULES, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))
