"""Full-scale runs of the chapter "GOE noise and Analyze-Gauss" (Redberg & Wang 2021, App. C-D).

Every Monte Carlo check of the chapter at 10^5 draws (CI: 2 x 10^4):

* ``noise_comparison``: classic vs GOE Analyze-Gauss noise at (1, 1e-6)-DP, beta = 1/4,
  d = 30, 25,000 matrices of each kind (CI: 5,000).
* ``lambda1_moments``: mean and s.d. of the GOE's largest eigenvalue, d = 2, 10, 50,
  10^5 matrices per size (CI: 2 x 10^4), beside the exact law.
* ``norm_exceedance``: P(||G||_2 > tau(10, 1e-2)) at d = 10 with 10^5 matrices and
  P(||G||_2 > 12) at d = 50 with 25,000 (CI: 2 x 10^4 and 5,000), beside the exact law.
* ``lambda_min_coverage``: coverage of Alg 3's lower confidence value on the
  breast-cancer Hessian, 25,000 releases (CI: 5,000).

``python reproduce/goe_analyze_gauss.py [--only NAME]``; run with ``nice -n 15``.
"""

from __future__ import annotations

from dataclasses import asdict

from _common import run

from pdpkit import goe
from pdpkit.experiments import goe_analyze_gauss as ex

N_MC = 100_000
DIMS = (2, 10, 50)


def noise_comparison() -> tuple[dict, dict, str]:
    res = ex.noise_comparison(30, eps=1.0, delta=1e-6, beta=0.25, n_draws=N_MC // 4, rng=1)
    return ({"eps": 1.0, "delta": 1e-6, "beta": 0.25, **asdict(res)}, {"noise_comparison": 1},
            "25,000 matrices of each kind (CI: 5,000), d = 30")


def lambda1_moments() -> tuple[dict, dict, str]:
    res = ex.lambda1_moments(DIMS, n_draws=N_MC, rng=2)
    exact = [goe.goe_lambda1_mean_std(d) for d in DIMS]
    return ({"dims": list(DIMS), "n_draws": N_MC, "mean": res.mean, "sd": res.sd, "se_mean": res.se_mean,
             "exact_mean": [m for m, _ in exact], "exact_sd": [s for _, s in exact]},
            {"lambda1_moments": 2}, "10^5 matrices per size (CI: 2 x 10^4), d = 2, 10, 50")


def norm_exceedance() -> tuple[dict, dict, str]:
    tau10 = float(goe.goe_norm_bound(10, rho=1e-2))
    a = ex.norm_exceedance(10, threshold=tau10, n_draws=N_MC, rng=3)
    b = ex.norm_exceedance(50, threshold=12.0, n_draws=N_MC // 4, rng=4)
    return ({"tau_d10": asdict(a), "twelve_d50": asdict(b)}, {"tau_d10": 3, "twelve_d50": 4},
            "10^5 matrices at d = 10 and 25,000 at d = 50 (CI: 2 x 10^4 and 5,000)")


def lambda_min_coverage() -> tuple[dict, dict, str]:
    H, _, _ = ex.breast_cancer_hessian(lam=1.0, sigma=1.0, rng=5)
    res = ex.lambda_min_coverage(H, sigma=0.5, rho=0.1, floor=1.0, n_draws=N_MC // 4, rng=7)
    return (asdict(res), {"breast_cancer_hessian": 5, "lambda_min_coverage": 7},
            "25,000 releases (CI: 5,000) on the 569 breast-cancer records")


EXPERIMENTS = {"noise_comparison": noise_comparison, "lambda1_moments": lambda1_moments,
               "norm_exceedance": norm_exceedance, "lambda_min_coverage": lambda_min_coverage}


if __name__ == "__main__":
    run("goe_analyze_gauss", EXPERIMENTS, __doc__.splitlines()[0])
