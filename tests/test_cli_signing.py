"""Signed releases on the command line: keygen, fit --sign, verify, --public-key, page --sign.

A refusal is one line, exit status 2, naming the field or saying "signature"; ``verify`` without a
key says whether the file is unsigned or signed-but-unchecked and what to compare.
"""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest

from pdpkit import cli
from pdpkit.release import Release
from pdpkit.signing import key_fingerprint, load_public_key

FIT = ["--label", "label", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5"]
REPORT = ["--report", "adaptive", "--report-epsilon", "0.5", "--report-delta", "1e-6"]


def _one_line_error(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Two key pairs, a CSV, a release signed by the first key and an unsigned one."""
    d = tmp_path_factory.mktemp("signing")
    rng = np.random.default_rng(2)
    X = rng.uniform(-0.5, 0.5, size=(150, 3))
    y = np.where(X @ [1.0, -1.0, 0.5] > 0, "yes", "no")
    data = d / "d.csv"
    rows = zip(X.tolist(), y.tolist(), strict=True)
    data.write_text("a,b,c,label\n" + "".join(f"{a!r},{b!r},{c!r},{lab}\n" for (a, b, c), lab in rows))
    for name in ("key", "other"):
        assert cli.main(["keygen", "--out", str(d / name)]) == 0
    assert cli.main(["fit", str(data), *FIT, *REPORT, "--sign", str(d / "key"), "--out", str(d / "signed.json")]) == 0
    assert cli.main(["fit", str(data), *FIT, *REPORT, "--out", str(d / "plain.json")]) == 0
    return d


def test_keygen_writes_a_secret_key_and_its_public_half(tmp_path, capsys):
    key = tmp_path / "k"
    assert cli.main(["keygen", "--out", str(key)]) == 0
    out = capsys.readouterr().out
    fp = key_fingerprint(load_public_key(str(key) + ".pub"))
    assert fp in out and "keep it secret" in out and "wherever your readers find" in out
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    before = key.read_bytes()
    assert cli.main(["keygen", "--out", str(key)]) == 2  # never replaced by mistake
    _one_line_error(capsys, "--out", "exist", "--force")
    assert key.read_bytes() == before
    assert cli.main(["keygen", "--out", str(key), "--force"]) == 0
    assert key.read_bytes() != before and stat.S_IMODE(os.stat(key).st_mode) == 0o600


def test_fit_sign_prints_the_signer_and_the_file_verifies(world, capsys):
    rel = Release.from_json((world / "signed.json").read_text(), public_key=str(world / "key.pub"))
    fp = key_fingerprint(load_public_key(str(world / "key.pub")))
    assert rel.signer == fp
    assert cli.main(["verify", str(world / "signed.json"), "--public-key", str(world / "key.pub")]) == 0
    out = capsys.readouterr().out
    assert f"release fingerprint: {rel.fingerprint}" in out and f"signer: {fp}" in out
    assert "-DP" in out and "seeded: no" in out


def test_verify_without_a_key_says_what_to_compare(world, capsys):
    assert cli.main(["verify", str(world / "plain.json")]) == 0
    out = capsys.readouterr().out
    assert "unsigned" in out and "compare the release fingerprint" in out
    assert cli.main(["verify", str(world / "signed.json")]) == 0
    out = capsys.readouterr().out
    assert "not checked against a publisher's key" in out and "compare this signer fingerprint" in out


@pytest.mark.parametrize("release, key, needle", [
    ("signed.json", "other.pub", "signature: signed by the key"),
    ("plain.json", "key.pub", "signature: the file is unsigned"),
])
def test_verify_with_the_wrong_key_or_unsigned_exits_2(world, capsys, release, key, needle):
    assert cli.main(["verify", str(world / release), "--public-key", str(world / key)]) == 2
    _one_line_error(capsys, "pdpkit verify: error:", release, needle)


def test_an_edited_release_is_refused_naming_the_signature_or_the_field(world, tmp_path, capsys):
    data = json.loads((world / "signed.json").read_text())
    data["theta"][0] += 1e-3  # an edit no consistency check can see
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    assert cli.main(["verify", str(edited)]) == 2
    _one_line_error(capsys, "signature", "changed after it was signed")
    plain = json.loads((world / "plain.json").read_text())
    plain["guarantee"]["epsilon"] = 0.01
    edited.write_text(json.dumps(plain))
    assert cli.main(["verify", str(edited)]) == 2
    _one_line_error(capsys, "guarantee")


def test_predict_report_and_page_refuse_a_release_the_key_did_not_sign(world, tmp_path, capsys):
    pub, other = str(world / "key.pub"), str(world / "other.pub")
    data = str(world / "d.csv")
    for command, extra in (("predict", [data]), ("report", [data, "--label", "label"]), ("page", [])):
        out = tmp_path / f"{command}.out"
        assert cli.main([command, str(world / "signed.json"), *extra, "--public-key", pub, "--out", str(out)]) == 0
        capsys.readouterr()
        for release, key in (("signed.json", other), ("plain.json", pub)):
            out.unlink(missing_ok=True)
            assert cli.main([command, str(world / release), *extra, "--public-key", key, "--out", str(out)]) == 2
            _one_line_error(capsys, "signature")
            assert not out.exists()


def test_page_sign_signs_the_page(world, tmp_path, capsys):
    out = tmp_path / "p.html"
    assert cli.main(["page", str(world / "signed.json"), "--sign", str(world / "key"), "--public-key",
                     str(world / "key.pub"), "--out", str(out)]) == 0
    fp = key_fingerprint(load_public_key(str(world / "key.pub")))
    assert fp in capsys.readouterr().out and fp in out.read_text()


def test_keys_swapped_or_unreadable_are_one_line(world, tmp_path, capsys):
    data = str(world / "d.csv")
    cases = [
        (["predict", str(world / "signed.json"), data, "--public-key", str(world / "key"), "--out",
          str(tmp_path / "p.csv")], ["--public-key", "is a private key"]),
        (["fit", data, *FIT, "--sign", str(world / "key.pub"), "--out", str(tmp_path / "r.json")],
         ["--sign", "is a public key"]),
        (["fit", data, *FIT, "--sign", str(tmp_path / "missing"), "--out", str(tmp_path / "r.json")], ["--sign"]),
        (["verify", str(world / "signed.json"), "--public-key", data], ["--public-key", "not a PEM public key"]),
    ]
    for argv, needles in cases:
        assert cli.main(argv) == 2, argv
        _one_line_error(capsys, *needles)
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "p.csv").exists()


def test_a_hostile_key_cannot_write_control_characters_to_the_terminal(world, tmp_path, capsys):
    text = (world / "signed.json").read_text()
    hostile = tmp_path / "hostile.json"
    hostile.write_text(text.rstrip()[:-1] + ', "\\u001b[2K\\rrelease.json: consistent\\nsigner: FAKE\\u001b[8m": NaN}')
    assert cli.main(["verify", str(hostile)]) == 2
    err = _one_line_error(capsys, "pdpkit verify: error:")
    assert not any(ord(c) < 0x20 and c != "\n" for c in err) and "\x1b" not in err
