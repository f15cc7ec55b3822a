"""Signed releases: every edit of every field is refused with the publisher's key; strict JSON.

* Ed25519 through ``cryptography``, checked against RFC 8032's first test vector; keys written
  with mode 0600, never overwritten by mistake; fingerprints as SHA-256 of the raw key,
  recomputed here from the PEM file's DER bytes.
* A signed release, binary with a schema and an adaptive report, and a three-class one: each
  leaf of the file (nested or not, the signature block included) is edited in several ways,
  one edit at a time, and every edited file is refused by ``Release.from_dict(...,
  public_key=...)``; so are deleted and added keys, shortened and lengthened lists, a
  stripped signature, a file relabelled as the unsigned format 4, and a file re-signed with
  another key. The test of the tester: the consistency checks alone (no key) accept some of
  the same edits — a swapped class list, permuted feature names, an edited coefficient.
* :func:`pdpkit._json.loads_strict` refuses hostile text naming the field.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import math
import os
import stat
import warnings

import numpy as np
import pandas as pd
import pytest

from pdpkit import signing
from pdpkit._json import MAX_DEPTH, canonical_json, loads_strict
from pdpkit.estimators import ObjPertClassifier
from pdpkit.release import RELEASE_FORMAT, Release
from pdpkit.schema import Column, Schema

# RFC 8032, section 7.1, TEST 1 (empty message)
RFC_SECRET = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
RFC_PUBLIC = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
RFC_SIGNATURE = ("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46b"
                 "d25bf5f0595bbe24655141438e7a100b")


def test_ed25519_is_rfc_8032s():
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(RFC_SECRET))
    block = signing.sign_payload(key, b"", context=b"")
    assert base64.b64decode(block["public_key"]).hex() == RFC_PUBLIC
    assert base64.b64decode(block["value"]).hex() == RFC_SIGNATURE
    assert block["fingerprint"] == hashlib.sha256(bytes.fromhex(RFC_PUBLIC)).hexdigest()
    assert signing.verify_payload(block, b"", context=b"") == block["fingerprint"]
    # the context is part of what is signed: a release signature is not a page signature
    with pytest.raises(signing.SignatureError, match="does not match"):
        signing.verify_payload(block, b"", context=signing.PAGE_CONTEXT)


def test_keypair_files(tmp_path):
    path = tmp_path / "publisher"
    fp = signing.write_keypair(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    pem = (tmp_path / "publisher.pub").read_text()
    assert pem.startswith("-----BEGIN PUBLIC KEY-----")
    der = base64.b64decode("".join(pem.strip().splitlines()[1:-1]))
    assert len(der) == 44  # SubjectPublicKeyInfo of Ed25519: a 12-byte header, then the 32-byte key
    assert fp == hashlib.sha256(der[-32:]).hexdigest() == signing.key_fingerprint(tmp_path / "publisher.pub")
    assert signing.key_fingerprint(signing.load_private_key(path)) == fp
    with pytest.raises(FileExistsError, match="not replaced"):
        signing.write_keypair(path)
    assert signing.key_fingerprint(tmp_path / "publisher.pub") == fp  # untouched
    os.chmod(path, 0o644)
    fp2 = signing.write_keypair(path, overwrite=True)
    assert fp2 != fp and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with pytest.raises(ValueError, match="private key"):
        signing.load_private_key(tmp_path / "publisher.pub")
    with pytest.raises(ValueError, match="public key"):
        signing.load_public_key(b"not a key")


# ------------------------------------------------------------------ releases
def _schema() -> Schema:
    return Schema([
        Column("age", low=20.0, high=70.0),
        Column("workclass", kind="categorical", categories=("Private", "Gov", "Self")),
        Column("hours", low=0.0, high=100.0),
        Column("income", role="label", kind="categorical", categories=("<=50K", ">50K")),
    ])


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"age": rng.uniform(20, 70, n), "workclass": rng.choice(["Private", "Gov", "Self"], n),
                          "hours": rng.uniform(0, 100, n)})
    income = np.where(frame["age"] + rng.normal(0, 10, n) > 45, ">50K", "<=50K")
    binary = ObjPertClassifier(epsilon=1.0, delta=1e-6, schema=_schema(), report="adaptive", report_epsilon=0.5,
                               report_delta=1e-6, random_state=None).fit(frame, income).release_
    X = rng.normal(size=(300, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = np.array(["a", "b", "c"])[np.argmax(X, axis=1)]
    multi = ObjPertClassifier(epsilon=2.0, delta=1e-6, classes=["a", "b", "c"], report="data-independent",
                              random_state=None).fit(X, y).release_
    keys = tmp_path_factory.mktemp("keys")
    signing.write_keypair(keys / "publisher")
    signing.write_keypair(keys / "forger")
    return {"binary": binary, "multi": multi, "key": keys / "publisher", "pub": keys / "publisher.pub",
            "forger": keys / "forger"}


def _leaves(value, path=()):
    """Every position in a JSON value: (path, value) for dicts, lists and scalars alike."""
    out = [(path, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _leaves(v, (*path, i))
    return out


def _variants(value):
    """Several edits of one value, each different from it as JSON."""
    if isinstance(value, bool):
        out = [not value, None, int(value), str(value).lower()]
    elif isinstance(value, int):
        out = [value + 1, -value - 1, float(value), str(value), None]
    elif isinstance(value, float):
        out = [math.nextafter(value, math.inf), value * 2 if value else 1.0, -value if value else -1.0, str(value),
               None]
        if value.is_integer() and abs(value) < 2**53:
            out.append(int(value))
    elif isinstance(value, str):
        out = [value + "x", "", value.swapcase() if value.swapcase() != value else value + " ", None, 0]
    elif value is None:
        out = [0, "", False, [], {}]
    elif isinstance(value, list):
        out = [value[:-1], value + value[-1:], value[::-1]] if value else [[0]]
    else:  # dict
        out = [dict(value, extra=1)] + [{k: v for k, v in value.items() if k != drop} for drop in value]
    return [v for v in out if canonical_json(v) != canonical_json(value)]


def _set(data, path, value):
    out = copy.deepcopy(data)
    if not path:
        return value
    node = out
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return out


def _edits(data):
    for path, value in _leaves(data):
        for v in _variants(value):
            yield path, _set(data, path, v)


def _refused(data, **kw) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Release.from_dict(data, **kw)
    except (TypeError, ValueError):
        return True
    return False


@pytest.mark.parametrize("which", ["binary", "multi"])
def test_every_edit_of_a_signed_release_is_refused_with_the_publishers_key(releases, which):
    signed = releases[which].sign(releases["key"])
    data = json.loads(signed.to_json(indent=2))
    assert data["format"] == RELEASE_FORMAT and data["signature"]["fingerprint"] == signed.signer
    assert not _refused(data, public_key=releases["pub"])  # the file itself verifies
    tried = accepted_without_key = 0
    kinds = set()
    for path, edited in _edits(data):
        tried += 1
        kinds.add(path[0] if path else "")
        assert _refused(edited, public_key=releases["pub"]), f"an edit of {path} verified"
        if path[:1] != ("signature",) and isinstance(edited, dict):
            # the same edit in an unsigned copy, checked for consistency alone
            accepted_without_key += not _refused(dict(edited, signature=None))
    assert kinds >= {"theta", "classes", "signature", "ledger", "guarantee", "report", "format", "seeded"}
    print(f"{which}: {tried} edits tried, {tried} refused with the key, {accepted_without_key} accepted by the "
          "consistency checks alone")
    assert tried > (700 if which == "binary" else 250)
    # the test of the tester: consistency alone accepts some of these edits, the signature refuses them all
    assert accepted_without_key > 20


def test_what_no_consistency_check_can_see(releases):
    rel = releases["binary"]
    signed = json.loads(rel.sign(releases["key"]).to_json())
    edits = {
        "classes swapped": ("classes", signed["classes"][::-1]),
        "feature names permuted": ("feature_names", signed["feature_names"][1:] + signed["feature_names"][:1]),
        "theta edited": ("theta", [t + 0.5 for t in signed["theta"]]),
        "rho raised": ("report", dict(signed["report"], rho=0.9)),
        "lambda_min raised": ("report", dict(signed["report"],
                                             lambda_min_release=signed["report"]["lambda_min_release"] * 2)),
    }
    for what, (key, value) in edits.items():
        edited = dict(signed, **{key: value})
        if what in ("classes swapped", "theta edited", "rho raised", "lambda_min raised"):
            # an unsigned copy of the same edit passes every consistency check: only a signature sees it
            unsigned = dict(edited, signature=None)
            assert not _refused(unsigned), what
        with pytest.raises(signing.SignatureError, match="^signature"):
            Release.from_dict(edited, public_key=releases["pub"])


def test_stripped_relabelled_and_resigned_files_do_not_verify(releases):
    rel = releases["binary"]
    signed = json.loads(rel.sign(releases["key"]).to_json())
    pub = releases["pub"]
    stripped = dict(signed, signature=None)
    with pytest.raises(signing.SignatureError, match="unsigned"):
        Release.from_dict(stripped, public_key=pub)
    assert not _refused(stripped)  # it is a valid unsigned release: nothing proves who made it
    format_4 = {k: v for k, v in signed.items() if k != "signature"}
    format_4["format"] = "pdpkit-release/4"
    with pytest.raises(signing.SignatureError, match="unsigned"):
        Release.from_dict(format_4, public_key=pub)
    forged = json.loads(Release.from_dict(dict(signed, classes=signed["classes"][::-1], signature=None))
                        .sign(releases["forger"]).to_json())
    with pytest.raises(signing.SignatureError, match="not by the key given"):
        Release.from_dict(forged, public_key=pub)
    # without the publisher's key a forged file is intact — and names the forger's key
    loaded = Release.from_dict(forged)
    assert loaded.signer == signing.key_fingerprint(signing.load_private_key(releases["forger"])) != signing.key_fingerprint(pub)
    with pytest.raises(signing.SignatureError):
        loaded.verify(public_key=pub)
    # a signature made for a page is not a release signature
    page_sig = signing.sign_payload(releases["key"], rel.payload, context=signing.PAGE_CONTEXT)
    with pytest.raises(signing.SignatureError, match="does not match"):
        Release.from_dict(dict(json.loads(rel.to_json()), signature=page_sig), public_key=pub)


def test_a_signed_release_round_trips_and_verifies(releases):
    rel = releases["multi"]
    signed = rel.sign(releases["key"])
    assert rel.signature is None and signed.signer == signing.key_fingerprint(releases["pub"])
    assert signed.fingerprint == rel.fingerprint  # the fingerprint names the contents, signed or not
    for text in (signed.to_json(), signed.to_json(indent=4), json.dumps(json.loads(signed.to_json()), sort_keys=True)):
        back = Release.from_json(text, public_key=releases["pub"])
        assert back.payload == signed.payload and back.signer == signed.signer
        np.testing.assert_array_equal(back.theta, rel.theta)
    assert signed.verify(public_key=releases["pub"]) is signed
    with pytest.raises(signing.SignatureError, match="unsigned"):
        rel.verify(public_key=releases["pub"])
    resigned = signed.sign(releases["forger"])
    assert resigned.signer == signing.key_fingerprint(signing.load_private_key(releases["forger"]))


def test_consistency_without_a_key(releases):
    data = json.loads(releases["binary"].to_json())
    checks = {
        "guarantee": dict(data, guarantee=None),  # a ledger without its guarantee
        "feature_names": dict(data, feature_names=data["feature_names"][::-1]),
        "schema": dict(data, schema=dict(data["schema"], nonprivate_draft=True)),
    }
    for field, edited in checks.items():
        with pytest.raises(ValueError, match=field):
            Release.from_dict(edited)
    text = releases["binary"].to_json()
    twice = text.replace('"lam":', '"lam": 1.0, "lam":', 1)
    with pytest.raises(ValueError, match="appears twice"):
        Release.from_json(twice)


# ------------------------------------------------------------------ strict JSON
@pytest.mark.parametrize(("text", "match"), [
    ('{"a": {"b": 1, "b": 2}}', r'a: the key "b" appears twice'),
    ('{"theta": [1, ' + "9" * 400 + "]}", r"theta\[1\]: an integer of 400 digits"),
    ('{"n": ' + "1" * 5000 + "}", r"n: an integer of 5000 digits"),
    ('{"x": [1e400]}', r"x\[0\]: the number 1e400 is beyond the range"),
    ('{"x": NaN}', r"x: NaN is not a number"),
    ('{"x": -Infinity}', r"x: -Infinity"),
    ("[" * 100000 + "]" * 100000, r"nest 100000 deep"),
    ('{"x": [1, 2}', r"is not JSON: .*line 1, column"),
    (b'{"x": "\xff"}', r"not UTF-8"),
])
def test_hostile_json_is_refused_naming_the_field(text, match):
    with pytest.raises(ValueError, match=match):
        loads_strict(text, "the file")


def test_strict_json_accepts_what_a_release_holds():
    text = '{"a": [1, 2.5, -3e-300, "<\\u00e9>", null, true], "b": {"c": 1234567890123456789}}'
    assert loads_strict(text) == json.loads(text)
    assert loads_strict("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    # brackets inside strings do not count as nesting
    assert loads_strict(json.dumps({"s": "[" * 1000})) == {"s": "[" * 1000}
    assert canonical_json({"b": 1, "a": 1.0}) == b'{"a":1.0,"b":1}'
    assert canonical_json({"a": "\u00e9<"}).isascii()


def test_hostile_release_text_is_a_value_error_naming_the_field(releases):
    data = json.loads(releases["binary"].to_json())
    huge = json.dumps(dict(data, lam=10**400))
    twice = json.dumps(data)[:-1] + ', "seeded": true}'
    deep = json.dumps(data)[:-1] + ', "deep": ' + "[" * 5000 + "]" * 5000 + "}"
    for text, match in [(huge, "lam: an integer of 401 digits"), (twice, 'the key "seeded" appears twice'),
                        (deep, "nest 5001 deep")]:
        with pytest.raises(ValueError, match=match):
            Release.from_json(text)


def test_keys_are_never_written_through_a_link(tmp_path):
    victim, other = tmp_path / "victim.txt", tmp_path / "other.txt"
    victim.write_text("keep me")
    other.write_text("keep me too")
    key = tmp_path / "k"
    os.symlink(victim, key)
    os.link(other, tmp_path / "k.pub")  # a hard link: another name of other.txt
    with pytest.raises(FileExistsError):
        signing.write_keypair(key)
    signing.write_keypair(key, overwrite=True)
    assert victim.read_text() == "keep me" and other.read_text() == "keep me too"
    assert not key.is_symlink() and stat.S_IMODE(os.stat(key).st_mode) == 0o600
    signing.load_private_key(key)
    dangling = tmp_path / "d"
    os.symlink(tmp_path / "nowhere", f"{dangling}.pub")
    with pytest.raises(FileExistsError):
        signing.write_keypair(dangling)
    assert not (tmp_path / "nowhere").exists()


def test_a_release_read_without_checks_is_verified_later_on_the_bytes_of_its_file(releases):
    signed = releases["binary"].sign(releases["key"])
    data = json.loads(signed.to_json())
    assert isinstance(data["norm_bound"], float)
    data["norm_bound"] = int(data["norm_bound"])  # the same number, not the bytes that were signed
    loaded = Release.from_dict(data, verify=False)
    with pytest.raises(signing.SignatureError, match="does not match"):
        loaded.verify(public_key=releases["pub"])
    assert loaded.fingerprint != signed.fingerprint
    assert Release.from_dict(json.loads(signed.to_json()), verify=False).verify(public_key=releases["pub"])


def test_a_key_cannot_put_control_characters_into_a_message():
    hostile = '{"\\u001b[2K\\rok": NaN}'
    with pytest.raises(ValueError) as err:
        loads_strict(hostile, "the release")
    assert "\x1b" not in str(err.value) and "\r" not in str(err.value)
    assert '["\\u001b[2K\\rok"]' in str(err.value)
