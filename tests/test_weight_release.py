"""A weighted fit's release: its ``weighting`` field, its guarantee's words, the round trip, edits, the command line.

A fit with weights under a public bound W releases the objective divided by W (λ/W, σ/W, τ/W) and
its ``weighting``: the bound, the policy, whether sample weights were given, the class weights and
their source. The checks compare against independent references: the fitted estimator (bit for
bit), the files pdpkit wrote before weights existed (``tests/data/releases``), the estimator's own
per-person bounds (for the command line's), and each check has a wrong variant that it rejects.
"""

from __future__ import annotations

import csv
import json
import pathlib
import warnings
from dataclasses import replace

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pdpkit import cli
from pdpkit._json import canonical_json
from pdpkit.accountant import PrivacyAccountant
from pdpkit.estimators import WEIGHT_POLICIES, ObjPertClassifier, ObjPertRegressor
from pdpkit.release import Release, load_release, weighting_statement

CLASSES = [0, 1]
DATA = pathlib.Path(__file__).parent / "data" / "releases"


def _data(n=240, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)
    y = np.where(X @ np.linspace(2.0, -1.0, d) + 0.3 * rng.normal(size=n) > 0.0, 1, 0)
    sw = np.round(rng.uniform(0.0, 3.0, size=n), 3)
    return X, y, sw


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded releases say so
        return fn(*args, **kw)


def _load(text, **kw):
    return _quiet(Release.from_json, text, **kw)


# ------------------------------------------------------------------ fits whose releases are checked below
def _binary():
    X, y, sw = _data()
    est = ObjPertClassifier(classes=CLASSES, random_state=3, weight_bound=2.0, weight_policy="clip",
                            class_weight={0: 0.5, 1: 1.5}, report="adaptive", report_epsilon=1.0,
                            report_delta=1e-6).fit(X, y, sample_weight=sw)
    return est, X, y, sw


def _multiclass():
    X, _, sw = _data(seed=1)
    y = np.array(["a", "b", "c"])[np.digitize(X[:, 0], [-0.15, 0.15])]
    est = ObjPertClassifier(classes=["a", "b", "c"], random_state=3, lam=5.0, weight_bound=3.0,
                            report="data-independent").fit(X, y, sample_weight=sw)
    return est, X, y, sw


def _regressor():
    X, _, sw = _data(seed=2)
    y = X.sum(axis=1)
    est = ObjPertRegressor(random_state=3, weight_bound=4.0, report="data-independent").fit(X, y, sample_weight=sw)
    return est, X, y, sw


def _noisy_count():
    X, y, sw = _data(seed=3)
    acc = PrivacyAccountant(6.0, 1e-4)
    est = ObjPertClassifier(classes=CLASSES, random_state=3, weight_bound=3.0, weight_policy="clip",
                            class_weight="balanced", class_count_epsilon=0.2, class_count_delta=1e-6,
                            accountant=acc, report="data-independent").fit(X, y, sample_weight=sw)
    return est, X, y, sw


FITS = {"binary": _binary, "multiclass": _multiclass, "regressor": _regressor, "noisy-count": _noisy_count}


@pytest.fixture(scope="module", params=sorted(FITS))
def fitted(request):
    return request.param, FITS[request.param]()


def _scores(est, X):
    return est.decision_function(X) if hasattr(est, "classes_") else est.predict(X)


