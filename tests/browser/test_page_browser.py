"""The privacy page in headless Chromium: its bound equals pdpkit's; it checks its own data; it is usable and small.

Run by ``make browser-test`` (``PDPKIT_BROWSER_TESTS=1 pytest tests/browser/test_page_browser.py -s``); skipped
otherwise, and where playwright or Chromium is missing. Every report method, with and without an intercept, the logistic
and a regression loss: random records through the page's own JavaScript function and,
fewer, typed into the form, compared with :meth:`pdpkit.report.PrivacyReport.epsilon_bound`
(and :meth:`~pdpkit.report.PrivacyReport.sup_over_labels` for "I don't know") to 1e-9
relative. The page is served from an https address (a secure context, so Web Crypto is there; every other request is
refused), checked at 390 px, by keyboard, for labels on every input and for its size at d = 100.

Its own check of its data (``PDP_PAGE.check``, the function the page runs when it opens): every byte of a signed
page's data edited (one bit flipped), every base64 character replaced by another, every byte of its signature block
edited — each refused — and a sample of edited pages loaded whole, each showing the refusal and no number. Also: an
unsigned page refuses numbers that are not its embedded release's; a browser without Ed25519 (simulated) says
"signature not checkable in this browser" and never "verified"; a page without Web Crypto (about:blank, plain http)
says so; in neither, nor on an unsigned page, is a signer or a fingerprint presented as checked, and the warning stands
beside every number; a signed page whose release's signature was stripped (constants forged, signed by another key)
is refused; a page whose text was edited shows its data's text; hostile names in a schema; no JavaScript (the form is
not offered); no state in which the form navigates.
The closing line (``-s``) prints the Chromium version, whether it has Ed25519, the edit counts and the timings.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import time

import numpy as np
import pytest

from pdpkit._display import ceil_sig
from pdpkit.objpert import objpert_fit
from pdpkit.page import _embedded, encode_record, privacy_page
from pdpkit.release import objpert_release
from pdpkit.report import calibrate_report, privacy_report
from pdpkit.signing import PAGE_CONTEXT, generate_private_key, key_fingerprint, sign_payload

if os.environ.get("PDPKIT_BROWSER_TESTS") != "1":  # `make browser-test` sets it; `make unit` skips Chromium
    pytest.skip("browser test: run by make browser-test (PDPKIT_BROWSER_TESTS=1)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):  # pragma: no cover - machine without Chromium
    pytest.skip("Chromium is not installed", allow_module_level=True)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
RTOL = 1e-9
METHODS = ("data-independent", "data-dependent", "adaptive")
REPORT = {}  # what the closing lines print: error, timing, size, edits tried and refused
URL = "https://pdpkit.invalid/privacy.html"  # served by the test itself (a secure context); nothing else is fetched
KEY = generate_private_key()


def _release(loss: str, method: str, intercept: bool, d: int = 6, n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = d - int(intercept)
    X = rng.normal(size=(n, p))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1) * 1.05)[:, None]
    t = X @ rng.normal(size=p)
    y = np.where(t + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0) if loss == "logistic" else np.clip(t, -3, 3)
    R = 1.0
    rows = np.hstack([X, np.full((n, 1), R)]) if intercept else X
    fit_R = R * (np.sqrt(2.0) if intercept else 1.0)
    fit = objpert_fit(rows, y, loss, lam=20.0 if loss == "logistic" else 60.0, sigma=2.0, rng=seed + 1,
                      norm_bound=fit_R)
    scales = {} if method == "data-independent" else calibrate_report(2.0, 1e-6, method=method, loss=loss,
                                                                       norm_bound=fit_R)
    rep = privacy_report(fit, rows, y, method=method, rng=seed + 2, **scales)
    rel = objpert_release(fit, delta=1e-6, report=rep, report_delta=None if method == "data-independent" else 1e-6,
                          fit_intercept=intercept, classes=["no", "yes"] if loss == "logistic" else None,
                          feature_names=[f"feature {j}" for j in range(p)])
    return rel


def _records(rng: np.random.Generator, m: int, p: int) -> np.ndarray:
    X = rng.normal(size=(m, p)) * rng.uniform(0.05, 1.0, size=(m, 1))
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]


@pytest.fixture(scope="module")
def browser():
    t0 = time.perf_counter()
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
                               args=ARGS)
        REPORT["chromium"] = b.version
        ctx, page, _, _ = _open(b, "<!DOCTYPE html><title>probe</title>", wait=False)
        REPORT["ed25519_in_webcrypto"] = page.evaluate("""async () => { try {
            const k = await crypto.subtle.generateKey({name: "Ed25519"}, true, ["sign", "verify"]);
            const m = new Uint8Array([1, 2, 3]), s = await crypto.subtle.sign("Ed25519", k.privateKey, m);
            return await crypto.subtle.verify("Ed25519", k.publicKey, s, m); } catch (e) { return e.name; } }""")
        ctx.close()
        yield b
        b.close()
    REPORT["seconds_total"] = round(time.perf_counter() - t0, 1)
    if REPORT:
        print("\nprivacy page:", json.dumps(REPORT))


def _open(browser, html: str, width: int = 1024, *, secure: bool = True, javascript: bool = True,
          init_script: str | None = None, wait: bool = True, pages: dict[str, str] | None = None, url: str = URL):
    """``html`` at ``url`` (``secure=False``: as about:blank, not a secure context); waits for the page's check.

    ``pages`` (url -> html) are served too, also those added to the dict later.
    """
    ctx = browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=javascript)
    if init_script is not None:
        ctx.add_init_script(init_script)
    requests = []
    pages = pages if pages is not None else {}
    pages[url] = html

    def serve(route):
        if route.request.url in pages:
            route.fulfill(status=200, content_type="text/html; charset=utf-8", body=pages[route.request.url])
        else:
            requests.append(route.request.url)
            route.abort()

    ctx.route("**/*", serve)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    if secure:
        page.goto(url, wait_until="load")
    else:
        page.set_content(html, wait_until="load")
    if wait and javascript:
        page.wait_for_function("window.PDP_PAGE && PDP_PAGE.state !== 'checking'")
    return ctx, page, errors, requests


def _data_text(html: str) -> str:
    return re.search(r'<script type="application/json" id="pdp-data">(.*?)</script>', html, re.S).group(1)


def _signature_text(html: str) -> str:
    return re.search(r'<script type="application/json" id="pdp-signature">(.*?)</script>', html, re.S).group(1)


@pytest.mark.parametrize("loss", ["logistic", "huber"])
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_the_page_computes_pdpkits_bound(browser, loss, intercept, method):
    rel = _release(loss, method, intercept)
    rep = rel.privacy_report
    ctx, page, errors, requests = _open(browser, privacy_page(rel, private_key=KEY if intercept else None))
    try:
        assert page.evaluate("PDP_PAGE.status") == ("verified" if intercept else "unsigned")
        p = rel.theta.shape[0] - int(intercept)
        rng = np.random.default_rng(hash((loss, intercept, method)) % 2**32)
        m = 60
        X = _records(rng, m, p)
        rows = np.array([encode_record(rel, x) for x in X])
        y = np.where(rng.random(m) > 0.5, 1.0, -1.0) if loss == "logistic" else rng.uniform(-3, 3, size=m)
        want = rep.epsilon_bound(rows, y)
        got = np.array(page.evaluate("([xs, ys]) => xs.map((x, i) => PDP_PAGE.bound(PDP_PAGE.encode(x), ys[i]))",
                                     [X.tolist(), y.tolist()]))
        err = float(np.max(np.abs(got - want) / want))
        # without a label: both classes, or every y in [-1, 1] (the page's rule for a schema's encoded label)
        if loss == "logistic":
            want0 = rep.sup_over_labels(rows)
            got0 = np.array(page.evaluate("xs => xs.map(x => PDP_PAGE.bound(PDP_PAGE.encode(x), null))", X.tolist()))
        else:
            want0 = rep.sup_over_labels(rows, label_bounds=(-1.0, 1.0))
            got0 = np.array(page.evaluate("xs => xs.map(x => PDP.bound(PDP_PAGE.D, PDP_PAGE.C, PDP_PAGE.encode(x), "
                                          "null, [-1, 1]))", X.tolist()))
        err0 = float(np.max(np.abs(got0 - want0) / want0))
        if loss == "huber":  # the maximum over the label range: branch and bound, then golden section
            ms0 = page.evaluate("""xs => { const rows = xs.map(x => PDP_PAGE.encode(x)); let s = 0;
                const t0 = performance.now();
                for (const r of rows) s += PDP.bound(PDP_PAGE.D, PDP_PAGE.C, r, null, [-1, 1]);
                return (performance.now() - t0) / rows.length; }""", X.tolist())
            REPORT["ms_per_no_label_regression_bound"] = max(REPORT.get("ms_per_no_label_regression_bound", 0.0), ms0)
        assert err < RTOL, f"JavaScript and Python differ by {err:.3g} relative"
        assert err0 < RTOL, f"without a label, JavaScript and Python differ by {err0:.3g} relative"
        # typed into the form
        for i in range(4):
            for j, v in enumerate(X[i]):
                page.fill(f"#f{j}", repr(float(v)))
            if loss == "logistic":
                page.select_option("#label", "yes" if y[i] > 0 else "no")
            else:
                page.select_option("#label", "known")
                page.fill("#labelvalue", repr(float(y[i])))
            page.click("#compute")
            shown = float(page.get_attribute("#result", "data-epsilon"))
            assert abs(shown - want[i]) <= RTOL * want[i]
            assert "at most" in page.inner_text("#result")
        REPORT["max_rel_error"] = max(REPORT.get("max_rel_error", 0.0), err, err0)
        REPORT["records"] = REPORT.get("records", 0) + 2 * m + 4
        assert not errors and not requests
    finally:
        ctx.close()


def test_a_large_page_is_small_fast_accessible_and_readable_at_390px(browser):
    rel = _release("logistic", "adaptive", True, d=101, n=3000)
    html = privacy_page(rel, private_key=KEY)
    size = len(html.encode("utf-8"))
    data = _data_text(html)
    w = json.loads(data)["W"]
    REPORT.update(size_bytes_d100=size, leverage_factor_bytes=len(w), data_bytes=len(data),
                  release_bytes=len(rel.payload))
    assert size < 350_000  # the embedded release holds the released Hessian: d^2 numbers
    ctx, page, errors, requests = _open(browser, html, width=390)
    try:
        # readable at 390 px: nothing wider than the screen
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        # every input has a label
        unlabelled = page.evaluate("""() => Array.from(document.querySelectorAll('input, select')).filter(el =>
            !document.querySelector('label[for="' + el.id + '"]')).map(el => el.id)""")
        assert unlabelled == []
        # time per bound (d = 101, the adaptive report's leverage factor)
        X = _records(np.random.default_rng(5), 200, 100)
        ms = page.evaluate("""xs => { const rows = xs.map(x => PDP_PAGE.encode(x)); let s = 0;
            const t0 = performance.now(); for (let k = 0; k < 10; k++) for (const r of rows) s += PDP_PAGE.bound(r, 1);
            return (performance.now() - t0) / (10 * rows.length); }""", X.tolist())
        REPORT["ms_per_bound_d100"] = ms
        rows = np.array([encode_record(rel, x) for x in X[:20]])
        got = np.array(page.evaluate("xs => xs.map(x => PDP_PAGE.bound(PDP_PAGE.encode(x), 1))", X[:20].tolist()))
        want = rel.privacy_report.epsilon_bound(rows, np.ones(20))
        assert np.max(np.abs(got - want) / want) < RTOL
        # keyboard only: focus the first field, type, Tab through the rest, Enter on the button computes
        page.focus("#f0")
        for j, v in enumerate(X[0]):
            page.keyboard.type(repr(float(v)))
            page.keyboard.press("Tab")
        page.keyboard.press("ArrowDown")  # the label: from "I don't know" to the first class
        page.keyboard.press("Tab")  # to the button
        assert page.evaluate("[document.activeElement.id, document.activeElement.type]") == ["compute", "button"]
        page.keyboard.press("Enter")
        shown = float(page.get_attribute("#result", "data-epsilon"))
        first = 1.0 if page.eval_on_selector("#label", "el => el.options[el.selectedIndex].text") == "yes" else -1.0
        want0 = rel.privacy_report.epsilon_bound(encode_record(rel, X[0]), first)
        assert abs(shown - want0) <= RTOL * want0
        # Enter in a text field computes too (and sends nothing)
        page.fill("#f0", repr(float(X[1][0])))
        page.evaluate("delete document.getElementById('result').dataset.epsilon")
        page.press("#f0", "Enter")
        assert page.get_attribute("#result", "data-epsilon") is not None and page.url == URL
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert not errors and not requests
    finally:
        ctx.close()


def test_python_refuses_an_unverifiable_release():
    rel = _release("logistic", "data-dependent", False)
    d = rel.to_dict()
    d["guarantee"]["epsilon"] *= 0.5
    with pytest.raises(ValueError, match="does not verify|guarantee"):
        privacy_page(json.dumps(d))
    with pytest.raises(ValueError):
        privacy_page("{not json")
    t0 = time.perf_counter()
    privacy_page(rel)
    assert time.perf_counter() - t0 < 5.0


def _schema_records(rng: np.random.Generator, m: int, missing: bool):
    import pandas as pd

    work = ["Private", "Gov", "Self"] + ([None] if missing else [])
    edu = ["HS", "BA", "MA", "PhD"] + ([None] if missing else [])
    age = rng.uniform(10, 95, m)
    if missing:
        age[::7] = np.nan
    return pd.DataFrame({"age": age, "work": [work[i] for i in rng.integers(0, len(work), m)],
                         "hours": rng.uniform(-5, 105, m), "edu": [edu[i] for i in rng.integers(0, len(edu), m)]})


@pytest.mark.parametrize("loss", ["logistic", "huber"])
@pytest.mark.parametrize("handle", ["error", "zero"])
def test_records_with_categories_through_the_schema(browser, loss, handle):
    """A release fitted through a schema: the page encodes raw records (numbers, categories, missing
    values where the schema allows them) as pdpkit.schema does, and its bound equals Python's."""
    import pandas as pd

    from pdpkit import schema

    lab = (schema.Column("y", role="label", kind="categorical", categories=("no", "yes")) if loss == "logistic"
           else schema.Column("y", role="label", kind="numeric", low=0.0, high=100.0))
    sch = schema.Schema((schema.Column("age", low=17, high=90),
                         schema.Column("work", kind="categorical", categories=("Private", "Gov", "Self")),
                         schema.Column("hours", low=0, high=99),
                         schema.Column("edu", kind="categorical", categories=("HS", "BA", "MA", "PhD")), lab),
                        handle_unknown=handle, handle_missing=handle)
    rng = np.random.default_rng(3)
    n, R = 600, 1.0
    df = _schema_records(rng, n, handle == "zero")
    X = R * sch.encode(df)  # pdpkit.preprocessing.SchemaEncoder's rows, then the intercept column
    rows = np.hstack([X, np.full((n, 1), R)])
    y = (np.where(X[:, 0] > 0, 1.0, -1.0) if loss == "logistic"
         else sch.encode_label(pd.Series(rng.uniform(0, 100, n))))
    fit = objpert_fit(rows, y, loss, lam=60.0, sigma=2.0, rng=1, norm_bound=np.sqrt(2.0) * R)
    scales = calibrate_report(2.0, 1e-6, method="adaptive", loss=loss, norm_bound=np.sqrt(2.0) * R)
    rep = privacy_report(fit, rows, y, method="adaptive", rng=2, **scales)
    rel = objpert_release(fit, delta=1e-6, report=rep, report_delta=1e-6, fit_intercept=True,
                          classes=["no", "yes"] if loss == "logistic" else None,
                          feature_names=list(sch.encoded_names), schema=sch)
    recs = _schema_records(rng, 60, handle == "zero")
    ys = rng.choice(["no", "yes"], 60) if loss == "logistic" else rng.uniform(-10, 110, 60)
    Xr = np.hstack([R * sch.encode(recs), np.full((60, 1), R)])
    yfit = np.where(ys == "yes", 1.0, -1.0) if loss == "logistic" else sch.encode_label(pd.Series(ys))
    want = rep.epsilon_bound(Xr, yfit)
    want0 = rep.sup_over_labels(Xr, label_bounds=(-1.0, 1.0))
    rows_in = [[None if (isinstance(v, float) and np.isnan(v)) else ("" if v is None else v) for v in r]
               for r in recs.itertuples(index=False)]
    np.testing.assert_array_equal(np.array([encode_record(rel, r) for r in rows_in]), Xr)
    ctx, page, errors, requests = _open(browser, privacy_page(rel), width=390)
    try:
        got = np.array(page.evaluate("([rs, ys]) => rs.map((r, i) => PDP_PAGE.bound(PDP_PAGE.encode(r), "
                                     "PDP.fittedLabel(PDP_PAGE.D, String(ys[i]))))", [rows_in, [str(v) for v in ys]]))
        got0 = np.array(page.evaluate("rs => rs.map(r => PDP_PAGE.bound(PDP_PAGE.encode(r), null))", rows_in))
        err = max(float(np.max(np.abs(got - want) / want)), float(np.max(np.abs(got0 - want0) / want0)))
        assert err < RTOL
        for i in range(3):  # and typed into the form
            r = rows_in[i]
            page.fill("#f0", "" if r[0] is None else repr(float(r[0])))
            page.select_option("#f1", r[1])
            page.fill("#f2", repr(float(r[2])))
            page.select_option("#f3", r[3])
            if loss == "logistic":
                page.select_option("#label", str(ys[i]))
            else:
                page.select_option("#label", "known")
                page.fill("#labelvalue", repr(float(ys[i])))
            page.click("#compute")
            assert abs(float(page.get_attribute("#result", "data-epsilon")) - want[i]) <= RTOL * want[i]
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        REPORT["max_rel_error_schema"] = max(REPORT.get("max_rel_error_schema", 0.0), err)
        assert not errors and not requests
    finally:
        ctx.close()


