"""Stored full-scale results: the format, the provenance, and that every chapter's stored result exists."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

from pdpkit.experiments import stored

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def results_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(stored, "RESULTS_DIR", tmp_path / "results")
    return tmp_path / "results"


def test_round_trip_keeps_numbers_and_provenance(results_dir):
    prov = stored.provenance(seeds={"data": 0, "noise": [1, 2]}, scale="test scale", wall_time_s=12.34)
    data = {"eps": np.array([0.1, 1.0]), "acc": [[0.5, np.nan]], "n": np.int64(7), "ok": np.bool_(True),
            "name": "adult"}
    path = stored.save_result("amp", "figure2", data, provenance=prov)
    assert path == results_dir / "amp" / "figure2.json"
    res = stored.load_result("amp", "figure2")
    np.testing.assert_array_equal(res.array("eps"), [0.1, 1.0])
    assert np.isnan(res.array("acc")[0, 1])  # a non-finite float is stored as null, read as NaN
    assert res.data["n"] == 7 and res.data["ok"] is True and res.data["name"] == "adult"
    assert res.provenance["seeds"] == {"data": 0, "noise": [1, 2]}
    assert res.provenance["wall_time_s"] == 12.3
    assert "test scale" in res.caption() and "; 12 s on" in res.caption()
    assert [r.name for r in stored.stored_results()] == ["figure2"]


def test_refuses_incomplete_provenance_objects_and_paths(results_dir):
    prov = stored.provenance(seeds=0, scale="s", wall_time_s=1.0)
    with pytest.raises(ValueError, match="provenance lacks"):
        stored.save_result("amp", "x", {}, provenance={k: v for k, v in prov.items() if k != "commit"})
    with pytest.raises(TypeError, match="numbers, strings"):
        stored.save_result("amp", "x", {"f": object()}, provenance=prov)
    with pytest.raises(ValueError, match="plain file name"):
        stored.save_result("../amp", "x", {}, provenance=prov)
    with pytest.raises(FileNotFoundError, match="make reproduce"):
        stored.load_result("amp", "absent")
    (results_dir / "amp").mkdir(parents=True)
    (results_dir / "amp" / "bad.json").write_text(json.dumps({"chapter": "amp", "name": "bad", "data": {}}))
    with pytest.raises(ValueError, match="not a stored result"):
        stored.load_result("amp", "bad")


def test_every_stored_result_is_complete_and_from_a_known_script():
    scripts = {p.stem for p in (ROOT / "reproduce").glob("*.py") if p.name != "run.py"}
    for res in stored.stored_results():
        assert res.chapter in scripts, f"results/{res.chapter}: no reproduce/{res.chapter}.py wrote it"
        assert (ROOT / "chapters" / f"{res.chapter}.ipynb").exists()
        assert res.provenance["commit"], f"{res.chapter}/{res.name}: no commit recorded"
        assert res.provenance["wall_time_s"] >= 0


def test_every_result_a_chapter_reads_is_stored():
    pattern = re.compile(r"load_result\(\s*\\?[\"']([\w.-]+)\\?[\"']\s*,\s*\\?[\"']([\w.-]+)\\?[\"']")
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        for chapter, name in pattern.findall(nb.read_text(encoding="utf-8")):
            assert (ROOT / "results" / chapter / f"{name}.json").exists(), f"{nb.name} reads {chapter}/{name}"


def test_work_tree_flag_ignores_the_results_folder_and_sees_other_changes(tmp_path, monkeypatch):
    import subprocess

    repo = tmp_path / "repo"
    (repo / "results" / "amp").mkdir(parents=True)
    (repo / "code.py").write_text("x = 1\n")
    (repo / "results" / "amp" / "a.json").write_text("{}\n")
    for cmd in (["init", "-q"], ["add", "."],
                ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True)
    monkeypatch.setattr(stored, "RESULTS_DIR", repo / "results")
    prov = lambda: stored.provenance(seeds=0, scale="s", wall_time_s=0.1)  # noqa: E731
    assert prov()["work_tree_modified"] is False and len(prov()["commit"]) == 40
    (repo / "results" / "amp" / "a.json").write_text('{"b": 1}\n')  # a stored result rewritten
    assert prov()["work_tree_modified"] is False
    (repo / "code.py").write_text("x = 2\n")  # the code changed: flagged
    assert prov()["work_tree_modified"] is True