# ------------------------------------------------------------------ the round trip
def test_a_weighted_release_round_trips_bit_for_bit(fitted):
    kind, (est, X, y, sw) = fitted
    text = est.release_.to_json(indent=2)
    assert json.loads(text)["weighting"]["weight_bound"] == est.weight_bound
    rel = _load(text)
    assert rel.weighting == est.weighting_ and rel.weighting is not None
    assert rel.to_json(indent=2) == text and rel.fingerprint == est.release_.fingerprint
    rebuilt = type(est).from_release(rel)
    assert np.array_equal(_scores(rebuilt, X), _scores(est, X)) and np.array_equal(rebuilt.predict(X), est.predict(X))
    assert rebuilt.weighting_ == est.weighting_
    assert (rebuilt.weight_bound, rebuilt.weight_policy) == (est.weight_bound, est.weight_policy)
    assert rebuilt.lam_ == est.lam_ and rebuilt.sigma_ == est.sigma_
    assert rebuilt.privacy_spent() == est.privacy_spent() and rel.guarantee == est.release_.guarantee
    # the guarantee states the weighting once, in the release's own words
    statement = weighting_statement(est.weighting_)
    assert rel.guarantee.accounting.count(statement) == 1 and rel.guarantee.accounting.endswith(statement)
    assert statement in est.privacy_spent().accounting
    # the release holds the objective divided by W: a rebuild that left W out (the release's λ as λ) differs
    W = est.weight_bound
    assert rel.lam == pytest.approx(est.lam_ / W, rel=1e-15) and rel.lam != est.lam_
    assert next(c.event for c in rel.ledger if c.kind == "objpert").lam == rel.lam
    # each person's bound at their weight, as the fitted estimator gives it
    t = slice(0, 12)
    got = np.asarray(rebuilt.privacy_report(X[t], y[t], sample_weight=sw[t]))
    want = np.asarray(est.privacy_report(X[t], y[t], sample_weight=sw[t]))
    np.testing.assert_array_equal(got, want)
    # the wrong variant: the same estimator with the weight bound halved reads the weights on another scale
    wrong = type(est).from_release(rel)
    wrong.weighting_ = {**wrong.weighting_, "weight_bound": W / 2, "weight_policy": "clip"}
    assert not np.array_equal(np.asarray(wrong.privacy_report(X[t], y[t], sample_weight=sw[t])), want)


def test_the_noisy_class_count_is_in_the_release_ledger_and_its_weights_in_the_file():
    est, X, y, sw = _noisy_count()
    rel = _load(est.release_.to_json())
    assert [c.name for c in rel.ledger] == ["ObjPertClassifier class counts", "ObjPertClassifier model"]
    assert rel.weighting["class_weight_source"] == "noisy class count"
    assert set(rel.weighting["class_weight"]) == set(CLASSES)
    assert "class weights from noisy class count" in str(rel.guarantee)


# ------------------------------------------------------------------ strict reading, and edits
def _binary_text():
    est, *_ = _binary()
    return est.release_.to_json()


@pytest.fixture(scope="module")
def binary_text():
    return _binary_text()


def _edit(text, fn):
    data = json.loads(text)
    fn(data)
    return json.dumps(data)


def _weighting(**kw):
    return lambda d: d["weighting"].update(kw)


def _with_statement(fn):
    """An edit of ``weighting`` that also rewrites the guarantee's words to match (a careful forger's edit)."""
    def edit(d):
        old = weighting_statement(_load(json.dumps(d)).weighting)
        fn(d)
        wt = dict(d["weighting"])
        d["guarantee"]["accounting"] = d["guarantee"]["accounting"].replace(old, weighting_statement(wt))
    return edit


