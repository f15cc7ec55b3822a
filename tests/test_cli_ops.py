"""``pdpkit fit --model ops|adaops``: the plan before the noise, the ledger, the release and what the CLI prints.

Independent references: the CLI's predictions and per-person bounds against the library's
(:meth:`pdpkit.ops_estimators.OPSEstimator.from_release`, :meth:`pdpkit.release.OPSRelease.per_person_epsilon`);
the ledger file read back with :class:`pdpkit.accountant.PrivacyAccountant`; what the command
prints and writes compared across neighbouring data sets, and against private statistics
computed here with numpy. Each check has a deliberately wrong variant that must fail.
"""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pandas as pd
import pytest

from pdpkit import cli
from pdpkit import ops_estimators
from pdpkit.accountant import PrivacyAccountant
from pdpkit.ops_estimators import OPSEstimator
from pdpkit.release import OPSRelease


def _rows(n: int = 400, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, 3))
    y = np.clip(5.0 + X @ [4.0, -2.0, 1.0] * 3.0 + rng.normal(size=n), 0.0, 10.0)
    return X, y


def _write(path, X, y) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "c", "y"])
        w.writerows([[*map(lambda v: repr(float(v)), xi), repr(float(yi))] for xi, yi in zip(X, y, strict=True)])


@pytest.fixture
def data_csv(tmp_path):
    path = tmp_path / "d.csv"
    _write(path, *_rows())
    return path


def _fit(path, out, model="ops", *extra):
    return cli.main(["fit", str(path), "--label", "y", "--model", model, "--label-bounds", "0,10", "--epsilon", "1",
                     "--delta", "1e-6", "--out", str(out), *extra])


def _plan_then_noise(monkeypatch, capsys, run) -> tuple[int, bool]:
    """Run ``run()`` and say whether the plan was printed before the sampler drew any noise."""
    seen: dict[str, str] = {}
    for name in ("ops_fit", "adaops_fit"):
        original = getattr(ops_estimators, name)

        def spy(*args, _original=original, **kwargs):
            seen.setdefault("before", capsys.readouterr().out)
            return _original(*args, **kwargs)

        monkeypatch.setattr(ops_estimators, name, spy)
    status = run()
    return status, "plan (given, before any noise is drawn)" in seen.get("before", "")


@pytest.mark.parametrize("model", ["ops", "adaops"])
def test_the_plan_is_printed_before_any_noise_and_the_ledger_refuses_a_second_fit(tmp_path, data_csv, capsys,
                                                                                  monkeypatch, model):
    ledger = tmp_path / "budget.sqlite"
    status, first = _plan_then_noise(monkeypatch, capsys, lambda: _fit(
        data_csv, tmp_path / "r0.json", model, "--budget-epsilon", "1.2", "--budget-delta", "1e-5",
        "--ledger", str(ledger)))
    out = capsys.readouterr().out
    assert status == 0 and first
    assert f"ledger {ledger}: budget (1.2, 1e-05): spent" in out
    acc = PrivacyAccountant.open(ledger)
    assert [c.kind for c in acc.ledger] == [model] and acc.ledger[0].name.endswith("model")
    rel = OPSRelease.from_json((tmp_path / "r0.json").read_text())
    assert rel.ledger == acc.ledger and rel.guarantee == acc.spent()
    # a second fit would exceed the budget (OPS) or cannot be composed (AdaOPS): refused, nothing written
    status = _fit(data_csv, tmp_path / "r1.json", model, "--ledger", str(ledger))
    err = capsys.readouterr().err
    assert status == 2 and f"--ledger {ledger}" in err and "nothing was released" in err
    assert not (tmp_path / "r1.json").exists() and len(PrivacyAccountant.open(ledger).ledger) == 1
    # the tester's control: a fit whose plan is not printed before the sampler runs is caught
    monkeypatch.setattr(cli, "_plan_ops", lambda est, X, args: None)
    status, first = _plan_then_noise(monkeypatch, capsys, lambda: _fit(data_csv, tmp_path / "r2.json", model))
    assert status == 0 and not first


