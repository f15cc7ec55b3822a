"""Release files written by earlier pdpkit versions still load and verify through the event ledger.

``tests/data/releases/format4-*.json`` were written by pdpkit at c445cb9^ (format 4) and
``format5-*.json`` by pdpkit at 5d00c46 (format 5, before ledgers held events); the format-3
files are the format-4 files without the ``seeded`` field (the one difference between the two
formats). Each holds a ledger with a private scaler (a Gaussian), an ObjPert model and an
adaptive report's statistics, or the K fits of a one-vs-rest model. The OPS and AdaOPS releases
of format ``pdpkit-ops-release/1`` are stored in this file (``OPS_FILES``).
"""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest

from pdpkit.events import GaussianEvent, ObjPertEvent
from pdpkit.release import Release

DATA = pathlib.Path(__file__).parent / "data" / "releases"
FILES = sorted(DATA.glob("format*.json"))


def _load(text: str) -> Release:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the files were drawn from seeds and say so
        return Release.from_json(text)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_an_old_release_file_loads_and_verifies(path):
    text = path.read_text(encoding="utf-8")
    rel = _load(text)
    assert rel.guarantee is not None and rel.guarantee.epsilon > 0
    assert rel.weighting is None and "weighting" not in rel.to_dict()  # unweighted: written as it always was
    kinds = [type(c.event) for c in rel.ledger]
    if "binary" in path.stem:
        assert kinds == [GaussianEvent, ObjPertEvent, GaussianEvent]  # scaler, model, report
        assert rel.privacy_report is not None
    else:
        assert kinds == [ObjPertEvent] and rel.ledger[0].count == 3
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(5, 3))
    assert rel.predict(X).shape == (5,)
    # the tester's control: the same file with the model's sigma edited is refused
    data = json.loads(text)
    entry = next(e for e in data["ledger"] if e["kind"] == "objpert")
    entry["params"]["sigma"] *= 1.5
    with pytest.raises(ValueError, match="guarantee|ledger"):
        _load(json.dumps(data))


def test_every_format_the_reader_accepts_has_a_stored_file():
    formats = {json.loads(p.read_text())["format"] for p in FILES}
    assert formats == {"pdpkit-release/3", "pdpkit-release/4", "pdpkit-release/5"}


def test_every_stored_objpert_file_reads_through_load_release_as_a_release():
    from pdpkit.release import load_release

    for path in FILES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rel = load_release(path.read_text(encoding="utf-8"))
        assert type(rel) is Release
        assert rel.guarantee.epsilon == _load(path.read_text(encoding="utf-8")).guarantee.epsilon


#: OPS and AdaOPS releases as format ``pdpkit-ops-release/1`` wrote them (50 rows, 2 features, n_max 200, seed 1).
OPS_FILES = {
    "ops": '{"format": "pdpkit-ops-release/1", "mechanism": "ops", "theta": [0.32890198422185235, 0.3578136821466778, '
           '0.09674228041413474], "lam": 21.213203435596434, "gamma": 0.12379417047347271, "n_max": 200, '
           '"norm_bound": 1.0, "fit_intercept": true, "row_norm": "raise", "label_bounds": [0.0, 10.0], "kappa": '
           'null, "lam_min_noisy": null, "guarantee": {"epsilon": 1.9999999999458584, "delta": 1e-05, "accounting": '
           '"ops-exact-profile", "parts": [{"name": "OPSRegressor model", "epsilon": 1.9999999999458584, "delta": '
           '1e-05, "accounting": "ops-exact-profile"}]}, "ledger": [{"name": "OPSRegressor model", "kind": "ops", '
           '"params": {"n": 201, "lam": 21.213203435596434, "gamma": 0.12379417047347271, "x_bound": '
           '1.4142135623730951, "y_bound": 1.0, "lam_min": 0.0}, "count": 1, "delta": 1e-05}], "feature_names": '
           'null, "schema": null, "seeded": true, "signature": null}',
    "adaops": '{"format": "pdpkit-ops-release/1", "mechanism": "adaops", "theta": [0.07301132604730132, '
              '0.009214298124623183, -0.07738680008700954], "lam": 165.36705832942837, "gamma": 1.5116076821660667, '
              '"n_max": 200, "norm_bound": 1.0, "fit_intercept": true, "row_norm": "raise", "label_bounds": [0.0, '
              '10.0], "kappa": 1.0, "lam_min_noisy": 3.3947442433762833, "guarantee": {"epsilon": '
              '1.9999999991165411, "delta": 1e-05, "accounting": "adaops-exact-profile", "parts": [{"name": '
              '"AdaOPSRegressor model", "epsilon": 1.9999999991165411, "delta": 1e-05, "accounting": '
              '"adaops-exact-profile"}]}, "ledger": [{"name": "AdaOPSRegressor model", "kind": "adaops", "params": '
              '{"sigma_lam": 4.03339822776181, "eps_ops": 1.0177616206929088, "delta_ops": 5e-06, "delta_fail": '
              '2.5e-06}, "count": 1, "delta": 1e-05}], "feature_names": null, "schema": null, "seeded": true, '
              '"signature": null}',
}


@pytest.mark.parametrize("kind", sorted(OPS_FILES))
def test_a_stored_ops_release_loads_verifies_and_predicts(kind):
    from pdpkit.ops_estimators import OPSEstimator
    from pdpkit.release import OPSRelease, load_release

    text = OPS_FILES[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = load_release(text)
    assert isinstance(rel, OPSRelease) and rel.mechanism == kind and rel.guarantee.epsilon == pytest.approx(2.0)
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(5, 2))
    want = X @ (5.0 * rel.theta[:2]) + 5.0 + 5.0 * rel.theta[2]  # labels mapped from (0, 10), intercept column 1
    assert np.allclose(rel.predict(X), want, rtol=1e-12)
    assert np.array_equal(OPSEstimator.from_release(rel).predict(X), rel.predict(X))
    # the tester's control: the same file with its event's first parameter edited is refused
    data = json.loads(text)
    params = data["ledger"][0]["params"]
    first = next(iter(params))
    params[first] = params[first] * 2
    with pytest.raises(ValueError, match="guarantee|ledger"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            load_release(json.dumps(data))
