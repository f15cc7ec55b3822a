"""The privacy page in headless Chromium: its JavaScript bound equals pdpkit's, and it is usable and small.

Run by ``make browser-test`` (``PDPKIT_BROWSER_TESTS=1 pytest tests/browser/test_page_browser.py``); skipped
otherwise, and where playwright or Chromium is missing. Every report method, with and without an intercept, the logistic
and a regression loss: random records through the page's own JavaScript function and,
fewer, typed into the form, compared with :meth:`pdpkit.report.PrivacyReport.epsilon_bound`
(and :meth:`~pdpkit.report.PrivacyReport.sup_over_labels` for "I don't know") to 1e-9
relative. The page is checked offline (every request is refused), at 390 px, by keyboard,
for labels on every input, for its size at d = 100, and for refusing an edited file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time

import numpy as np
import pytest

from pdpkit._display import ceil_sig
from pdpkit.objpert import objpert_fit
from pdpkit.page import encode_record, privacy_page
from pdpkit.release import objpert_release
from pdpkit.report import calibrate_report, privacy_report

if os.environ.get("PDPKIT_BROWSER_TESTS") != "1":  # `make browser-test` sets it; `make unit` skips Chromium
    pytest.skip("browser test: run by make browser-test (PDPKIT_BROWSER_TESTS=1)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):  # pragma: no cover - machine without Chromium
    pytest.skip("Chromium is not installed", allow_module_level=True)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
RTOL = 1e-9
METHODS = ("data-independent", "data-dependent", "adaptive")
REPORT = {}  # what the closing lines print: error, timing, size


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
    fit = objpert_fit(rows, y, loss, lam=20.0 if loss == "logistic" else 60.0, sigma=2.0, rng=seed + 1, norm_bound=fit_R)
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
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
                               args=ARGS)
        yield b
        b.close()
    if REPORT:
        print("\nprivacy page:", json.dumps(REPORT))


def _open(browser, html: str, width: int = 1024):
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    requests = []

    def refuse(route):
        requests.append(route.request.url)
        route.abort()

    ctx.route("**/*", refuse)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_content(html, wait_until="load")
    return ctx, page, errors, requests


@pytest.mark.parametrize("loss", ["logistic", "huber"])
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_the_page_computes_pdpkits_bound(browser, loss, intercept, method):
    rel = _release(loss, method, intercept)
    rep = rel.privacy_report
    ctx, page, errors, requests = _open(browser, privacy_page(rel))
    try:
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
                const t0 = performance.now(); for (const r of rows) s += PDP.bound(PDP_PAGE.D, PDP_PAGE.C, r, null, [-1, 1]);
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
            page.click("button[type=submit]")
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
    html = privacy_page(rel)
    size = len(html.encode("utf-8"))
    data = re.search(r'id="pdp-data">(.*?)</script>', html, re.S).group(1)
    w = json.loads(data)["W"]
    REPORT.update(size_bytes_d100=size, leverage_factor_bytes=len(w), data_bytes=len(data))
    assert size < 300_000
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
        # keyboard only: focus the first field, type, Tab through the rest, Enter submits
        page.focus("#f0")
        for j, v in enumerate(X[0]):
            page.keyboard.type(repr(float(v)))
            page.keyboard.press("Tab")
        page.keyboard.press("ArrowDown")  # the label: from "I don't know" to the first class
        page.keyboard.press("Tab")  # to the button
        assert page.evaluate("document.activeElement.type") == "submit"
        page.keyboard.press("Enter")
        shown = float(page.get_attribute("#result", "data-epsilon"))
        first = 1.0 if page.eval_on_selector("#label", "el => el.value") == "yes" else -1.0
        want0 = rel.privacy_report.epsilon_bound(encode_record(rel, X[0]), first)
        assert abs(shown - want0) <= RTOL * want0
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert not errors and not requests
    finally:
        ctx.close()


def test_an_edited_page_refuses(browser):
    rel = _release("logistic", "data-dependent", False)
    html = privacy_page(rel)
    data = json.loads(re.search(r'id="pdp-data">(.*?)</script>', html, re.S).group(1))
    for key, value in (("d", data["d"] + 1), ("lambda_lower", -1.0), ("W", data["W"][:-12])):
        bad = html.replace(json.dumps(data, separators=(",", ":")),
                           json.dumps({**data, key: value}, separators=(",", ":")))
        assert bad != html
        ctx, page, errors, _ = _open(browser, bad)
        try:
            assert page.is_visible("#refusal") and "refuses" in page.inner_text("#refusal")
            assert not page.is_visible("#form")
        finally:
            ctx.close()
    ctx, page, errors, _ = _open(browser, html)
    try:
        assert not page.is_visible("#refusal") and page.is_visible("#form")
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
            page.click("button[type=submit]")
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
            page.click("button[type=submit]")
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
