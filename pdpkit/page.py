r"""A privacy page any person can check: one static HTML file that checks its own data and computes their bound.

:func:`privacy_page` turns a verified :class:`pdpkit.release.Release` with a privacy report
into one self-contained HTML file (inline CSS and JavaScript, no external asset, no request
to any server): the release's total guarantee in words, the privacy report as published, a
form in which a person enters their own record, and their private bound
(:meth:`pdpkit.report.PrivacyReport.epsilon_bound`; for "I don't know" the label,
:meth:`pdpkit.report.PrivacyReport.sup_over_labels`) computed **in their browser** by a small
JavaScript implementation of the same formula. The record never leaves the page.

**What the page embeds** (:func:`page_data`) is a post-processing of the release's public
fields only: the released coefficients :math:`\tilde\theta`, λ, σ, the loss, the norm bound,
the report's method, ρ and its derived constants — the lower confidence value
:math:`\underline\lambda`, the tail quantiles of the cross term, the released gradient, and
the upper-triangular factor :math:`W` with
:math:`\bar\mu(x) = \min\{\|x\|^2/\underline\lambda, \|W^\top x\|^2\}`
(:meth:`pdpkit.report.PrivacyReport.leverage_bound`), computed in Python from the released
Hessian — the form's description (the release's feature names, its classes or label
bounds), and the release itself: its canonical bytes (:attr:`pdpkit.release.Release.payload`),
its signature block or ``null``, and its fingerprint (:attr:`pdpkit.release.Release.fingerprint`,
:func:`release_fingerprint`). Arrays are little-endian float64 in canonical base64, bit for bit.

All of it is one ASCII text, the page's **embedded bytes**: the canonical JSON of
:func:`page_data` (``pdpkit._json.canonical_json``) with ``<``, ``>`` and ``&`` written
``\u003c``, ``\u003e``, ``\u0026``. It holds no ``<``, so no name from the data (a feature,
category or class name, the title) can end the data element or switch the HTML parser into
another mode, whatever it contains (``<!--``, ``</script>``, quotes, any Unicode); visible
names go through ``html.escape``. It sits in a data element that is never executed,
``<script type="application/json" id="pdp-data">``; the page's signature block (or ``null``)
in ``id="pdp-signature"``.

**Signing.** With ``private_key``, the embedded bytes are signed
(:func:`pdpkit.signing.sign_payload` over :data:`pdpkit.signing.PAGE_CONTEXT` + the bytes), and
the embedded release is signed by the same key: a release that is itself signed must be signed
by it, an unsigned one is signed with it first (:meth:`pdpkit.release.Release.sign`, over the
release's own bytes: its fingerprint does not change). With ``public_key``, the release must
verify with the publisher's key (:meth:`pdpkit.release.Release.verify`).

**What the page checks when it opens**, in the browser, with Web Crypto (no hand-written
cryptography): the embedded bytes are ASCII and every base64 field is canonical (an edited
padding bit is refused); their SHA-256 (shown, "this page's data"); the signature block's
shape and that its fingerprint is the SHA-256 of its public key (shown, "signer's key");
Ed25519 over ``PAGE_CONTEXT`` + the bytes; the SHA-256 of the embedded release equals the
fingerprint the page states (shown, "release"); the release's own signature over
:data:`pdpkit.signing.RELEASE_CONTEXT` + its bytes, by the page's key — required on a signed
page: otherwise anyone could strip the signature of a publisher's release, derive other
constants from it and sign the page with their own key, and the page would show the
publisher's release fingerprint beside a forged bound; every number the page copies from the
release equals the release's (θ, λ, σ, the loss, the norm bound, the intercept, the row-norm
rule, the guarantee, the report's method, ρ and noise scales, the released gradient, the list
of released statistics; the feature names, classes and schema when the release carries them);
then lengths, finiteness, ranges, a known loss, a guarantee present. Any failure — an edited
byte of a signed page, malformed JSON, an unknown loss, no guarantee — shows a refusal
message; the form stays hidden and no number is shown. What the reader then sees:

* **signed, verified** ("Signature verified"): the data are byte for byte what the holder of
  the key signed, and the release inside them is signed by the same key; the reader compares
  the signer's fingerprint with the one the publisher lists
  (:func:`pdpkit.signing.key_fingerprint`) — the release's fingerprint alone does not do, as
  anyone can sign a copy of a release. Every edit of an embedded byte is refused. The only
  state in which a fingerprint is presented as checked.
* **signed, in a browser without Ed25519 in Web Crypto** ("Signature not checkable in this
  browser"; Ed25519 is in Chrome and Edge from 137 (2025), Firefox from 129 (2024), Safari
  from 17 (2023)), and **no Web Crypto at all** ("… in this browser or context": a page served
  over plain ``http://``; a file opened from disk is a secure context): nothing ties the data
  to a key, so a forged page copying the publisher's signature block would pass any
  comparison of fingerprints. The page shows no signer, labels the release's and the data's
  fingerprints "claimed by the page, not checked", and says "this browser cannot check the
  signature: open the page in one that can (Chrome/Edge 137+, Firefox 129+, Safari 17+)
  before relying on the number" — at the top, beside the guarantee and beside every bound
  computed. The other checks run; never a "verified" status.
* **unsigned** (no ``private_key``): the page says it is not signed and that its numbers may
  have been changed by anyone, beside the guarantee and every bound; no signer is shown, not
  even the signer of a signed release inside it (the constants the page derives from the
  release, :math:`\underline\lambda`, the quantiles, :math:`W`, are covered by a page's
  signature only), and its fingerprints are labelled as the page's claim.

**The page's text** — the guarantee in words (ε, δ and e^ε rounded up), its parts, the report's
description, the form's labels, choices and hints — is written by Python from :func:`page_data`
and, once the checks pass, written again by the page's script from the data it checked (the
same characters: ``PDP_TEXT``), so an edit of the HTML text is overwritten; a page that fails
its checks hides it. A signature covers the embedded data, not the page's code: a page whose
script was rewritten can display anything. To check a page completely, read its data in Python
and compare them with :func:`page_data` of the publisher's release file.

**The form** is hidden until every check has passed. It has no ``action``, its inputs have
no ``name`` and its button is ``type="button"`` (Enter computes through JavaScript), and the
page's Content-Security-Policy says ``form-action 'none'``: nothing can be submitted or
navigate, in any state. Without JavaScript the form is never shown, and a ``<noscript>``
note says why. With a release schema (numeric columns with their public bounds, categorical
columns as lists), the record is entered as the schema describes it and encoded exactly as
``pdpkit.schema.Schema.encode`` does; without one, each of the release's features is a
number on the scale the model was fitted on (the rows passed to the estimator).

A release that does not parse, does not verify, carries no guarantee or no privacy report,
a ``book_url`` that is not an ``http(s)`` address or a relative path, or a ``private_key``
other than the release's signer make :func:`privacy_page` **raise** ``ValueError`` (no page
is written).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from decimal import ROUND_FLOOR, Decimal
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from numpy.typing import ArrayLike

from . import signing as _signing
from ._display import fmt_up
from ._json import canonical_json
from .release import Release
from .report import PrivacyReport

__all__ = ["privacy_page", "page_data", "encode_record", "release_fingerprint"]

#: The format of the page's embedded data (:func:`page_data`).
PAGE_FORMAT = "pdpkit-privacy-page/2"

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

#: The three characters the embedded JSON never holds literally (only inside strings can they occur).
_HTML_SAFE = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def _b64(a: ArrayLike) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")


def _embedded(value: Any) -> str:
    """The canonical JSON of ``value`` with ``<``, ``>``, ``&`` escaped: ASCII that cannot end a script element."""
    text = canonical_json(value).decode("ascii").translate(_HTML_SAFE)
    assert "<" not in text and ">" not in text and "&" not in text
    return text


def _check_book_url(book_url: Any) -> str | None:
    """``book_url`` if it is an http(s) address with a host or a relative path; ``ValueError`` naming it otherwise.

    Spaces and control characters anywhere (browsers drop some of them, so `` JavaScript:``
    would become a scheme) and backslashes (read as ``/`` by browsers, so ``/\\host`` is another
    host) are refused, as are other schemes (``javascript:``, ``data:``, ``vbscript:``, ``file:``
    …, in any case) and scheme-relative addresses (``//host``).
    """
    if book_url is None:
        return None
    if not isinstance(book_url, str):
        raise TypeError(f"book_url must be a string (an http(s) address or a relative path); got "
                        f"{type(book_url).__name__}")
    if any(ord(c) <= 0x20 or 0x7F <= ord(c) <= 0x9F or c == "\\" for c in book_url):
        raise ValueError(f"book_url {book_url!r}: a space, a control character or a backslash is not accepted in "
                         "the book's address; give an http(s) address or a relative path")
    try:
        parts = urlsplit(book_url)
    except ValueError as exc:
        raise ValueError(f"book_url {book_url!r} is not an address ({exc})") from None
    if parts.scheme:
        if parts.scheme.lower() not in ("http", "https"):
            raise ValueError(f"book_url {book_url!r}: only http(s) addresses and relative paths are accepted, not "
                             f"the scheme {parts.scheme!r}")
        if not parts.netloc:
            raise ValueError(f"book_url {book_url!r}: an http(s) address needs a host (http://host/...)")
    elif book_url.startswith("//"):
        raise ValueError(f"book_url {book_url!r}: a scheme-relative address (//host) is refused; write https://host")
    elif ":" in book_url.split("/", 1)[0]:
        raise ValueError(f"book_url {book_url!r}: a relative path cannot have ':' before its first '/' (a browser "
                         "may read it as a scheme)")
    return book_url


def _as_release(release: Any, public_key: Any = None) -> Release:
    """The release, parsed, verified (with ``public_key``: signed by it) and able to make a page; ``ValueError``."""
    if isinstance(release, Release):
        rel = release
    elif isinstance(release, (str, bytes)):
        rel = Release.from_json(release.decode("utf-8") if isinstance(release, bytes) else release, verify=False)
    elif isinstance(release, dict):
        rel = Release.from_dict(release, verify=False)
    else:
        raise TypeError(f"release must be a pdpkit Release, its JSON text or its dict; got {type(release).__name__}")
    try:
        rel.verify(public_key=public_key)
    except ValueError as exc:
        raise ValueError(f"the release does not verify, so no page can vouch for it: {exc}") from None
    if rel.guarantee is None:
        raise ValueError("the release carries no guarantee (it was fitted without a norm bound or delta): "
                         "there is no privacy to show")
    if rel.n_models > 1 and len(rel.privacy_reports) == rel.n_models:
        return rel  # one-vs-rest: a report per class's model
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
    n_feat = rel.theta.shape[-1] - int(rel.fit_intercept)
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
                fields.append({"name": c["name"], "kind": "categorical",
                               "categories": [str(v) for v in c["categories"]],
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


def _sign_release(rel: Release, key: Any) -> Release:
    """``rel`` signed with ``key`` (:meth:`pdpkit.release.Release.sign`), over its own bytes: the same fingerprint."""
    signed = rel.sign(key)
    if signed.payload != rel.payload:  # a file whose canonical bytes differ from what its fields write ("lam": 20)
        d = json.loads(rel.payload)
        d["signature"] = _signing.sign_payload(key, rel.payload, context=_signing.RELEASE_CONTEXT)
        signed = Release.from_dict(d, verify=False)
    assert signed.payload == rel.payload and signed.signer == _signing.key_fingerprint(key)
    return signed


def _model_data(rep: PrivacyReport) -> dict[str, Any]:
    """What the bound needs from one model's report besides the shared constants (a one-vs-rest page has K)."""
    d = rep.d
    qb, qe = rep.cross_quantiles(False, 1)
    W = rep.leverage_factor
    return {
        "rho": rep.rho,
        "lambda_lower": rep.lambda_lower,
        "q_cross": qb,
        "q_gradient": qe,
        "theta": _b64(rep.theta),
        "W": None if W is None else _b64(W[np.triu_indices(d)]),
        "gradient": None if rep.gradient_release is None else _b64(rep.gradient_release),
    }


def _page_data(rel: Release, schema: Any = None) -> dict[str, Any]:
    """:func:`page_data` of a release :func:`_as_release` has checked."""
    reps = rel.privacy_reports
    rep: PrivacyReport = reps[0]
    d = rep.d
    loss = {"name": rel.loss}
    if rel.loss == "huber":
        loss["scale"] = 1.0
    g = rel.guarantee
    models = None
    one = _model_data(rep)
    if rel.n_models > 1:  # one-vs-rest: the K models' own numbers; a person's bound is the sum of their K bounds
        models = [_model_data(r) for r in reps]
        one = {k: None for k in one}
        one["rho"] = sum(m["rho"] for m in models)  # each model's bound fails with probability rho/K at most
    return {
        "format": PAGE_FORMAT,
        "release": rel.payload.decode("ascii"),
        "release_signature": rel.signature,
        "release_sha256": rel.fingerprint,
        "guarantee": g.to_dict(),
        "method": rep.method,
        "rho": one["rho"],
        "estimator": rep.estimator,
        "released": rep.released_statistics,
        "noise": {k: getattr(rep, k) for k in ("sigma_gradient", "sigma_hessian", "sigma_lambda_min")},
        "d": d,
        "loss": loss,
        "lam": rep.lam,
        "sigma": rep.sigma,
        "lambda_lower": one["lambda_lower"],
        "q_cross": one["q_cross"],
        "q_gradient": one["q_gradient"],
        "sigma_gradient": rep.sigma_gradient,
        "theta": one["theta"],
        "W": one["W"],
        "gradient": one["gradient"],
        "models": models,
        "norm_bound": rel.norm_bound,
        "fit_intercept": rel.fit_intercept,
        "row_norm": rel.row_norm,
        "inputs": _inputs(rel, schema),
    }


def page_data(release: Any, *, schema: Any = None, public_key: Any = None) -> dict[str, Any]:
    r"""The numbers the page embeds: public fields of the release and what the bound needs, derived from them.

    Parameters
    ----------
    release : pdpkit.release.Release, str or dict
        A release with a guarantee and a privacy report (verified here).
    schema : pdpkit.schema.Schema or dict, optional
        The schema the release was fitted through, when the release does not carry it (its
        encoded names must be the release's ``feature_names``).
    public_key : optional
        The publisher's Ed25519 public key (or the path of ``KEY.pub``): the release must be
        signed by it (``ValueError`` otherwise).

    Returns
    -------
    dict
        JSON-ready, format ``"pdpkit-privacy-page/2"``: the release's canonical bytes as text
        (``release``, equal to :attr:`pdpkit.release.Release.payload`), its signature block
        (``release_signature``, or ``None``) and fingerprint (``release_sha256``), the
        guarantee, the report's description, the form's fields, and the bound's constants
        (``theta``, ``W`` — the upper triangle of the leverage factor, row by row — and
        ``gradient`` as canonical base64 of little-endian float64).
    """
    return _page_data(_as_release(release, public_key), schema)


def release_fingerprint(release: Any) -> str:
    """The SHA-256 of a release's canonical payload (:attr:`pdpkit.release.Release.fingerprint`).

    The same for every way the file was indented or ordered, and with or without its
    signature block: the hash of :attr:`pdpkit.release.Release.payload`. The page shows it as
    the release's fingerprint.

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
    return release.fingerprint


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


# ------------------------------------------------------------------ the page's text, written from its data
# Everything on the page that carries meaning — the guarantee in words, its parts, the report's description, the
# form's fields and choices — is written here from page_data, and written again by the page's script (PDP_TEXT,
# the same functions in JavaScript) from the data it has checked: an edit of the HTML text is overwritten. The two
# give the same characters; tests/test_page.py runs both.

#: The total guarantee in words ({eps}, {delta}, {factor}: ε, δ and e^ε, each rounded up).
_WORDS = ("Whoever you are, and whatever the data set, the published model and its privacy report together are "
          "<strong>({eps}, {delta})-differentially private</strong>: adding or removing your record changes the "
          "probability of anything that can be learned from this publication by at most a factor "
          "e<sup>{eps}</sup> = {factor}, except with probability at most {delta}.")


def _write_decimal(d: Decimal, width: int) -> str:
    """``d`` as ``"%.{width}g"`` writes a decimal of at most ``width`` digits: trailing zeros dropped."""
    t = d.normalize()
    sign, ds, _ = t.as_tuple()
    exp = t.adjusted()
    if t.is_zero() or -4 <= exp < width:
        return format(t, "f")
    mantissa = str(ds[0]) + ("." + "".join(str(v) for v in ds[1:]) if len(ds) > 1 else "")
    return ("-" if sign else "") + f"{mantissa}e{exp:+03d}"


def _plain(x: float) -> str:
    """``x`` with all the digits of its shortest decimal (``repr``), written as ``%g`` writes: 17, 0.5, 1e+21."""
    return _write_decimal(Decimal(repr(float(x))), 17)


def _floor_text(x: float, digits: int) -> str:
    """``x`` rounded down to ``digits`` significant digits (from its shortest decimal), written as ``%g`` writes."""
    d = Decimal(repr(float(x)))
    if len(d.as_tuple().digits) > digits:
        d = d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=ROUND_FLOOR)
    return _write_decimal(d, digits)


def _percent(rho: float) -> str:
    """The probability ``1 - rho`` in percent, rounded down (it reads "at least"): 95%, 99.9999% (not 100%)."""
    return _floor_text(100 * (1 - rho), 6) + "%"


def _words_guarantee(g: Any) -> str:
    """The total guarantee in words; ε, δ and the factor e^ε read "at most", so each is rounded up."""
    eps = g["epsilon"] if isinstance(g, dict) else g.epsilon
    delta = g["delta"] if isinstance(g, dict) else g.delta
    return _WORDS.format(eps=fmt_up(eps, 3), delta=fmt_up(delta, 2), factor=fmt_up(math.exp(min(eps, 700.0)), 3))


#: Shown beside the guarantee when the release says its noise came from a seed the caller chose.
_SEEDED_NOTICE = "Reproducible from a seed: this release is private only while the seed stays secret."


def _seeded_notice(seeded: Any) -> str:
    """The seeded-release notice as HTML, or "" when the release does not say it was seeded (False or unknown)."""
    if seeded is not True:
        return ""
    return f'<p class="alert" id="seeded" role="note">{html.escape(_SEEDED_NOTICE)}</p>'


def _guarantee_html(g: dict[str, Any], seeded: Any) -> str:
    """The guarantee's section (the element ``id="guarantee"``): in words, the seed notice, its parts."""
    parts = "".join(f"<li>{html.escape(p['name'])}: ({fmt_up(p['epsilon'], 3)}, {fmt_up(p['delta'], 2)})</li>"
                    for p in g["parts"])
    return f'<p class="box">{_words_guarantee(g)}</p>\n{_seeded_notice(seeded)}<ul>{parts}</ul>'


#: What each released statistic is, in words.
_RELEASED_NAMES = {"gradient": "the gradient of the training objective", "hessian": "its Hessian matrix",
                   "lambda_min": "the Hessian's smallest eigenvalue"}


def _report_html(data: dict[str, Any]) -> str:
    """The report's description (the element ``id="report"``): method, what it released and its cost, ρ."""
    released = data["released"]
    if released:
        what = ", ".join(_RELEASED_NAMES[c] for c in released)
        rep_part = next((p for p in data["guarantee"]["parts"]
                         if p["name"] == "report" or p["name"].endswith(" report")), None)
        cost = (f" Publishing them cost ({fmt_up(rep_part['epsilon'], 3)}, {fmt_up(rep_part['delta'], 2)}), "
                "included in the total above." if rep_part is not None else "")
        released_text = (f"Besides the model, the report published noisy versions of {html.escape(what)} "
                         f"(Gaussian noise), from which every person's bound is computed.{cost}")
    else:
        released_text = ("The report published nothing beyond the model: every bound is computed from the model's "
                         "coefficients and its public parameters alone (it cost nothing).")
    models = data.get("models")
    ovr = ("" if not models else f"The model is one-vs-rest: {len(models)} models, one for each class, each with its "
           f"own report; a person's bound is the sum of the {len(models)} models' bounds. ")
    return (f"The model comes with a <strong>{html.escape(data['method'])}</strong> privacy report. {ovr}"
            f"{released_text} Each person's bound holds with probability at least {_percent(data['rho'])} over the "
            "noise of the model and of the report.")


_CSS = """
:root{--fg:#1a1a1a;--bg:#fff;--muted:#555;--acc:#0b57d0;--ok:#0a6b2a;--bad:#a40e26;--box:#f3f5f8}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:46rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;line-height:1.25}h2{font-size:1.2rem;margin-top:2rem}
p,li,dd{overflow-wrap:anywhere}
.box{background:var(--box);border-radius:.5rem;padding:.75rem 1rem}
.alert{border:2px solid var(--bad);color:var(--bad);background:#fff5f6;border-radius:.5rem;padding:.75rem 1rem}
.ok{border-left:6px solid var(--ok)}.warn{border-left:6px solid var(--bad)}
dl.fp{margin:.5rem 0 0;font-size:.875rem}dl.fp dt{font-weight:600}dl.fp dd{margin:0 0 .25rem}
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

# The page's text in JavaScript (PDP_TEXT): the same characters as _guarantee_html, _report_html and _form_inner
# write in Python, from the data the page has checked. Numbers: fmt_up (rounded up), _plain, _percent (rounded down),
# each from the float's shortest decimal (toExponential() without an argument, as Python's repr).
_JS_TEXT = r"""
const PDP_TEXT = (function () {
  const WORDS = @WORDS@, SEEDED = @SEEDED@, RELEASED = @RELEASED@;
  const ENTITY = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"};
  const esc = (v) => String(v).replace(/[&<>"']/g, (c) => ENTITY[c]);  // Python's html.escape
  // the shortest decimal of a finite, non-zero x: its sign, digits (no trailing zero), the exponent of the first
  function dec(x) {
    const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(x.toExponential());
    const a = (m[2] + (m[3] || "")).replace(/(.)0+$/, "$1").split("").map(Number);
    return {neg: m[1] === "-", a: a, e: Number(m[4])};
  }
  // cut to `digits` significant digits toward +infinity (up) or -infinity (down): Decimal.quantize, CEILING/FLOOR
  function cut(d, digits, up) {
    if (d.a.length <= digits) return d;
    const a = d.a.slice(0, digits);
    let e = d.e;
    if (up !== d.neg) {  // away from zero: a cut digit is not zero, so one unit more
      let i = a.length - 1;
      while (i >= 0 && a[i] === 9) { a[i] = 0; i--; }
      if (i < 0) { a.unshift(1); e += 1; } else a[i] += 1;
    }
    while (a.length > 1 && a[a.length - 1] === 0) a.pop();
    return {neg: d.neg, a: a, e: e};
  }
  // as "%.{width}g" writes a decimal of at most `width` digits (pdpkit._display): trailing zeros dropped
  function write(d, width) {
    const s = d.a.join(""), sign = d.neg ? "-" : "", e = d.e;
    if (e >= -4 && e < width) {
      if (e < 0) return sign + "0." + "0".repeat(-e - 1) + s;
      return sign + (s.length <= e + 1 ? s + "0".repeat(e + 1 - s.length) : s.slice(0, e + 1) + "." + s.slice(e + 1));
    }
    const ae = Math.abs(e);
    return sign + s[0] + (s.length > 1 ? "." + s.slice(1) : "") + "e" + (e < 0 ? "-" : "+") + (ae < 10 ? "0" : "") + ae;
  }
  const special = (x) => x === 0 ? (Object.is(x, -0) ? "-0" : "0") : x !== x ? "nan" : x > 0 ? "inf" : "-inf";
  const odd = (x) => !isFinite(x) || x === 0;
  const up = (x, digits) => odd(x) ? special(x) : write(cut(dec(x), digits, true), digits);  // fmt_up
  const plain = (x) => odd(x) ? special(x) : write(dec(x), 17);  // _plain
  const percent = (rho) => {  // _percent
    const v = 100 * (1 - rho);
    return (odd(v) ? special(v) : write(cut(dec(v), 6, false), 6)) + "%";
  };
  const words = (G) => {  // _words_guarantee
    const v = {eps: up(G.epsilon, 3), delta: up(G.delta, 2), factor: up(Math.exp(Math.min(G.epsilon, 700)), 3)};
    return WORDS.replace(/\{(\w+)\}/g, (m, k) => v[k]);
  };
  function guarantee(G, seeded) {  // _guarantee_html
    return '<p class="box">' + words(G) + "</p>\n" +
      (seeded === true ? '<p class="alert" id="seeded" role="note">' + esc(SEEDED) + "</p>" : "") + "<ul>" +
      G.parts.map((p) => "<li>" + esc(p.name) + ": (" + up(p.epsilon, 3) + ", " + up(p.delta, 2) + ")</li>").join("") +
      "</ul>";
  }
  function report(D) {  // _report_html
    let text;
    if (D.released.length) {
      const rp = D.guarantee.parts.find((p) => p.name === "report" || p.name.endsWith(" report"));
      text = "Besides the model, the report published noisy versions of " +
        esc(D.released.map((c) => RELEASED[c]).join(", ")) +
        " (Gaussian noise), from which every person's bound is computed." + (rp === undefined ? "" :
          " Publishing them cost (" + up(rp.epsilon, 3) + ", " + up(rp.delta, 2) + "), included in the total above.");
    } else {
      text = "The report published nothing beyond the model: every bound is computed from the model's coefficients " +
        "and its public parameters alone (it cost nothing).";
    }
    const K = D.models ? D.models.length : 0;
    const ovr = K ? "The model is one-vs-rest: " + K + " models, one for each class, each with its own report; a " +
      "person's bound is the sum of the " + K + " models' bounds. " : "";
    return "The model comes with a <strong>" + esc(D.method) + "</strong> privacy report. " + ovr + text +
      " Each person's bound holds with probability at least " + percent(D.rho) +
      " over the noise of the model and of the report.";
  }
  function form(I) {  // _form_inner
    const opt = (c, j) => '<option value="' + j + '">' + esc(c) + "</option>";
    const rows = I.fields.map((f, i) => {
      const head = '<div class="field"><label for="f' + i + '">' + esc(f.name) + "</label>";
      if (f.kind !== "numeric") {
        return head + '<select id="f' + i + '">' + f.categories.map(opt).join("") +
          (f.none_ok ? '<option value="">none of these, or missing</option>' : "") + "</select></div>";
      }
      let hint = "a number, on the scale the model was fitted on", attrs = "";
      if (f.low !== null) {
        hint = "a number from " + plain(f.low) + " to " + plain(f.high) +
          " (values outside are taken as the nearest end)" +
          (f.missing_ok ? "; leave it empty if it was missing in the data" : "");
        attrs = ' min="' + plain(f.low) + '" max="' + plain(f.high) + '"';
      }
      return head + '<input id="f' + i + '" type="text" inputmode="decimal"' + (f.missing_ok ? "" : " required") +
        ' aria-describedby="h' + i + '"' + attrs + '><span class="hint" id="h' + i + '">' + esc(hint) +
        "</span></div>";
    });
    const L = I.label, name = esc(L.name), know = "<option value=\"\">I don't know</option>";
    let label;
    if (L.kind === "classes") {
      label = '<div class="field"><label for="label">Your ' + name + '</label><select id="label">' + know +
        L.classes.map(opt).join("") + '</select><span class="hint">\u201cI don\'t know\u201d gives the bound that ' +
        "holds for every label.</span></div>";
    } else {
      const k = L.low !== null;
      label = '<div class="field"><label for="label">Do you know your ' + name + '?</label><select id="label">' +
        (k ? know : "") + '<option value="known">Yes, I will enter it</option></select></div>' +
        '<div class="field" id="labelvalue-wrap"' + (k ? " hidden" : "") + '><label for="labelvalue">Your ' + name +
        '</label><input id="labelvalue" type="text" inputmode="decimal" aria-describedby="hl">' +
        '<span class="hint" id="hl">a number' + esc(k ? " from " + plain(L.low) + " to " + plain(L.high) : "") +
        "</span></div>";
    }
    return "<fieldset><legend>Your record</legend>" + rows.join("") + "</fieldset><fieldset><legend>Your label" +
      "</legend>" + label + '</fieldset><button type="button" id="compute">Compute my bound</button>';
  }
  return {esc: esc, up: up, plain: plain, percent: percent, words: words, guarantee: guarantee, report: report,
          form: form};
})();
""".replace("@WORDS@", json.dumps(_WORDS)).replace("@SEEDED@", json.dumps(_SEEDED_NOTICE)).replace(
    "@RELEASED@", json.dumps(_RELEASED_NAMES))

# The page's JavaScript: strict bytes, the checks of its data (PDP.check, PDP_VERIFY.check), and the bound —
# the same formula as PrivacyReport.epsilon_bound (uniform=False) and PrivacyReport.sup_over_labels.
_JS = r"""
"use strict";
""" + _JS_FORMAT + _JS_TEXT + r"""
// Every check that fails throws a PDPRefusal: the page then shows its message, keeps the form hidden and shows no
// number.
class PDPRefusal extends Error {}
function pdpRefuse(message) { throw new PDPRefusal(message); }
const PDP_BYTES = (function () {
  // the bytes of an ASCII text (its characters' codes); any other character is refused
  function ascii(s, what) {
    if (typeof s !== "string") pdpRefuse(what + " are missing");
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c > 127) pdpRefuse(what + " hold a character that is not ASCII (at " + i + ")");
      out[i] = c;
    }
    return out;
  }
  // strict base64: the text must be what encoding its bytes gives back (no space, canonical padding bits)
  function b64(text, what, size) {
    if (typeof text !== "string" || text.length % 4 !== 0 || !/^[A-Za-z0-9+\/]*={0,2}$/.test(text)) {
      pdpRefuse(what + " is not base64");
    }
    let bin = "";
    try { bin = atob(text); } catch (e) { pdpRefuse(what + " is not base64"); }
    if (btoa(bin) !== text) pdpRefuse(what + " is not canonical base64 (it was edited)");
    if (size !== undefined && bin.length !== size) pdpRefuse(what + " does not hold " + size + " bytes");
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  return {ascii: ascii, b64: b64};
})();
const PDP = (function () {
  const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  function f64(text, what) {
    const b = PDP_BYTES.b64(text, "the page's " + what);
    if (b.length % 8 !== 0) pdpRefuse("the page's " + what + " is not a list of 8-byte numbers");
    const dv = new DataView(b.buffer), out = new Float64Array(b.length / 8);
    for (let i = 0; i < out.length; i++) out[i] = dv.getFloat64(8 * i, true);
    return out;
  }
  function num(v, name, pos) {
    if (typeof v !== "number" || !isFinite(v) || (pos && !(v > 0))) {
      pdpRefuse("the page's " + name + " is not a valid number");
    }
    return v;
  }
  // the form's description: every field and the label usable, so that reading and encoding a record cannot fail
  function checkInputs(D) {
    const I = D.inputs, bad = (m) => pdpRefuse("the form's description " + m);
    if (!isObj(I) || ["schema", "rows"].indexOf(I.encoding) < 0 || !Array.isArray(I.fields) || !I.fields.length) {
      bad("is not valid");
    }
    const range = (o, where) => {
      if (o.low === null && o.high === null) return;
      if (typeof o.low !== "number" || typeof o.high !== "number" || !isFinite(o.high - o.low) || !(o.low < o.high)) {
        bad("has an invalid range for " + where);
      }
    };
    I.fields.forEach((f, i) => {
      if (!isObj(f) || typeof f.name !== "string") bad("has an invalid field " + i);
      if (f.kind === "numeric") {
        range(f, "field " + i);
        if ((I.encoding === "schema") !== (f.low !== null) || typeof f.missing_ok !== "boolean") {
          bad("has an invalid field " + i);
        }
      } else if (f.kind === "categorical") {
        if (I.encoding !== "schema" || !Array.isArray(f.categories) || !f.categories.length ||
            f.categories.some((c) => typeof c !== "string") || typeof f.none_ok !== "boolean") {
          bad("has an invalid field " + i);
        }
      } else bad("has a field of unknown kind");
    });
    const L = I.label;
    if (!isObj(L) || typeof L.name !== "string") bad("has no valid label");
    if (L.kind === "classes") {
      if (D.loss.name !== "logistic" || !Array.isArray(L.classes) ||
          L.classes.length !== (D.models === null ? 2 : D.models.length) ||
          L.classes.some((c) => typeof c !== "string") || new Set(L.classes).size !== L.classes.length) {
        bad("has invalid classes");
      }
    } else if (L.kind === "numeric") {
      if (D.loss.name === "logistic" || typeof L.encoded !== "boolean") bad("has an invalid label");
      range(L, "the label");
      if (L.encoded !== (L.low !== null)) bad("has an invalid label");
    } else bad("has a label of unknown kind");
  }
  // the page's numbers: present, finite, in range, of consistent lengths; the constants the bound needs
  function check(D) {
    if (!isObj(D) || D.format !== "pdpkit-privacy-page/2") {
      pdpRefuse("its data are not a pdpkit privacy page's (format)");
    }
    const G = D.guarantee;
    if (!isObj(G)) pdpRefuse("it carries no guarantee");
    if (typeof G.epsilon !== "number" || !isFinite(G.epsilon) || !(G.epsilon >= 0)) {
      pdpRefuse("the guarantee's epsilon is not a valid number");
    }
    if (typeof G.delta !== "number" || !(G.delta >= 0 && G.delta < 1)) {
      pdpRefuse("the guarantee's delta is not in [0, 1)");
    }
    if (!Array.isArray(G.parts) || G.parts.some((p) => !isObj(p) || typeof p.name !== "string" ||
        typeof p.epsilon !== "number" || !(p.epsilon >= 0) || typeof p.delta !== "number" || !(p.delta >= 0))) {
      pdpRefuse("the guarantee's parts are not valid");
    }
    if (!Array.isArray(D.released) || D.released.some((c) => ["gradient", "hessian", "lambda_min"].indexOf(c) < 0)) {
      pdpRefuse("the page's list of released statistics is not valid");
    }
    if (!isObj(D.loss) || ["logistic", "huber", "robust_log"].indexOf(D.loss.name) < 0) {
      pdpRefuse("its loss is unknown");
    }
    if (D.loss.name === "huber") num(D.loss.scale, "Huber scale", true);
    ["lam", "sigma", "norm_bound"].forEach((k) => num(D[k], k, true));
    num(D.rho, "rho", true); if (!(D.rho < 1)) pdpRefuse("the page's rho is not in (0, 1)");
    // one model, or one per class (one-vs-rest: its numbers in D.models, none at the top)
    const perModel = ["rho", "lambda_lower", "q_cross", "q_gradient", "theta", "W", "gradient"];
    if (D.models !== null && (!Array.isArray(D.models) || D.models.length < 3 || D.models.some((m) => !isObj(m)) ||
        perModel.some((k) => D[k] !== null && k !== "rho"))) {
      pdpRefuse("the page's models are not valid");
    }
    const M = D.models === null ? [D] : D.models;
    if (["data-independent", "data-dependent", "adaptive"].indexOf(D.method) < 0) {
      pdpRefuse("its report method is unknown");
    }
    if (typeof D.fit_intercept !== "boolean" || ["raise", "clip"].indexOf(D.row_norm) < 0) {
      pdpRefuse("the page's intercept or row-norm rule is not valid");
    }
    const d = D.d;
    if (!Number.isInteger(d) || d < 1) pdpRefuse("the page's dimension is not valid");
    // each model: its coefficients, leverage factor, released gradient and constants (the top-level ones for one)
    const models = M.map((m, k) => {
      const at = M.length > 1 ? " of model " + (k + 1) : "";
      ["lambda_lower", "q_cross", "rho"].forEach((key) => num(m[key], key + at, true));
      if (!(m.lambda_lower >= D.lam)) pdpRefuse("the page's lambda_lower" + at + " is below lambda");
      const c = {d: d, theta: f64(m.theta, "coefficients" + at),
                 W: m.W === null ? null : f64(m.W, "leverage factor" + at),
                 g: m.gradient === null ? null : f64(m.gradient, "released gradient" + at),
                 lambda_lower: m.lambda_lower, q_cross: m.q_cross, q_gradient: m.q_gradient, rho: m.rho};
      if (c.theta.length !== d) pdpRefuse("the coefficients" + at + " do not have d entries");
      if (c.W && c.W.length !== d * (d + 1) / 2) {
        pdpRefuse("the leverage factor" + at + " does not have d(d+1)/2 entries");
      }
      if ((D.method === "data-independent") !== (c.W === null)) {
        pdpRefuse("the leverage factor" + at + " does not match the method");
      }
      if (c.g && c.g.length !== d) pdpRefuse("the released gradient" + at + " does not have d entries");
      if ((c.g === null) !== (m.q_gradient === null)) {
        pdpRefuse("the gradient's quantile" + at + " does not match the release");
      }
      if (c.g) { num(m.q_gradient, "q_gradient" + at, true); num(D.sigma_gradient, "sigma_gradient", true); }
      for (const a of [c.theta, c.W || [], c.g || []]) {
        for (let i = 0; i < a.length; i++) if (!isFinite(a[i])) pdpRefuse("a number in the page's data is not finite");
      }
      return c;
    });
    if (D.models !== null && models.reduce((s, c) => s + c.rho, 0) !== D.rho) {
      pdpRefuse("the page's rho is not the sum of its models' rho");
    }
    checkInputs(D);
    const nf = D.inputs.fields.reduce((s, f) => s + (f.kind === "numeric" ? 1 : f.categories.length), 0);
    if (nf + (D.fit_intercept ? 1 : 0) !== d) pdpRefuse("the form's fields do not match the model's dimension");
    if (D.models !== null && (D.inputs.label.kind !== "classes" || D.inputs.label.classes.length !== M.length)) {
      pdpRefuse("the page's classes do not match its models");
    }
    // C: the first model's numbers (what a page of one model had), and every model's
    return Object.assign({}, models[0], {models: models});
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
    let mu = xx / C.lambda_lower;
    if (C.W) {
      const v = new Float64Array(d); let p = 0;
      for (let i = 0; i < d; i++) { const xi = x[i]; for (let j = i; j < d; j++) v[j] += C.W[p++] * xi; }
      let vv = 0; for (let j = 0; j < d; j++) vv += v[j] * v[j];
      mu = Math.min(mu, vv);
    }
    const norm = Math.sqrt(xx);
    let K = D.sigma * C.q_cross * norm;
    if (C.g) {
      let gx = 0; for (let i = 0; i < d; i++) gx += C.g[i] * x[i];
      K = Math.min(K, Math.abs(gx) + D.sigma_gradient * C.q_gradient * norm);
    }
    return {xx: xx, mu: mu, K: K, t: t, lambda_lower: C.lambda_lower};
  }
  function fromTerms(D, T, c1, c2) {
    const a = c2 * T.mu, c2x = c2 * T.xx, s2 = D.sigma * D.sigma;
    let t1 = a < 1 ? -Math.log1p(-Math.min(a, 1)) : Infinity;
    t1 = Math.min(t1, Math.log1p(c2x / Math.max(D.lam, T.lambda_lower - c2x)));
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
  // the bound for the fitted row x, with label y (fitted scale), or null: valid for every label. One-vs-rest
  // (C.models.length = K > 2): y is the class's index; the bound is the sum of the K models' bounds for the labels
  // that class gives them (+1 for its own model, -1 for the others), and without a label the largest such sum
  function bound(D, C, x, y, labelBounds) {
    if (C.models.length > 1) {
      const T = C.models.map((c) => terms(D, c, x));
      const one = (k, m) => {
        const c = derivs(D.loss, T[m].t, m === k ? 1 : -1);
        return fromTerms(D, T[m], c[0], c[1]);
      };
      const sum = (k) => { let s = 0; for (let m = 0; m < T.length; m++) s += one(k, m); return s; };
      if (y !== null) return sum(y);
      let best = -Infinity; for (let k = 0; k < T.length; k++) best = Math.max(best, sum(k));
      return best;
    }
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
      if (Math.sqrt(nn) > 1) {
        const s = Math.sqrt(nn) * (1 + Math.pow(2, -52));
        for (let i = 0; i < row.length; i++) row[i] /= s;
      }
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
    if (L.kind === "classes") {
      const i = L.classes.indexOf(text);
      return D.models !== null ? i : i === 1 ? 1 : -1;  // one-vs-rest: the class's index
    }
    const v = Number(text);
    if (!L.encoded) return v;
    const c = Math.min(Math.max(v, L.low), L.high);
    return Math.min(Math.max(2 * ((c - L.low) / (L.high - L.low)) - 1, -1), 1);
  }
  return {f64: f64, check: check, bound: bound, encode: encode, fittedLabel: fittedLabel, terms: terms};
})();

// The page's own check of its data (pdpkit.page): digests and signatures with Web Crypto, then the release's numbers.
const PDP_VERIFY = (function () {
  const PAGE_CONTEXT = @PAGE_CONTEXT@, RELEASE_CONTEXT = @RELEASE_CONTEXT@;
  const HEX64 = /^[0-9a-f]{64}$/, isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const hex = (buf) => Array.from(new Uint8Array(buf), (b) => (b < 16 ? "0" : "") + b.toString(16)).join("");
  async function sha256(subtle, bytes) { return hex(await subtle.digest("SHA-256", bytes)); }
  function join(a, b) { const out = new Uint8Array(a.length + b.length); out.set(a); out.set(b, a.length); return out; }
  // a signature block's shape (pdpkit.signing.check_signature_block): the key and the signature's bytes
  function block(B, where) {
    if (!isObj(B)) pdpRefuse(where + " is not a signature block");
    if (Object.keys(B).sort().join() !== "algorithm,fingerprint,public_key,value") {
      pdpRefuse(where + " does not have exactly the fields algorithm, public_key, fingerprint, value");
    }
    if (B.algorithm !== "Ed25519") pdpRefuse(where + " is not an Ed25519 signature");
    if (typeof B.fingerprint !== "string" || !HEX64.test(B.fingerprint)) {
      pdpRefuse(where + "'s fingerprint is not 64 hex digits");
    }
    return {key: PDP_BYTES.b64(B.public_key, where + "'s public key", 32),
            sig: PDP_BYTES.b64(B.value, where + "'s value", 64), fingerprint: B.fingerprint};
  }
  // true: verified; false: this browser has no Ed25519 (NotSupportedError); a refusal otherwise
  async function verify(subtle, K, context, bytes, where) {
    if ((await sha256(subtle, K.key)) !== K.fingerprint) {
      pdpRefuse(where + "'s fingerprint is not the SHA-256 of its public key");
    }
    let key = null, ok = false;
    try { key = await subtle.importKey("raw", K.key, {name: "Ed25519"}, false, ["verify"]); } catch (e) {
      if (e && e.name === "NotSupportedError") return false;
      pdpRefuse(where + " names a key that is not valid (" + ((e && e.message) || e) + ")");
    }
    const signed = join(PDP_BYTES.ascii(context, "the context"), bytes);
    try { ok = await subtle.verify({name: "Ed25519"}, key, K.sig, signed); } catch (e) {
      if (e && e.name === "NotSupportedError") return false;
      pdpRefuse(where + " could not be checked (" + ((e && e.message) || e) + ")");
    }
    if (ok !== true) pdpRefuse(where + " does not match the data: they were changed after they were signed");
    return true;
  }
  function same(a, b) {
    if (a === b) return true;
    if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => same(v, b[i]));
    if (!isObj(a) || !isObj(b)) return false;
    const ka = Object.keys(a).sort(), kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && same(a[k], b[k]));
  }
  // a class as the page writes it (Python's str) against the release's JSON value
  const pyStr = (s, v) => typeof v === "string" ? s === v : typeof v === "number" ? s !== "" && Number(s) === v :
    typeof v === "boolean" ? s === (v ? "True" : "False") : false;
  // every number the page copies from the release is the release's: an edit must change the release's bytes
  function agree(D, C, R) {
    const differ = (what) => pdpRefuse("the page's " + what + " is not the embedded release's");
    if (!isObj(R) || R.format !== "pdpkit-release/5") {
      pdpRefuse("the embedded release is not a pdpkit release (format pdpkit-release/5)");
    }
    const equal = (a, b) => Array.isArray(a) && a.length === b.length && a.every((v, i) => v === b[i]);
    const K = C.models.length, ovr = K > 1;  // one-vs-rest: a row of theta and a report per class
    const thetas = ovr ? R.theta : [R.theta], reports = ovr ? R.report : [R.report];
    if (!Array.isArray(thetas) || thetas.length !== K || !Array.isArray(reports) || reports.length !== K) {
      differ(ovr ? "models (the release does not hold one per class)" : "coefficients");
    }
    C.models.forEach((c, k) => { if (!equal(thetas[k], c.theta)) differ("coefficients"); });
    ["lam", "sigma", "norm_bound", "fit_intercept", "row_norm"].forEach((k) => { if (R[k] !== D[k]) differ(k); });
    if (R.loss !== D.loss.name) differ("loss");
    if (!isObj(R.guarantee)) pdpRefuse("the embedded release carries no guarantee");
    if (!same(R.guarantee, D.guarantee)) differ("guarantee");
    if (!isObj(D.noise)) differ("noise scales");
    reports.forEach((P, k) => {
      if (!isObj(P)) pdpRefuse("the embedded release carries no privacy report of " + (ovr ? "each" : "one") + " model");
      if (P.method !== D.method) differ("report method");
      if (P.rho !== C.models[k].rho) differ("rho");
      ["sigma_gradient", "sigma_hessian", "sigma_lambda_min"].forEach((n) => { if (P[n] !== D.noise[n]) differ(n); });
      if (P.sigma_gradient !== D.sigma_gradient) differ("sigma_gradient");
      if (!same(D.released, ["gradient", "hessian", "lambda_min"].filter((n) => P["sigma_" + n] !== null))) {
        differ("list of released statistics");
      }
      const g = P.gradient_release, cg = C.models[k].g;
      if ((g === null) !== (cg === null) || (g !== null && !equal(g, cg))) differ("released gradient");
    });
    const I = D.inputs, F = I.fields, L = I.label;
    if (I.encoding === "rows") {
      if (R.schema !== null) differ("form (the release has a schema)");
      const names = R.feature_names === null ? F.map((f, j) => "x" + (j + 1)) : R.feature_names;
      if (!equal(names, F.map((f) => f.name))) differ("feature names");
    } else {
      const enc = [];
      F.forEach((f) => {
        if (f.kind === "numeric") enc.push(f.name); else f.categories.forEach((c) => enc.push(f.name + "=" + c));
      });
      if (R.feature_names !== null && !same(enc, R.feature_names)) differ("feature names");
      if (R.schema !== null) {  // a schema given beside the release is covered by the page's signature only
        const S = R.schema;
        if (!isObj(S) || !Array.isArray(S.columns)) differ("schema");
        const kind = (c) => c.kind === undefined ? "numeric" : c.kind;
        const cols = S.columns.filter((c) => isObj(c) && (c.role === undefined ? "feature" : c.role) === "feature");
        const miss = S.handle_missing === "zero", none = miss || S.handle_unknown === "zero";
        if (cols.length !== F.length || F.some((f, j) => f.name !== cols[j].name || f.kind !== kind(cols[j]) ||
            (f.kind === "numeric" ? f.low !== cols[j].low || f.high !== cols[j].high || f.missing_ok !== miss :
              !same(f.categories, cols[j].categories) || f.none_ok !== none))) {
          differ("form (its fields are not the release's schema)");
        }
        const lab = S.columns.find((c) => isObj(c) && c.role === "label");
        if (lab && (L.kind === "classes" || kind(lab) === "numeric") && L.name !== lab.name) differ("label");
        if (lab && L.kind === "numeric" && kind(lab) === "numeric" && (L.low !== lab.low || L.high !== lab.high)) {
          differ("label's range");
        }
      }
    }
    if (L.kind === "classes" && R.classes !== null && (!Array.isArray(R.classes) ||
        R.classes.length !== (ovr ? K : 2) || L.classes.length !== R.classes.length ||
        L.classes.some((c, j) => !pyStr(c, R.classes[j])))) {
      differ("classes");
    }
    if (ovr && R.classes === null) differ("classes");
  }
  async function run(text, sigText) {
    const subtle = (typeof crypto !== "undefined" && crypto && crypto.subtle) || null;
    const out = {ok: false, status: "", webcrypto: subtle !== null, signed: false, ed25519: null, page_sha256: null,
                 release_sha256: null, signer: null, release_signer: null, release_verified: false};
    const bytes = PDP_BYTES.ascii(text, "its data");
    if (typeof sigText !== "string") pdpRefuse("its signature element is missing");
    let S = null;
    try { S = JSON.parse(sigText); } catch (e) { pdpRefuse("its signature is not JSON"); }
    const K = S === null ? null : block(S, "its signature");
    out.signed = K !== null;
    if (subtle) out.page_sha256 = await sha256(subtle, bytes);
    if (K) {
      out.signer = K.fingerprint;
      if (subtle) out.ed25519 = await verify(subtle, K, PAGE_CONTEXT, bytes, "its signature");
    }
    let D = null;
    try { D = JSON.parse(text); } catch (e) { pdpRefuse("its data are not JSON (" + e.message + ")"); }
    if (!isObj(D) || D.format !== "pdpkit-privacy-page/2") {
      pdpRefuse("its data are not a pdpkit privacy page's (format)");
    }
    const rbytes = PDP_BYTES.ascii(D.release, "the embedded release's bytes");
    if (typeof D.release_sha256 !== "string" || !HEX64.test(D.release_sha256)) {
      pdpRefuse("the release's stated SHA-256 is not 64 hex digits");
    }
    if (subtle) {
      out.release_sha256 = await sha256(subtle, rbytes);
      if (out.release_sha256 !== D.release_sha256) {
        pdpRefuse("the embedded release is not the one whose SHA-256 the page states (it was changed)");
      }
    }
    // a signed page vouches for its release only if the release is signed by the same key: else anyone could take
    // a publisher's release, strip its signature, derive other constants and sign the page with their own key
    if (K && D.release_signature === null) {
      pdpRefuse("the release inside this signed page carries no signature (pdpkit signs it with the page's key)");
    }
    if (D.release_signature !== null) {
      const RK = block(D.release_signature, "the release's signature");
      out.release_signer = RK.fingerprint;
      if (K && (RK.fingerprint !== K.fingerprint || RK.key.join() !== K.key.join())) {
        pdpRefuse("the release was signed by another key than the page");
      }
      if (subtle) out.release_verified = await verify(subtle, RK, RELEASE_CONTEXT, rbytes, "the release's signature");
    }
    let R = null;
    try { R = JSON.parse(D.release); } catch (e) { pdpRefuse("the embedded release is not JSON"); }
    const C = PDP.check(D);
    agree(D, C, R);
    out.status = !out.signed ? "unsigned" : !subtle ? "no-webcrypto" :
      out.ed25519 === true && out.release_verified === true ? "verified" : "not-checkable";
    out.ok = true; out.D = D; out.C = C; out.seeded = R.seeded === true;
    return out;
  }
  // check(data text, signature text) -> Promise of {ok, status, message, fingerprints, D, C}; it never rejects
  async function check(text, sigText) {
    try { return await run(text, sigText); } catch (e) {
      return {ok: false, message: e instanceof PDPRefusal ? e.message :
        "its data could not be read (" + ((e && e.message) || String(e)) + ")"};
    }
  }
  return {check: check};
})();

(function () {
  const $ = (id) => document.getElementById(id);
  const text = (id) => { const el = $(id); return el ? el.textContent : null; };
  const esc = PDP_TEXT.esc;
  // what the reader is told wherever the signature could not be checked, beside every number
  const CANNOT = "this browser cannot check the signature: open the page in one that can (Chrome/Edge 137+, " +
    "Firefox 129+, Safari 17+) before relying on the number";
  const NO_WEBCRYPTO = "there is no Web Crypto API here (a page served over plain HTTP has none: open the file from " +
    "your disk, or over HTTPS)";
  const UNSIGNED = "this page is not signed: nothing proves that it says what the publisher released, and its " +
    "numbers may have been changed by anyone";
  const P = window.PDP_PAGE = {check: PDP_VERIFY.check, state: "checking"};
  const box = $("check");
  if (box) { box.hidden = false; box.textContent = "Checking this page\u2019s data\u2026"; }
  function refuse(message) {
    const el = $("refusal");
    el.hidden = false;
    el.textContent = "This page refuses to compute a bound: " + message + ". Its data were changed or damaged after " +
      "it was made, or it was not made by pdpkit: ask the publisher for the release file and check it with pdpkit.";
    $("form").hidden = true;
    $("result").textContent = "";
    // the page's text is not shown either: it may have been edited with the data
    for (const id of ["guarantee", "report"]) {
      const t = $(id);
      if (t) t.textContent = "Not shown: this page failed its checks (see the message at the top).";
    }
    if (box) box.hidden = true;
    P.state = "refused"; P.error = message;
  }
  // the warning shown beside every number when the signature was not verified ("" when it was)
  function warning(r) {
    if (r.status === "verified") return "";
    const w = r.status === "unsigned" ? UNSIGNED + ". Do not rely on the number: ask the publisher for a signed page" :
      CANNOT + (r.status === "no-webcrypto" ? " (" + NO_WEBCRYPTO + ")" : "");
    return w.charAt(0).toUpperCase() + w.slice(1) + ".";
  }
  function status(r) {
    const fp = (id, label, v) => "<dt>" + label + '</dt><dd><code id="' + id + '">' +
      (v === null ? "not computable here" : esc(v)) + "</code></dd>";
    let msg, dl, cls = "warn";
    if (r.status === "verified") {
      cls = "ok";
      msg = "<strong>Signature verified.</strong> This page\u2019s data are exactly what the holder of the key " +
        "below signed, and the release inside them is signed by the same key (checked here, in your browser: " +
        "SHA-256 and Ed25519 in Web Crypto); the guarantee, the report and the form below were written again " +
        "from those data. Compare the key\u2019s fingerprint with the one the publisher lists: another key means " +
        "that somebody else made this page, even if the release\u2019s fingerprint is the publisher\u2019s (anyone " +
        "can sign a copy of a release).";
      dl = fp("fp-signer", "Signer\u2019s key (SHA-256 of its public key)", r.signer) +
        fp("fp-release", "Release (SHA-256 of its canonical JSON)", r.release_sha256) +
        fp("fp-page", "This page\u2019s data (SHA-256)", r.page_sha256);
    } else {
      // nothing was checked against a key: no signer is shown, and what is shown is the page's claim
      if (r.status === "unsigned") {
        msg = "<strong>This page is not signed</strong>: nothing proves that it says what the publisher released, " +
          "and its numbers may have been changed by anyone. Do not rely on the number it computes: ask the " +
          "publisher for a signed page, or compute your bound with pdpkit from the release file." +
          (r.webcrypto ? "" : " No fingerprint can be computed here: " + NO_WEBCRYPTO + ".");
      } else {
        msg = "<strong>Signature not checkable in this browser" + (r.status === "no-webcrypto" ? " or context" : "") +
          "</strong>: " + (r.status === "no-webcrypto" ? NO_WEBCRYPTO : "its Web Crypto API has no Ed25519") +
          ". " + CANNOT.charAt(0).toUpperCase() + CANNOT.slice(1) + ". Until then, anybody could have changed " +
          "this page\u2019s numbers, whatever it shows.";
      }
      const claimed = " \u2014 claimed by the page, not checked";
      dl = fp("fp-release", "Release (SHA-256 of the release it embeds)" + claimed,
              r.release_sha256 !== null ? r.release_sha256 : r.D.release_sha256) +
        fp("fp-page", "This page\u2019s data (SHA-256)" + claimed, r.page_sha256);
    }
    box.className = "box " + cls;
    box.dataset.status = r.status;
    box.innerHTML = "<p>" + msg + '</p><dl class="fp">' + dl + "</dl>";
  }
  // everything that carries meaning, written again from the checked data: an edit of the page's text is overwritten
  function render(r) {
    const D = r.D, w = warning(r);
    $("guarantee").innerHTML = (w ? '<p class="alert" id="guarantee-warning">' + esc(w) + "</p>" : "") +
      PDP_TEXT.guarantee(D.guarantee, r.seeded);
    $("report").innerHTML = PDP_TEXT.report(D);
    $("form").innerHTML = PDP_TEXT.form(D.inputs);
  }
  function start(r) {
    const D = r.D, C = r.C, F = D.inputs.fields, L = D.inputs.label;
    render(r);
    status(r);
    const w = warning(r), caveat = w ? '<p class="alert" id="result-warning">' + esc(w) + "</p>" : "";
    const labelBounds = L.kind === "numeric" ? (L.encoded ? [-1, 1] : null) : null;
    function read() {
      const values = [];
      for (let i = 0; i < F.length; i++) {
        const el = $("f" + i);
        if (F[i].kind === "numeric") {
          const blank = el.value.trim() === "", v = blank ? (F[i].missing_ok ? null : NaN) : Number(el.value);
          if (v !== null && !isFinite(v)) {
            return {error: "Please enter a number for \u201c" + esc(F[i].name) + "\u201d."};
          }
          values.push(v);
        } else {
          const c = el.value === "" ? "" : F[i].categories[Number(el.value)];
          if (c === undefined) return {error: "Please choose a value for \u201c" + esc(F[i].name) + "\u201d."};
          values.push(c);
        }
      }
      const lv = $("label").value;
      let y = null;
      if (lv !== "") {
        if (L.kind === "numeric") {
          const t = $("labelvalue").value.trim();
          if (t === "" || !isFinite(Number(t))) {
            return {error: "Please enter a number for the label, or choose \u201cI don't know\u201d."};
          }
          y = PDP.fittedLabel(D, t);
        } else {
          const c = L.classes[Number(lv)];
          if (c === undefined) return {error: "Please choose your label, or \u201cI don't know\u201d."};
          y = PDP.fittedLabel(D, c);
        }
      }
      return {values: values, y: y};
    }
    // every number shown is a bound, an ε or a factor e^ε: rounded up to 3 significant digits
    function fmt(v) { return PDP_FMT.fmtUp(v, 3); }
    function picture(eps, total) {
      const W = 320, H = 64, top = Math.max(eps, total) * 1.1 || 1, xs = (v) => 10 + (W - 20) * Math.min(v, top) / top;
      return '<svg role="img" aria-labelledby="pic-t" viewBox="0 0 ' + W + ' ' + H + '" width="' + W + '" height="' +
        H + '">' + '<title id="pic-t">Your bound ' + fmt(eps) + ' beside the guarantee ' + fmt(total) +
        ' that covers everybody</title>' +
        '<line x1="10" y1="40" x2="' + (W - 10) + '" y2="40" stroke="#555"/>' +
        '<rect x="10" y="28" width="' + (xs(eps) - 10).toFixed(1) + '" height="12" fill="#0b57d0"/>' +
        '<line x1="' + xs(total).toFixed(1) + '" y1="18" x2="' + xs(total).toFixed(1) +
        '" y2="48" stroke="#a40e26" stroke-width="2"/>' +
        '<text x="10" y="20" font-size="11" fill="#0b57d0">you: ' + fmt(eps) + '</text>' +
        '<text x="' + Math.min(xs(total), W - 120).toFixed(1) + '" y="60" font-size="11" fill="#a40e26">everybody: ' +
        fmt(total) + '</text></svg>';
    }
    function compute(ev) {
      if (ev && ev.preventDefault) ev.preventDefault();
      const r = read(), out = $("result");
      delete out.dataset.epsilon;
      if (r.error) { out.innerHTML = '<p class="alert">' + r.error + '</p>'; return; }
      const x = PDP.encode(D, r.values);
      if (x === null) {
        out.innerHTML = '<p class="alert">This record lies outside the range the model was trained on (its norm ' +
          'exceeds ' + D.norm_bound + '): the model refuses such records, so it says nothing about them.</p>';
        return;
      }
      const eps = PDP.bound(D, C, x, r.y, labelBounds), total = D.guarantee.epsilon;
      if (!(eps >= 0) || !isFinite(eps)) {
        out.innerHTML = '<p class="alert">This page could not compute a finite bound for this record.</p>';
        return;
      }
      out.innerHTML = caveat + '<p class="big">Your privacy loss: at most ' + fmt(eps) + '</p>' +
        '<p>With probability at least ' + PDP_TEXT.percent(D.rho) + ', your privacy loss from the published model ' +
        'is at most ' + fmt(eps) +
        (r.y === null ? ' whatever your label' : '') + ', i.e. your participation changes the probability of any ' +
        'outcome of the published model by at most a factor ' + fmt(Math.exp(eps)) + '.' +
        ' Everybody is covered by the guarantee ' + fmt(total) + ' (a factor ' + fmt(Math.exp(total)) + ').</p>' +
        picture(eps, total);
      out.dataset.epsilon = String(eps);
    }
    // the record never leaves the page: the form has no action and no named field, its button only computes,
    // and the page's Content-Security-Policy (form-action 'none') blocks any submission
    const form = $("form");
    form.addEventListener("submit", compute);
    form.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && ev.target && ev.target.tagName === "INPUT") compute(ev);
    });
    $("compute").addEventListener("click", compute);
    const lab = $("label"), lv = $("labelvalue-wrap");
    if (lv) lab.addEventListener("change", () => { lv.hidden = lab.value === ""; });
    Object.assign(P, {D: D, C: C, result: r, status: r.status, compute: compute,
                      bound: (x, y) => PDP.bound(D, C, x, y, labelBounds), encode: (v) => PDP.encode(D, v)});
    form.hidden = false;
    P.state = "ready";
  }
  P.ready = PDP_VERIFY.check(text("pdp-data"), text("pdp-signature"))
    .then((r) => { P.result = r; if (r.ok) start(r); else refuse(r.message); })
    .catch((e) => refuse("it could not check its data (" + ((e && e.message) || e) + ")"));
})();
""".replace(
    "@PAGE_CONTEXT@", json.dumps(_signing.PAGE_CONTEXT.decode("ascii"))).replace(
    "@RELEASE_CONTEXT@", json.dumps(_signing.RELEASE_CONTEXT.decode("ascii")))
for _marker in ("</script", "<!--", "<script"):  # the script cannot end early or open a nested script state
    assert _marker not in _JS.lower(), _marker
#: The Content-Security-Policy: nothing is fetched, only this page's own script and style run, no form is sent.
_CSP = ("default-src 'none'; "
        f"script-src 'sha256-{base64.b64encode(hashlib.sha256(_JS.encode('utf-8')).digest()).decode('ascii')}'; "
        f"style-src 'sha256-{base64.b64encode(hashlib.sha256(_CSS.encode('utf-8')).digest()).decode('ascii')}'; "
        "form-action 'none'; base-uri 'none'")


def _link(book_url: str | None, key: str) -> str:
    title, anchor = _ANCHORS[key]
    if book_url is None:
        return f"“{html.escape(title)}” in the chapter “The privacy report” of the pdpkit book"
    url = f"{book_url.rstrip('/')}/{_CHAPTER}#{anchor}"
    return f'<a href="{html.escape(url)}">{html.escape(title)}</a> (pdpkit book, “The privacy report”)'


def _form_inner(spec: dict[str, Any]) -> str:
    """The form's content, from the form's description (:func:`page_data`'s ``inputs``).

    Names appear as escaped text only; a select's values are indices into the page's data.
    """
    rows = []
    for i, f in enumerate(spec["fields"]):
        name = html.escape(f["name"])
        if f["kind"] == "numeric":
            if f["low"] is not None:
                low, high = _plain(f["low"]), _plain(f["high"])
                hint = f"a number from {low} to {high} (values outside are taken as the nearest end)"
                if f["missing_ok"]:
                    hint += "; leave it empty if it was missing in the data"
                attrs = f' min="{low}" max="{high}"'
            else:
                hint = "a number, on the scale the model was fitted on"
                attrs = ""
            rows.append(f'<div class="field"><label for="f{i}">{name}</label>'
                        f'<input id="f{i}" type="text" inputmode="decimal"{"" if f["missing_ok"] else " required"}'
                        f' aria-describedby="h{i}"{attrs}><span class="hint" id="h{i}">{html.escape(hint)}</span>'
                        "</div>")
        else:
            opts = "".join(f'<option value="{j}">{html.escape(c)}</option>' for j, c in enumerate(f["categories"]))
            if f["none_ok"]:
                opts += '<option value="">none of these, or missing</option>'
            rows.append(f'<div class="field"><label for="f{i}">{name}</label><select id="f{i}">{opts}</select></div>')
    lab = spec["label"]
    if lab["kind"] == "classes":
        opts = "".join(f'<option value="{j}">{html.escape(c)}</option>' for j, c in enumerate(lab["classes"]))
        label_html = (f'<div class="field"><label for="label">Your {html.escape(lab["name"])}</label>'
                      f'<select id="label"><option value="">I don\'t know</option>{opts}</select>'
                      '<span class="hint">“I don\'t know” gives the bound that holds for every label.</span></div>')
    else:
        know = '<option value="">I don\'t know</option>' if lab["low"] is not None else ""
        rng = f" from {_plain(lab['low'])} to {_plain(lab['high'])}" if lab["low"] is not None else ""
        label_html = (f'<div class="field"><label for="label">Do you know your {html.escape(lab["name"])}?</label>'
                      f'<select id="label">{know}<option value="known">Yes, I will enter it</option>'
                      f'</select></div><div class="field" id="labelvalue-wrap"{" hidden" if know else ""}>'
                      f'<label for="labelvalue">Your {html.escape(lab["name"])}</label>'
                      f'<input id="labelvalue" type="text" inputmode="decimal" aria-describedby="hl">'
                      f'<span class="hint" id="hl">a number{html.escape(rng)}</span></div>')
    return ("<fieldset><legend>Your record</legend>" + "".join(rows) + "</fieldset><fieldset><legend>Your label"
            "</legend>" + label_html + '</fieldset><button type="button" id="compute">Compute my bound</button>')


def _form(spec: dict[str, Any]) -> str:
    """The form, hidden until the page's checks pass: no action, no named field, a button that only computes."""
    return f'<form id="form" autocomplete="off" novalidate hidden>{_form_inner(spec)}</form>'


_NOSCRIPT = ("<noscript><p class=\"alert\" id=\"noscript\">This page needs JavaScript to compute your bound: the "
             "computation happens only here, in your browser, so that your record is never sent anywhere. With "
             "JavaScript off, the form is not offered (nothing you type could be computed, and it must not go to a "
             "server). Turn JavaScript on for this file, or compute your bound with pdpkit "
             "(<code>PrivacyReport.epsilon_bound</code>).</p></noscript>")


def privacy_page(release: Any, *, schema: Any = None, title: str | None = None, book_url: str | None = None,
                 private_key: Any = None, public_key: Any = None) -> str:
    r"""One self-contained HTML page on which any person computes their own privacy bound, in their browser.

    The page states the release's total guarantee in words, describes the privacy report as
    published (method, ρ, the statistics it released and their cost), offers a form for a
    person's record (and label, or "I don't know") and computes their bound with a JavaScript
    implementation of :meth:`pdpkit.report.PrivacyReport.epsilon_bound` (per person,
    ``uniform=False``) and :meth:`pdpkit.report.PrivacyReport.sup_over_labels`, from the
    constants of :func:`page_data`. No external asset, no request: the file works offline
    and sends nothing anywhere; the form cannot be submitted (module docstring).

    When it opens, the page checks its embedded data — SHA-256 and, for a signed page,
    Ed25519 in the browser's Web Crypto — and refuses with a message, showing no number, if
    any check fails (module docstring). The result is deterministic: the same arguments give
    the same text (Ed25519 signatures are deterministic).

    Parameters
    ----------
    release : pdpkit.release.Release, str or dict
        The release (or its JSON text or dict). It must verify and carry a guarantee and a
        privacy report; otherwise ``ValueError`` and no page.
    schema : pdpkit.schema.Schema or dict, optional
        The schema the release was fitted through, when the release does not carry it: the
        form then asks for the raw record (numbers within their bounds, categories).
    title : str, optional
        The page's heading (default: "Your privacy in this published model"); any text, shown
        escaped.
    book_url : str, optional
        Base address of the pdpkit book: an ``http(s)`` address with a host, or a relative
        path (anything else — ``javascript:``, ``data:``, ``//host``, spaces or control
        characters — is a ``ValueError`` naming ``book_url``). Given, the page links into its
        privacy report chapter; otherwise it names the sections.
    private_key : optional
        The publisher's Ed25519 private key (cryptography's ``Ed25519PrivateKey``, or the path
        of its PEM file, ``pdpkit keygen``): the page's embedded data are signed with it. A
        signed release must have been signed by this key; an unsigned one is signed with it
        (:meth:`pdpkit.release.Release.sign`, the same fingerprint), as the page requires.
    public_key : optional
        The publisher's Ed25519 public key (or the path of ``KEY.pub``): the release must be
        signed by it.

    Returns
    -------
    str
        The HTML text (UTF-8).

    Raises
    ------
    ValueError
        For a release that does not parse or verify (with ``public_key``: that is not signed
        by it), that carries no guarantee or no privacy report; for a ``book_url`` that is
        not http(s) or relative; for a ``private_key`` that is not the signed release's
        signer. No page is made.
    """
    book_url = _check_book_url(book_url)
    rel = _as_release(release, public_key)
    key = None
    if private_key is not None:
        key = _signing.load_private_key(private_key)
        mine = _signing.key_fingerprint(key)
        if rel.signature is None:  # a signed page embeds its release signed by the same key (the page checks it)
            rel = _sign_release(rel, key)
        elif rel.signer != mine:
            raise ValueError(f"private_key: the release is signed by the key {rel.signer}, not by this key ({mine}); "
                             "sign the page with the key that signed the release")
    data = _page_data(rel, schema)
    payload = _embedded(data)
    block = None
    if key is not None:
        block = _signing.sign_payload(key, payload.encode("ascii"), context=_signing.PAGE_CONTEXT)
        _signing.verify_payload(block, payload.encode("ascii"), context=_signing.PAGE_CONTEXT)
    title = title or "Your privacy in this published model"
    method = data["method"]
    released = data["released"]
    links = [_link(book_url, method)]
    if "gradient" in released:
        links.append(_link(book_url, "gradient"))
    links.append(_link(book_url, "cost"))
    body = f"""<main>
<h1>{html.escape(title)}</h1>
<p>This page lets you see how much a published machine-learning model can reveal about <em>you</em>, if your
record was (or was not) among the data it was trained on. Everything is computed in this page, in your browser:
what you type is not sent anywhere.</p>
{_NOSCRIPT}
<div id="refusal" class="alert" role="alert" hidden></div>
<div id="check" class="box" role="status" hidden></div>
<h2>The guarantee that covers everybody</h2>
<div id="guarantee">{_guarantee_html(data["guarantee"], getattr(rel, "seeded", None))}</div>
<h2>The privacy report, as published</h2>
<p id="report">{_report_html(data)}</p>
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
<footer><p>Only when the note at the top says the signature was verified do its fingerprints vouch for
anything: they are then computed by your browser from the data this page embeds, the release's being
<code>Release.fingerprint</code> of the release file (<code>pdpkit.page.release_fingerprint(text)</code>) and the
signer's <code>pdpkit.signing.key_fingerprint</code> of the publisher's public key; otherwise they are the page's
claim. Once its checks pass, the page writes its guarantee, the report's description and the form again from its
data. A signature covers this page's data, not its text or code: a page whose script was rewritten can display
anything. To check the whole page, compare its data with <code>pdpkit.page.page_data</code> of the release file;
<code>Release.from_json(text)</code> recomputes the file's guarantee. Made by pdpkit.</p></footer>
</main>"""
    text = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>\n{body}\n"
            f'<script type="application/json" id="pdp-data">{payload}</script>\n'
            f'<script type="application/json" id="pdp-signature">{_embedded(block)}</script>\n'
            f"<script>{_JS}</script>\n</body></html>\n")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"the title or a name from the data is not valid Unicode text ({exc.reason} at character "
                         f"{exc.start} of the page): no page is made") from None
    return text
