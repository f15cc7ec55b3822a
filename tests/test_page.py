"""pdpkit.page in Python: what the page embeds, what it refuses, and the `pdpkit page` command."""

from __future__ import annotations

import base64
import copy
import dataclasses
import hashlib
import html as html_lib
import json
import math
import re
import shutil
import subprocess
import sys
import warnings
from decimal import Context, Decimal
from typing import Any

import numpy as np
import pytest

from pdpkit._display import ceil_sig, fmt_up
from pdpkit.accountant import Guarantee, GuaranteePart
from pdpkit.cli import main
from pdpkit.objpert import objpert_fit
from pdpkit.page import (_JS, _JS_FORMAT, _JS_TEXT, _SEEDED_NOTICE, _embedded, _form_inner, _guarantee_html, _percent,
                         _plain, _report_html, _words_guarantee, encode_record, page_data, privacy_page)
from pdpkit.release import Release, objpert_release
from pdpkit.report import PrivacyReport, privacy_report
from pdpkit.signing import (PAGE_CONTEXT, RELEASE_CONTEXT, SignatureError, generate_private_key, key_fingerprint,
                            sign_payload, verify_payload)


def _embedded_data(html: str) -> str:
    """The text of the page's data element."""
    return re.search(r'<script type="application/json" id="pdp-data">(.*?)</script>', html, re.S).group(1)


def _embedded_signature(html: str) -> str:
    return re.search(r'<script type="application/json" id="pdp-signature">(.*?)</script>', html, re.S).group(1)


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
    W = np.frombuffer(base64.b64decode(data["W"]), dtype="<f8")
    np.testing.assert_array_equal(W, rep.leverage_factor[np.triu_indices(rep.d)])
    np.testing.assert_array_equal(np.frombuffer(base64.b64decode(data["theta"]), dtype="<f8"), rel.theta)
    assert data["guarantee"]["epsilon"] == rel.guarantee.epsilon
    from pdpkit.page import release_fingerprint

    # the release's fingerprint is Release.fingerprint (SHA-256 of its canonical payload), however the file was
    # written, signed or not; the page embeds the release's canonical bytes themselves
    assert data["release_sha256"] == rel.fingerprint == hashlib.sha256(rel.payload).hexdigest()
    assert release_fingerprint(rel.to_json(indent=2)) == release_fingerprint(rel) == data["release_sha256"]
    assert release_fingerprint(rel.sign(generate_private_key()).to_json()) == rel.fingerprint
    assert data["release"].encode("ascii") == rel.payload and data["release_signature"] is None
    other = rel.to_dict()
    other["theta"][0] += 1e-9
    assert release_fingerprint(other) != data["release_sha256"]
    assert _embedded_data(html) == _embedded(data)
    # labelled inputs and the "I don't know" choice
    for j in range(3):
        assert f'<label for="f{j}">' in html and f'id="f{j}"' in html
    assert "I don't know" in html
    g = rel.guarantee
    assert f"<strong>({fmt_up(g.epsilon, 3)}, {fmt_up(g.delta, 2)})-differentially private</strong>" in html
    for p in g.parts:
        assert f"<li>{p.name}: ({fmt_up(p.epsilon, 3)}, {fmt_up(p.delta, 2)})</li>" in html


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


# ------------------------------------------------------------------ displayed numbers are rounded up
def test_the_guarantee_in_words_rounds_up():
    """0.37241 is shown 0.373 (nearest: 0.372), δ 1.0001e-6 as 1.1e-06 (nearest: 1e-06), e^0.37241 = 1.4512 as 1.46."""
    g = Guarantee(epsilon=0.37241, delta=1.0001e-6)
    text = _words_guarantee(g)
    assert "<strong>(0.373, 1.1e-06)-differentially private</strong>" in text
    assert "e<sup>0.373</sup> = 1.46," in text and "at most 1.1e-06." in text
    assert (f"{g.epsilon:.3g}", f"{g.delta:.2g}", f"{math.exp(g.epsilon):.3g}") == ("0.372", "1e-06", "1.45")


def test_the_parts_and_the_reports_cost_round_up(monkeypatch):
    rel = _release()
    parts = (GuaranteePart("model", 0.37241, 5.0001e-7, "exact"), GuaranteePart("report", 0.12341, 5e-7, "exact"))
    edited = copy.copy(rel)
    object.__setattr__(edited, "guarantee", dataclasses.replace(rel.guarantee, parts=parts))
    # the page's text from an edited guarantee (a real release's parts are what its analysis gives)
    monkeypatch.setattr("pdpkit.page._as_release", lambda release, public_key=None: edited)
    html = privacy_page(rel)
    assert "<li>model: (0.373, 5.1e-07)</li>" in html and "<li>report: (0.124, 5e-07)</li>" in html
    assert "Publishing them cost (0.124, 5e-07), included in the total above." in html


