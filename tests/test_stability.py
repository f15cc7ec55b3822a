"""Tests of pdpkit.stability against independent computations.

Each claim is compared with something computed another way: the tight φ and α with dense
grids of the definition, the parameter-change bound with brute-force re-optimisation on
random and adversarial neighbours, the one-step eigenvalue bound and the length's
sensitivity on neighbours, ``.length``/``.inverse`` with a plain forward loop and bisection,
the recursive release's noise with a Kolmogorov–Smirnov test and its failure probability
with Clopper–Pearson, and the modulus-ratio certificate with brute-force ratios.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from pdpkit import stability as st
from pdpkit.audit import clopper_pearson
from pdpkit.losses import get_loss
from pdpkit.stability import _fit_and_hessian


def _plain_length(R, x):
    """The plain forward loop (independent of the backward sequence)."""
    n = 0
    if R.kind == "decreasing":
        while x > R.limit:
            x = float(R(np.array([x]))[0])
            n += 1
    else:
        while x < R.limit:
            x = float(R(np.array([x]))[0])
            n += 1
    return n


def _plain_iter(R, x, m):
    xs = np.asarray(x, dtype=float)
    for _ in range(m):
        xs = R(xs)
    return xs


# --------------------------------------------------------------------- smoke
def test_constants_and_api_smoke():
    c = st.stability_constants("logistic", norm_bound=2.0, lam=1.0)
    assert c.G0 == 2.0 and c.G1 == 1.0 and c.tau == 2.0
    assert st.stability_constants("logistic", norm_bound=2.0, neighbours="replace").tau == 4.0
    assert c.alpha == pytest.approx(0.5 / math.log(1.5))
    t = st.parameter_change_bound([0.0, 100.0], c)
    assert np.isinf(t[0]) and 0 < t[1] < 3 * c.tau / 101.0
    rec = st.qsc_lambda_min_recursion(c)
    assert rec.kind == "decreasing" and rec.limit == 0.0
    assert rec.length(500.0) == _plain_length(rec, 500.0)
    rel = st.recursive_release(500.0, rec, 1.0, 1e-3, rng=0)
    assert rel.bound <= 500.0