#: Values where round-to-nearest goes down, powers of ten and their neighbours, subnormals, the largest float.
EDGES = [0.37541, 0.37547, 1.00049, 9.99949, 2.0000001e-6, 123401.0, 0.00012341, 0.07, 0.1, 0.3, 1.0, 1e-6,
         0.1 + 0.2, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e21, 0.00099999,
         float(np.nextafter(1.0, 2.0)), float(np.nextafter(1.0, 0.0)), float(np.nextafter(0.001, 1.0))]


def test_displayed_numbers_are_rounded_up(browser):
    """Chromium runs the page's ceilSig as pdpkit._display.ceil_sig does (bit for bit on the edge values), and the
    form shows a person's bound, its factor and the guarantee rounded up to their 3 digits."""
    rel = _release("logistic", "adaptive", True)
    ctx, page, errors, requests = _open(browser, privacy_page(rel))
    try:
        cases = [(x, k) for x in EDGES for k in (1, 2, 3, 4, 15, 17)]
        got = page.evaluate("cs => cs.map(([s, k]) => { const v = PDP_FMT.ceilSig(Number(s), k); "
                            "return isFinite(v) ? v : String(v); })", [[repr(x), k] for x, k in cases])
        assert [float(g) for g in got] == [ceil_sig(x, k) for x, k in cases]
        assert page.evaluate("[PDP_FMT.fmtUp(0.37547, 3), PDP_FMT.fmtUp(0.37541, 4)]") == ["0.376", "0.3755"]
        X = _records(np.random.default_rng(9), 6, rel.theta.shape[0] - 1)
        total = rel.guarantee.epsilon
        for x in X:
            for j, v in enumerate(x):
                page.fill(f"#f{j}", repr(float(v)))
            page.select_option("#label", "yes")
            page.click("#compute")
            eps = float(page.get_attribute("#result", "data-epsilon"))
            text = page.inner_text("#result")
            shown = re.search(r"Your privacy loss: at most (\S+)\n", text + "\n").group(1)
            factor = re.search(r"at most a factor (\S+)\. Everybody", text).group(1)
            g_shown, g_factor = re.search(r"covered by the guarantee (\S+) \(a factor (\S+)\)", text).groups()
            for s, v in ((shown, eps), (factor, np.exp(eps)), (g_shown, total), (g_factor, np.exp(total))):
                assert float(s) == ceil_sig(float(v), 3) >= v, (s, v)
        assert not errors and not requests
    finally:
        ctx.close()