def test_a_budget_of_several_ops_fits_refuses_the_one_beyond_it(tmp_path, data_csv, capsys):
    ledger = tmp_path / "b.sqlite"
    assert _fit(data_csv, tmp_path / "r0.json", "ops", "--budget-epsilon", "1.2", "--budget-delta", "1e-5",
                "--ledger", str(ledger)) == 0
    capsys.readouterr()
    assert _fit(data_csv, tmp_path / "r1.json", "ops", "--ledger", str(ledger), "--epsilon", "0.3") == 0
    out = capsys.readouterr().out
    assert "with 1 earlier entries" in out and "in 2 entries; remaining epsilon" in out
    assert _fit(data_csv, tmp_path / "r2.json", "ops", "--ledger", str(ledger)) == 2
    assert "above the budget" in capsys.readouterr().err and not (tmp_path / "r2.json").exists()
    acc = PrivacyAccountant.open(ledger)
    assert [c.kind for c in acc.ledger] == ["ops", "ops"] and acc.spent().epsilon <= 1.2


@pytest.mark.parametrize("model", ["ops", "adaops"])
def test_verify_predict_and_report_work_on_the_release(tmp_path, data_csv, capsys, model):
    out = tmp_path / "r.json"
    assert _fit(data_csv, out, model, "--seed", "4") == 0
    capsys.readouterr()
    assert cli.main(["verify", str(out)]) == 0
    said = capsys.readouterr().out
    assert "consistent: the guarantee (1, 1e-06)-DP" in said and "seeded: yes" in said
    rel = OPSRelease.from_json(out.read_text(), verify=False)
    X, y = _rows(30, seed=8)
    targets = tmp_path / "t.csv"
    _write(targets, X, y)
    assert cli.main(["predict", str(out), str(targets), "--out", str(tmp_path / "p.csv")]) == 0
    with open(tmp_path / "p.csv") as fh:
        pred = np.array([float(r["prediction"]) for r in csv.DictReader(fh)])
    assert np.array_equal(pred, OPSEstimator.from_release(rel).predict(pd.DataFrame(X, columns=["a", "b", "c"])))
    assert cli.main(["report", str(out), str(targets), "--label", "y", "--out", str(tmp_path / "b.csv")]) == 0
    with open(tmp_path / "b.csv") as fh:
        bounds = np.array([float(r["epsilon_bound"]) for r in csv.DictReader(fh)])
    assert np.array_equal(bounds, rel.per_person_epsilon(X, y))
    assert np.all(bounds <= rel.guarantee.epsilon)
    capsys.readouterr()
    # an edited event parameter: refused by verify (and by predict, report)
    data = json.loads(out.read_text())
    key = "gamma" if model == "ops" else "sigma_lam"
    data["ledger"][0]["params"][key] *= 1.5
    edited = tmp_path / "e.json"
    edited.write_text(json.dumps(data))
    for argv in (["verify", str(edited)], ["predict", str(edited), str(targets), "--out", str(tmp_path / "q.csv")]):
        assert cli.main(argv) == 2
        assert "refused" in capsys.readouterr().err
    # the tester's control: the unedited copy passes the same commands
    edited.write_text(out.read_text())
    assert cli.main(["verify", str(edited)]) == 0
    assert cli.main(["page", str(out), "--out", str(tmp_path / "x.html")]) == 2
    assert "pdpkit report" in capsys.readouterr().err


def test_a_signed_ops_release_refuses_an_edited_coefficient(tmp_path, data_csv, capsys):
    assert cli.main(["keygen", "--out", str(tmp_path / "key")]) == 0
    out = tmp_path / "r.json"
    assert _fit(data_csv, out, "ops", "--sign", str(tmp_path / "key")) == 0
    assert "signed by the key" in capsys.readouterr().out
    assert cli.main(["verify", str(out), "--public-key", str(tmp_path / "key.pub")]) == 0
    data = json.loads(out.read_text())
    data["theta"][0] += 1e-9
    out.write_text(json.dumps(data))
    assert cli.main(["verify", str(out), "--public-key", str(tmp_path / "key.pub")]) == 2
    assert "signature" in capsys.readouterr().err


REFUSED = [("--loss", "huber"), ("--classes", "a,b"), ("--report", "data-independent"),
           ("--report-epsilon", "0.5"), ("--report-delta", "1e-6"), ("--rho", "0.1")]


@pytest.mark.parametrize("option,value", REFUSED, ids=[o for o, _ in REFUSED])
def test_options_that_do_not_apply_are_refused_naming_the_option(tmp_path, data_csv, capsys, option, value):
    assert _fit(data_csv, tmp_path / "r.json", "ops", option, value) == 2
    err = capsys.readouterr().err
    assert f"error: {option}: does not apply to --model ops" in err and not (tmp_path / "r.json").exists()


