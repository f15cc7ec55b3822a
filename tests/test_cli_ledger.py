"""The command line's ledger: five trial fits from the shell count against one budget file."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from pdpkit import cli
from pdpkit.accountant import PrivacyAccountant


@pytest.fixture
def data_csv(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.5, 0.5, size=(200, 3))
    y = np.where(X @ [1.0, -1.0, 0.5] > 0, "yes", "no")
    path = tmp_path / "d.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "c", "label"])
        w.writerows([[*map(lambda v: repr(float(v)), xi), yi] for xi, yi in zip(X, y, strict=True)])
    return path


def _fit(path, out, *extra):
    return cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", "--epsilon", "0.5", "--delta",
                     "1e-7", "--out", str(out), *extra])


def test_fits_from_the_shell_charge_one_ledger_until_it_refuses(tmp_path, data_csv, capsys):
    ledger = tmp_path / "budget.sqlite"
    assert _fit(data_csv, tmp_path / "r0.json", "--budget-epsilon", "0.9", "--budget-delta", "1e-6",
                "--ledger", str(ledger)) == 0
    assert f"ledger {ledger}: budget (0.9, 1e-06): spent" in capsys.readouterr().out
    assert _fit(data_csv, tmp_path / "r1.json", "--ledger", str(ledger)) == 0  # the file's budget, continued
    out = capsys.readouterr().out
    assert "in 2 entries; remaining epsilon" in out
    status = _fit(data_csv, tmp_path / "r2.json", "--ledger", str(ledger))  # a third fit at 0.5 does not fit
    err = capsys.readouterr().err
    assert status == 2 and f"--ledger {ledger}" in err and "nothing was released" in err
    assert not (tmp_path / "r2.json").exists()
    acc = PrivacyAccountant.open(ledger)
    assert len(acc.ledger) == 2 and acc.spent().epsilon <= 0.9
    # the releases state the ledger's total at their time
    second = json.loads((tmp_path / "r1.json").read_text())
    assert len(second["ledger"]) == 2
    # pdpkit budget FILE shows it
    assert cli.main(["budget", str(ledger)]) == 0
    shown = capsys.readouterr().out
    assert "ObjPertClassifier model [objpert]" in shown and "total: (" in shown
    assert cli.main(["budget", str(ledger), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["epsilon"] == 0.9 and len(data["entries"]) == 2


def test_ledger_refusals_are_one_line_errors(tmp_path, data_csv, capsys):
    missing = tmp_path / "none.sqlite"
    assert _fit(data_csv, tmp_path / "r.json", "--ledger", str(missing)) == 2
    assert "no such ledger file" in capsys.readouterr().err
    ledger = tmp_path / "b.sqlite"
    PrivacyAccountant(1.0, 1e-6, path=ledger)
    assert _fit(data_csv, tmp_path / "r.json", "--budget-epsilon", "3", "--budget-delta", "1e-6",
                "--ledger", str(ledger)) == 2
    assert "has the budget (epsilon=1.0" in capsys.readouterr().err
    import sqlite3

    con = sqlite3.connect(str(ledger))
    con.execute("UPDATE meta SET v = '9.0' WHERE k = 'epsilon'")
    con.commit()
    con.close()
    assert cli.main(["budget", str(ledger)]) == 2
    assert "budget or id was edited" in capsys.readouterr().err


def _plan_fit(path, out, *extra):
    return cli.main(["fit", str(path), "--label", "label", "--classes", "no,yes", "--out", str(out), *extra])


def test_the_planner_shares_what_is_left_and_prints_the_plan_before_the_fit(tmp_path, data_csv, capsys):
    import re

    ledger = tmp_path / "budget.sqlite"
    # a fresh budget, the model and its report planned: their composition is the budget, to the planner's 1e-3
    assert _plan_fit(data_csv, tmp_path / "r0.json", "--budget-epsilon", "2", "--budget-delta", "1e-6",
                     "--ledger", str(ledger), "--report", "adaptive", "--seed", "0") == 0
    out = capsys.readouterr().out
    assert out.index("plan (planned, before any noise is drawn)") < out.index("wrote ")
    model, report = (float(v) for v in re.search(r"model \(([\d.]+), 5e-07\) \+ report \(([\d.]+), 5e-07\)",
                                                 out).groups())
    assert report / model == pytest.approx(0.5, rel=1e-3)  # the default --report-share
    acc = PrivacyAccountant.open(ledger)
    assert 2.0 * (1 - 3e-3) <= acc.spent().epsilon <= 2.0
    assert [c.epsilon() for c in acc.ledger] == pytest.approx([model, report], rel=1e-3)
    # what the plan line says the budget then holds is what the ledger holds after the fit
    held = float(re.search(r"then holds epsilon ([\d.]+)", out).group(1))
    assert acc.spent().epsilon <= held <= acc.spent().epsilon + 1e-3  # rounded up to 4 digits

    # a given fit prints its plan too; then the planner plans the rest with the earlier entries
    ledger2 = tmp_path / "b2.sqlite"
    assert _plan_fit(data_csv, tmp_path / "r1.json", "--epsilon", "0.5", "--delta", "1e-7", "--budget-epsilon", "1.5",
                     "--budget-delta", "1e-6", "--ledger", str(ledger2)) == 0
    assert "plan (given, before any noise is drawn): model (0.5, 1e-07)" in capsys.readouterr().out
    assert _plan_fit(data_csv, tmp_path / "r2.json", "--ledger", str(ledger2), "--report", "adaptive",
                     "--report-share", "0.25") == 0
    out = capsys.readouterr().out
    assert "with 1 earlier entries" in out
    acc2 = PrivacyAccountant.open(ledger2)
    assert len(acc2.ledger) == 3 and 1.5 * (1 - 3e-3) <= acc2.spent().epsilon <= 1.5
    assert acc2.ledger[2].epsilon() / acc2.ledger[1].epsilon() == pytest.approx(0.25, rel=1e-3)
    # test the tester: the same two parts without the earlier entry would have been given more
    assert acc2.ledger[1].epsilon() < PrivacyAccountant.open(ledger).ledger[0].epsilon()


@pytest.mark.parametrize("extra, needle", [
    (("--epsilon", "1"), "give both --epsilon and --delta"),
    ((), "a budget (--budget-epsilon"),
    (("--budget-epsilon", "1", "--budget-delta", "1e-6", "--report", "adaptive", "--report-epsilon", "0.5"),
     "--report-epsilon: the planner shares"),
    (("--epsilon", "1", "--delta", "1e-6", "--report-share", "0.3"), "--report-share: belongs to the planner"),
    (("--budget-epsilon", "1", "--budget-delta", "1e-6", "--report-share", "0.3"), "--report-share"),
])
def test_planner_refusals(tmp_path, data_csv, capsys, extra, needle):
    assert _plan_fit(data_csv, tmp_path / "r.json", *extra) == 2
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
