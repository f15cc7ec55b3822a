"""A budget that lasts: the SQLite ledger file across sessions and processes, its integrity check,
eight racing processes, and kill -9 in the middle of a charge."""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from pdpkit.accountant import BudgetExceededError, PrivacyAccountant
from pdpkit.gaussian import gaussian_epsilon
from pdpkit.ledger import LedgerIntegrityError

DELTA = 1e-6
MU = 0.1


def _budget_for(n_fit: int) -> float:
    """A budget that holds exactly ``n_fit`` Gaussian charges of μ = MU (k of them are one Gaussian of μ√k)."""
    return float(gaussian_epsilon(DELTA, sensitivity=MU * math.sqrt(n_fit + 0.5), sigma=1.0))


def test_a_reopened_ledger_shows_everything_charged_and_keeps_its_budget(tmp_path):
    path = tmp_path / "budget.sqlite"
    acc = PrivacyAccountant(1.0, DELTA, path=path)
    assert acc.charge_gaussian(mu=0.05, name="means") == 0
    assert acc.charge_objpert(L=1.0, beta=0.25, lam=1.0, sigma=40.0, mu_out=1e-3, name="model") == 1
    spent = acc.spent()
    del acc
    again = PrivacyAccountant(1.0, DELTA, path=path)  # a later session, same budget
    assert again.spent() == spent and [c.name for c in again.ledger] == ["means", "model"]
    assert PrivacyAccountant.open(path).spent() == spent
    with pytest.raises(ValueError, match="budget"):
        PrivacyAccountant(2.0, DELTA, path=path)  # a budget is set when the file is created
    assert oct(os.stat(str(path) + ".key").st_mode & 0o777) == "0o600"
    assert "ledger file" in repr(again)


def _edit(path, sql, *args):
    con = sqlite3.connect(str(path))
    con.execute(sql, args)
    con.commit()
    con.close()


@pytest.mark.parametrize("edit", ["budget", "entry", "delete-last", "delete-first", "insert", "swap-key",
                                  "no-key", "reorder"])
def test_an_edited_ledger_file_is_refused(tmp_path, edit):
    path = tmp_path / "b.sqlite"
    acc = PrivacyAccountant(1.0, DELTA, path=path)
    for i in range(3):
        acc.charge_gaussian(mu=0.1, name=f"c{i}")
    PrivacyAccountant.open(path)  # the tester's control: the untouched file opens
    if edit == "budget":
        _edit(path, "UPDATE meta SET v = '100.0' WHERE k = 'epsilon'")
    elif edit == "entry":
        _edit(path, "UPDATE entries SET entry = replace(entry, '0.1', '0.01') WHERE position = 1")
    elif edit == "delete-last":
        _edit(path, "DELETE FROM entries WHERE position = 2")
    elif edit == "delete-first":
        _edit(path, "DELETE FROM entries WHERE position = 0")
    elif edit == "insert":
        con = sqlite3.connect(str(path))
        text, mac = con.execute("SELECT entry, mac FROM entries WHERE position = 2").fetchone()
        con.close()
        _edit(path, "INSERT INTO entries (position, entry, mac) VALUES (3, ?, ?)", text, mac)
    elif edit == "swap-key":
        PrivacyAccountant(1.0, DELTA, path=tmp_path / "other.sqlite")
        os.replace(tmp_path / "other.sqlite.key", str(path) + ".key")
    elif edit == "no-key":
        os.unlink(str(path) + ".key")
    elif edit == "reorder":
        con = sqlite3.connect(str(path))
        rows = con.execute("SELECT position, entry, mac FROM entries ORDER BY position").fetchall()
        con.execute("DELETE FROM entries")
        for (pos, _, _), (_, text, mac) in zip(rows, rows[::-1], strict=True):  # every row, last first
            con.execute("INSERT INTO entries (position, entry, mac) VALUES (?, ?, ?)", (pos, text, mac))
        con.commit()
        con.close()
    with pytest.raises(LedgerIntegrityError):
        PrivacyAccountant.open(path)
    if edit in ("swap-key", "no-key"):  # the database is intact: the live accountant holds the real key
        return
    with pytest.raises(LedgerIntegrityError):
        acc.charge_gaussian(mu=0.1, name="more")  # a live accountant refuses too, and charges nothing


# ------------------------------------------------------------------ processes
def _race(path: str, worker: int, out) -> None:
    from pdpkit.accountant import BudgetExceededError, PrivacyAccountant

    acc = PrivacyAccountant.open(path)
    accepted = []
    for j in range(100):
        try:
            accepted.append(acc.charge_gaussian(mu=MU, name=f"w{worker}-{j}"))
        except BudgetExceededError:
            break
    out.put((worker, accepted))