# ------------------------------------------------------------------ the page's JavaScript, run by node
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: it runs the page's JavaScript here")


def _node(script: str, tmp_path) -> Any:
    path = tmp_path / "run.js"
    path.write_text(script, encoding="utf-8")
    out = subprocess.run([NODE, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _script(html: str) -> str:
    return re.search(r"<script>(.*?)</script>", html, re.S).group(1)


def _cases() -> list[tuple[float, int]]:
    """Edge values (nearest rounding goes down; powers of ten; subnormals; the largest float) and random floats."""
    rng = np.random.default_rng(11)
    xs = [0.37541, 0.37547, 1.00049, 9.99949, 2.0000001e-6, 123401.0, 0.00012341, 0.07, 0.1, 0.3, 1.0, 1e-6,
          0.1 + 0.2, 5e-324, 2.2250738585072014e-308, sys.float_info.max, 1e21, 9.999999999999999e22, 0.00099999]
    bits = rng.integers(1, 0x7FF0000000000000, size=1500, dtype=np.int64)
    xs += bits.view(np.float64).tolist()  # every positive finite float is a bit pattern below inf's
    for k in (1, 2, 3, 4):  # k-digit decimals and their neighbouring floats
        for m in rng.integers(10 ** (k - 1), 10**k, size=60).tolist():
            v = float(f"{m}e{int(rng.integers(-12, 12))}")
            xs += [v, math.nextafter(v, 0.0), math.nextafter(v, math.inf)]
    return [(x, k) for x in xs for k in (1, 2, 3, 4, 6, 15, 17)]


@needs_node
def test_the_pages_ceilsig_is_pythons_ceil_sig(tmp_path):
    """The JavaScript the page ships rounds every float as pdpkit._display.ceil_sig does, bit for bit."""
    script = _script(privacy_page(_release()))
    assert _JS_FORMAT in script
    cases = _cases()
    js = _JS_FORMAT + f"""
const cases = {json.dumps([[repr(x), k] for x, k in cases])};
const out = cases.map(([s, k]) => PDP_FMT.ceilSig(Number(s), k));
console.log(JSON.stringify(out.map(v => isFinite(v) ? v : String(v))));"""
    got = _node(js, tmp_path)
    want = [ceil_sig(x, k) for x, k in cases]
    bad = [(x, k, g, w) for (x, k), g, w in zip(cases, got, want, strict=True)
           if float(g) != w]
    assert bad == []
    assert all(float(g) >= x for (x, _), g in zip(cases, got, strict=True))


def _up_violation(x: float, k: int, shown: float) -> str | None:
    """Why ``shown`` is not ``x`` rounded up to ``k`` digits (normal ``x``, ``k <= 15``), or None."""
    if not shown >= x:
        return f"{shown!r} < {x!r}"
    prev = Context(prec=k, Emin=-10**6, Emax=10**6).next_minus(Decimal(repr(shown)))
    if float(prev) >= x:
        return f"{shown!r} is not the smallest: {prev} >= {x!r}"
    return None


@needs_node
def test_deliberately_wrong_javascript_roundings_fail(tmp_path):
    """toPrecision (nearest) shows 0.37541 as 0.3754; multiply-then-Math.ceil shows 0.07 as 0.08; ceilSig neither."""
    js = _JS_FORMAT + """
const nearest = (x, k) => Number(x.toPrecision(k));
const scaled = (x, k) => { const s = Math.pow(10, k - 1 - Math.floor(Math.log10(x))); return Math.ceil(x * s) / s; };
const cases = [[0.37541, 4], [0.07, 1], [0.37547, 3]];
console.log(JSON.stringify(cases.map(([x, k]) => [nearest(x, k), scaled(x, k), PDP_FMT.ceilSig(x, k)])));"""
    (n1, s1, c1), (n2, s2, c2), (n3, s3, c3) = _node(js, tmp_path)
    assert _up_violation(0.37541, 4, n1) is not None and "<" in _up_violation(0.37541, 4, n1)
    assert s2 == 0.08 and "not the smallest" in _up_violation(0.07, 1, s2)
    assert [c1, c2, c3] == [0.3755, 0.07, 0.376]
    assert all(_up_violation(x, k, c) is None for (x, k), c in zip([(0.37541, 4), (0.07, 1), (0.37547, 3)],
                                                                   [c1, c2, c3], strict=True))


@needs_node
def test_fmtup_writes_the_pages_style(tmp_path):
    cases = [(0.37547, 3, "0.376"), (0.37541, 4, "0.3755"), (0.00099999, 3, "0.00100"), (2.0000001e-6, 3, "2.01e-6"),
             (1.99999, 3, "2.00"), (1234.5, 3, "1.24e+3"), (0.0, 3, "0.00e+0")]
    js = _JS_FORMAT + f"""
console.log(JSON.stringify({json.dumps([[x, k] for x, k, _ in cases])}.map(([x, k]) => PDP_FMT.fmtUp(x, k))));"""
    assert _node(js, tmp_path) == [t for _, _, t in cases]


_DOM = """
const ELS = {};
function el(id) {
  return ELS[id] || (ELS[id] = {id: id, value: "", hidden: false, textContent: "", innerHTML: "", className: "",
                                dataset: {}, addEventListener() {}});
}
globalThis.window = globalThis;
globalThis.document = {getElementById: (id) => id === "pdp-data" ? {textContent: DATA} :
                                               id === "pdp-signature" ? {textContent: SIG} : el(id)};
"""


def _node_page(html: str) -> str:
    """The page's script in node with a minimal DOM; ``await PDP_PAGE.ready`` before using it."""
    return (f"const DATA = {json.dumps(_embedded_data(html))};\nconst SIG = {json.dumps(_embedded_signature(html))};\n"
            + _DOM + _script(html))


@needs_node
def test_the_page_shows_each_persons_bound_rounded_up(tmp_path):
    """The page's whole script in node (a minimal DOM): the form's result shows every bound, factor and the
    guarantee rounded up to its 3 digits, never below the number computed."""
    rel = _release()
    html = privacy_page(rel, private_key=generate_private_key())
    rng = np.random.default_rng(4)
    X = rng.normal(size=(24, 3)) * rng.uniform(0.05, 1.0, size=(24, 1))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    labels = ["yes" if v > 0 else "no" for v in rng.normal(size=24)]
    run = _node_page(html) + f"""
PDP_PAGE.ready.then(() => {{
  if (PDP_PAGE.state !== "ready" || PDP_PAGE.status !== "verified") throw new Error(PDP_PAGE.error || PDP_PAGE.status);
  const out = {json.dumps([[x.tolist(), lab] for x, lab in zip(X, labels, strict=True)])}.map(([x, lab]) => {{
    x.forEach((v, j) => {{ el("f" + j).value = String(v); }});
    el("label").value = lab === "yes" ? "1" : "0";  // the select's values are the classes' indices
    PDP_PAGE.compute();
    return [el("result").innerHTML, Number(el("result").dataset.epsilon)];
  }});
  console.log(JSON.stringify(out));
}});"""
    results = _node(run, tmp_path)
    total = rel.guarantee.epsilon
    rep = rel.privacy_report
    nearest_went_down = 0
    for (text, eps), x, lab in zip(results, X, labels, strict=True):
        want = rep.epsilon_bound(encode_record(rel, x), 1.0 if lab == "yes" else -1.0)
        assert abs(eps - want) <= 1e-9 * want
        shown = re.search(r"Your privacy loss: at most (\S+)</p>", text).group(1)
        factor = re.search(r"at most a factor (\S+)\. Everybody", text).group(1)
        g_shown, g_factor = re.search(r"covered by the guarantee (\S+) \(a factor (\S+)\)", text).groups()
        title = re.search(r"Your bound (\S+) beside the guarantee (\S+) that", text).groups()
        for s, v in ((shown, eps), (factor, math.exp(eps)), (g_shown, total), (g_factor, math.exp(total)),
                     (title[0], eps), (title[1], total)):
            assert float(s) == ceil_sig(v, 3) >= v, (s, v)
        nearest_went_down += float(f"{eps:.3g}") < eps
    assert nearest_went_down > 0, "no bound where nearest rounding goes down: the test would not test"


# ------------------------------------------------------------------ a release drawn from a seed
def _seeded(rel, value):
    """``rel`` with ``seeded=value``: through the dataclass field when Release has it, else set on a copy."""
    if "seeded" in {f.name for f in dataclasses.fields(rel)}:
        return dataclasses.replace(rel, seeded=value)
    out = copy.copy(rel)
    object.__setattr__(out, "seeded", value)
    return out


def test_a_seeded_release_says_so_beside_the_guarantee():
    assert _SEEDED_NOTICE == "Reproducible from a seed: this release is private only while the seed stays secret."
    rel = _release()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # verify() warns about a seeded release; the page shows it instead
        seeded = privacy_page(_seeded(rel, True))
        seeded_json = privacy_page(_seeded(rel, True).to_json()) if hasattr(rel, "seeded") else seeded
    for html in (seeded, seeded_json):
        notice = f'<p class="alert" id="seeded" role="note">{_SEEDED_NOTICE}</p>'
        body = html[:html.index("<script")]  # the page's script holds the notice too, to write it again (PDP_TEXT)
        assert body.count(_SEEDED_NOTICE) == 1 and notice in body
        # near the guarantee: right after the guarantee's words, before the report's section
        box = html.index('<p class="box">Whoever you are')
        assert box < html.index(notice) < html.index("<h2>The privacy report, as published</h2>")
    for value in (False, None):
        page = privacy_page(_seeded(rel, value))
        assert _SEEDED_NOTICE not in page[:page.index("<script")]


# ------------------------------------------------------------------ signing, hostile names, the form, book_url
def test_a_signed_page_embeds_signed_bytes_and_the_release():
    """The signature block covers PAGE_CONTEXT + the data element's exact text; a signed release must be the key's."""
    rel, key, other = _release(), generate_private_key(), generate_private_key()
    html = privacy_page(rel, private_key=key)
    text, block = _embedded_data(html), json.loads(_embedded_signature(html))
    assert verify_payload(block, text.encode("ascii"), context=PAGE_CONTEXT) == key_fingerprint(key)
    # an unsigned release is signed with the page's key first (Release.sign: the same bytes, the same fingerprint)
    assert json.loads(text) == page_data(rel.sign(key)) and text == _embedded(page_data(rel.sign(key)))
    assert html == privacy_page(rel, private_key=key)  # deterministic: the same arguments, the same page
    with pytest.raises(SignatureError):
        verify_payload(block, text.replace("logistic", "logistiC").encode("ascii"), context=PAGE_CONTEXT)
    assert _embedded_signature(privacy_page(rel)) == "null"
    # a signed release: its block travels in the page, and only its own key may sign the page
    signed = rel.sign(key)
    data = json.loads(_embedded_data(privacy_page(signed, private_key=key, public_key=key.public_key())))
    assert data["release_signature"] == signed.signature and data["release_sha256"] == rel.fingerprint
    with pytest.raises(ValueError, match="private_key: the release is signed by the key"):
        privacy_page(signed, private_key=other)
    # public_key: the release must be signed by it
    with pytest.raises(ValueError, match="the release does not verify"):
        privacy_page(signed, public_key=other.public_key())
    with pytest.raises(ValueError, match="the release does not verify.*unsigned"):
        page_data(rel, public_key=key.public_key())
    edited = signed.to_dict()
    edited["lam"] = 20.000000001
    with pytest.raises(ValueError, match="the release does not verify"):
        privacy_page(json.dumps(edited), private_key=key)


def test_a_signed_page_embeds_its_release_signed_by_the_same_key():
    """privacy_page(unsigned release, private_key=K) signs the release with K first, so the page can require it; the
    release's bytes and fingerprint are unchanged, also for a file whose canonical bytes are not what its fields
    write again ("lam": 20, not 20.0)."""
    rel, key = _release(), generate_private_key()
    d = json.loads(rel.to_json())
    d["lam"] = 20
    from_file = Release.from_json(json.dumps(d))
    assert from_file.payload != rel.payload and from_file.sign(key).fingerprint != from_file.fingerprint
    for r in (rel, from_file, rel.sign(key)):
        data = json.loads(_embedded_data(privacy_page(r, private_key=key)))
        block = data["release_signature"]
        assert block is not None and block["fingerprint"] == key_fingerprint(key)
        assert data["release"].encode("ascii") == r.payload
        assert data["release_sha256"] == r.fingerprint == hashlib.sha256(r.payload).hexdigest()
        assert verify_payload(block, r.payload, context=RELEASE_CONTEXT) == key_fingerprint(key)
    assert json.loads(_embedded_data(privacy_page(rel)))["release_signature"] is None  # an unsigned page: as given


def forge(html: str, forger: Any, release_signature: Any = None) -> str:
    """The forgery of a publisher's signed page: smaller derived constants (lambda_lower, q_cross, q_gradient, W: a
    smaller bound), the release's bytes intact (the publisher's release fingerprint), ``release_signature`` replaced
    (None: stripped), and the page signed again with the forger's key."""
    text, sig = _embedded_data(html), _embedded_signature(html)
    d = json.loads(text)
    d["lambda_lower"] *= 10
    d["q_cross"] /= 10
    if d["q_gradient"] is not None:
        d["q_gradient"] /= 10
    if d["W"] is not None:
        d["W"] = base64.b64encode((np.frombuffer(base64.b64decode(d["W"]), "<f8") * 0.1).tobytes()).decode("ascii")
    d["release_signature"] = release_signature
    forged = _embedded(d)
    block = _embedded(sign_payload(forger, forged.encode("ascii"), context=PAGE_CONTEXT))
    out = html.replace(f'id="pdp-data">{text}<', f'id="pdp-data">{forged}<', 1)
    out = out.replace(f'id="pdp-signature">{sig}<', f'id="pdp-signature">{block}<', 1)
    assert _embedded_data(out) == forged and _embedded_signature(out) == block
    return out


@needs_node
def test_a_forged_page_without_its_releases_signature_is_refused_in_node(tmp_path):
    """A publisher's page, its derived constants forged, the release's signature stripped (or the publisher's kept),
    signed again by another key: refused. The forger's own signature on the release is accepted, but the page then
    names the forger's key as its signer (the reader's comparison with the publisher's fingerprint)."""
    rel, key, forger = _release(), generate_private_key(), generate_private_key()
    html = privacy_page(rel, private_key=key)
    pages = {"stripped": forge(html, forger), "kept": forge(html, forger, json.loads(_embedded_data(html))[
        "release_signature"]), "forger's": forge(html, forger, rel.sign(forger).signature), "intact": html}
    run = _node_page(html) + f"""
PDP_PAGE.ready.then(async () => {{
  const out = {{}};
  for (const [k, [t, s]] of Object.entries({json.dumps({k: [_embedded_data(h), _embedded_signature(h)]
                                                        for k, h in pages.items()})})) {{
    const r = await PDP_PAGE.check(t, s);
    out[k] = [r.ok, r.status || r.message, r.signer || null, r.release_sha256 || null];
  }}
  console.log(JSON.stringify(out));
}});"""
    got = _node(run, tmp_path)
    assert got["intact"] == [True, "verified", key_fingerprint(key), rel.fingerprint]
    assert got["stripped"][0] is False and "carries no signature" in got["stripped"][1]
    assert got["kept"][0] is False and "another key" in got["kept"][1]
    assert got["forger's"] == [True, "verified", key_fingerprint(forger), rel.fingerprint]


#: Names a data set's header or schema may hold: comment and script openers, closers, quotes, entities, Unicode.
HOSTILE = ["age<!--<script>", "</script><script>alert(1)</script>", "x\" onmouseover=\"alert(1)", "it's & <b>",
           "âge ✓ 年齢 \u2028 \u202e", "<!--", "]]></style></title>"]


def _hostile_release():
    from pdpkit import schema

    cols = (schema.Column(HOSTILE[0], low=0, high=100),
            schema.Column(HOSTILE[1], kind="categorical", categories=(HOSTILE[2], HOSTILE[3], "<!--x", "</SCRIPT >")),
            schema.Column(HOSTILE[4], low=-1, high=1),
            schema.Column("y <!-- </script>", role="label", kind="categorical",
                          categories=("no <!--", "yes </script>")))
    sch = schema.Schema(cols)
    rng = np.random.default_rng(0)
    import pandas as pd

    df = pd.DataFrame({HOSTILE[0]: rng.uniform(0, 100, 200), HOSTILE[1]: rng.choice(list(cols[1].categories), 200),
                       HOSTILE[4]: rng.uniform(-1, 1, 200)})
    X = sch.encode(df)
    rows = np.hstack([X, np.ones((200, 1))])
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    fit = objpert_fit(rows, y, "logistic", lam=20.0, sigma=2.0, rng=1, norm_bound=np.sqrt(2.0))
    rep = privacy_report(fit, rows, y, method="data-dependent", rng=2, sigma_hessian=1.0, sigma_gradient=1.0)
    return objpert_release(fit, delta=1e-6, report=rep, report_delta=1e-6, fit_intercept=True,
                           classes=list(cols[3].categories), feature_names=list(sch.encoded_names), schema=sch)


def _parse(html: str) -> dict[str, Any]:
    """What Python's HTML parser sees: the script elements (attributes, text) and the page's visible text."""
    from html.parser import HTMLParser

    class P(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.scripts, self.stack, self.text, self.tags = [], [], [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append((tag, dict(attrs)))
            if tag == "script":
                self.scripts.append([dict(attrs), ""])
                self.stack.append(tag)

        def handle_endtag(self, tag):
            if tag == "script" and self.stack:
                self.stack.pop()

        def handle_data(self, data):
            if self.stack:
                self.scripts[-1][1] += data
            else:
                self.text.append(data)

    p = P()
    p.feed(html)
    p.close()
    return {"scripts": p.scripts, "text": "".join(p.text), "tags": p.tags}


def test_hostile_names_cannot_change_how_the_page_parses():
    """Names with <!--, <script>, </script>, quotes, & and Unicode: the data element, the signature and the page's
    script are exactly three script elements with their intended text; the names come back intact from the data
    and appear escaped in the page."""
    rel = _hostile_release()
    title = 'Ta <!--<script>alert("t")</script> & \'you\' ✓'
    html = privacy_page(rel, title=title, private_key=generate_private_key())
    text = _embedded_data(html)
    assert not set("<>&") & set(text) and text.isascii()
    seen = _parse(html)
    assert [(a.get("type"), a.get("id")) for a, _ in seen["scripts"]] == [
        ("application/json", "pdp-data"), ("application/json", "pdp-signature"), (None, None)]
    assert seen["scripts"][0][1] == text and seen["scripts"][2][1] == _JS
    data = json.loads(text)
    fields = data["inputs"]["fields"]
    assert [f["name"] for f in fields] == [HOSTILE[0], HOSTILE[1], HOSTILE[4]]
    assert fields[1]["categories"] == [HOSTILE[2], HOSTILE[3], "<!--x", "</SCRIPT >"]
    assert data["inputs"]["label"]["classes"] == ["no <!--", "yes </script>"]
    assert json.loads(data["release"])["feature_names"] == list(rel.feature_names)
    for name in [*HOSTILE[:5], "<!--x", "</SCRIPT >", "no <!--", "yes </script>", title]:
        assert name in seen["text"]  # shown as text, never as markup
    assert f"<title>{html_lib.escape(title)}</title>" in html and f"<h1>{html_lib.escape(title)}</h1>" in html
    assert "<script>alert" not in html.lower() and "<!--<script" not in html.lower()
    # no attribute carries a name: option values are indices
    for tag, attrs in seen["tags"]:
        if tag == "option":
            assert attrs["value"] in ("", "0", "1", "2", "3", "known")
    with pytest.raises(ValueError, match="not valid Unicode"):
        privacy_page(rel, title="a lone surrogate \ud800")


def test_the_form_cannot_send_the_record_anywhere():
    html = privacy_page(_release(), book_url="https://example.org/book")
    form = re.search(r"<form\b.*?</form>", html, re.S).group(0)
    opening = re.match(r"<form[^>]*>", form).group(0)
    assert " hidden" in opening and "action" not in opening and "method" not in opening
    assert not re.search(r"\bname\s*=", form)  # no field has a name: nothing could be submitted
    assert 'type="submit"' not in form and 'type="button" id="compute"' in form
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1)
    assert "form-action 'none'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
    script_hash = base64.b64encode(hashlib.sha256(_JS.encode("utf-8")).digest()).decode("ascii")
    assert f"script-src 'sha256-{script_hash}'" in csp
    note = re.search(r"<noscript>(.*?)</noscript>", html, re.S).group(1)
    assert "JavaScript" in note and "never sent anywhere" in note


@pytest.mark.parametrize("url", ["javascript:alert(1)", " JavaScript:alert(1)", "JAVASCRIPT:alert(1)",
                                 "java\tscript:alert(1)", "javascript\n:alert(1)", "\x00javascript:alert(1)",
                                 "data:text/html,<b>x</b>", "vbscript:msgbox(1)", "file:///etc/passwd",
                                 "mailto:a@b.example", "//evil.example/book", "///evil.example", "\\\\evil.example",
                                 "/\\evil.example", "http:evil.example", "https://", "jav&#x61;script:alert(1)",
                                 "https://example.org/a b", "https://example.org/\x7f", "javascript%3Aalert(1):x"])
def test_book_url_refuses_what_is_not_http_or_relative(url):
    with pytest.raises(ValueError, match="book_url"):
        privacy_page(_release(), book_url=url)


@pytest.mark.parametrize("url", ["https://example.org/pdpkit/", "HTTP://example.org", "../book", "book/", "/pdpkit",
                                 "./a?b=c#d", "https://example.org/%E2%9C%93/âge"])
def test_book_url_accepts_http_and_relative_addresses(url):
    html = privacy_page(_release(), book_url=url)
    assert f'href="{html_lib.escape(url.rstrip("/"))}/chapters/privacy_report.html#' in html


@needs_node
def test_the_pages_check_refuses_edits_in_node(tmp_path):
    """The same check as in the browser (node's Web Crypto has Ed25519): a signed page verifies; an edited byte, an
    edited signature, a stripped release signature, another key's release signature are refused."""
    rel, key = _release(), generate_private_key()
    html = privacy_page(rel.sign(key), private_key=key)
    text, sig = _embedded_data(html), _embedded_signature(html)
    forged = json.loads(text)
    forged["release_signature"] = rel.sign(generate_private_key()).signature
    cases = [(text, sig), (text.replace('"lam":20.0', '"lam":20.1'), sig), (text[:100] + "0" + text[101:], sig),
             (text, sig.replace('"value":"', '"value":"A')), (text, sig.replace("Ed25519", "ed25519")),
             (_embedded(forged), sig), (text, "{")]
    run = _node_page(html) + f"""
PDP_PAGE.ready.then(async () => {{
  const out = [];
  for (const [t, s] of {json.dumps(cases)}) {{
    const r = await PDP_PAGE.check(t, s);
    out.push([r.ok, r.status || r.message]);
  }}
  console.log(JSON.stringify(out));
}});"""
    got = _node(run, tmp_path)
    assert got[0] == [True, "verified"]
    assert all(ok is False for ok, _ in got[1:]), got
    assert "does not match the data" in got[1][1] and "not the one whose SHA-256" not in got[1][1]


# ------------------------------------------------------------------ the page's text, written again by its script
def _specs() -> list[dict[str, Any]]:
    """Form descriptions: rows, a hostile schema with classes, numbers with missing values and odd bounds, categories
    with "none of these", a numeric label with and without bounds."""
    num = lambda name, lo, hi, miss: {"name": name, "kind": "numeric", "low": lo, "high": hi,  # noqa: E731
                                      "missing_ok": miss}
    cat = lambda name, cs, none: {"name": name, "kind": "categorical", "categories": cs,  # noqa: E731
                                  "none_ok": none}
    odd = [(0.0, 1.0), (-0.5, 1e21), (1234565.0, 1e16 + 2), (1e-5, 0.1 + 0.2), (-1e300, 5e-324), (17.0, 90.0)]
    specs = [page_data(_release())["inputs"], page_data(_hostile_release())["inputs"]]
    for k, (lo, hi) in enumerate(odd):
        fields = [num(f"n{k} <&'" + '"\\>', lo, hi, k % 2 == 0), cat("c ✓ \u2028", ["a", "<b>", "'q'"], k % 3 == 0)]
        label = ({"kind": "classes", "classes": ["-1", "+1"], "name": "label"} if k % 3 == 0 else
                 {"kind": "numeric", "low": lo, "high": hi, "name": "y & z", "encoded": True} if k % 3 == 1 else
                 {"kind": "numeric", "low": None, "high": None, "name": "label", "encoded": False})
        specs.append({"encoding": "schema", "fields": fields, "label": label})
    return specs


def _report_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(5)
    out = []
    for k, method in enumerate(["data-independent", "data-dependent", "adaptive"] * 4):
        released = [] if method == "data-independent" else [["hessian"], ["gradient", "hessian"],
                                                              ["gradient", "hessian", "lambda_min"]][k % 3]
        parts = [{"name": "model", "epsilon": float(rng.uniform(0, 3)), "delta": 5e-7, "accounting": "exact"}]
        if k % 4:
            parts.append({"name": ["report", "gradient report", "a <report>"][k % 3],
                          "epsilon": float(rng.uniform(0, 1)), "delta": float(rng.uniform(0, 1e-6)),
                          "accounting": "exact"})
        rho = [0.05, 1e-9, 0.0009375, float(rng.uniform(0, 1)), 0.5, 1e-3][k % 6]
        out.append({"method": method, "released": released, "rho": rho,
                    "guarantee": {"epsilon": 1.0, "delta": 1e-6, "accounting": "exact", "parts": parts}})
    return out


@needs_node
def test_the_pages_text_in_javascript_is_pythons(tmp_path):
    """PDP_TEXT, with which the page writes its text again from its checked data, gives Python's characters: the
    numbers (fmt_up, _plain, _percent), the guarantee in words and its parts, the report's description, the form."""
    rng = np.random.default_rng(3)
    cases = _cases()
    xs = sorted({x for x, _ in cases})
    plain = xs + [-x for x in xs[::7]] + [0.0, -0.0, 17.0, 1e16, 1e15, 123456789012345680.0, 0.0001, 1e-5]
    rhos = [0.05, 1e-9, 0.0009375, 0.5, 1e-3, 0.999, 1e-300] + rng.uniform(0, 1, 300).tolist()
    eps = np.concatenate([10.0 ** rng.uniform(-8, 3, 3000), [0.0, 0.37241, 699.9, 700.0, 750.0, 1e-320]])
    guarantees = [{"epsilon": float(e), "delta": float(10.0 ** rng.uniform(-12, -1)) if k % 5 else 0.0,
                   "accounting": "exact", "parts": [{"name": HOSTILE[k % len(HOSTILE)], "epsilon": float(e) / 2,
                                                     "delta": 1e-7, "accounting": "exact"}] * (k % 3)}
                  for k, e in enumerate(eps)]
    specs, reports = _specs(), _report_cases()
    js = _JS_FORMAT + _JS_TEXT + f"""
const T = PDP_TEXT, N = (s) => Number(s);
console.log(JSON.stringify({{
  up: {json.dumps([[repr(x), k] for x, k in cases])}.map(([s, k]) => T.up(N(s), k)),
  plain: {json.dumps([repr(x) for x in plain])}.map((s) => T.plain(N(s))),
  percent: {json.dumps([repr(r) for r in rhos])}.map((s) => T.percent(N(s))),
  guarantee: {json.dumps(guarantees)}.map((G, k) => T.guarantee(G, k % 2 === 0)),
  report: {json.dumps(reports)}.map((D) => T.report(D)),
  form: {json.dumps(specs)}.map((I) => T.form(I)),
}}));"""
    got = _node(js, tmp_path)
    assert got["up"] == [fmt_up(x, k) for x, k in cases]
    assert got["plain"] == [_plain(x) for x in plain]
    assert got["percent"] == [_percent(r) for r in rhos]
    assert got["guarantee"] == [_guarantee_html(g, k % 2 == 0) for k, g in enumerate(guarantees)]
    assert got["report"] == [_report_html(d) for d in reports]
    assert got["form"] == [_form_inner(spec) for spec in specs]
    # what these functions write: rounded up, every digit, rounded down ("at least"), as before
    assert (_plain(17.0), _plain(0.1 + 0.2), _plain(1e21), _plain(1234565.0)) == ("17", "0.30000000000000004",
                                                                                 "1e+21", "1234565")
    assert (_percent(0.05), _percent(1e-9), _percent(0.5)) == ("95%", "99.9999%", "50%")
    assert _words_guarantee(Guarantee(0.37241, 1.0001e-6)) == _words_guarantee({"epsilon": 0.37241, "delta": 1.0001e-6})


@needs_node
def test_the_page_writes_its_text_again_from_its_checked_data(tmp_path):
    """An edit of the page's text (the guarantee's numbers, the report's probability, the options' labels) is
    overwritten once the checks pass: the page shows what its signed data say."""
    rel = _release()
    html = privacy_page(rel, private_key=generate_private_key())
    data = json.loads(_embedded_data(html))
    g = _guarantee_html(data["guarantee"], rel.seeded)
    assert f'<div id="guarantee">{g}</div>' in html and f'<p id="report">{_report_html(data)}</p>' in html
    run = _node_page(html) + """
PDP_PAGE.ready.then(() => console.log(JSON.stringify([PDP_PAGE.status, el("guarantee").innerHTML,
                                                      el("report").innerHTML, el("form").innerHTML])));"""
    status, guarantee, report, form = _node(run, tmp_path)
    assert status == "verified"
    assert guarantee == g and report == _report_html(data) and form == _form_inner(data["inputs"])


def test_a_one_vs_rest_release_has_a_page_with_each_models_numbers():
    from pdpkit.estimators import ObjPertClassifier

    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (600, 3)) / 2
    y = np.digitize(X @ np.array([1.0, -1.0, 0.5]), [-0.2, 0.2])
    est = ObjPertClassifier(2.0, 1e-6, classes=[0, 1, 2], report="adaptive", report_epsilon=1.0,
                            report_delta=1e-6).fit(X, y)
    rel = est.release_
    data = page_data(rel)
    assert len(data["models"]) == 3 and data["theta"] is None and data["W"] is None
    for k, (m, rep) in enumerate(zip(data["models"], rel.privacy_reports, strict=True)):
        np.testing.assert_array_equal(np.frombuffer(base64.b64decode(m["theta"]), dtype="<f8"), rel.theta[k])
        assert m["rho"] == rep.rho and m["lambda_lower"] == rep.lambda_lower
    assert data["rho"] == sum(r.rho for r in rel.privacy_reports) == pytest.approx(est.rho)
    assert data["inputs"]["label"]["classes"] == ["0", "1", "2"]
    html = privacy_page(rel)
    assert "one-vs-rest: 3 models" in html and "sum of the 3 models" in html
    # a binary page has no models list (its numbers are at the top, as before)
    assert page_data(_release())["models"] is None
