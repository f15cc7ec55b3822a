r"""A privacy page any person can check: one static HTML file that computes their own bound.

:func:`privacy_page` turns a verified :class:`pdpkit.release.Release` with a privacy report
into one self-contained HTML file (inline CSS and JavaScript, no external asset, no request
to any server): the release's total guarantee in words, the privacy report as published, a
form in which a person enters their own record, and their private bound
(:meth:`pdpkit.report.PrivacyReport.epsilon_bound`; for "I don't know" the label,
:meth:`pdpkit.report.PrivacyReport.sup_over_labels`) computed **in their browser** by a small
JavaScript implementation of the same formula. The record never leaves the page.

What the page embeds is a post-processing of the release's public fields only: the released
coefficients :math:`\tilde\theta`, λ, σ, the loss, the norm bound, the report's method, ρ
and its derived constants — the lower confidence value :math:`\underline\lambda`, the tail
quantiles of the cross term, the released gradient, and the upper-triangular factor
:math:`W` with :math:`\bar\mu(x) = \min\{\|x\|^2/\underline\lambda, \|W^\top x\|^2\}`
(:meth:`pdpkit.report.PrivacyReport.leverage_bound`), computed in Python from the released
Hessian — and the form's description (the release's feature names, its classes or label
bounds). Arrays are stored as little-endian float64 in base64, bit for bit. The page shows
:func:`release_fingerprint`, the SHA-256 of the release's canonical JSON, so a reader can
match it to the release file.

A release that does not parse, does not verify (:meth:`pdpkit.release.Release.verify`),
carries no guarantee or no privacy report makes :func:`privacy_page` **raise**
``ValueError`` (no page is written). The page checks its own embedded numbers when it opens
(lengths, finiteness, ranges) and, if anything is off — an edited file — refuses with a
message instead of showing a number.

The input form: with a release schema (numeric columns with their public bounds, categorical
columns as lists), the record is entered as the schema describes it and encoded exactly as
``pdpkit.schema.Schema.encode`` does; without one, each of the release's features is a
number on the scale the model was fitted on (the rows passed to the estimator).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._display import fmt_up
from .release import Release
from .report import PrivacyReport

__all__ = ["privacy_page", "page_data", "encode_record", "release_fingerprint"]

#: The privacy report chapter of the book, and the anchors the page links to.
_CHAPTER = "chapters/privacy_report.html"
_ANCHORS = {
    "data-independent": ("Why the exact ex-post pDP cannot be published",
                         "why-the-exact-ex-post-pdp-cannot-be-published"),
    "data-dependent": ("The data-dependent report (Alg 2, rebuilt)", "the-data-dependent-report-alg-2-rebuilt"),
    "adaptive": ("The adaptive report (Alg 4, Prop 12, Thm 13)", "the-adaptive-report-alg-4-prop-12-thm-13"),
    "gradient": ("The released gradient (Alg 5, Thm 14)", "the-released-gradient-alg-5-thm-14"),
    "cost": ("What the report costs (Thm 11, 14, 17; Cor 16)", "what-the-report-costs-thm-11-14-17-cor-16"),
}


def _b64(a: ArrayLike) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")


def _as_release(release: Any) -> Release:
    if isinstance(release, Release):
        rel = release
    elif isinstance(release, (str, bytes)):
        rel = Release.from_json(release.decode("utf-8") if isinstance(release, bytes) else release, verify=False)
    elif isinstance(release, dict):
        rel = Release.from_dict(release, verify=False)
    else:
        raise TypeError(f"release must be a pdpkit Release, its JSON text or its dict; got {type(release).__name__}")
    try:
        rel.verify()
    except ValueError as exc:
        raise ValueError(f"the release does not verify, so no page can vouch for it: {exc}") from None
    if rel.guarantee is None:
        raise ValueError("the release carries no guarantee (it was fitted without a norm bound or delta): "
                         "there is no privacy to show")
    if getattr(rel, "n_models", 1) > 1:
        raise ValueError("the release holds one model per class (more than two classes): its page is not "
                         "available yet (a person's bound would be the sum over the classes' reports)")
    if rel.privacy_report is None:
        raise ValueError("the release carries no privacy report: fit it with a report (report='data-independent' "
                         "costs nothing) to give every person a bound")
    return rel


def _schema_dict(rel: Release, schema: Any = None) -> dict[str, Any] | None:
    """The schema the release was fitted through: ``schema`` if given, else the release's own; checked."""
    own = getattr(rel, "schema", None)
    given = schema
    if given is not None and not isinstance(given, dict):
        given = given.to_dict()
    if own is not None and not isinstance(own, dict):
        own = own.to_dict()
    out = given if given is not None else own
    if out is None:
        return None
    from .schema import Schema  # layer 1

    encoded = tuple(Schema.from_dict(out).encoded_names)
    if rel.feature_names is not None and encoded != tuple(rel.feature_names):
        raise ValueError("schema: its encoded features are not the release's feature_names; give the schema the "
                         "release was fitted with")
    return out


