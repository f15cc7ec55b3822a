"""pdpkit.schema: the public encoding against hand computations and scikit-learn, strict JSON, the draft."""

from __future__ import annotations

import gzip
import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.preprocessing import MinMaxScaler, OneHotEncoder

from pdpkit.schema import PrivacyLeakWarning
from pdpkit.schema import DRAFT_NOTE, SCHEMA_FORMAT, Column, Schema, draft_schema_nonprivate


@pytest.fixture
def schema():
    return Schema([
        Column("id", role="ignore"),
        Column("age", low=20.0, high=70.0),
        Column("workclass", kind="categorical", categories=("Private", "Gov", "Self")),
        Column("hours", low=0.0, high=100.0),
        Column("income", role="label", kind="categorical", categories=("<=50K", ">50K")),
    ])


@pytest.fixture
def frame():
    return pd.DataFrame({
        "id": [101, 102, 103, 104],
        "age": [45.0, 20.0, 95.0, 32.5],           # 95 lies above the public bound 70: clipped
        "workclass": ["Gov", "Private", "Self", "Gov"],
        "hours": [40, 100, 0, 50],
        "income": [">50K", "<=50K", "<=50K", ">50K"],
    })


# ------------------------------------------------------------------ encoding
def test_encoding_by_hand(schema, frame):
    r = math.sqrt(3.0)  # three feature columns
    expected = np.array([
        # age: (2v - 20 - 70)/50         workclass one-hot           hours: (2v - 100)/100
        [(90 - 90) / 50, 0, 1, 0, (80 - 100) / 100],
        [(40 - 90) / 50, 1, 0, 0, (200 - 100) / 100],
        [(140 - 90) / 50, 0, 0, 1, (0 - 100) / 100],
        [(65 - 90) / 50, 0, 1, 0, (100 - 100) / 100],
    ]) / r
    np.testing.assert_allclose(schema.encode(frame), expected, rtol=0, atol=1e-15)
    assert schema.encoded_names == ("age", "workclass=Private", "workclass=Gov", "workclass=Self", "hours")
    assert schema.n_encoded == 5 and schema.feature_names == ("age", "workclass", "hours")
    # a 2-D array in feature order and a dict of columns give the same rows; other columns are not read
    arr = frame[["age", "workclass", "hours"]].to_numpy(dtype=object)
    np.testing.assert_array_equal(schema.encode(arr), schema.encode(frame))
    np.testing.assert_array_equal(schema.encode(frame.to_dict("list")), schema.encode(frame))
    np.testing.assert_array_equal(schema.encode(frame[["hours", "workclass", "age"]]), schema.encode(frame))


def test_encoding_agrees_with_sklearn_fitted_on_public_values_only(schema, frame):
    """MinMaxScaler on the two public bounds (clip=True) and OneHotEncoder with the public domain."""
    parts = []
    for col in schema.features:
        values = frame[[col.name]]
        if col.kind == "numeric":
            mm = MinMaxScaler(feature_range=(-1, 1), clip=True).fit([[col.low], [col.high]])
            parts.append(mm.transform(values.to_numpy(dtype=float)))
        else:
            oh = OneHotEncoder(categories=[list(col.categories)], sparse_output=False).fit(values)
            parts.append(oh.transform(values))
    expected = np.hstack(parts) / math.sqrt(len(schema.features))
    np.testing.assert_allclose(schema.encode(frame), expected, rtol=0, atol=1e-15)


def _max_norm(rows: np.ndarray) -> float:
    return float(np.max(np.linalg.norm(rows, axis=1)))


@settings(max_examples=60, deadline=None)
@given(n_num=st.integers(0, 5), n_cat=st.integers(0, 4), seed=st.integers(0, 2**32 - 1))
def test_every_encoded_row_has_norm_at_most_one(n_num, n_cat, seed):
    if n_num + n_cat == 0:
        n_num = 1
    rng = np.random.default_rng(seed)
    cols, data = [], {}
    for j in range(n_num):
        lo = rng.uniform(-1e6, 1e6)
        hi = lo + 10.0 ** rng.uniform(-8, 8)
        cols.append(Column(f"x{j}", low=lo, high=hi))
        data[f"x{j}"] = lo + (hi - lo) * rng.uniform(-3, 4, size=50)  # far outside the bounds too
    for j in range(n_cat):
        cats = tuple(f"c{i}" for i in range(rng.integers(1, 6)))
        cols.append(Column(f"k{j}", kind="categorical", categories=cats))
        data[f"k{j}"] = rng.choice(list(cats), size=50)
    rows = Schema(cols).encode(pd.DataFrame(data))
    assert rows.shape == (50, n_num + sum(len(c.categories) for c in cols if c.kind == "categorical"))
    assert _max_norm(rows) <= 1.0
    # the extreme rows (every numeric value at a bound) reach the bound 1 exactly
    extreme = pd.DataFrame({c.name: [c.high] if c.kind == "numeric" else [c.categories[0]] for c in cols})
    assert _max_norm(Schema(cols).encode(extreme)) == pytest.approx(1.0, rel=1e-12)