def test_eight_processes_racing_one_ledger_accept_exactly_what_fits(tmp_path):
    n_fit = 24
    path = str(tmp_path / "race.sqlite")
    PrivacyAccountant(_budget_for(n_fit), DELTA, path=path)
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(path, w, out)) for w in range(8)]
    for p in procs:
        p.start()
    results = [out.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    positions = sorted(pos for _, acc in results for pos in acc)
    assert positions == list(range(n_fit))  # exactly what fits, each place once
    ledger = PrivacyAccountant.open(path)
    assert len(ledger.ledger) == n_fit and ledger.spent().epsilon <= ledger.epsilon
    with pytest.raises(BudgetExceededError):
        ledger.charge_gaussian(mu=MU, name="one more")
    # the tester's control: an accountant of its own (no shared file) accepts the whole budget again
    alone = PrivacyAccountant(_budget_for(n_fit), DELTA)
    for _ in range(n_fit):
        alone.charge_gaussian(mu=MU, name="x")
    with pytest.raises(BudgetExceededError):
        alone.charge_gaussian(mu=MU, name="x")


_KILLED_CHILD = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from pdpkit._validation import charged_generator
    from pdpkit.accountant import PrivacyAccountant
    from pdpkit.events import GaussianEvent

    path, marks = sys.argv[1], sys.argv[2]
    acc = PrivacyAccountant.open(path)

    def mark(name):
        fd = os.open(os.path.join(marks, name), os.O_WRONLY | os.O_CREAT, 0o600)
        os.fsync(fd)
        os.close(fd)

    print("ready", flush=True)
    for j in range(10_000):
        with acc.charging(GaussianEvent(mu=0.01), name=f"c{j}") as position:
            noise = charged_generator(None, position).normal(size=3)  # the release's noise, drawn here
            mark(f"drawn-{position}")
            time.sleep(0.002)  # the transaction is open: a kill may land here
        mark(f"released-{position}")  # after the commit: the release may leave the process
""")


@pytest.mark.parametrize("delay", [0.3, 0.8])
def test_kill_9_in_a_charge_loses_nothing_charged_and_records_nothing_undrawn(tmp_path, delay):
    path = str(tmp_path / "k.sqlite")
    PrivacyAccountant(400.0, DELTA, path=path)
    marks = tmp_path / "marks"
    marks.mkdir()
    child = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, path, str(marks)], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline().strip() == "ready"
    time.sleep(delay)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    child.stdout.close()
    recorded = len(PrivacyAccountant.open(path).ledger)  # the file is intact and opens
    drawn = {int(n.split("-")[1]) for n in os.listdir(marks) if n.startswith("drawn-")}
    released = {int(n.split("-")[1]) for n in os.listdir(marks) if n.startswith("released-")}
    assert recorded > 0, "the child made no charge before the kill: raise the delay"
    assert set(range(recorded)) <= drawn  # every recorded charge had its noise drawn
    assert released <= set(range(recorded))  # every release that may have left the process is recorded
    assert len(drawn) - recorded in (0, 1)  # at most the one charge in flight when killed: rolled back


def _charge_in_worker(acc, i):
    return acc.charge_gaussian(mu=0.05, name=f"worker {i}")


def test_a_copy_in_another_process_charges_the_same_ledger_file(tmp_path):
    joblib = pytest.importorskip("joblib")
    acc = PrivacyAccountant(1.0, DELTA, path=tmp_path / "shared.sqlite")
    acc.charge_gaussian(mu=0.05, name="parent")
    got = joblib.Parallel(n_jobs=2, backend="multiprocessing")(joblib.delayed(_charge_in_worker)(acc, i) for i in range(4))
    assert sorted(got) == [1, 2, 3, 4]  # each worker's charge has its own place, and the parent sees them all
    assert {c.name for c in acc.ledger} == {"parent"} | {f"worker {i}" for i in range(4)}
    assert not acc.detached


def test_noise_streams_of_a_ledger_file_never_repeat_across_sessions(tmp_path):
    from pdpkit._validation import charged_generator

    path = tmp_path / "s.sqlite"
    draws = []
    for _ in range(2):  # two sessions with the same seed
        acc = PrivacyAccountant(1.0, DELTA, path=path)
        pos = acc.charge_gaussian(mu=0.05, name="x")
        draws.append(charged_generator(0, pos).normal(size=4))
    assert not np.allclose(draws[0], draws[1])


def test_cross_validation_in_worker_processes_charges_the_ledger_file(tmp_path):
    """joblib's copies of an estimator (n_jobs=2: other processes) spend from the session's file, not outside it."""
    from sklearn.model_selection import cross_val_score

    from pdpkit.estimators import ObjPertClassifier

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(240, 3))
    y = (X @ [1.0, -1.0, 0.5] > 0).astype(int)
    acc = PrivacyAccountant(5.0, DELTA, path=tmp_path / "cv.sqlite")
    est = ObjPertClassifier(1.0, DELTA, classes=[0, 1], accountant=acc)
    cross_val_score(est, X, y, cv=3, n_jobs=2)
    assert [c.name for c in acc.ledger] == ["ObjPertClassifier model"] * 3
    assert acc.spent().epsilon <= 5.0


def test_a_charge_that_waits_too_long_for_another_stops_and_charges_nothing(tmp_path, monkeypatch):
    from pdpkit import ledger as ledger_mod

    path = tmp_path / "busy.sqlite"
    acc = PrivacyAccountant(1.0, DELTA, path=path)
    holder = sqlite3.connect(str(path), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's charge in progress
    monkeypatch.setattr(ledger_mod, "_WAIT_SECONDS", 0.2)
    try:
        with pytest.raises(ledger_mod.LedgerBusyError, match="nothing was charged"):
            acc.charge_gaussian(mu=0.1, name="waiting")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert acc.ledger == ()
    assert acc.charge_gaussian(mu=0.1, name="later") == 0  # once the other charge ends, it goes through
