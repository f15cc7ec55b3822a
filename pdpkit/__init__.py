"""pdpkit — per-instance differential privacy for objective perturbation.

The package behind the pdpkit book. One module per chapter:

* :mod:`pdpkit.gaussian` — DP, pDP and ex-post pDP; the Gaussian mechanism.
* :mod:`pdpkit.audit` — statistical audits of claimed privacy profiles.
* :mod:`pdpkit.losses` — GLM losses with exact derivatives and constants.
* :mod:`pdpkit.objpert` — exact objective perturbation and its ex-post pDP.
* :mod:`pdpkit.goe` — GOE noise, Analyze-Gauss, exact largest-eigenvalue law.
* :mod:`pdpkit.datasets` — the real data sets the sources use, shipped inside.
* :mod:`pdpkit.experiments` — the computations behind the chapters' figures.
"""

from . import audit, datasets, experiments, gaussian, goe, losses, objpert

__version__ = "0.1.0"

__all__ = ["audit", "datasets", "experiments", "gaussian", "goe", "losses", "objpert", "__version__"]