# ------------------------------------------------------------------ the page checks its own data
#: In the page: every byte of the data edited (one bit flipped), every base64-looking character replaced by another
#: base64 character, every byte of the signature block edited; each through PDP_PAGE.check, the page's own check.
SWEEP = r"""async ([text, sig]) => {
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const edit = (s, i, c) => s.slice(0, i) + c + s.slice(i + 1);
  const flip = (s, i) => String.fromCharCode(s.charCodeAt(i) ^ (1 << (i % 7)));
  const out = {}, accepted = [], t0 = performance.now();
  async function attempt(kind, t, s, i) {
    const r = await PDP_PAGE.check(t, s), c = out[kind] || (out[kind] = [0, 0]);
    c[0]++; if (!r.ok) c[1]++; else if (accepted.length < 10) accepted.push([kind, i]);
  }
  for (let i = 0; i < text.length; i++) await attempt("data_bit_flips", edit(text, i, flip(text, i)), sig, i);
  for (const [what, s, other] of [["data_base64_chars", text, null], ["signature_base64_chars", sig, text]]) {
    const re = /"([A-Za-z0-9+\/]{8,}={0,2})/g; let m;
    while ((m = re.exec(s)) !== null) for (let i = m.index + 1; i < m.index + 1 + m[1].length; i++) {
      if (s[i] === "=") continue;
      const e = edit(s, i, B64[(B64.indexOf(s[i]) + 1) % 64]);
      await attempt(what, other === null ? e : other, other === null ? sig : e, i);
    }
  }
  for (let i = 0; i < sig.length; i++) await attempt("signature_bit_flips", text, edit(sig, i, flip(sig, i)), i);
  const intact = await PDP_PAGE.check(text, sig);
  return {counts: out, accepted: accepted, intact: [intact.ok, intact.status], ms: performance.now() - t0};
}"""


