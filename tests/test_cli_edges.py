"""The ``pdpkit`` command line at its edges: output paths, atomic writes, signals, awkward CSV files.

Every refusal is one line on stderr naming the option or the file, exit status 2, and leaves no
output and no ``.pdpkit-*.tmp`` file; a file that cannot be read as a CSV is refused without naming
the line (``pdpkit check`` names it); path problems are found before any work starts. Outputs get
the usual mode (0o666 & ~umask). Ctrl-C exits 130, SIGTERM 143, both with one line and nothing left.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from pdpkit import cli
from pdpkit._validation import row_norms
from pdpkit.release import Release
from pdpkit.release import RELEASE_FORMAT

FIT = ["--label", "label", "--classes", "no,yes", "--epsilon", "1", "--delta", "1e-5", "--seed", "3"]


def _rows(n: int = 200, seed: int = 1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, 3))
    y = np.where(X @ [1.0, -1.0, 0.5] > 0, "yes", "no")
    return [[*map(lambda v: repr(float(v)), xi), yi] for xi, yi in zip(X, y, strict=True)]


def _write_csv(path, header=("a", "b", "c", "label"), rows=None, *, prefix: bytes = b"", encoding="utf-8"):
    rows = _rows() if rows is None else rows
    lines = [",".join(header)] + [",".join(r) for r in rows]
    path.write_bytes(prefix + ("\n".join(lines) + "\n").encode(encoding))
    return path


@pytest.fixture
def data(tmp_path):
    return _write_csv(tmp_path / "d.csv")


@pytest.fixture
def release(tmp_path, data):
    rel = tmp_path / "rel.json"
    assert cli.main(["fit", str(data), *FIT, "--report", "adaptive", "--report-epsilon", "0.5",
                     "--report-delta", "1e-6", "--out", str(rel)]) == 0
    return rel


def _leftovers(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.startswith(".pdpkit-"))


def _without_seed_note(err: str) -> str:
    """stderr less the one line that says a release was made from a seed (the tests fit with --seed)."""
    lines = err.splitlines(keepends=True)
    notes = [ln for ln in lines if ": warning: this release is reproducible from a seed" in ln]
    assert len(notes) <= 1, err  # said once per command
    return "".join(ln for ln in lines if ln not in notes)


def _one_line_error(capsys, *needles: str) -> str:
    err = _without_seed_note(capsys.readouterr().err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the command starts its work (reads the data) before refusing."""
    def refuse(*args, **kwargs):
        raise AssertionError("the work started before the output paths were checked")

    monkeypatch.setattr(cli, "read_csv", refuse)
    monkeypatch.setattr(cli, "_read_table", refuse)


# ----------------------------------------------------------------------------- output paths
def test_out_equal_to_an_input_is_refused_and_the_input_survives(tmp_path, data, release, capsys, no_work):
    before = data.read_bytes()
    link, hard = tmp_path / "link.csv", tmp_path / "hard.csv"
    link.symlink_to(data)
    os.link(data, hard)
    calls = [
        (["fit", str(data), *FIT, "--out", str(data)], "--out"),
        (["fit", str(link), *FIT, "--out", str(data)], "--out"),  # the same file through a symlink
        (["fit", str(data), *FIT, "--out", str(hard)], "--out"),  # ... and through a hard link
        (["fit", str(tmp_path / "." / "d.csv"), *FIT, "--out", str(data)], "--out"),
        (["predict", str(release), str(data), "--out", str(data)], "--out"),
        (["report", str(release), str(data), "--label", "label", "--out", str(release)], "--out"),
        (["report", str(release), str(data), "--label", "label", "--out", str(tmp_path / "r.csv"),
          "--plot", str(data)], "--plot"),
    ]
    for argv, option in calls:
        assert cli.main(argv) == 2, argv
        _one_line_error(capsys, option, "is the input file")
    assert data.read_bytes() == before
    assert json.loads(release.read_text())["format"] == RELEASE_FORMAT
    assert _leftovers(tmp_path) == [] and not (tmp_path / "r.csv").exists()