def test_the_ops_options_and_their_absence_are_refused_by_name(tmp_path, data_csv, capsys):
    for argv, said in (
            (["--model", "ops"], "--label-bounds: --model ops needs the labels' public bounds"),
            (["--label-bounds", "0,10"], "--label-bounds: belongs to --model ops or adaops"),
            (["--n-max", "1000"], "--n-max: belongs to --model ops or adaops"),
            (["--model", "adaops", "--label-bounds", "0,10", "--n-max", "10"], "--n-max 10:")):
        assert cli.main(["fit", str(data_csv), "--label", "y", "--epsilon", "1", "--delta", "1e-6", "--out",
                         str(tmp_path / "r.json"), *argv]) == 2
        assert said in capsys.readouterr().err
    # the tester's control: an option that applies is accepted
    assert _fit(data_csv, tmp_path / "r.json", "ops", "--norm-bound", "2", "--n-max", "1000") == 0


def _outputs(tmp_path, name, X, y, model, *extra) -> dict:
    path = tmp_path / f"{name}.csv"
    _write(path, X, y)
    out = tmp_path / f"{name}.json"
    report = tmp_path / f"{name}-b.csv"
    args = ["fit", str(path), "--label", "y", "--model", model, "--label-bounds", "0,10", "--epsilon", "1",
            "--delta", "1e-6", "--seed", "5", "--out", str(out), *extra]
    status = cli.main(args)
    assert status == 0
    targets = tmp_path / "targets.csv"
    _write(targets, *_rows(20, seed=30))
    assert cli.main(["report", str(out), str(targets), "--label", "y", "--out", str(report)]) == 0
    assert cli.main(["verify", str(out)]) == 0
    return {"release": json.loads(out.read_text()), "report": report.read_text()}


NOISY = {"ops": ("theta",), "adaops": ("theta", "lam", "gamma", "lam_min_noisy")}


def _numbers(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from _numbers(v)
    elif isinstance(node, list):
        for v in node:
            yield from _numbers(v)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield float(node)


@pytest.mark.parametrize("model", ["ops", "adaops"])
def test_no_private_value_in_what_the_cli_prints_or_writes(tmp_path, capsys, model):
    X, y = _rows(500, seed=2)
    neighbours = {"nbA": (X, y), "nbB": (X[:-1], y[:-1]), "nbC": (np.delete(X, 7, 0), np.delete(y, 7))}
    printed, files = {}, {}
    for name, (Xn, yn) in neighbours.items():
        files[name] = _outputs(tmp_path, name, Xn, yn, model, "--n-max", "600")
        cap = capsys.readouterr()
        # the release's fingerprint is a hash of its noisy coefficients: compared with the release below
        out = "\n".join(line for line in cap.out.splitlines() if not line.startswith("release fingerprint: "))
        printed[name] = (out.replace(name, "NAME"), cap.err.replace(name, "NAME"))
    # everything else printed is the same on neighbouring data sets (file names aside)
    assert len(set(printed.values())) == 1, printed
    # every field but the noisy outputs is the same, and so is every person's bound
    public = {name: {k: v for k, v in f["release"].items() if k not in NOISY[model]} for name, f in files.items()}
    assert all(p == public["nbA"] for p in public.values())
    assert len({f["report"] for f in files.values()}) == 1
    # no number in the release is a private statistic of D
    rows = np.column_stack([X, np.ones(len(X))])
    t = (y - 5.0) / 5.0
    rel = files["nbA"]["release"]
    mean = np.linalg.solve(rows.T @ rows + rel["lam"] * np.eye(4), rows.T @ t)
    exact = OPSEstimator.from_release(OPSRelease.from_json(json.dumps(rel), verify=False))
    private = [*mean, float(np.linalg.eigvalsh(rows.T @ rows / 2.0)[0]), len(X), float(y.sum()),
               *exact.per_person_epsilon_nonprivate(X, y)[:50]]
    assert not any(math.isclose(v, p, rel_tol=1e-9) for v in _numbers(rel) for p in private)
    assert not any("nonprivate" in k for k in rel)
    # the tester's controls: without --n-max the count is written (a field that differs between neighbours),
    # and a release holding the ridge mean would be caught by the scan
    counted = {name: _outputs(tmp_path, name, Xn, yn, model)["release"]["n_max"]
               for name, (Xn, yn) in neighbours.items()}
    capsys.readouterr()
    assert counted["nbA"] != counted["nbB"]
    assert any(math.isclose(v, p, rel_tol=1e-9) for v in _numbers(dict(rel, theta=list(mean))) for p in private)
