"""pdpkit.page in Python: what the page embeds, what it refuses, and the `pdpkit page` command."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from pdpkit.cli import main
from pdpkit.objpert import objpert_fit
from pdpkit.page import encode_record, page_data, privacy_page
from pdpkit.release import objpert_release
from pdpkit.report import PrivacyReport, privacy_report


def _release(method="data-dependent", report=True, intercept=True, delta=1e-6):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1) * 1.1)[:, None]
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    rows = np.hstack([X, np.ones((300, 1))]) if intercept else X
    R = np.sqrt(2.0) if intercept else 1.0
    fit = objpert_fit(rows, y, "logistic", lam=20.0, sigma=2.0, rng=1, norm_bound=R)
    kw = {} if method == "data-independent" else dict(sigma_hessian=1.0, sigma_gradient=1.0)
    rep = privacy_report(fit, rows, y, method=method, rng=2, **kw) if report else None
    return objpert_release(fit, delta=delta, report=rep, report_delta=1e-6 if kw and report else None,
                           fit_intercept=intercept, classes=["no", "yes"], feature_names=["a", "b", "c"])


def test_the_page_is_self_contained_and_embeds_public_numbers_only():
    rel = _release()
    html = privacy_page(rel)
    assert html.startswith("<!DOCTYPE html>") and "<script" in html
    # no external asset or request: no src/href to anything, no stylesheet link
    assert not re.search(r"""\b(src|href)\s*=\s*["'](?!#)""", html)
    assert "<link" not in html and "http://" not in html and "https://" not in html
    assert "Content-Security-Policy" in html
    data = page_data(rel)
    # the leverage factor is the report's, bit for bit (upper triangle)
    rep: PrivacyReport = rel.privacy_report
    import base64

    W = np.frombuffer(base64.b64decode(data["W"]), dtype="<f8")
    np.testing.assert_array_equal(W, rep._W[np.triu_indices(rep.d)])
    np.testing.assert_array_equal(np.frombuffer(base64.b64decode(data["theta"]), dtype="<f8"), rel.theta)
    assert data["guarantee"]["epsilon"] == rel.guarantee.epsilon
    assert data["release_sha256"] in html
    from pdpkit.page import release_fingerprint

    # the same for the file however it was written
    assert release_fingerprint(rel.to_json(indent=2)) == release_fingerprint(rel) == data["release_sha256"]
    other = rel.to_dict()
    other["theta"][0] += 1e-9
    assert release_fingerprint(other) != data["release_sha256"]
    # labelled inputs and the "I don't know" choice
    for j in range(3):
        assert f'<label for="f{j}">' in html and f'id="f{j}"' in html
    assert "I don't know" in html
    assert f"{rel.guarantee.epsilon:.3g}" in html


def test_book_links_when_a_book_address_is_given():
    html = privacy_page(_release(), book_url="https://example.org/pdpkit/")
    assert 'href="https://example.org/pdpkit/chapters/privacy_report.html#the-data-dependent-report' in html


@pytest.mark.parametrize("what", ["no report", "no guarantee", "edited", "not json"])
def test_python_refuses(what):
    if what == "no report":
        with pytest.raises(ValueError, match="no privacy report"):
            privacy_page(_release(report=False))
    elif what == "no guarantee":
        with pytest.raises(ValueError, match="no guarantee"):
            privacy_page(_release(delta=None))
    elif what == "edited":
        d = _release().to_dict()
        d["report"]["sigma_hessian"] *= 1.5  # a noisier report would be cheaper: the stated cost no longer matches
        with pytest.raises(ValueError, match="does not verify"):
            privacy_page(json.dumps(d))
    else:
        with pytest.raises(ValueError):
            privacy_page("{")


def test_encode_record_is_the_estimators_row_map():
    rel = _release()
    np.testing.assert_array_equal(encode_record(rel, {"a": 0.1, "b": -0.2, "c": 0.3}), [0.1, -0.2, 0.3, 1.0])
    with pytest.raises(ValueError, match="norm"):
        encode_record(rel, [1.0, 1.0, 0.0])


def test_the_page_command(tmp_path, capsys):
    rel = _release()
    src = tmp_path / "release.json"
    src.write_text(rel.to_json())
    out = tmp_path / "privacy.html"
    assert main(["page", str(src), "--out", str(out)]) == 0
    assert out.read_text() == privacy_page(rel)
    assert "wrote" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    d = rel.to_dict()
    d["guarantee"]["epsilon"] *= 0.5
    bad.write_text(json.dumps(d))
    out2 = tmp_path / "bad.html"
    assert main(["page", str(bad), "--out", str(out2)]) == 2
    assert not out2.exists()
    assert "refused" in capsys.readouterr().err


def test_names_from_the_release_are_escaped():
    rel = _release()
    d = rel.to_dict()
    d["feature_names"] = ["<script>alert(1)</script>", "b & c", "</script><b>"]
    html = privacy_page(json.dumps(d))
    assert "<script>alert(1)</script>" not in html and "</script><b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