def test_bad_output_locations_are_refused_before_the_fit(tmp_path, data, release, capsys, no_work):
    (tmp_path / "adir").mkdir()
    cases = [
        (["fit", str(data), *FIT, "--out", str(tmp_path / "nodir" / "r.json")], ["--out", "does not exist"]),
        (["fit", str(data), *FIT, "--out", str(tmp_path / "adir")], ["--out", "is a directory"]),
        (["fit", str(data), *FIT, "--out", os.devnull], ["--out", "not a regular file"]),
        (["fit", str(data), *FIT, "--out", ""], ["--out", "empty"]),
        (["predict", str(release), str(data), "--out", str(tmp_path / "d.csv" / "p.csv")], ["--out"]),
        (["report", str(release), str(data), "--label", "label", "--out", str(tmp_path / "r.csv"),
          "--plot", str(tmp_path / "nodir" / "p.png")], ["--plot", "does not exist"]),
        (["report", str(release), str(data), "--label", "label", "--out", str(tmp_path / "r.csv"),
          "--plot", str(tmp_path / "r.csv")], ["--plot", "same file as --out"]),
        (["report", str(release), str(data), "--label", "label", "--out", str(tmp_path / "old.csv"),
          "--plot", str(tmp_path / "old-link.csv")], ["--plot", "same file as --out"]),  # a hard link
    ]
    (tmp_path / "old.csv").write_text("x\n")
    os.link(tmp_path / "old.csv", tmp_path / "old-link.csv")
    for argv, needles in cases:
        assert cli.main(argv) == 2, argv
        _one_line_error(capsys, *needles)
    assert _leftovers(tmp_path) == [] and not (tmp_path / "r.csv").exists()
    assert (tmp_path / "old.csv").read_text() == "x\n"


def test_unwritable_output_directory_is_refused_naming_the_option(tmp_path, data, capsys, no_work):
    if os.geteuid() == 0:  # root writes anywhere permissions allow nothing: use a directory no one can write
        target = "/proc/pdpkit-never.json"
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        target = str(ro / "r.json")
    try:
        assert cli.main(["fit", str(data), *FIT, "--out", target]) == 2
        _one_line_error(capsys, "--out", "cannot write")
    finally:
        if os.geteuid() != 0:
            (tmp_path / "ro").chmod(0o700)
    assert not os.path.exists(target)


# ----------------------------------------------------------------------------- atomic outputs, modes
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_every_output_gets_the_usual_mode(tmp_path, data, umask):
    old = os.umask(umask)
    try:
        rel, rep, png, pred = (tmp_path / n for n in ("rel.json", "rep.csv", "rep.png", "pred.csv"))
        assert cli.main(["fit", str(data), *FIT, "--report", "adaptive", "--report-epsilon", "0.5",
                         "--report-delta", "1e-6", "--out", str(rel)]) == 0
        assert cli.main(["report", str(rel), str(data), "--label", "label", "--out", str(rep),
                         "--plot", str(png)]) == 0
        assert cli.main(["predict", str(rel), str(data), "--out", str(pred)]) == 0
    finally:
        os.umask(old)
    for f in (rel, rep, png, pred):
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~umask, f
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _leftovers(tmp_path) == []


def test_the_mode_check_would_catch_mkstemps_default():
    fd, name = tempfile.mkstemp()
    os.close(fd)
    try:
        assert stat.S_IMODE(os.stat(name).st_mode) == 0o600 != 0o666 & ~0o022
    finally:
        os.unlink(name)