def test_every_edited_byte_of_a_signed_page_is_refused(browser):
    rel = _release("logistic", "data-dependent", True, d=4).sign(KEY)
    html = privacy_page(rel, private_key=KEY)
    text, sig = _data_text(html), _signature_text(html)
    ctx, page, errors, requests = _open(browser, html)
    try:
        assert page.evaluate("PDP_PAGE.status") == "verified"
        assert page.inner_text("#fp-signer") == key_fingerprint(KEY)
        assert page.inner_text("#fp-release") == rel.fingerprint
        got = page.evaluate(SWEEP, [text, sig])
        assert got["intact"] == [True, "verified"]
        assert got["accepted"] == [], f"edits the page accepted: {got['accepted']}"
        counts = got["counts"]
        assert counts["data_bit_flips"][0] == len(text) and counts["signature_bit_flips"][0] == len(sig)
        assert all(tried == refused for tried, refused in counts.values()), counts
        REPORT["check_edits_tried_refused"] = counts
        REPORT["check_edits_total"] = [sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())]
        REPORT["check_edits_seconds"] = round(got["ms"] / 1000, 1)
        assert not errors and not requests
    finally:
        ctx.close()


def _refused_without_number(page) -> str:
    assert page.evaluate("PDP_PAGE.state") == "refused"
    assert page.is_visible("#refusal") and "refuses to compute a bound" in page.inner_text("#refusal")
    assert not page.is_visible("#form") and not page.is_visible("#check")
    assert not re.search(r"\d", page.inner_text("#result")) and page.get_attribute("#result", "data-epsilon") is None
    assert "Signature verified" not in page.inner_text("body")
    return page.inner_text("#refusal")