def test_the_norm_check_catches_an_encoding_without_the_division(schema, frame):
    """The tester: rows not divided by sqrt(k) exceed norm 1, and the check sees it."""
    wrong = schema.encode(frame) * math.sqrt(len(schema.features))
    assert _max_norm(wrong) > 1.0


def test_unknown_and_missing_values_by_the_public_rules(schema, frame):
    unseen = frame.assign(workclass=["Gov", "Never-worked", "Self", "Gov"])
    find = re.escape("; find the rows with pdpkit.check.check_nonprivate(X, schema=schema)")
    with pytest.raises(ValueError, match=r"^a categorical feature value is outside the schema's domain .*"
                                         r"handle_unknown.*" + find) as exc:
        schema.encode(unseen)
    assert "Never-worked" not in str(exc.value) and "workclass" not in str(exc.value)
    missing = frame.assign(age=[45.0, np.nan, 95.0, 32.5], workclass=["Gov", None, "Self", "Gov"])
    with pytest.raises(ValueError, match=r"^a feature value is missing .*handle_missing") as exc:
        schema.encode(missing)
    assert "'age'" not in str(exc.value) and "row " not in str(exc.value)
    lenient = Schema(schema.columns, handle_unknown="zero", handle_missing="zero")
    rows = lenient.encode(unseen)
    np.testing.assert_array_equal(rows[1, 1:4], 0.0)  # "none of the listed values"
    np.testing.assert_array_equal(rows[[0, 2, 3]], schema.encode(frame)[[0, 2, 3]])
    rows = lenient.encode(missing)
    assert rows[1, 0] == 0.0 and np.all(rows[1, 1:4] == 0.0)  # the range's midpoint; the all-zero block
    only_missing_zero = Schema(schema.columns, handle_missing="zero")
    with pytest.raises(ValueError, match="outside the schema.s domain"):
        only_missing_zero.encode(unseen)  # an unknown value is not a missing one
    with pytest.raises(ValueError, match=r"^a numeric feature cell is infinite"):
        lenient.encode(frame.assign(hours=[1.0, 2.0, np.inf, 3.0]))
    with pytest.raises(TypeError, match=r"^a numeric feature cell is not a number") as exc:
        schema.encode(frame.assign(age=[1.0, 2.0, 3.0, "33"]))
    assert "33" not in str(exc.value)
    # several kinds at once: the first in a fixed order (text, infinity, missing, unknown), whichever the columns
    with pytest.raises(TypeError, match=r"^a numeric feature cell is not a number"):
        schema.encode(frame.assign(age=[1.0, np.nan, 3.0, 4.0], hours=[1.0, 2.0, 3.0, "x"]))
    with pytest.raises(ValueError, match=r"^a feature value is missing"):
        schema.encode(unseen.assign(hours=[1.0, None, 3.0, 4.0]))
    with pytest.raises(ValueError, match=r"lacks the schema's feature column\(s\) 'hours'"):
        schema.encode(frame.drop(columns="hours"))
    with pytest.raises(ValueError, match="has 2 columns; the schema has 3 features"):
        schema.encode(np.zeros((2, 2)))


def test_categorical_values_are_compared_as_text():
    s = Schema([Column("k", kind="categorical", categories=("1", "2", "2.5", "True"))])
    rows = s.encode(pd.DataFrame({"k": [1, 2.0, 2.5, True]}, dtype=object))
    np.testing.assert_array_equal(rows, np.eye(4))
    # integers read as floats because of a missing value still match their text
    s2 = Schema([Column("k", kind="categorical", categories=("1", "2"))], handle_missing="zero")
    rows = s2.encode(pd.DataFrame({"k": [1.0, np.nan, 2.0]}))
    np.testing.assert_array_equal(rows, [[1, 0], [0, 0], [0, 1]])


def test_encoding_is_vectorized(schema):
    rng = np.random.default_rng(0)
    n = 200_000
    big = pd.DataFrame({"age": rng.uniform(0, 100, n), "workclass": rng.choice(["Private", "Gov", "Self"], n),
                        "hours": rng.integers(0, 100, n)})
    import time

    t0 = time.perf_counter()
    rows = schema.encode(big)
    assert time.perf_counter() - t0 < 5.0  # a Python loop over the rows would take far longer
    assert rows.shape == (n, 5) and _max_norm(rows) <= 1.0