def test_report_csv_and_plot_appear_together_or_not_at_all(tmp_path, data, release, capsys, monkeypatch):
    rep, png = tmp_path / "rep.csv", tmp_path / "rep.png"
    rep.write_text("old report\n")
    import matplotlib.figure

    def broken(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", broken)
    assert cli.main(["report", str(release), str(data), "--label", "label", "--out", str(rep),
                     "--plot", str(png)]) == 2
    _one_line_error(capsys, "--plot", "No space left")
    assert rep.read_text() == "old report\n" and not png.exists()  # the CSV was not replaced either
    assert _leftovers(tmp_path) == []


def test_a_failed_rename_names_the_option_and_leaves_the_old_output(tmp_path, data, capsys, monkeypatch):
    out = tmp_path / "rel.json"
    out.write_text("previous\n")

    def failing(src, dst):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(cli.os, "replace", failing)
    assert cli.main(["fit", str(data), *FIT, "--out", str(out)]) == 2
    _one_line_error(capsys, "--out", "Read-only file system")
    assert out.read_text() == "previous\n" and _leftovers(tmp_path) == []


# ----------------------------------------------------------------------------- CSV input
def test_duplicate_columns_are_refused_naming_file_and_column(tmp_path, capsys):
    bad = _write_csv(tmp_path / "dup.csv", header=("f0", "f1", "f0", "label"))
    out = tmp_path / "r.json"
    assert cli.main(["fit", str(bad), *FIT, "--out", str(out)]) == 2
    _one_line_error(capsys, "dup.csv", "'f0'", "twice")
    assert not out.exists() and _leftovers(tmp_path) == []


def test_a_utf8_bom_is_not_part_of_the_first_feature_name(tmp_path, data):
    bom = _write_csv(tmp_path / "bom.csv", prefix=b"\xef\xbb\xbf")
    plain_out, bom_out = tmp_path / "plain.json", tmp_path / "bom.json"
    assert cli.main(["fit", str(data), *FIT, "--out", str(plain_out)]) == 0
    assert cli.main(["fit", str(bom), *FIT, "--out", str(bom_out)]) == 0
    rel = Release.from_json(bom_out.read_text())
    assert rel.feature_names == ("a", "b", "c")
    assert rel.theta.tolist() == Release.from_json(plain_out.read_text()).theta.tolist()
    # a BOM'ed file also works as the targets of predict (the release's names are found)
    pred = tmp_path / "p.csv"
    assert cli.main(["predict", str(plain_out), str(bom), "--out", str(pred)]) == 0


def test_a_gzip_file_is_read_transparently(tmp_path, data):
    gz = tmp_path / "d.csv.gz"
    gz.write_bytes(gzip.compress(b"\xef\xbb\xbf" + data.read_bytes()))
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert cli.main(["fit", str(data), *FIT, "--out", str(a)]) == 0
    assert cli.main(["fit", str(gz), *FIT, "--out", str(b)]) == 0
    assert json.loads(a.read_text())["theta"] == json.loads(b.read_text())["theta"]


@pytest.mark.parametrize("content, needles, detail", [
    ("latin1", ["lat.csv", "a byte is not UTF-8", "iconv", "pdpkit check"], ["line 3", "0xe9"]),
    ("truncated-gzip", ["lat.csv", "gzip", "corrupt"], None),
    ("utf16", ["lat.csv", "a byte is not UTF-8", "pdpkit check"], ["line 1"]),
])
def test_undecodable_files_are_refused_naming_the_file(tmp_path, capsys, content, needles, detail):
    rows = _rows(5)
    rows[1][3] = "café"
    path = tmp_path / "lat.csv"
    if content == "latin1":
        _write_csv(path, rows=rows, encoding="latin-1")
    elif content == "utf16":
        _write_csv(path, rows=rows, encoding="utf-16")
    else:
        path.write_bytes(gzip.compress(_write_csv(tmp_path / "x.csv", rows=rows).read_bytes())[:40])
    out = tmp_path / "r.json"
    for argv in (["fit", str(path), *FIT, "--out", str(out)],):
        assert cli.main(argv) == 2
        err = _one_line_error(capsys, *needles)
        assert "line" not in err.split("; to find the rows")[0].replace(str(path), "")
    assert not out.exists() and _leftovers(tmp_path) == []
    if detail:  # the non-private diagnostic names the line and the byte
        assert cli.main(["check", str(path), "--label", "label"]) == 1
        said = capsys.readouterr().out
        assert said.startswith("NON-PRIVATE") and all(d in said for d in detail), said


def test_a_malformed_csv_is_one_line_not_a_traceback(tmp_path, capsys):
    path = tmp_path / "big_field.csv"
    path.write_text("a,b,label\n" + "0.1," + "9" * 200_000 + ",yes\n")  # beyond csv's field size limit
    out = tmp_path / "r.json"
    assert cli.main(["fit", str(path), *FIT, "--out", str(out)]) == 2
    _one_line_error(capsys, "big_field.csv", "limit", "pdpkit check")
    assert not out.exists()
    assert cli.main(["check", str(path)]) == 1
    assert "line 2, column 'b'" in capsys.readouterr().out


def test_a_row_of_another_width_is_refused_without_its_number(tmp_path, capsys):
    rows = _rows(20)
    texts = []
    for k in (3, 11):  # the short row elsewhere: the same message
        bad = [list(r) for r in rows]
        bad[k] = bad[k][:3]
        path = _write_csv(tmp_path / f"w{k}.csv", rows=bad)
        assert cli.main(["fit", str(path), *FIT, "--out", str(tmp_path / "r.json")]) == 2
        err = _one_line_error(capsys, "another number of cells than the header (4)")
        texts.append(err.replace(str(path), "DATA"))
        assert cli.main(["check", str(path)]) == 1
        assert f"row {k + 1} (line {k + 2}) has 3 cells" in capsys.readouterr().out
    assert texts[0] == texts[1]


# ----------------------------------------------------------------------------- interruptions
def test_ctrl_c_and_sigterm_inside_the_work_exit_130_and_143_cleanly(tmp_path, data, capsys, monkeypatch):
    out = tmp_path / "rel.json"
    handler_before = signal.getsignal(signal.SIGTERM)
    def ctrl_c():
        raise KeyboardInterrupt

    def sigterm():
        cli._on_sigterm(signal.SIGTERM, None)  # what the installed handler does when the signal arrives

    for stop, code, word in ((ctrl_c, 130, "interrupted"), (sigterm, 143, "terminated")):
        def fit_then_stop(*args, stop=stop, **kwargs):
            assert len(_leftovers(tmp_path)) == 1  # the output's temporary file is reserved already
            stop()

        monkeypatch.setattr(cli, "_estimator_for", fit_then_stop)
        assert cli.main(["fit", str(data), *FIT, "--out", str(out)]) == code
        _one_line_error(capsys, word, "no output written")
        assert not out.exists() and _leftovers(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) is handler_before  # main() restores the handler it replaced


def test_a_signal_during_an_extensions_import_is_still_reported_as_the_signal(tmp_path, data, capsys,
                                                                              monkeypatch):
    # A signal that arrives while a compiled extension initializes (scipy's, imported at the first
    # fit) reaches main() as "ImportError: initialization failed": it is still Ctrl-C or SIGTERM
    out = tmp_path / "rel.json"
    int_before = signal.getsignal(signal.SIGINT)
    for sig, code, word in ((signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")):
        def import_interrupted(*args, sig=sig, **kwargs):
            try:
                signal.getsignal(sig)(sig, None)  # the handler main() installed, as the signal calls it
            except BaseException as exc:
                raise ImportError("initialization failed") from exc

        monkeypatch.setattr(cli, "_estimator_for", import_interrupted)
        assert cli.main(["fit", str(data), *FIT, "--out", str(out)]) == code
        _one_line_error(capsys, word, "no output written")
        assert not out.exists() and _leftovers(tmp_path) == []
    assert signal.getsignal(signal.SIGINT) is int_before
    # an ImportError without a signal stays an error of its own
    monkeypatch.setattr(cli, "_estimator_for", lambda *a, **k: (_ for _ in ()).throw(ImportError("no module")))
    with pytest.raises(ImportError):
        cli.main(["fit", str(data), *FIT, "--out", str(out)])


def _start(argv, cwd):
    """The CLI in a child process with default SIGINT (a shell's background job would ignore it)."""
    return subprocess.Popen([sys.executable, "-m", "pdpkit", *argv], cwd=cwd, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _wait_for_temp(proc, directory, timeout=30.0):
    t0 = time.monotonic()
    while not _leftovers(directory):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() - t0 < timeout, "the child never reserved its output"
        time.sleep(0.01)


@pytest.mark.parametrize("sig, code, word", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_signal_while_reading_removes_the_temporary_file(tmp_path, sig, code, word):
    """The input is a FIFO nobody writes to: the child is certainly inside its work when the signal comes."""
    fifo = tmp_path / "in.csv"
    os.mkfifo(fifo)
    proc = _start(["fit", str(fifo), *FIT, "--out", "rel.json"], tmp_path)
    _wait_for_temp(proc, tmp_path)
    proc.send_signal(sig)
    err = proc.communicate(timeout=30)[1]
    assert proc.returncode == code, err
    assert err.count("\n") == 1 and word in err and "Traceback" not in err
    assert _leftovers(tmp_path) == [] and not (tmp_path / "rel.json").exists()


def test_sigterm_during_a_large_fit_leaves_nothing(tmp_path):
    n = 150_000
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.3, 0.3, size=(n, 8))
    y = np.where(X.sum(axis=1) > 0, 1, 0)
    path = tmp_path / "big.csv"
    np.savetxt(path, np.column_stack([X, y]), fmt=["%.5f"] * 8 + ["%d"], delimiter=",",
               header=",".join([f"f{j}" for j in range(8)] + ["label"]), comments="")
    fit = [a if a != "no,yes" else "0,1" for a in FIT]
    proc = _start(["fit", str(path), *fit, "--out", "big.json"], tmp_path)
    _wait_for_temp(proc, tmp_path)
    time.sleep(0.2)  # now reading 150k rows or fitting: about a second of work left
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=30)[1]
    assert proc.returncode == 143, err
    assert err.strip() == "pdpkit fit: terminated (SIGTERM); no output written"
    assert _leftovers(tmp_path) == [] and not (tmp_path / "big.json").exists()


def test_the_leftover_check_sees_a_stray_temporary_file(tmp_path):
    (tmp_path / ".pdpkit-abc123.tmp").write_text("")
    assert _leftovers(tmp_path) == [".pdpkit-abc123.tmp"]


def test_python_dash_m_still_writes_a_complete_release(tmp_path, data):
    res = subprocess.run([sys.executable, "-m", "pdpkit", "fit", str(data), *FIT, "--out", "r.json"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "r.json").read_text())["format"] == RELEASE_FORMAT
    with open(data) as fh:
        assert next(csv.reader(fh)) == ["a", "b", "c", "label"]


# ----------------------------------------------------------------------------- hostile JSON
def _hostile(text: str, kind: str) -> str:
    """A JSON text with, at its first number, a 400-digit or 5,000-digit integer, or nested 100,000 deep."""
    if kind == "deep":
        return '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}"
    digits = {"int400": 400, "int5000": 5000}[kind]
    big = "9" * digits
    return text.replace('"lam": ', f'"lam": {big}, "_": ', 1).replace('"low": ', f'"low": {big}, "_": ', 1)


@pytest.mark.parametrize("kind, needle", [("int400", "an integer of 400 digits"),
                                          ("int5000", "an integer of 5000 digits"), ("deep", "nest 100001 deep")])
def test_hostile_json_in_a_release_or_a_schema_is_one_line_naming_the_field(tmp_path, data, release, capsys, kind,
                                                                           needle):
    from pdpkit.schema import Column, Schema

    bad = tmp_path / "bad.json"
    bad.write_text(_hostile(release.read_text(), kind))
    where = "" if kind == "deep" else "lam: "
    for argv in (["verify", str(bad)], ["predict", str(bad), str(data), "--out", str(tmp_path / "p.csv")],
                 ["report", str(bad), str(data), "--label", "label", "--out", str(tmp_path / "p.csv")]):
        assert cli.main(argv) == 2
        _one_line_error(capsys, f"{bad}: refused: the release: {where}", needle)
    schema = Schema([Column("a", low=-1, high=1), Column("b", low=-1, high=1), Column("c", low=-1, high=1),
                     Column("label", role="label", kind="categorical", categories=("no", "yes"))])
    bad.write_text(_hostile(schema.to_json(), kind))
    where = "" if kind == "deep" else "columns[0].low: "
    for argv in (["fit", str(data), "--schema", str(bad), *FIT[4:], "--out", str(tmp_path / "r.json")],
                 ["check", str(data), "--schema", str(bad)],
                 ["predict", str(release), str(data), "--schema", str(bad), "--out", str(tmp_path / "p.csv")]):
        assert cli.main(argv) == 2
        _one_line_error(capsys, f"--schema {bad}: refused: the schema: {where}", needle)
    assert not (tmp_path / "p.csv").exists() and not (tmp_path / "r.json").exists()


# ----------------------------------------------------------------------------- the fuzzer's findings
def test_a_header_without_rows_says_no_data_rows(tmp_path, capsys):
    path = tmp_path / "h.csv"
    path.write_text("a,b,c,label\n")
    assert cli.main(["fit", str(path), *FIT, "--out", str(tmp_path / "r.json")]) == 2
    err = _one_line_error(capsys, f"{path}: no data rows")
    assert "found 0" not in err


@pytest.mark.parametrize("header, position", [("a,,c,label", 2), ("a,b,  ,label", 3), (" ,b,c,label", 1)])
def test_a_blank_column_name_is_refused_naming_its_position(tmp_path, capsys, header, position):
    path = _write_csv(tmp_path / "d.csv", header=header.split(","))
    assert cli.main(["fit", str(path), *FIT, "--out", str(tmp_path / "r.json")]) == 2
    _one_line_error(capsys, f"column {position} of the header has no name")


def test_contradicting_or_orphan_options_are_refused(tmp_path, data, capsys):
    out = str(tmp_path / "r.json")
    cases = [
        (["schema", str(data), "--label", "label", "--ignore", "a,label", "--out", out], ["--ignore", "is the label"]),
        (["fit", str(data), *FIT, "--report-epsilon", "0.5", "--out", out], ["--report-epsilon", "without --report"]),
        (["fit", str(data), *FIT, "--report-delta", "1e-6", "--out", out], ["--report-delta", "without --report"]),
        (["fit", str(data), *FIT, "--rho", "0.1", "--out", out], ["--rho", "without --report"]),
        (["fit", str(data), *FIT, "--report", "data-independent", "--report-epsilon", "1", "--out", out],
         ["--report-epsilon", "releases no statistics"]),
        (["fit", str(data), *FIT, "--report", "adaptive", "--out", out], ["--report-epsilon and --report-delta"]),
    ]
    for argv, needles in cases:
        assert cli.main(argv) == 2, argv
        err = _one_line_error(capsys, *needles)
        assert "report_epsilon" not in err
    assert not os.path.exists(out)


@pytest.mark.parametrize("argv, needle", [
    (["--features", "a,a"], "argument --features: column 'a' is named twice"),
    (["--drop", "b, b"], "argument --drop: column 'b' is named twice"),
    (["--seed", "-1"], "argument --seed: must be a non-negative integer"),
])
def test_option_values_are_checked_in_the_command_lines_words(tmp_path, data, capsys, argv, needle):
    with pytest.raises(SystemExit) as exc:
        cli.main(["fit", str(data), *FIT[:-2], *argv, "--out", str(tmp_path / "r.json")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "random_state" not in err and "Traceback" not in err


def test_library_messages_speak_of_options_and_plain_values():
    assert cli._as_options("random_state must be a non-negative integer seed") == "--seed must be a non-negative " \
        "integer seed"
    said = cli._as_options("report='data-dependent' releases noisy statistics: give report_epsilon and report_delta; "
                           "or use method='adaptive'")
    assert said == ("--report data-dependent releases noisy statistics: give --report-epsilon and --report-delta; "
                    "or use --report adaptive")
    assert cli._as_options("epsilon must be at most 500") == "--epsilon must be at most 500"
    assert cli._plain("a label not in [np.str_('maybe'), np.float64(1.5)]") == "a label not in ['maybe', 1.5]"


def test_a_library_refusal_says_the_option(tmp_path, data, capsys, monkeypatch):
    from pdpkit import estimators

    def refuse(self, X, y, sample_weight=None):
        raise ValueError("report='data-dependent' needs a larger lam: use method='adaptive' (label "
                         f"{np.str_('maybe')!r})")

    monkeypatch.setattr(estimators.ObjPertClassifier, "fit", refuse)
    assert cli.main(["fit", str(data), *FIT, "--out", str(tmp_path / "r.json")]) == 2
    err = _one_line_error(capsys, "--report data-dependent", "use --report adaptive", "(label 'maybe')")
    assert "np.str_" not in err and "method=" not in err


def test_a_read_only_output_is_refused_and_kept(tmp_path, data, capsys, no_work):
    out = tmp_path / "r.json"
    out.write_text("old\n")
    out.chmod(0o444)
    assert cli.main(["fit", str(data), *FIT, "--out", str(out)]) == 2
    _one_line_error(capsys, "--out", "read-only", "chmod u+w")
    assert out.read_text() == "old\n" and stat.S_IMODE(out.stat().st_mode) == 0o444
    assert _leftovers(tmp_path) == []


def test_an_over_long_output_name_is_refused_before_the_work(tmp_path, data, capsys, no_work):
    out = tmp_path / ("r" * 300 + ".json")
    assert cli.main(["fit", str(data), *FIT, "--out", str(out)]) == 2
    _one_line_error(capsys, "--out", "bytes long", "give a shorter name")
    assert _leftovers(tmp_path) == []


def test_stale_temporary_files_of_dead_processes_are_removed(tmp_path, data):
    old = time.time() - 2 * 3600
    dead = tmp_path / ".pdpkit-999999999-abcdefgh.tmp"  # (no such process: pids stop far below)
    alive = tmp_path / f".pdpkit-{os.getppid()}-abcdefgh.tmp"  # a live process's file is never removed
    young = tmp_path / ".pdpkit-999999998-abcdefgh.tmp"  # a dead process's, but recent (another host's?)
    other = tmp_path / ".pdpkit-notes.txt"
    for p in (dead, alive, young, other):
        p.write_text("")
    for p in (dead, alive, other):
        os.utime(p, (old, old))
    assert cli.main(["fit", str(data), *FIT, "--out", str(tmp_path / "r.json")]) == 0
    assert _leftovers(tmp_path) == sorted(p.name for p in (alive, young, other))


def test_a_temporary_file_names_its_process(tmp_path, data):
    tmp, fd = cli._reserve(str(tmp_path / "x.json"), "--out")
    try:
        assert os.path.basename(tmp).startswith(f".pdpkit-{os.getpid()}-")
    finally:
        cli._discard(os.path.abspath(str(tmp_path / "x.json")))


def test_a_huge_entry_is_clipped_onto_the_ball_not_to_zero(tmp_path, capsys):
    rows = _rows()
    rows[5][0] = "1e160"
    path = _write_csv(tmp_path / "huge.csv", rows=rows)
    rel = tmp_path / "r.json"
    assert cli.main(["fit", str(path), *FIT, "--out", str(rel)]) == 2  # under raise: refused
    _one_line_error(capsys, "exceeds --norm-bound 1")
    assert cli.main(["fit", str(path), *FIT, "--row-norm", "clip", "--out", str(rel)]) == 0
    clipped = [r[:] for r in rows]
    b, c = float(rows[5][1]) / 1e160, float(rows[5][2]) / 1e160
    n = float(np.sqrt(1.0 + b * b + c * c))
    clipped[5][:3] = [repr(1.0 / n), repr(b / n), repr(c / n)]  # the row on the sphere
    same = _write_csv(tmp_path / "same.csv", rows=clipped)
    rel2 = tmp_path / "r2.json"
    assert cli.main(["fit", str(same), *FIT, "--row-norm", "clip", "--out", str(rel2)]) == 0
    np.testing.assert_allclose(Release.from_json(rel.read_text()).theta, Release.from_json(rel2.read_text()).theta,
                               rtol=1e-9)
    np.testing.assert_allclose(row_norms(np.array([[1e160, 1e160], [1e-170, 0.0], [3.0, 4.0]])),
                               [np.sqrt(2) * 1e160, 1e-170, 5.0])


def test_predict_refuses_rows_beyond_the_bound_naming_the_file(tmp_path, release, capsys):
    for value in ("40", "1e160"):
        rows = _rows()
        rows[3][1] = value
        path = _write_csv(tmp_path / "far.csv", rows=rows)
        assert cli.main(["predict", str(release), str(path), "--out", str(tmp_path / "p.csv")]) == 2
        err = _one_line_error(capsys, f"{path}: a row's Euclidean norm exceeds the release's norm bound 1")
        assert "row(s)" not in err and "row 4" not in err
    assert not (tmp_path / "p.csv").exists()


def test_a_pipe_is_read_once(tmp_path, data):
    """A FIFO (``<(zcat x.csv.gz)``) cannot be read twice: its bytes are read once, then parsed like a file."""
    import threading

    fifo = tmp_path / "in.csv"
    os.mkfifo(fifo)
    payload = gzip.compress(data.read_bytes())
    writer = threading.Thread(target=lambda: fifo.write_bytes(payload))
    writer.start()
    try:
        assert cli.main(["fit", str(fifo), *FIT, "--out", str(tmp_path / "r.json")]) == 0
    finally:
        writer.join(timeout=30)
    assert cli.main(["fit", str(data), *FIT, "--out", str(tmp_path / "s.json")]) == 0
    assert Release.from_json((tmp_path / "r.json").read_text()).theta.tolist() == \
        Release.from_json((tmp_path / "s.json").read_text()).theta.tolist()


def test_the_librarys_own_row_refusal_names_the_file_and_no_count(tmp_path, release, capsys, monkeypatch):
    """Were the command's own check skipped, the release's refusal (which counts rows) still reaches no user."""
    rows = _rows()
    rows[3][1] = "40"
    path = _write_csv(tmp_path / "far.csv", rows=rows)
    monkeypatch.setattr(cli, "_check_rows", lambda *args, **kwargs: None)
    assert cli.main(["predict", str(release), str(path), "--out", str(tmp_path / "p.csv")]) == 2
    err = _one_line_error(capsys, f"{path}: a row's Euclidean norm exceeds the release's norm bound")
    assert "row(s)" not in err and "norm_bound" not in err and not (tmp_path / "p.csv").exists()