def test_edited_pages_loaded_whole_show_a_refusal_and_no_number(browser):
    """A sample of edited HTML files, each loaded in Chromium: edits in the data, in the signature's value, key,
    fingerprint and algorithm, and (unsigned pages) malformed JSON, no guarantee, an unknown loss."""
    rel = _release("logistic", "adaptive", True, d=4).sign(KEY)
    html = privacy_page(rel, private_key=KEY)
    text, sig = _data_text(html), _signature_text(html)
    block = json.loads(sig)
    rng = np.random.default_rng(7)
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    def change(s: str, lo: int, hi: int, alphabet: str = alnum) -> str:
        i = int(rng.integers(lo, hi))
        c = next(ch for ch in rng.permutation(list(alphabet)) if ch != s[i])
        return s[:i] + c + s[i + 1:]

    edits = [("data", change(text, 0, len(text)), sig) for _ in range(24)]
    for field, n, alphabet in (("value", 8, alnum), ("public_key", 6, alnum), ("fingerprint", 6, "0123456789abcdef"),
                               ("algorithm", 2, alnum)):
        start = sig.index(f'"{field}":"') + len(field) + 4
        end = sig.index('"', start)
        edits += [(f"signature.{field}", text, change(sig, start, end, alphabet)) for _ in range(n)]
    data = json.loads(text)
    unsigned = privacy_page(rel)

    def unsigned_edit(**changes):
        d, r = json.loads(_data_text(unsigned)), json.loads(data["release"])
        d["release_signature"] = None  # else the release's own signature refuses the edited release first
        for k, v in changes.items():
            d[k] = v if k != "loss" else {"name": v}
            r[k] = v
        d["release"] = _embedded(r)
        d["release_sha256"] = hashlib.sha256(d["release"].encode("ascii")).hexdigest()
        return _embedded(d)

    plain = _data_text(unsigned)
    edits += [("unsigned: malformed JSON", plain[:-1], "null"),
              ("unsigned: no guarantee", unsigned_edit(guarantee=None), "null"),
              ("unsigned: unknown loss", unsigned_edit(loss="hinge"), "null"),
              ("signed: page re-signed by another key", text, _embedded(sign_payload(
                  generate_private_key(), text.encode("ascii"), context=PAGE_CONTEXT)))]
    pages = {}
    for k, (_, t, s_) in enumerate(edits):
        pages[f"https://pdpkit.invalid/edit{k}.html"] = (
            html.replace(text, t, 1).replace(f'id="pdp-signature">{sig}<', f'id="pdp-signature">{s_}<', 1))
    assert all(p != html for p in pages.values()) and len(pages) == len(edits)
    ctx, page, errors, requests = _open(browser, html, pages=pages)
    t0 = time.perf_counter()
    messages = {}
    try:
        for k, (kind, _, _) in enumerate(edits):
            page.goto(f"https://pdpkit.invalid/edit{k}.html", wait_until="load")
            page.wait_for_function("window.PDP_PAGE && PDP_PAGE.state !== 'checking'")
            messages.setdefault(kind.split(".")[0] if kind.startswith("signature") else kind, []).append(
                _refused_without_number(page))
        assert any("no guarantee" in m for m in messages["unsigned: no guarantee"])
        assert any("loss is unknown" in m for m in messages["unsigned: unknown loss"])
        assert any("not JSON" in m for m in messages["unsigned: malformed JSON"])
        assert any("another key" in m for m in messages["signed: page re-signed by another key"])
        assert not errors and not requests
        REPORT["page_loads_tried_refused"] = [len(edits), sum(len(v) for v in messages.values())]
        REPORT["page_loads_seconds"] = round(time.perf_counter() - t0, 1)
    finally:
        ctx.close()
    assert block["fingerprint"] == key_fingerprint(KEY)


def test_an_unsigned_page_refuses_numbers_that_are_not_its_releases(browser):
    """Without a signature, each number the page copies from the release must be the embedded release's, the release
    must be the one whose SHA-256 the page states, and base64 must be canonical; what remains (edit the release and
    its stated SHA-256 together) changes the release fingerprint the page shows."""
    rel = _release("logistic", "data-dependent", True, d=4)
    html = privacy_page(rel)
    text = _data_text(html)
    data, R = json.loads(text), json.loads(json.loads(text)["release"])
    theta = np.frombuffer(base64.b64decode(data["theta"]), "<f8")

    def page_only(**kw):
        return _embedded({**data, **kw})

    def both(fix_sha, **kw):
        d, r = dict(data), dict(R)
        for k, v in kw.items():
            d[k] = v if k != "theta" else base64.b64encode(np.asarray(v, "<f8").tobytes()).decode("ascii")
            r[k] = v if k != "theta" else list(v)
        d["release"] = _embedded(r)
        if fix_sha:
            d["release_sha256"] = hashlib.sha256(d["release"].encode("ascii")).hexdigest()
        return _embedded(d)

    g = dict(data["guarantee"], epsilon=data["guarantee"]["epsilon"] / 2)
    t2 = (theta * 1.01).tolist()
    b64 = data["theta"]
    pad = b64[:-2] + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".index(b64[-2]) | 1] + b64[-1]
    assert b64.endswith("=") and pad != b64 and base64.b64decode(pad) == base64.b64decode(b64)  # padding bits only
    refused = {"sigma": page_only(sigma=data["sigma"] * 2), "lam": page_only(lam=data["lam"] + 1),
               "norm_bound": page_only(norm_bound=2.0), "guarantee": page_only(guarantee=g),
               "theta": page_only(theta=base64.b64encode(np.asarray(t2, "<f8").tobytes()).decode("ascii")),
               "rho": page_only(rho=0.5), "sigma in both": both(False, sigma=data["sigma"] * 2),
               "guarantee in both": both(False, guarantee=g), "theta in both": both(False, theta=t2),
               "non-canonical base64": page_only(theta=pad), "format": page_only(format="pdpkit-privacy-page/1"),
               "no guarantee": both(True, guarantee=None), "unknown loss": page_only(loss={"name": "hinge"}),
               "release not JSON": page_only(release=data["release"][:-1]), "page not JSON": text + "}"}
    accepted = {"sigma, release and its SHA-256": both(True, sigma=data["sigma"] * 2)}
    ctx, page, errors, requests = _open(browser, html)
    try:
        assert page.evaluate("PDP_PAGE.status") == "unsigned"
        assert "This page is not signed" in page.inner_text("#check")
        assert page.inner_text("#fp-release") == rel.fingerprint and not page.query_selector("#fp-signer")
        got = page.evaluate("async (cs) => { const out = {}; for (const [k, t] of Object.entries(cs)) { "
                            "const r = await PDP_PAGE.check(t, 'null'); "
                            "out[k] = [r.ok, r.message || r.release_sha256]; } return out; }", {**refused, **accepted})
        for k in refused:
            assert got[k][0] is False, (k, got[k])
        assert "canonical base64" in got["non-canonical base64"][1] and "no guarantee" in got["no guarantee"][1]
        assert "SHA-256" in got["sigma in both"][1] and "is not the embedded release's" in got["sigma"][1]
        ok, fingerprint = got["sigma, release and its SHA-256"]
        assert ok is True and fingerprint != rel.fingerprint  # the reader's comparison catches it
        REPORT["unsigned_edits_tried_refused"] = [len(refused), sum(not got[k][0] for k in refused)]
        assert not errors and not requests
    finally:
        ctx.close()