def _inputs(rel: Release, schema: Any = None) -> dict[str, Any]:
    """The form's description: the fields a person fills in, and how they become the fitted row."""
    schema = _schema_dict(rel, schema)
    n_feat = rel.theta.shape[0] - int(rel.fit_intercept)
    if schema is not None:
        cols = [c for c in schema["columns"] if c.get("role", "feature") == "feature"]
        missing_ok = schema.get("handle_missing", "error") == "zero"
        none_ok = missing_ok or schema.get("handle_unknown", "error") == "zero"
        fields = []
        for c in cols:
            if c.get("kind", "numeric") == "numeric":
                fields.append({"name": c["name"], "kind": "numeric", "low": float(c["low"]), "high": float(c["high"]),
                               "missing_ok": missing_ok})
            else:
                fields.append({"name": c["name"], "kind": "categorical", "categories": [str(v) for v in c["categories"]],
                               "none_ok": none_ok})
        width = sum(1 if f["kind"] == "numeric" else len(f["categories"]) for f in fields)
        if width != n_feat:
            raise ValueError(f"the release's schema encodes {width} columns but its model has {n_feat} features")
        label = next((c for c in schema["columns"] if c.get("role") == "label"), None)
        encoding = "schema"
    else:
        names = rel.feature_names or tuple(f"x{j + 1}" for j in range(n_feat))
        fields = [{"name": n, "kind": "numeric", "low": None, "high": None, "missing_ok": False} for n in names]
        label = None
        encoding = "rows"
    if rel.loss == "logistic":
        classes = [str(c) for c in rel.classes] if rel.classes is not None else ["-1", "+1"]
        lab = {"kind": "classes", "classes": classes, "name": label["name"] if label else "label"}
    elif label is not None and label.get("kind", "numeric") == "numeric":
        lab = {"kind": "numeric", "low": float(label["low"]), "high": float(label["high"]), "name": label["name"],
               "encoded": True}
    else:
        lab = {"kind": "numeric", "low": None, "high": None, "name": "label", "encoded": False}
    return {"encoding": encoding, "fields": fields, "label": lab}


def page_data(release: Any, *, schema: Any = None) -> dict[str, Any]:
    r"""The numbers the page embeds: public fields of the release and what the bound needs, derived from them.

    Parameters
    ----------
    release : pdpkit.release.Release, str or dict
        A release with a guarantee and a privacy report (verified here).
    schema : pdpkit.schema.Schema or dict, optional
        The schema the release was fitted through, when the release does not carry it (its
        encoded names must be the release's ``feature_names``).

    Returns
    -------
    dict
        JSON-ready: the guarantee, the report's description, the form's fields, and the
        bound's constants (``theta``, ``W`` — the upper triangle of the leverage factor, row by
        row — and ``gradient`` as base64 little-endian float64).
    """
    rel = _as_release(release)
    rep: PrivacyReport = rel.privacy_report
    d = rep.d
    qb, qe = rep._cross_quantiles(False, 1)
    W = rep._W
    loss = {"name": rel.loss}
    if rel.loss == "huber":
        loss["scale"] = 1.0
    g = rel.guarantee
    return {
        "format": "pdpkit-privacy-page/1",
        "release_sha256": release_fingerprint(rel),
        "guarantee": g.to_dict(),
        "method": rep.method,
        "rho": rep.rho,
        "estimator": rep.estimator,
        "released": rep._released(),
        "noise": {k: getattr(rep, k) for k in ("sigma_gradient", "sigma_hessian", "sigma_lambda_min")},
        "d": d,
        "loss": loss,
        "lam": rep.lam,
        "sigma": rep.sigma,
        "lambda_lower": rep.lambda_lower,
        "q_cross": qb,
        "q_gradient": qe,
        "sigma_gradient": rep.sigma_gradient,
        "theta": _b64(rep.theta),
        "W": None if W is None else _b64(W[np.triu_indices(d)]),
        "gradient": None if rep.gradient_release is None else _b64(rep.gradient_release),
        "norm_bound": rel.norm_bound,
        "fit_intercept": rel.fit_intercept,
        "row_norm": rel.row_norm,
        "inputs": _inputs(rel, schema),
    }