EDITS = {  # edits that leave the guarantee's words as they were: verify recomputes them
    "bound halved": _weighting(weight_bound=1.0),
    "bound doubled": _weighting(weight_bound=4.0),
    "bound in its last digit": _weighting(weight_bound=2.0000000000000004),
    "policy flipped": _weighting(weight_policy="refuse"),
    "source changed": _weighting(class_weight_source="class_prior"),
    "field removed": lambda d: d.pop("weighting"),
    "field nulled": lambda d: d.__setitem__("weighting", None),
    "statement removed": lambda d: d["guarantee"].__setitem__("accounting", "objpert-profile+gaussians"),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_an_edited_weighting_is_refused_by_verify(binary_text, name):
    _load(binary_text)  # the control: the file as written verifies
    with pytest.raises(ValueError, match="guarantee.accounting"):
        _load(_edit(binary_text, EDITS[name]))


def test_weighting_added_to_an_unweighted_release_is_refused():
    text = (DATA / "format5-binary-report.json").read_text(encoding="utf-8")
    w = {"weight_bound": 2.0, "weight_policy": "clip", "sample_weight": True, "class_weight": None,
         "class_weight_source": None}
    with pytest.raises(ValueError, match="guarantee.accounting"):
        _load(_edit(text, lambda d: d.__setitem__("weighting", w)))
    # the tester's control: with the words added as well, the file reads (the guarantee does not depend on W)
    def both(d):
        d["weighting"] = w
        d["guarantee"]["accounting"] += "; " + weighting_statement(w)
    assert _load(_edit(text, both)).weighting == w


def test_a_noisy_count_the_ledger_does_not_hold_is_refused(binary_text):
    edit = _with_statement(_weighting(class_weight_source="noisy class count"))
    with pytest.raises(ValueError, match="noisy class count"):
        _load(_edit(binary_text, edit))
    # the control: the same careful edit to a source that needs no ledger entry reads
    assert _load(_edit(binary_text, _with_statement(_weighting(class_weight_source="class_prior")))).weighting[
        "class_weight_source"] == "class_prior"


@pytest.mark.parametrize("name", sorted(EDITS) + ["careful bound edit", "careful policy edit"])
def test_a_signed_weighted_release_refuses_every_edit(binary_text, name):
    key = Ed25519PrivateKey.generate()
    signed = _load(binary_text).sign(key).to_json()
    assert _load(signed, public_key=key.public_key()).weighting["weight_policy"] == "clip"  # the control
    edit = {"careful bound edit": _with_statement(_weighting(weight_bound=1.0)),
            "careful policy edit": _with_statement(_weighting(weight_policy="refuse"))}.get(name) or EDITS[name]
    if name.startswith("careful"):  # unsigned, a consistent edit of the words and the field cannot be seen
        assert _load(_edit(binary_text, edit)).weighting is not None
    with pytest.raises(ValueError, match="^signature"):
        _load(_edit(signed, edit), public_key=key.public_key())
    with pytest.raises(ValueError, match="^signature"):
        _load(_edit(signed, edit))  # signed by the key it names: checked against it


BAD = [  # (edit of the weighting field, exception, words of the message)
    (_weighting(weight_bound="2"), TypeError, "weighting.weight_bound"),
    (_weighting(weight_bound=True), TypeError, "weighting.weight_bound"),
    (_weighting(weight_bound=0), ValueError, "weighting.weight_bound"),
    (_weighting(weight_bound=-2.0), ValueError, "weighting.weight_bound"),
    (_weighting(weight_policy="ignore"), ValueError, "weighting.weight_policy"),
    (_weighting(weight_policy=None), ValueError, "weighting.weight_policy"),
    (_weighting(sample_weight="yes"), TypeError, "weighting.sample_weight"),
    (_weighting(class_weight=[0.5, 1.5]), TypeError, "weighting.class_weight"),
    (_weighting(class_weight={"0": 0.5}), ValueError, "weighting.class_weight"),
    (_weighting(class_weight={"0": 0.5, "1": 1.5, "2": 1.0}), ValueError, "weighting.class_weight"),
    (_weighting(class_weight={"0": 0.5, "one": 1.5}), ValueError, "weighting.class_weight"),
    (_weighting(class_weight={"0": -0.5, "1": 1.5}), ValueError, r"weighting.class_weight\[0\]"),
    (_weighting(class_weight={"0": "0.5", "1": 1.5}), TypeError, r"weighting.class_weight\[0\]"),
    (_weighting(class_weight_source="guessed"), ValueError, "weighting.class_weight_source"),
    (_weighting(class_weight_source=None), ValueError, "weighting.class_weight_source"),
    (_weighting(class_weight=None), ValueError, "weighting.class_weight_source"),
    (_weighting(extra=1), ValueError, "weighting has unknown field"),
    (lambda d: d["weighting"].pop("sample_weight"), ValueError, "weighting lacks"),
    (lambda d: d.__setitem__("weighting", [2.0, "clip"]), TypeError, "weighting must be a JSON object"),
    (_weighting(weight_policy="refuse", weight_bound=1.0), ValueError, "refused before any record is read"),
    (_weighting(sample_weight=False, class_weight=None, class_weight_source=None, weight_bound=1.0), ValueError,
     "unweighted fit"),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_a_malformed_weighting_is_refused_naming_the_field(binary_text, i):
    edit, exc, words = BAD[i]
    with pytest.raises(exc, match=words):
        _load(_edit(binary_text, edit), verify=False)


def test_weighting_belongs_to_a_classifier_and_to_format_5():
    est, *_ = _regressor()
    text = est.release_.to_json()
    with pytest.raises(ValueError, match="need the release's classes"):
        _load(_edit(text, _weighting(class_weight={"0": 1.0}, class_weight_source="given")), verify=False)
    old = (DATA / "format4-binary-report.json").read_text(encoding="utf-8")
    w = json.loads(text)["weighting"]
    with pytest.raises(ValueError, match="unknown field"):
        _load(_edit(old, lambda d: d.__setitem__("weighting", w)), verify=False)


def test_the_statement_names_the_bound_and_the_policy():
    for W, policy, source in [(2.0, "clip", None), (5.0, "refuse", "given"), (0.5, "clip", "class_prior"),
                              (40.0, "refuse", "noisy class count")]:
        w = {"weight_bound": W, "weight_policy": policy, "sample_weight": True,
             "class_weight": None if source is None else {0: 1.0, 1: 1.0}, "class_weight_source": source}
        text = weighting_statement(w)
        above = "clipped to it" if policy == "clip" else "refused"
        assert text.startswith(f"records weighted at most weight_bound={W:g} (weights above it {above})")
        assert (f"class weights from {source}" in text) == (source is not None)
    # a bound that six digits do not write is written in full: an edit of its last digit changes the words
    w = {"weight_bound": 1 / 3, "weight_policy": "clip", "sample_weight": True, "class_weight": None,
         "class_weight_source": None}
    assert "weight_bound=0.3333333333333333 " in weighting_statement(w)
    assert weighting_statement(w) != weighting_statement({**w, "weight_bound": 1 / 3 + 1e-16})
    X, y, _ = _data(n=60)
    for policy in WEIGHT_POLICIES:
        est = ObjPertClassifier(classes=CLASSES, random_state=0, weight_bound=2.0, weight_policy=policy).fit(X, y)
        assert _load(est.release_.to_json()).weighting["weight_policy"] == policy


# ------------------------------------------------------------------ an unweighted release is unchanged
#: The fields of a format-5 release as pdpkit wrote them before weights existed, in their order.
FORMAT_5_FIELDS = ["format", "theta", "lam", "sigma", "loss", "norm_bound", "grad_tol", "sigma_out", "fit_intercept",
                   "row_norm", "guarantee", "ledger", "report", "classes", "feature_names", "schema", "seeded",
                   "signature"]


@pytest.mark.parametrize("path", sorted(DATA.glob("format5-*.json")), ids=lambda p: p.stem)
def test_a_stored_unweighted_file_is_written_back_byte_for_byte(path):
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    rel = _load(text)
    assert rel.weighting is None and list(rel.to_dict()) == FORMAT_5_FIELDS
    mine = rel.to_dict()
    assert canonical_json(mine) == canonical_json(data) and json.dumps(mine, indent=2) == json.dumps(data, indent=2)
    # the wrong variant: a release that wrote "weighting": null would not be the stored file
    assert canonical_json({**mine, "weighting": None}) != canonical_json(data)


def test_an_unweighted_fit_writes_the_fields_it_always_wrote():
    X, y, _ = _data(n=120)
    est = ObjPertClassifier(classes=CLASSES, random_state=1, report="adaptive", report_epsilon=1.0,
                            report_delta=1e-6).fit(X, y)
    rel = est.release_
    assert est.weighting_ is None and rel.weighting is None and "weighting" not in rel.to_json()
    assert list(rel.to_dict()) == FORMAT_5_FIELDS
    assert rel.guarantee == est.privacy_spent() and ";" not in rel.guarantee.accounting
    # the same fit through the path that wrote no weighting: the Release built field by field from the same parts
    bare = Release(theta=rel.theta, lam=rel.lam, sigma=rel.sigma, loss=rel.loss, norm_bound=rel.norm_bound,
                   grad_tol=rel.grad_tol, sigma_out=rel.sigma_out, fit_intercept=rel.fit_intercept,
                   guarantee=rel.guarantee, ledger=rel.ledger, report=rel.report, classes=rel.classes,
                   feature_names=rel.feature_names, row_norm=rel.row_norm, schema=rel.schema, seeded=rel.seeded)
    assert bare.to_json(indent=2) == rel.to_json(indent=2)
    # weights of one given as sample weights are a weighted fit (its guarantee says so): another file
    weighted = ObjPertClassifier(classes=CLASSES, random_state=1, report="adaptive", report_epsilon=1.0,
                                 report_delta=1e-6).fit(X, y, sample_weight=np.ones(len(y)))
    assert np.array_equal(weighted.release_.theta, rel.theta) and weighted.release_.to_json() != rel.to_json()
    assert replace(weighted.release_, weighting=None, guarantee=rel.guarantee).to_json() == rel.to_json()


# ------------------------------------------------------------------ the command line
def _write_csv(path, X, y, w, header=("a", "b", "c", "w", "label")):
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(header)
        for xi, wi, yi in zip(X, w, y, strict=True):
            out.writerow([*(repr(float(v)) for v in xi), repr(float(wi)), yi])


@pytest.fixture(scope="module")
def weighted_csv(tmp_path_factory):
    X, y, sw = _data(n=200, seed=5)
    labels = np.where(y == 1, "yes", "no")
    path = tmp_path_factory.mktemp("w") / "d.csv"
    _write_csv(path, X, labels, sw)
    return path, X, labels, sw


FIT = ["--label", "label", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5", "--seed", "4"]


def test_cli_fits_with_sample_weight_and_the_release_says_the_policy(tmp_path, weighted_csv, capsys):
    path, X, y, sw = weighted_csv
    out = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), *FIT, "--sample-weight", "w", "--weight-bound", "2", "--weight-policy",
                     "clip", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "weights above it clipped to it" in said and said.count("records weighted at most weight_bound=2 ") == 1
    data = json.loads(out.read_text())
    assert data["weighting"] == {"weight_bound": 2.0, "weight_policy": "clip", "sample_weight": True,
                                 "class_weight": None, "class_weight_source": None}
    rel = _load(out.read_text())
    assert rel.feature_names == ("a", "b", "c")  # the weight column is not a feature
    est = ObjPertClassifier(1.0, 1e-5, classes=["no", "yes"], random_state=4, weight_bound=2.0,
                            weight_policy="clip").fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(rel.theta, est.release_.theta, rtol=1e-13)
    assert rel.guarantee == est.release_.guarantee
    # the wrong variants: the weights ignored, or refused instead of clipped, give another model
    plain = ObjPertClassifier(1.0, 1e-5, classes=["no", "yes"], random_state=4, weight_bound=2.0).fit(X, y)
    assert np.max(np.abs(plain.release_.theta - rel.theta)) > 1e-6
    assert cli.main(["fit", str(path), *FIT, "--sample-weight", "w", "--weight-bound", "2", "--out",
                     str(tmp_path / "refused.json")]) == 2
    assert not (tmp_path / "refused.json").exists()


def _refusal(tmp_path, capsys, X, y, w, name):
    path = tmp_path / f"{name}.csv"
    _write_csv(path, X, y, w)
    out = tmp_path / f"{name}.json"
    assert cli.main(["fit", str(path), *FIT, "--sample-weight", "w", "--weight-bound", "2", "--weight-policy",
                     "refuse", "--out", str(out)]) == 2
    assert not out.exists()
    return capsys.readouterr().err.replace(str(path), "DATA.csv")


def test_cli_refuse_names_no_value_row_or_count_of_the_weights(tmp_path, capsys):
    X, y, sw = _data(n=150, seed=6)
    labels = np.where(y == 1, "yes", "no")
    w0 = np.minimum(sw, 1.5)
    neighbours = []
    for rows, value in (([3], 7.25), ([0, 77, 149], 2.5), (list(range(40)), 19.0)):
        w = w0.copy()
        w[rows] = value
        neighbours.append((w, rows, value))
    messages = {_refusal(tmp_path, capsys, X, labels, w, f"n{i}") for i, (w, _, _) in enumerate(neighbours)}
    # one more: a data set with a record added (over the bound) and one removed
    keep = np.arange(1, 150)
    w = np.append(w0[keep], 3.0)
    messages.add(_refusal(tmp_path, capsys, np.vstack([X[keep], X[:1]]), np.append(labels[keep], "no"), w, "n3"))
    assert len(messages) == 1
    (msg,) = messages
    assert "exceeds --weight-bound 2" in msg and "--weight-policy clip" in msg and "'w'" in msg
    # the tester's control: the data sets differ in what a leaky message would name
    assert len({(tuple(r), v, len(r)) for _, r, v in neighbours}) == 3
    for leak in ("7.25", "2.5", "19", " 3 ", "40", "77", "149", "row", "line"):
        assert leak not in msg, leak


@pytest.mark.parametrize("cell, words", [("-1.5", "is negative"), ("heavy", "is not a number"),
                                         ("nan", "is not a finite number"), ("", "is not a number")])
def test_cli_a_bad_weight_cell_names_the_column_and_the_kind_only(tmp_path, capsys, weighted_csv, cell, words):
    _, X, y, sw = weighted_csv
    messages = set()
    for row in (5, 150):
        w = sw.astype(object)
        w[row] = cell
        path = tmp_path / "bad.csv"
        with open(path, "w", newline="") as fh:
            out = csv.writer(fh)
            out.writerow(["a", "b", "c", "w", "label"])
            for xi, wi, yi in zip(X, w, y, strict=True):
                out.writerow([*(repr(float(v)) for v in xi), wi if isinstance(wi, str) else repr(float(wi)), yi])
        assert cli.main(["fit", str(path), *FIT, "--sample-weight", "w", "--weight-bound", "3", "--out",
                         str(tmp_path / "r.json")]) == 2
        messages.add(capsys.readouterr().err)
    assert len(messages) == 1
    (msg,) = messages
    assert words in msg and "weight column 'w'" in msg and "150" not in msg and " 5 " not in msg


@pytest.mark.parametrize("argv, words", [
    (["--weight-bound", "2"], "--weight-bound: given without --sample-weight"),
    (["--weight-policy", "clip"], "--weight-policy: given without --sample-weight"),
    (["--sample-weight", "label"], "--sample-weight: 'label' is the label"),
    (["--sample-weight", "w", "--features", "a,w"], "--features: 'w' is the weight column"),
    (["--sample-weight", "nope"], "--sample-weight: no column 'nope'"),
])
def test_cli_weight_options_are_checked(tmp_path, capsys, weighted_csv, argv, words):
    path, *_ = weighted_csv
    assert cli.main(["fit", str(path), *FIT, *argv, "--out", str(tmp_path / "r.json")]) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("model", ["ops", "adaops"])
@pytest.mark.parametrize("option", [["--sample-weight", "w"], ["--weight-bound", "2"], ["--weight-policy", "clip"]])
def test_cli_ops_refuses_the_weight_options_by_name(tmp_path, capsys, weighted_csv, model, option):
    path, *_ = weighted_csv
    assert cli.main(["fit", str(path), "--label", "a", "--model", model, "--label-bounds=-1,1", "--epsilon", "1",
                     "--delta", "1e-5", "--drop", "label", *option, "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert f"{option[0]}: does not apply to --model {model}" in err


def test_cli_schema_weight_column_must_not_be_a_feature(tmp_path, capsys, weighted_csv):
    path, X, y, sw = weighted_csv
    cols = [{"name": n, "role": "feature", "kind": "numeric", "low": -1.0, "high": 1.0} for n in "abc"]
    label = {"name": "label", "role": "label", "kind": "categorical", "categories": ["no", "yes"]}
    for role, ok in (("ignore", True), ("feature", False)):
        w = {"name": "w", "role": role, "kind": "numeric", "low": 0.0, "high": 3.0}
        schema = tmp_path / f"s_{role}.json"
        schema.write_text(json.dumps({"format": "pdpkit-schema/1", "columns": [*cols, w, label]}))
        out = tmp_path / f"r_{role}.json"
        rc = cli.main(["fit", str(path), "--schema", str(schema), "--epsilon", "1", "--delta", "1e-5", "--seed", "4",
                       "--sample-weight", "w", "--weight-bound", "3", "--out", str(out)])
        err = capsys.readouterr().err
        assert (rc == 0) == ok, err
        if ok:
            assert _load(out.read_text()).weighting["weight_bound"] == 3.0
        else:
            assert "'w' is a feature column of the schema" in err


def _bounds(path):
    with open(path) as fh:
        return np.array([float(r["epsilon_bound"]) for r in csv.DictReader(fh)])


def test_cli_report_takes_each_persons_weight(tmp_path, capsys, weighted_csv):
    path, X, y, sw = weighted_csv
    rel_path = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), *FIT, "--sample-weight", "w", "--weight-bound", "3", "--report",
                     "data-independent", "--out", str(rel_path)]) == 0
    at_w, at_bound = tmp_path / "at_w.csv", tmp_path / "at_bound.csv"
    assert cli.main(["report", str(rel_path), str(path), "--label", "label", "--sample-weight", "w", "--out",
                     str(at_w)]) == 0
    assert "at each person's weight" in capsys.readouterr().out
    assert cli.main(["report", str(rel_path), str(path), "--label", "label", "--out", str(at_bound)]) == 0
    assert "which holds for every weight" in capsys.readouterr().out
    # against the estimator rebuilt from the file (its own code for the weights)
    import pandas as pd

    est = ObjPertClassifier.from_release(_load(rel_path.read_text()))
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    np.testing.assert_array_equal(_bounds(at_w), np.asarray(est.privacy_report(frame, y, sample_weight=sw)))
    np.testing.assert_array_equal(_bounds(at_bound), np.asarray(est.privacy_report(frame, y)))
    # the wrong variant: the bound at W is not each person's (it is larger for the light records)
    assert np.all(_bounds(at_w) <= _bounds(at_bound)) and np.any(_bounds(at_w) < 0.9 * _bounds(at_bound))
    # a weight above the bound of a release fitted with "refuse" gets no bound
    heavy = tmp_path / "heavy.csv"
    _write_csv(heavy, X[:3], y[:3], [1.0, 4.0, 1.0])
    assert cli.main(["report", str(rel_path), str(heavy), "--label", "label", "--sample-weight", "w", "--out",
                     str(tmp_path / "h.csv")]) == 2
    err = capsys.readouterr().err
    assert "exceeds the release's weight bound 3" in err and "4" not in err.replace(str(heavy), "")


def test_cli_report_refuses_a_weight_column_for_an_unweighted_release(tmp_path, capsys, weighted_csv):
    path, *_ = weighted_csv
    rel_path = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), *FIT, "--drop", "w", "--report", "data-independent", "--out",
                     str(rel_path)]) == 0
    assert "weighting" not in json.loads(rel_path.read_text())
    assert cli.main(["report", str(rel_path), str(path), "--label", "label", "--sample-weight", "w", "--out",
                     str(tmp_path / "b.csv")]) == 2
    assert "was fitted without weights" in capsys.readouterr().err
    # the control: the same report without the option runs
    assert cli.main(["report", str(rel_path), str(path), "--label", "label", "--out", str(tmp_path / "b.csv")]) == 0


def test_cli_verify_and_load_release_read_a_weighted_file(tmp_path, capsys, weighted_csv):
    path, *_ = weighted_csv
    rel_path = tmp_path / "rel.json"
    assert cli.main(["fit", str(path), *FIT, "--sample-weight", "w", "--weight-bound", "3", "--out",
                     str(rel_path)]) == 0
    capsys.readouterr()
    assert cli.main(["verify", str(rel_path)]) == 0
    assert "weights above it refused" in capsys.readouterr().out
    assert _quiet(load_release, rel_path.read_text()).weighting["weight_policy"] == "refuse"
    edited = tmp_path / "edited.json"
    edited.write_text(_edit(rel_path.read_text(), _weighting(weight_bound=6.0)))
    assert cli.main(["verify", str(edited)]) == 2
    assert "guarantee.accounting" in capsys.readouterr().err