#: Makes Web Crypto report that it has no Ed25519, as a browser without it does (importKey: NotSupportedError).
NO_ED25519 = """(() => {
  const importKey = SubtleCrypto.prototype.importKey;
  SubtleCrypto.prototype.importKey = function (format, key, algorithm, ...rest) {
    const name = typeof algorithm === "string" ? algorithm : algorithm && algorithm.name;
    if (String(name).toLowerCase() === "ed25519")
      return Promise.reject(new DOMException("Unrecognized algorithm name", "NotSupportedError"));
    return importKey.call(this, format, key, algorithm, ...rest);
  };
})();"""


#: What the page says wherever the signature could not be checked: at the top, beside the guarantee and the bound.
CANNOT = ("this browser cannot check the signature: open the page in one that can (Chrome/Edge 137+, Firefox 129+, "
          "Safari 17+) before relying on the number")


def _unchecked(page, warning: str) -> None:
    """Nothing on the page is presented as checked: no "verified", no signer, no comparison of fingerprints to make;
    any fingerprint shown is labelled as the page's claim, and ``warning`` stands beside the guarantee."""
    status = page.inner_text("#check")
    assert "verified" not in (status + page.inner_text("#guarantee")).lower()
    assert "Signature verified" not in page.inner_text("body") and page.evaluate("PDP_PAGE.status") != "verified"
    assert "compare" not in status.lower() and "signer" not in status.lower()
    assert page.query_selector("#fp-signer") is None and key_fingerprint(KEY) not in page.inner_text("body")
    assert page.evaluate("document.querySelectorAll('#check dt').length") == 2
    assert all("claimed by the page, not checked" in t for t in page.eval_on_selector_all(
        "#check dt", "els => els.map(e => e.textContent)"))
    assert warning.lower() in status.lower() and page.is_visible("#guarantee-warning")
    assert warning.lower() in page.inner_text("#guarantee-warning").lower()


def _bound_with_warning(page, rel, warning: str, forged: bool = False) -> None:
    """The bound typed into the form, with the warning beside it (``forged``: the bound of forged constants)."""
    for j in range(rel.theta.shape[0] - int(rel.fit_intercept)):
        page.fill(f"#f{j}", "0.3")
    page.select_option("#label", "yes")
    page.click("#compute")
    row = encode_record(rel, [0.3] * (rel.theta.shape[0] - int(rel.fit_intercept)))
    want = rel.privacy_report.epsilon_bound(row, 1.0)
    shown = float(page.get_attribute("#result", "data-epsilon"))
    assert (shown < want * (1 - 1e-6)) if forged else abs(shown - want) <= RTOL * want
    assert page.is_visible("#result-warning") and warning.lower() in page.inner_text("#result-warning").lower()
    assert "verified" not in page.inner_text("#result").lower()


def _forged_constants(html: str, release_signature: str = "keep") -> str:
    """``html`` with smaller derived constants (a smaller bound), its signature block left as it is."""
    text = _data_text(html)
    d = json.loads(text)
    d["lambda_lower"] *= 10
    d["q_cross"] /= 10
    if release_signature != "keep":
        d["release_signature"] = None
    return html.replace(f'id="pdp-data">{text}<', f'id="pdp-data">{_embedded(d)}<', 1)


@pytest.mark.parametrize("case", ["no Ed25519", "no Web Crypto (about:blank)", "no Web Crypto (http)"])
def test_a_browser_that_cannot_check_the_signature_says_so(browser, case):
    """No "verified", no signer, no fingerprint to compare as if it had been checked — a forged page copying the
    publisher's signature block would pass such a comparison — and the instruction to open the page in a browser
    that can check it, at the top, beside the guarantee and beside the bound."""
    rel = _release("logistic", "data-independent", False, d=3)
    html = privacy_page(rel, private_key=KEY)
    kw = ({"init_script": NO_ED25519} if case == "no Ed25519" else {"secure": False} if "blank" in case else
          {"url": "http://pdpkit.invalid/privacy.html"})
    for forged in (False, True):
        ctx, page, errors, requests = _open(browser, _forged_constants(html) if forged else html, **kw)
        try:
            status = page.inner_text("#check")
            _unchecked(page, CANNOT)
            if case == "no Ed25519":
                assert "Signature not checkable in this browser" in status and "Firefox 129" in status
                assert page.evaluate("PDP_PAGE.status") == "not-checkable"
                assert page.inner_text("#fp-release") == rel.fingerprint  # computed, but labelled as a claim
            else:
                assert "Signature not checkable in this browser or context" in status
                assert page.evaluate("[isSecureContext, PDP_PAGE.status]") == [False, "no-webcrypto"]
                assert page.inner_text("#fp-page") == "not computable here"
            _bound_with_warning(page, rel, CANNOT, forged)
            # an edit the remaining checks see is still refused
            bad = page.evaluate("t => PDP_PAGE.check(t.replace('\"sigma\":2.0', '\"sigma\":3.0'), 'null')"
                                ".then(r => [r.ok, r.message])", _data_text(html))
            assert bad[0] is False and "sigma" in bad[1]
            REPORT[f"status_{case.split(' (')[0].replace(' ', '_')}"] = page.evaluate("PDP_PAGE.status")
            assert not errors and not requests
        finally:
            ctx.close()


def test_an_unsigned_page_shows_no_signer_and_says_anyone_may_have_changed_it(browser):
    """An unsigned page whose release is signed (V3u: forged constants beside the release's valid signature): the
    page does not show the release's signer as its provenance; it says it is unsigned, beside every number."""
    rel = _release("logistic", "data-dependent", True, d=4).sign(KEY)
    html = privacy_page(rel)
    anyone = "its numbers may have been changed by anyone"
    for forged in (False, True):
        ctx, page, errors, requests = _open(browser, _forged_constants(html) if forged else html)
        try:
            assert page.evaluate("PDP_PAGE.status") == "unsigned" and "This page is not signed" in page.inner_text(
                "#check")
            _unchecked(page, anyone)
            _bound_with_warning(page, rel, anyone, forged)
            assert not errors and not requests
        finally:
            ctx.close()