def release_fingerprint(release: Any) -> str:
    """The SHA-256 of a release's canonical JSON: the same for every way the file was indented or ordered.

    Parameters
    ----------
    release : pdpkit.release.Release, str or dict
        The release (or its JSON text or dict; parsed, not verified).

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    if isinstance(release, (str, bytes)):
        release = Release.from_json(release.decode("utf-8") if isinstance(release, bytes) else release, verify=False)
    elif isinstance(release, dict):
        release = Release.from_dict(release, verify=False)
    text = json.dumps(release.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def encode_record(release: Any, record: Any, *, schema: Any = None) -> np.ndarray:
    r"""The fitted row of one record as the page computes it: schema encoding, norm bound, intercept column.

    Without a schema the record is the row of features as fitted (before the intercept
    column); beyond ``norm_bound`` it is shrunk onto the ball (``row_norm="clip"``) or refused
    (``ValueError``), as the estimator does.

    Parameters
    ----------
    release : pdpkit.release.Release
        The release.
    record : dict or array_like
        ``{feature name: value}`` or the values in the release's feature order.
    schema : pdpkit.schema.Schema or dict, optional
        As in :func:`page_data`.

    Returns
    -------
    numpy.ndarray, shape (d,)
    """
    rel = release if isinstance(release, Release) else _as_release(release)
    spec = _inputs(rel, schema)
    fields = spec["fields"]
    if isinstance(record, dict):
        values = [record[f["name"]] for f in fields]
    else:
        values = list(record)
    if len(values) != len(fields):
        raise ValueError(f"record must have {len(fields)} values; got {len(values)}")
    R = float(rel.norm_bound)
    if spec["encoding"] == "schema":
        from .schema import Schema  # layer 1; only releases with a schema need it

        sch = Schema.from_dict(_schema_dict(rel, schema))
        import pandas as pd

        cells = {}
        for f, v in zip(fields, values, strict=True):
            missing = v is None or (f["kind"] == "categorical" and v == "")
            cells[f["name"]] = pd.Series([None if missing else v],
                                         dtype=float if f["kind"] == "numeric" else object)
        row = R * sch.encode(pd.DataFrame(cells))[0]
    else:
        row = np.asarray(values, dtype=float)
        nrm = float(np.sqrt(row @ row))
        if nrm > R * (1.0 + 1e-12):
            if rel.row_norm == "raise":
                raise ValueError(f"the record's norm exceeds the release's norm_bound {R:g}")
            row = row * (R / nrm)
    if rel.fit_intercept:
        row = np.append(row, R)
    return row


def _words_guarantee(g: Any) -> str:
    """The total guarantee in words; ε, δ and the factor e^ε read "at most", so each is rounded up."""
    eps, delta = fmt_up(g.epsilon, 3), fmt_up(g.delta, 2)
    factor = fmt_up(math.exp(min(g.epsilon, 700.0)), 3)
    return (f"Whoever you are, and whatever the data set, the published model and its privacy report "
            f"together are <strong>({eps}, {delta})-differentially private</strong>: adding or removing "
            f"your record changes the probability of anything that can be learned from this publication by at "
            f"most a factor e<sup>{eps}</sup> = {factor}, except with probability at most {delta}.")


#: Shown beside the guarantee when the release says its noise came from a seed the caller chose.
_SEEDED_NOTICE = "Reproducible from a seed: this release is private only while the seed stays secret."


def _seeded_notice(rel: Any) -> str:
    """The seeded-release notice as HTML, or "" when the release does not say it was seeded (False or unknown)."""
    if getattr(rel, "seeded", None) is not True:
        return ""
    return f'<p class="alert" id="seeded" role="note">{html.escape(_SEEDED_NOTICE)}</p>'


_CSS = """
:root{--fg:#1a1a1a;--bg:#fff;--muted:#555;--acc:#0b57d0;--ok:#0a6b2a;--bad:#a40e26;--box:#f3f5f8}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:46rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;line-height:1.25}h2{font-size:1.2rem;margin-top:2rem}
p,li{overflow-wrap:anywhere}
.box{background:var(--box);border-radius:.5rem;padding:.75rem 1rem}
.alert{border:2px solid var(--bad);color:var(--bad);background:#fff5f6;border-radius:.5rem;padding:.75rem 1rem}
fieldset{border:1px solid #ccd;border-radius:.5rem;padding:.5rem 1rem;margin:0 0 1rem}
.field{display:flex;flex-direction:column;margin:.5rem 0}
label{font-weight:600}
.hint{font-size:.875rem;color:var(--muted)}
input,select,button{font:inherit;padding:.4rem .5rem;border:1px solid #889;border-radius:.3rem;max-width:100%}
input:focus,select:focus,button:focus{outline:3px solid var(--acc);outline-offset:1px}
button{background:var(--acc);color:#fff;border-color:var(--acc);cursor:pointer;padding:.5rem 1rem}
#result{min-height:3rem}
.big{font-size:1.25rem;font-weight:700}
svg{max-width:100%;height:auto;display:block}
code{font-size:.9em;overflow-wrap:anywhere}
footer{margin-top:2rem;font-size:.875rem;color:var(--muted)}
"""

# Displayed numbers, in JavaScript: a bound, ε or a factor reads "at most", so it is rounded up to its
# shown digits as pdpkit._display.ceil_sig does. toExponential() without an argument writes the shortest
# decimal that reads back as x (Python's repr), whose kept digits are then raised by one unit when any
# digit is cut; Number() of that decimal is the nearest double, never below x since rounding is monotone.
_JS_FORMAT = r"""
const PDP_FMT = (function () {
  function ceilSig(x, digits) {
    if (!isFinite(x) || x === 0 || !(digits >= 1)) return x;
    const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(x.toExponential());
    const all = m[2] + (m[3] || ""), e = Number(m[4]);
    if (all.length <= digits) return x;
    const a = all.slice(0, digits).split("").map(Number);
    if (m[1] === "") {  // positive: the cut digits end in a non-zero digit, so one unit up
      let i = a.length - 1;
      while (i >= 0 && a[i] === 9) { a[i] = 0; i--; }
      if (i < 0) a.unshift(1); else a[i] += 1;
    }
    return Number(m[1] + a.join("") + "e" + (e - digits + 1));
  }
  // written as the page always wrote its numbers (scientific below 1e-3), after rounding up
  function fmtUp(x, digits) {
    const u = ceilSig(x, digits);
    return Math.abs(u) < 1e-3 ? u.toExponential(digits - 1) : u.toPrecision(digits);
  }
  return {ceilSig: ceilSig, fmtUp: fmtUp};
})();
"""

# The bound, in JavaScript: the same formula as PrivacyReport.epsilon_bound (uniform=False) and
# PrivacyReport.sup_over_labels, from the constants page_data embeds.
_JS = r"""
"use strict";
""" + _JS_FORMAT + r"""
const PDP = (function () {
  function f64(b64) {
    const s = atob(b64), n = s.length / 8, out = new Float64Array(n), dv = new DataView(new ArrayBuffer(8));
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < 8; k++) dv.setUint8(k, s.charCodeAt(8 * i + k));
      out[i] = dv.getFloat64(0, true);
    }
    return out;
  }
  function check(D) {
    const bad = (m) => { throw new Error(m); };
    if (!D || D.format !== "pdpkit-privacy-page/1") bad("not a pdpkit privacy page");
    const num = (v, name, pos) => {
      if (typeof v !== "number" || !isFinite(v) || (pos && !(v > 0))) bad("the page's " + name + " is not a valid number");
      return v;
    };
    ["lam", "sigma", "lambda_lower", "q_cross", "norm_bound"].forEach(k => num(D[k], k, true));
    num(D.rho, "rho", true); if (!(D.rho < 1)) bad("the page's rho is not in (0, 1)");
    if (["data-independent", "data-dependent", "adaptive"].indexOf(D.method) < 0) bad("unknown report method");
    if (["logistic", "huber", "robust_log"].indexOf(D.loss.name) < 0) bad("unknown loss");
    if (!(D.lambda_lower >= D.lam)) bad("the page's lambda_lower is below lambda");
    const d = D.d;
    if (!Number.isInteger(d) || d < 1) bad("the page's dimension is not valid");
    const C = {d: d, theta: f64(D.theta), W: D.W ? f64(D.W) : null, g: D.gradient ? f64(D.gradient) : null};
    if (C.theta.length !== d) bad("the coefficients do not have d entries");
    if (C.W && C.W.length !== d * (d + 1) / 2) bad("the leverage factor does not have d(d+1)/2 entries");
    if ((D.method === "data-independent") !== (C.W === null)) bad("the leverage factor does not match the method");
    if (C.g && C.g.length !== d) bad("the released gradient does not have d entries");
    if ((C.g === null) !== (D.q_gradient === null)) bad("the gradient's quantile does not match the release");
    if (C.g) { num(D.q_gradient, "q_gradient", true); num(D.sigma_gradient, "sigma_gradient", true); }
    for (const a of [C.theta, C.W || [], C.g || []]) for (let i = 0; i < a.length; i++) if (!isFinite(a[i])) bad("a non-finite number in the page's data");
    const nf = D.inputs.fields.reduce((s, f) => s + (f.kind === "numeric" ? 1 : f.categories.length), 0);
    if (nf + (D.fit_intercept ? 1 : 0) !== d) bad("the form's fields do not match the model's dimension");
    return C;
  }
  // c1 = f'(t; y), c2 = f''(t; y), as pdpkit.losses computes them
  function derivs(loss, t, y) {
    if (loss.name === "logistic") {
      const u = y * t, e = Math.exp(-Math.abs(u)), inv = 1 / (1 + e);
      return [-y * (u >= 0 ? e * inv : inv), e * inv * inv];
    }
    if (loss.name === "huber") {
      const sc = loss.scale, s = (y - t) / sc, iq = 1 / Math.hypot(1, s);
      return [-sc * (s * iq), iq * iq * iq];
    }
    const u = y - t, e = Math.exp(-Math.abs(u));  // robust_log
    return [-Math.tanh(0.5 * u), 2 * (e / ((1 + e) * (1 + e)))];
  }
  // what the bound needs besides (c1, c2): ||x||^2, the leverage bound, the cross term's factor, t
  function terms(D, C, x) {
    const d = C.d; let xx = 0, t = 0;
    for (let i = 0; i < d; i++) { xx += x[i] * x[i]; t += x[i] * C.theta[i]; }
    let mu = xx / D.lambda_lower;
    if (C.W) {
      const v = new Float64Array(d); let p = 0;
      for (let i = 0; i < d; i++) { const xi = x[i]; for (let j = i; j < d; j++) v[j] += C.W[p++] * xi; }
      let vv = 0; for (let j = 0; j < d; j++) vv += v[j] * v[j];
      mu = Math.min(mu, vv);
    }
    const norm = Math.sqrt(xx);
    let K = D.sigma * D.q_cross * norm;
    if (C.g) {
      let gx = 0; for (let i = 0; i < d; i++) gx += C.g[i] * x[i];
      K = Math.min(K, Math.abs(gx) + D.sigma_gradient * D.q_gradient * norm);
    }
    return {xx: xx, mu: mu, K: K, t: t};
  }
  function fromTerms(D, T, c1, c2) {
    const a = c2 * T.mu, c2x = c2 * T.xx, s2 = D.sigma * D.sigma;
    let t1 = a < 1 ? -Math.log1p(-Math.min(a, 1)) : Infinity;
    t1 = Math.min(t1, Math.log1p(c2x / Math.max(D.lam, D.lambda_lower - c2x)));
    const ac1 = Math.abs(c1);
    return t1 + c1 * c1 * T.xx / (2 * s2) + (ac1 === 0 ? 0 : ac1 * T.K) / s2;
  }
  // max over |r| in [a0, b0] of the bound (PrivacyReport.sup_over_labels): branch and bound, then golden section
  function supRegression(D, T, a0, b0) {
    const L = D.loss, dv = (r) => { const c = derivs(L, 0, r); return [Math.abs(c[0]), c[1]]; };
    const val = (r) => { const c = dv(r); return fromTerms(D, T, c[0], c[1]); };
    const up = (a, b) => fromTerms(D, T, dv(b)[0], dv(a)[1]);
    let best = Math.max(val(a0), val(b0));
    let live = [[a0, b0, up(a0, b0)]];
    const fin = [];
    for (let round = 0; round < 200 && live.length; round++) {
      const next = [];
      for (const iv of live) {
        if (iv[2] <= best * (1 + 1e-7)) { fin.push(iv); continue; }
        next.push(iv);
      }
      live = [];
      for (const iv of next) best = Math.max(best, val(0.5 * (iv[0] + iv[1])));
      for (const iv of next) {
        const m = 0.5 * (iv[0] + iv[1]);
        live.push([iv[0], m, up(iv[0], m)], [m, iv[1], up(m, iv[1])]);
      }
    }
    for (const iv of live) best = Math.max(best, iv[2]);
    const g = 0.5 * (Math.sqrt(5) - 1);
    for (const iv of fin) {
      if (!(iv[2] > best)) continue;
      let a = iv[0], b = iv[1], c = b - g * (b - a), d = a + g * (b - a), fc = val(c), fd = val(d);
      for (let k = 0; k < 80; k++) {
        if (fc >= fd) { b = d; d = c; fd = fc; c = b - g * (b - a); fc = val(c); }
        else { a = c; c = d; fc = fd; d = a + g * (b - a); fd = val(d); }
      }
      best = Math.max(best, fc, fd);
    }
    return best;
  }
  // the bound for the fitted row x, with label y (fitted scale), or null: valid for every label
  function bound(D, C, x, y, labelBounds) {
    const T = terms(D, C, x);
    if (y !== null) { const c = derivs(D.loss, T.t, y); return fromTerms(D, T, c[0], c[1]); }
    if (D.loss.name === "logistic") {
      const p = derivs(D.loss, T.t, 1), m = derivs(D.loss, T.t, -1);
      return Math.max(fromTerms(D, T, p[0], p[1]), fromTerms(D, T, m[0], m[1]));
    }
    const rl = labelBounds[0] - T.t, rh = labelBounds[1] - T.t;
    const a0 = (rl <= 0 && rh >= 0) ? 0 : Math.min(Math.abs(rl), Math.abs(rh));
    return supRegression(D, T, a0, Math.max(Math.abs(rl), Math.abs(rh)));
  }
  // the fitted row from the form's values: schema encoding or the row as typed; norm bound; intercept column
  function encode(D, values) {
    const F = D.inputs.fields, R = D.norm_bound, row = [];
    if (D.inputs.encoding === "schema") {
      const k = Math.sqrt(F.length);
      F.forEach((f, i) => {
        const v = values[i];
        if (f.kind === "numeric") {
          // pdpkit.schema: clip, map to [-1, 1], clip again; a missing value (null) is the midpoint
          const c = Math.min(Math.max(v, f.low), f.high);
          const z = v === null ? 0 : Math.min(Math.max(2 * ((c - f.low) / (f.high - f.low)) - 1, -1), 1);
          row.push(z / k);
        } else {
          f.categories.forEach(cat => row.push(cat === v ? 1 / k : 0));
        }
      });
      let nn = 0; for (const v of row) nn += v * v;
      if (Math.sqrt(nn) > 1) { const s = Math.sqrt(nn) * (1 + Math.pow(2, -52)); for (let i = 0; i < row.length; i++) row[i] /= s; }
      for (let i = 0; i < row.length; i++) row[i] *= R;
    } else {
      values.forEach(v => row.push(v));
      let nn = 0; for (const v of row) nn += v * v;
      const nrm = Math.sqrt(nn);
      if (nrm > R * (1 + 1e-12)) {
        if (D.row_norm === "raise") return null;
        for (let i = 0; i < row.length; i++) row[i] *= R / nrm;
      }
    }
    if (D.fit_intercept) row.push(R);
    return row;
  }
  function fittedLabel(D, text) {
    const L = D.inputs.label;
    if (L.kind === "classes") { const i = L.classes.indexOf(text); return i === 1 ? 1 : -1; }
    const v = Number(text);
    if (!L.encoded) return v;
    const c = Math.min(Math.max(v, L.low), L.high);
    return Math.min(Math.max(2 * ((c - L.low) / (L.high - L.low)) - 1, -1), 1);
  }
  return {f64: f64, check: check, bound: bound, encode: encode, fittedLabel: fittedLabel, terms: terms};
})();

(function () {
  const D = JSON.parse(document.getElementById("pdp-data").textContent);
  const $ = (id) => document.getElementById(id);
  let C;
  try { C = PDP.check(D); } catch (e) {
    $("refusal").hidden = false;
    $("refusal").textContent = "This page refuses to compute a bound: " + e.message +
      ". Its data were changed or damaged after it was made; ask the publisher for the release file and check it with pdpkit.";
    $("form").hidden = true;
    window.PDP_PAGE = {error: e.message};
    return;
  }
  const F = D.inputs.fields, L = D.inputs.label;
  const esc = (v) => String(v).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  const labelBounds = L.kind === "numeric" ? (L.encoded ? [-1, 1] : null) : null;
  function read() {
    const values = [];
    for (let i = 0; i < F.length; i++) {
      const el = $("f" + i);
      if (F[i].kind === "numeric") {
        const blank = el.value.trim() === "", v = blank ? (F[i].missing_ok ? null : NaN) : Number(el.value);
        if (v !== null && !isFinite(v)) return {error: "Please enter a number for \u201c" + esc(F[i].name) + "\u201d."};
        values.push(v);
      } else values.push(el.value);
    }
    const lv = $("label").value;
    let y = null;
    if (lv !== "") {
      if (L.kind === "numeric") {
        const t = $("labelvalue").value.trim();
        if (t === "" || !isFinite(Number(t))) return {error: "Please enter a number for the label, or choose \u201cI don't know\u201d."};
        y = PDP.fittedLabel(D, t);
      } else y = PDP.fittedLabel(D, lv);
    }
    return {values: values, y: y};
  }
  // every number shown is a bound, an ε or a factor e^ε: rounded up to 3 significant digits
  function fmt(v) { return PDP_FMT.fmtUp(v, 3); }
  function picture(eps, total) {
    const W = 320, H = 64, top = Math.max(eps, total) * 1.1 || 1, xs = (v) => 10 + (W - 20) * Math.min(v, top) / top;
    return '<svg role="img" aria-labelledby="pic-t" viewBox="0 0 ' + W + ' ' + H + '" width="' + W + '" height="' + H + '">' +
      '<title id="pic-t">Your bound ' + fmt(eps) + ' beside the guarantee ' + fmt(total) + ' that covers everybody</title>' +
      '<line x1="10" y1="40" x2="' + (W - 10) + '" y2="40" stroke="#555"/>' +
      '<rect x="10" y="28" width="' + (xs(eps) - 10).toFixed(1) + '" height="12" fill="#0b57d0"/>' +
      '<line x1="' + xs(total).toFixed(1) + '" y1="18" x2="' + xs(total).toFixed(1) + '" y2="48" stroke="#a40e26" stroke-width="2"/>' +
      '<text x="10" y="20" font-size="11" fill="#0b57d0">you: ' + fmt(eps) + '</text>' +
      '<text x="' + Math.min(xs(total), W - 120).toFixed(1) + '" y="60" font-size="11" fill="#a40e26">everybody: ' + fmt(total) + '</text></svg>';
  }
  function compute(ev) {
    if (ev) ev.preventDefault();
    const r = read(), out = $("result");
    if (r.error) { out.innerHTML = '<p class="alert">' + r.error + '</p>'; return; }
    const x = PDP.encode(D, r.values);
    if (x === null) { out.innerHTML = '<p class="alert">This record lies outside the range the model was trained on (its norm exceeds ' + D.norm_bound + '): the model refuses such records, so it says nothing about them.</p>'; return; }
    const eps = PDP.bound(D, C, x, r.y, labelBounds), total = D.guarantee.epsilon;
    const pct = (100 * (1 - D.rho)).toPrecision(6).replace(/\.?0+$/, "");
    out.innerHTML = '<p class="big">Your privacy loss: at most ' + fmt(eps) + '</p>' +
      '<p>With probability at least ' + pct + '%, your privacy loss from the published model is at most ' + fmt(eps) +
      (r.y === null ? ' whatever your label' : '') + ', i.e. your participation changes the probability of any outcome of the published model by at most a factor ' + fmt(Math.exp(eps)) + '.' +
      ' Everybody is covered by the guarantee ' + fmt(total) + ' (a factor ' + fmt(Math.exp(total)) + ').</p>' + picture(eps, total);
    out.dataset.epsilon = String(eps);
  }
  $("form").addEventListener("submit", compute);
  const lab = $("label"), lv = $("labelvalue-wrap");
  if (lv) lab.addEventListener("change", () => { lv.hidden = lab.value === ""; });
  window.PDP_PAGE = {D: D, C: C, bound: (x, y) => PDP.bound(D, C, x, y, labelBounds), encode: (v) => PDP.encode(D, v), compute: compute};
})();
"""


def _link(book_url: str | None, key: str) -> str:
    title, anchor = _ANCHORS[key]
    if book_url is None:
        return f"“{html.escape(title)}” in the chapter “The privacy report” of the pdpkit book"
    url = f"{book_url.rstrip('/')}/{_CHAPTER}#{anchor}"
    return f'<a href="{html.escape(url)}">{html.escape(title)}</a> (pdpkit book, “The privacy report”)'


def _form(spec: dict[str, Any]) -> str:
    rows = []
    for i, f in enumerate(spec["fields"]):
        name = html.escape(f["name"])
        if f["kind"] == "numeric":
            if f["low"] is not None:
                hint = f"a number from {f['low']:g} to {f['high']:g} (values outside are taken as the nearest end)"
                if f.get("missing_ok"):
                    hint += "; leave it empty if it was missing in the data"
                attrs = f' min="{f["low"]:g}" max="{f["high"]:g}"'
            else:
                hint = "a number, on the scale the model was fitted on"
                attrs = ""
            rows.append(f'<div class="field"><label for="f{i}">{name}</label>'
                        f'<input id="f{i}" name="f{i}" type="text" inputmode="decimal"{"" if f.get("missing_ok") else " required"}'
                        f' aria-describedby="h{i}"{attrs}><span class="hint" id="h{i}">{html.escape(hint)}</span></div>')
        else:
            opts = "".join(f'<option value="{html.escape(c)}">{html.escape(c)}</option>' for c in f["categories"])
            if f.get("none_ok"):
                opts += '<option value="">none of these, or missing</option>'
            rows.append(f'<div class="field"><label for="f{i}">{name}</label><select id="f{i}" name="f{i}">'
                        f'{opts}</select></div>')
    lab = spec["label"]
    if lab["kind"] == "classes":
        opts = "".join(f'<option value="{html.escape(c)}">{html.escape(c)}</option>' for c in lab["classes"])
        label_html = (f'<div class="field"><label for="label">Your {html.escape(lab["name"])}</label>'
                      f'<select id="label" name="label"><option value="">I don\'t know</option>{opts}</select>'
                      '<span class="hint">“I don\'t know” gives the bound that holds for every label.</span></div>')
    else:
        know = '<option value="">I don\'t know</option>' if lab["low"] is not None else ""
        rng = f" from {lab['low']:g} to {lab['high']:g}" if lab["low"] is not None else ""
        label_html = (f'<div class="field"><label for="label">Do you know your {html.escape(lab["name"])}?</label>'
                      f'<select id="label" name="label">{know}<option value="known">Yes, I will enter it</option>'
                      f'</select></div><div class="field" id="labelvalue-wrap"{" hidden" if know else ""}>'
                      f'<label for="labelvalue">Your {html.escape(lab["name"])}</label>'
                      f'<input id="labelvalue" name="labelvalue" type="text" inputmode="decimal" aria-describedby="hl">'
                      f'<span class="hint" id="hl">a number{html.escape(rng)}</span></div>')
    return ('<form id="form" novalidate><fieldset><legend>Your record</legend>' + "".join(rows) + "</fieldset>"
            + '<fieldset><legend>Your label</legend>' + label_html + "</fieldset>"
            + '<button type="submit">Compute my bound</button></form>')


def privacy_page(release: Any, *, schema: Any = None, title: str | None = None, book_url: str | None = None) -> str:
    r"""One self-contained HTML page on which any person computes their own privacy bound, in their browser.

    The page states the release's total guarantee in words, describes the privacy report as
    published (method, ρ, the statistics it released and their cost), offers a form for a
    person's record (and label, or "I don't know") and computes their bound with a JavaScript
    implementation of :meth:`pdpkit.report.PrivacyReport.epsilon_bound` (per person,
    ``uniform=False``) and :meth:`pdpkit.report.PrivacyReport.sup_over_labels`, from the
    constants of :func:`page_data`. No external asset, no request: the file works offline
    and sends nothing anywhere.

    Parameters
    ----------
    release : pdpkit.release.Release, str or dict
        The release (or its JSON text or dict). It must verify and carry a guarantee and a
        privacy report; otherwise ``ValueError`` and no page.
    schema : pdpkit.schema.Schema or dict, optional
        The schema the release was fitted through, when the release does not carry it: the
        form then asks for the raw record (numbers within their bounds, categories).
    title : str, optional
        The page's heading (default: "Your privacy in this published model").
    book_url : str, optional
        Base address of the pdpkit book; given, the page links into its privacy report
        chapter, otherwise it names the sections.

    Returns
    -------
    str
        The HTML text (UTF-8).

    Raises
    ------
    ValueError
        For a release that does not parse or verify, or that carries no guarantee or no
        privacy report: no page is made. (A page whose embedded numbers are changed
        afterwards refuses in the browser, with a message, instead of showing a bound.)
    """
    data = page_data(release, schema=schema)
    rel = _as_release(release)
    g = rel.guarantee
    title = title or "Your privacy in this published model"
    method = data["method"]
    parts = "".join(f"<li>{html.escape(p.name)}: ({fmt_up(p.epsilon, 3)}, {fmt_up(p.delta, 2)})</li>"
                    for p in g.parts)
    released = data["released"]
    names = {"gradient": "the gradient of the training objective", "hessian": "its Hessian matrix",
             "lambda_min": "the Hessian's smallest eigenvalue"}
    if released:
        what = ", ".join(names[c] for c in released)
        rep_part = next((p for p in g.parts if p.name == "report" or p.name.endswith(" report")), None)
        cost = (f" Publishing them cost ({fmt_up(rep_part.epsilon, 3)}, {fmt_up(rep_part.delta, 2)}), included in "
                f"the total above." if rep_part is not None else "")
        released_text = (f"Besides the model, the report published noisy versions of {html.escape(what)} "
                         f"(Gaussian noise), from which every person's bound is computed.{cost}")
    else:
        released_text = ("The report published nothing beyond the model: every bound is computed from the model's "
                         "coefficients and its public parameters alone (it cost nothing).")
    pct = f"{100 * (1 - data['rho']):.6g}%"
    links = [_link(book_url, method)]
    if "gradient" in released:
        links.append(_link(book_url, "gradient"))
    links.append(_link(book_url, "cost"))
    body = f"""<main>
<h1>{html.escape(title)}</h1>
<p>This page lets you see how much a published machine-learning model can reveal about <em>you</em>, if your
record was (or was not) among the data it was trained on. Everything is computed in this page, in your browser:
what you type is not sent anywhere.</p>
<div id="refusal" class="alert" role="alert" hidden></div>
<h2>The guarantee that covers everybody</h2>
<p class="box">{_words_guarantee(g)}</p>
{_seeded_notice(rel)}<ul>{parts}</ul>
<h2>The privacy report, as published</h2>
<p>The model comes with a <strong>{html.escape(method)}</strong> privacy report. {released_text} Each person's bound
holds with probability at least {pct} over the noise of the model and of the report.</p>
<h2>Check your own bound</h2>
<p>Enter your record as it would appear in the data. Your bound is usually much smaller than the guarantee above,
which has to cover the most exposed person possible.</p>
{_form(data["inputs"])}
<div id="result" role="status" aria-live="polite"></div>
<h2>What the number means</h2>
<p>Your bound ε is your <em>privacy loss</em> from the published model: whether your record was used or not changes
the probability of the published model, and of anything anyone concludes from it, by at most a factor e<sup>ε</sup>.
A bound of 0.1 (a factor 1.1) means that nobody can tell with any confidence whether you took part; a bound of 3
(a factor 20) means that your participation may be noticeable.</p>
<h2>How it was computed</h2>
<p>The bound is the ex-post per-instance privacy loss of objective perturbation at the published coefficients,
bounded above from quantities the publisher released with privacy (Redberg &amp; Wang 2021): a log-determinant term
from the released curvature, a quadratic term from the model's gradient at your record, and a cross term that
holds with the stated probability. Details: {"; ".join(links)}.</p>
<footer><p>Release fingerprint (SHA-256 of the release's canonical JSON): <code>{data["release_sha256"]}</code>.
To check that this page belongs to a release file, compare it with
<code>pdpkit.page.release_fingerprint(text)</code>; <code>Release.from_json(text)</code> recomputes the file's
guarantee. Made by pdpkit.</p></footer>
</main>"""
    payload = json.dumps(data, allow_nan=False, separators=(",", ":")).replace("</", "<\\/")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "script-src 'unsafe-inline'; img-src data:\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n{body}\n"
            f'<script type="application/json" id="pdp-data">{payload}</script>\n<script>{_JS}</script>\n'
            "</body></html>\n")