# ------------------------------------------------------------------ labels
def test_categorical_label_indices_and_back(schema, frame):
    t = schema.encode_label(frame["income"])
    np.testing.assert_array_equal(t, [1, 0, 0, 1])
    assert list(schema.decode_label(t)) == list(frame["income"])
    assert schema.label_classes == ("<=50K", ">50K") and schema.label_bounds is None
    find = re.escape("; find the rows with pdpkit.check.check_nonprivate(X, y, schema=schema)")
    with pytest.raises(ValueError, match=r"^a label is not one of the schema's label classes \['<=50K', '>50K'\] "
                                         r"\(column 'income'.*" + find) as exc:
        schema.encode_label(["<=50K", "unknown"])
    assert "unknown" not in str(exc.value)
    with pytest.raises(ValueError, match=r"^a label cell is missing \(column 'income'; a label is never imputed"):
        Schema(schema.columns, handle_missing="zero").encode_label([None, ">50K"])  # never imputed


def test_numeric_label_scaled_from_public_bounds_and_decoded():
    s = Schema([Column("x", low=0, high=1), Column("y", role="label", low=25.0, high=350.0)])
    y = np.array([25.0, 350.0, 187.5, 500.0, 0.0])
    t = s.encode_label(y)
    np.testing.assert_allclose(t, [-1.0, 1.0, 0.0, 1.0, -1.0], atol=1e-15)  # clipped at the bounds
    np.testing.assert_allclose(s.decode_label(t[:3]), y[:3], rtol=1e-15)
    assert s.decode_label([2.0])[0] == pytest.approx(512.5)  # linear, not clipped
    assert s.label_bounds == (25.0, 350.0) and s.label_classes is None
    with pytest.raises(ValueError, match="^a label cell is missing"):
        s.encode_label([1.0, np.nan])
    with pytest.raises(ValueError, match="^a label cell is infinite"):
        s.encode_label([1.0, np.inf])
    with pytest.raises(TypeError, match="^a label cell is not a number"):
        s.encode_label([1.0, "2"])
    with pytest.raises(ValueError, match="no label column"):
        Schema([Column("x", low=0, high=1)]).encode_label([1.0])


# ------------------------------------------------------------------ JSON
def test_json_round_trip(schema):
    text = schema.to_json()
    data = json.loads(text)
    assert data["format"] == SCHEMA_FORMAT == "pdpkit-schema/1"
    back = Schema.from_json(text)
    assert back == schema and back.encoded_names == schema.encoded_names
    lenient = Schema(schema.columns, handle_unknown="zero", handle_missing="zero", note="from the census codebook")
    assert Schema.from_dict(json.loads(lenient.to_json())) == lenient


def test_a_hand_written_schema_may_leave_defaults_out():
    s = Schema.from_json('{"format": "pdpkit-schema/1", "columns": [{"name": "a", "low": 0, "high": 5}]}')
    assert s.columns[0] == Column("a", role="feature", kind="numeric", low=0.0, high=5.0)


def _mutated(schema, edit):
    d = schema.to_dict()
    edit(d)
    return json.dumps(d)


@pytest.mark.parametrize("edit, error, message", [
    (lambda d: d.update(extra=1), ValueError, r"schema has unknown field\(s\) \['extra'\]"),
    (lambda d: d.update(format="pdpkit-schema/0"), ValueError, "schema.format must be 'pdpkit-schema/1'"),
    (lambda d: d.pop("columns"), ValueError, r"lacks the field\(s\) \['columns'\]"),
    (lambda d: d["columns"][1].update(low="20"), TypeError, r"columns\[1\].low must be a number"),
    (lambda d: d["columns"][1].update(low=True), TypeError, r"columns\[1\].low must be a number"),
    (lambda d: d["columns"][1].update(low=80), ValueError, r"columns\[1\]: column 'age': low must be smaller"),
    (lambda d: d["columns"][1].pop("high"), ValueError, r"columns\[1\]: column 'age': give both low and high"),
    (lambda d: d["columns"][1].update(unit="years"), ValueError, r"columns\[1\] has unknown field\(s\) \['unit'\]"),
    (lambda d: d["columns"][2].update(categories=["Gov", 3]), TypeError, r"columns\[2\].categories\[1\] must be"),
    (lambda d: d["columns"][2].update(categories=["Gov", "Gov"]), ValueError, "'Gov' appears twice"),
    (lambda d: d["columns"][2].update(low=0, high=1), ValueError, r"columns\[2\].*categorical column has no low"),
    (lambda d: d["columns"][3].update(role="target"), ValueError, r"columns\[3\]: .*role must be one of"),
    (lambda d: d["columns"][4].update(categories=[">50K"]), ValueError, "label needs at least 2 categories"),
    (lambda d: d["columns"].append({"name": "age", "low": 0, "high": 1}), ValueError, "'age' appears twice"),
    (lambda d: d["columns"][1].update(role="label"), ValueError, "at most one label"),
    (lambda d: d.update(handle_unknown="ignore"), ValueError, "handle_unknown must be one of"),
    (lambda d: d.update(nonprivate_draft="no"), TypeError, "nonprivate_draft must be true or false"),
    (lambda d: d.update(columns=[d["columns"][4]]), ValueError, "at least one column with role 'feature'"),
])
def test_json_is_strict_and_names_the_field(schema, edit, error, message):
    with pytest.raises(error, match=message):
        Schema.from_json(_mutated(schema, edit))