def test_a_forged_page_without_its_releases_signature_is_refused(browser):
    """The publisher's signed page, its derived constants forged, the release's signature stripped (or kept: the
    publisher's), the page signed by another key: a refusal and no number, no "Signature verified"."""
    from test_page import forge

    rel = _release("logistic", "adaptive", True, d=4)
    html = privacy_page(rel, private_key=KEY)
    forger = generate_private_key()
    pages = {"https://pdpkit.invalid/stripped.html": forge(html, forger),
             "https://pdpkit.invalid/kept.html": forge(html, forger, json.loads(_data_text(html))["release_signature"])}
    urls = list(pages)
    ctx, page, errors, requests = _open(browser, html, pages=pages)
    try:
        assert page.evaluate("PDP_PAGE.status") == "verified"
        messages = []
        for url in urls:
            page.goto(url, wait_until="load")
            page.wait_for_function("window.PDP_PAGE && PDP_PAGE.state !== 'checking'")
            messages.append(_refused_without_number(page))
            assert rel.fingerprint not in page.inner_text("body")
        assert "carries no signature" in messages[0] and "another key" in messages[1]
        assert not errors and not requests
    finally:
        ctx.close()


def test_an_edited_text_is_written_again_from_the_signed_data(browser):
    """A signed page whose HTML text was edited — the guarantee's sentence and parts, the report's probability, a
    field's label, the classes' option texts swapped (value "0" shown as "yes") — shows the data's text once it has
    checked them, and "yes" gives the bound for the data's "yes"."""
    from pdpkit.page import _form_inner, _guarantee_html, _report_html

    rel = _release("logistic", "data-dependent", True, d=4)
    html = privacy_page(rel, private_key=KEY)
    data = json.loads(_data_text(html))
    g = data["guarantee"]
    fake = dict(g, epsilon=0.001, parts=[dict(p, epsilon=0.0005) for p in g["parts"]])
    texts = {"guarantee": _guarantee_html(g, rel.seeded), "report": _report_html(data),
             "form": _form_inner(data["inputs"])}
    edits = [(texts["guarantee"], _guarantee_html(fake, False)),
             (texts["report"], _report_html(dict(data, rho=1e-9))),
             ('<label for="f0">feature 0</label>', '<label for="f0">feature 2</label>'),
             ('<option value="0">no</option><option value="1">yes</option>',
              '<option value="0">yes</option><option value="1">no</option>')]
    edited = html
    for old, new in edits:
        assert edited.count(old) == 1 and old != new
        edited = edited.replace(old, new)
    ctx, page, errors, requests = _open(browser, edited)
    try:
        assert page.evaluate("PDP_PAGE.status") == "verified"
        # the page's own text functions give Python's characters, and the page shows them
        assert page.evaluate("[PDP_TEXT.guarantee(PDP_PAGE.D.guarantee, false), PDP_TEXT.report(PDP_PAGE.D), "
                             "PDP_TEXT.form(PDP_PAGE.D.inputs)]") == [texts["guarantee"], texts["report"],
                                                                      texts["form"]]
        for id_, want in texts.items():
            assert page.evaluate("([id, h]) => { const t = document.createElement('div'); t.innerHTML = h; "
                                 "return document.getElementById(id).innerHTML === t.innerHTML; }", [id_, want]), id_
        assert "0.001" not in page.inner_text("#guarantee") and "99.9999%" not in page.inner_text("#report")
        assert page.inner_text("label[for=f0]") == "feature 0"
        assert page.evaluate("Array.from(document.getElementById('label').options, o => [o.value, o.text])") == [
            ["", "I don't know"], ["0", "no"], ["1", "yes"]]
        x = [0.2, -0.1, 0.3]
        for j, v in enumerate(x):
            page.fill(f"#f{j}", repr(v))
        page.select_option("#label", label="yes")
        page.click("#compute")
        want = rel.privacy_report.epsilon_bound(encode_record(rel, x), 1.0)
        assert abs(float(page.get_attribute("#result", "data-epsilon")) - want) <= RTOL * want
        assert page.query_selector("#result-warning") is None and page.query_selector("#guarantee-warning") is None
        assert not errors and not requests
    finally:
        ctx.close()


def test_hostile_names_in_chromium(browser):
    """Names with <!--, <script>, </script>, quotes, & and Unicode in the schema, the classes and the title: the page
    parses as intended, the form appears, the names show as text, and a typed record gives pdpkit's bound."""
    from test_page import HOSTILE, _hostile_release

    rel = _hostile_release().sign(KEY)
    title = 'Ta <!--<script>alert("t")</script> & \'you\' ✓'
    ctx, page, errors, requests = _open(browser, privacy_page(rel, title=title, private_key=KEY))
    try:
        assert page.evaluate("PDP_PAGE.status") == "verified" and page.is_visible("#form")
        assert page.evaluate("document.scripts.length") == 3 and page.title() == title
        assert page.inner_text("h1") == title
        assert page.inner_text("label[for=f0]") == HOSTILE[0] and page.inner_text("label[for=f2]") == HOSTILE[4]
        assert page.evaluate("Array.from(document.getElementById('f1').options, o => o.text)") == [
            HOSTILE[2], HOSTILE[3], "<!--x", "</SCRIPT >"]
        page.fill("#f0", "37")
        page.select_option("#f1", index=3)
        page.fill("#f2", "-0.25")
        page.select_option("#label", index=2)
        page.click("#compute")
        want = rel.privacy_report.epsilon_bound(encode_record(rel, [37.0, "</SCRIPT >", -0.25]), 1.0)
        assert abs(float(page.get_attribute("#result", "data-epsilon")) - want) <= RTOL * want
        assert not errors and not requests
    finally:
        ctx.close()


