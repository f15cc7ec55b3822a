"""Release files written by earlier pdpkit versions still load and verify through the event ledger.

``tests/data/releases/format4-*.json`` were written by pdpkit at c445cb9^ (format 4) and
``format5-*.json`` by pdpkit at 5d00c46 (format 5, before ledgers held events); the format-3
files are the format-4 files without the ``seeded`` field (the one difference between the two
formats). Each holds a ledger with a private scaler (a Gaussian), an ObjPert model and an
adaptive report's statistics, or the K fits of a one-vs-rest model.
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