def test_json_refuses_nan_and_infinity(schema):
    text = schema.to_json().replace('"high": 70.0', '"high": Infinity')
    with pytest.raises(ValueError, match=r"the schema: columns\[\d\]\.high: Infinity is not a number JSON allows"):
        Schema.from_json(text)


def test_encoded_names_must_be_unique():
    with pytest.raises(ValueError, match="same feature name 'a=b'"):
        Schema([Column("a=b", low=0, high=1), Column("a", kind="categorical", categories=("b",))])


def test_select_features_and_drop(schema):
    assert schema.select(features=["hours", "age"]).feature_names == ("age", "hours")
    assert schema.select(drop=["workclass"]).feature_names == ("age", "hours")
    with pytest.raises(ValueError, match="'id' is not a feature column of the schema \\(its role is 'ignore'\\)"):
        schema.select(features=["id"])


# ------------------------------------------------------------------ the draft
def _csv(tmp_path, frame, *, gz=False):
    text = "\ufeff" + frame.to_csv(index=False)
    path = tmp_path / ("d.csv.gz" if gz else "d.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


@pytest.mark.parametrize("source", ["frame", "csv", "gzip"])
def test_draft_is_marked_non_private_everywhere(tmp_path, source):
    rng = np.random.default_rng(3)
    n = 60
    frame = pd.DataFrame({"pid": np.arange(1000, 1000 + n), "age": rng.integers(17, 91, n),
                          "colour": rng.choice(["red", "blue"], n), "note": [f"free text {i}" for i in range(n)],
                          "y": rng.choice(["no", "yes"], n)})
    data = frame if source == "frame" else _csv(tmp_path, frame, gz=source == "gzip")
    with pytest.warns(PrivacyLeakWarning, match="not private") as record:
        draft = draft_schema_nonprivate(data, label="y", max_categories=10)
    assert not re.search(r"\d", str(record[0].message))  # the warning states no number of the data
    assert draft.nonprivate_draft and draft.note == DRAFT_NOTE
    out = json.loads(draft.to_json())
    assert out["nonprivate_draft"] is True and out["note"].startswith("NON-PRIVATE DRAFT")
    roles = {c.name: c.role for c in draft.columns}
    assert roles == {"pid": "ignore", "age": "feature", "colour": "feature", "note": "ignore", "y": "label"}
    age = draft.column("age")
    assert age.low <= frame["age"].min() and age.high >= frame["age"].max()
    assert (age.low, age.high) == (10.0, 100.0) or (age.low % 10 == 0 and age.high % 10 == 0)
    assert draft.column("colour").categories == ("blue", "red")
    assert draft.label_classes == ("no", "yes")
    assert Schema.from_json(draft.to_json()) == draft  # the mark survives the round trip


def test_draft_label_kind_and_ignore():
    frame = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.5], "z": [1, 2, 3, 4], "y": [10.5, 250.0, 30.0, 40.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        d = draft_schema_nonprivate(frame, label="y", ignore=["z"])
        assert d.label_bounds == (0.0, 300.0) and d.column("z").role == "ignore"
        assert draft_schema_nonprivate(frame, label="z", label_kind="categorical").label_classes == ("1", "2", "3", "4")
        with pytest.raises(ValueError, match="no column 'nope'"):
            draft_schema_nonprivate(frame, label="nope")


def test_a_draft_note_is_a_draft_mark(schema):
    data = schema.to_dict()
    assert not Schema.from_dict(data).nonprivate_draft
    data["note"] = DRAFT_NOTE  # the field nonprivate_draft deleted, the note kept
    assert Schema.from_dict(data).nonprivate_draft
    data["note"] = "non-private draft, still to check"
    assert Schema.from_dict(data).nonprivate_draft
    data["note"] = "bounds from the codebook"
    assert not Schema.from_dict(data).nonprivate_draft
    # reviewed in Python (the flag set False): the draft's note goes with it, and the JSON reads back reviewed
    from dataclasses import replace

    reviewed = replace(Schema(schema.columns, note=DRAFT_NOTE, nonprivate_draft=True), nonprivate_draft=False)
    assert reviewed.note is None and not Schema.from_json(reviewed.to_json()).nonprivate_draft