def test_the_form_never_sends_the_record(browser):
    """With JavaScript off the form is not offered (the noscript note says why); with it on, no way of submitting
    the form — submit(), requestSubmit(), Enter, the button — navigates or makes a request."""
    rel = _release("huber", "data-independent", False, d=2)
    html = privacy_page(rel, private_key=KEY)
    ctx, page, errors, requests = _open(browser, html, javascript=False)
    try:
        assert not page.is_visible("#form") and page.is_visible("#noscript") and not page.is_visible("#check")
        assert "never sent anywhere" in page.inner_text("#noscript")
    finally:
        ctx.close()
    ctx, page, errors, requests = _open(browser, html)
    try:
        assert not page.is_visible("#noscript") and page.is_visible("#form")
        page.evaluate("window.SAME_DOCUMENT = true")
        page.fill("#f0", "0.3")
        page.fill("#f1", "-0.2")
        page.select_option("#label", "known")
        page.fill("#labelvalue", "0.5")
        page.click("#compute")
        assert page.get_attribute("#result", "data-epsilon") is not None
        page.press("#labelvalue", "Enter")
        page.evaluate("document.getElementById('form').requestSubmit()")
        page.evaluate("document.getElementById('form').submit()")  # skips the handlers: the CSP blocks it
        page.wait_for_timeout(200)
        assert page.url == URL and page.evaluate("window.SAME_DOCUMENT === true")
        assert requests == [] and not errors
        assert page.evaluate("Array.from(document.querySelectorAll('input, select, button')).filter(e => e.name)"
                             ".length") == 0
    finally:
        ctx.close()


@pytest.mark.parametrize("method", METHODS)
def test_a_one_vs_rest_page_computes_the_sum_of_the_k_models_bounds(browser, method):
    """Three classes, a model and a report per class: the page's bound is the estimator's (the sum of the K
    models' bounds for the labels a class gives them; without a label the largest sum over the classes), with the
    form typed in; an edit of one model's numbers is refused."""
    import pandas as pd

    from pdpkit.estimators import ObjPertClassifier
    from pdpkit.schema import Column, Schema

    sch = Schema([Column("age", low=17.0, high=90.0),
                  Column("work", kind="categorical", categories=("Private", "Gov", "Self")),
                  Column("hours", low=0.0, high=99.0),
                  Column("y", role="label", kind="categorical", categories=("low", "mid", "high"))])
    rng = np.random.default_rng(11)
    n = 900
    df = pd.DataFrame({"age": rng.uniform(17, 90, n), "work": rng.choice(["Private", "Gov", "Self"], n),
                       "hours": rng.uniform(0, 99, n)})
    df["y"] = np.array(["low", "mid", "high"])[np.digitize(df["hours"] + 10 * rng.normal(size=n), [35.0, 65.0])]
    kw = {} if method == "data-independent" else dict(report_epsilon=1.0, report_delta=1e-6)
    if method == "data-dependent":  # Prop 21 of Redberg & Wang needs lam >= 2 tau sigma_hessian
        kw.update(lam=120.0, sigma=3.0)
    est = ObjPertClassifier(2.0, 1e-6, schema=sch, report=method, random_state=3, **kw).fit(df, df["y"])
    rel = est.release_
    recs = df.sample(40, random_state=1)[["age", "work", "hours"]]
    ys = rng.choice(["low", "mid", "high"], 40)
    want = np.asarray(est.privacy_report(recs, ys))
    want0 = np.asarray(est.privacy_report(recs))
    html = privacy_page(rel, private_key=KEY)
    ctx, page, errors, requests = _open(browser, html, width=390)
    try:
        assert page.evaluate("PDP_PAGE.status") == "verified"
        rows_in = [list(r) for r in recs.itertuples(index=False)]
        got = np.array(page.evaluate("([rs, ys]) => rs.map((r, i) => PDP_PAGE.bound(PDP_PAGE.encode(r), "
                                     "PDP.fittedLabel(PDP_PAGE.D, ys[i])))", [rows_in, ys.tolist()]))
        got0 = np.array(page.evaluate("rs => rs.map(r => PDP_PAGE.bound(PDP_PAGE.encode(r), null))", rows_in))
        err = max(float(np.max(np.abs(got - want) / want)), float(np.max(np.abs(got0 - want0) / want0)))
        assert err < RTOL, f"JavaScript and Python differ by {err:.3g} relative"
        assert np.all(want0 >= want * (1 - 1e-12))  # without a label: at least the bound of the true label
        # test the tester: one model's bound alone is far below the page's
        one = np.array(page.evaluate("([rs, ys]) => rs.map((r, i) => { const C = PDP_PAGE.C.models[0]; "
                                     "const c = Object.assign({}, C, {models: [C]}); return PDP.bound(PDP_PAGE.D, c, "
                                     "PDP_PAGE.encode(r), ys[i] === 'low' ? 1 : -1, null); })",
                                     [rows_in, ys.tolist()]))
        assert np.all(one < want) and np.max(np.abs(one - want) / want) > 0.1
        assert "one-vs-rest: 3 models" in page.inner_text("#report")
        for i in range(3):  # typed into the form
            r = rows_in[i]
            page.fill("#f0", repr(float(r[0])))
            page.select_option("#f1", r[1])
            page.fill("#f2", repr(float(r[2])))
            page.select_option("#label", str(ys[i]))
            page.click("#compute")
            assert abs(float(page.get_attribute("#result", "data-epsilon")) - want[i]) <= RTOL * want[i]
        REPORT["max_rel_error_one_vs_rest"] = max(REPORT.get("max_rel_error_one_vs_rest", 0.0), err)
        assert not errors and not requests
    finally:
        ctx.close()
    # an unsigned page whose second model's coefficients were edited is refused
    data = json.loads(_data_text(privacy_page(rel)))
    theta = np.frombuffer(base64.b64decode(data["models"][1]["theta"]), dtype="<f8").copy()
    theta[0] += 1e-3
    data["models"][1]["theta"] = base64.b64encode(theta.astype("<f8").tobytes()).decode("ascii")
    edited = privacy_page(rel).replace(_data_text(privacy_page(rel)), _embedded(data))
    ctx, page, errors, requests = _open(browser, edited)
    try:
        assert page.evaluate("PDP_PAGE.state") == "refused"
        assert "coefficients" in page.evaluate("PDP_PAGE.error")
    finally:
        ctx.close()
