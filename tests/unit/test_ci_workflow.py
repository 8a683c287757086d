"""The GitHub Actions workflow users copy: valid against the workflow schema, and doing its job."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "claims.yml"


def validate(path: Path) -> subprocess.CompletedProcess:
    """check-jsonschema with its bundled (offline) copy of GitHub's workflow schema."""
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
         str(path)],
        capture_output=True,
        text=True,
    )  # fmt: skip


def test_the_workflow_is_valid():
    result = validate(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_validator_rejects_a_broken_workflow(tmp_path):
    broken = yaml.safe_load(WORKFLOW.read_text())
    del broken["jobs"]["claims"]["runs-on"]  # a job must say where it runs
    path = tmp_path / "broken.yml"
    path.write_text(yaml.safe_dump(broken))
    result = validate(path)
    assert result.returncode == 1
    assert "runs-on" in result.stdout


ROUND = WORKFLOW.parent / "train-round.yml"


def test_the_training_round_is_valid():
    result = validate(ROUND)
    assert result.returncode == 0, result.stdout + result.stderr


def test_legs_train_in_rounds_and_one_claims_job_gates_and_deploys_from_main():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert {"push", "pull_request"} <= set(triggers)
    jobs = workflow["jobs"]
    # torch's CPU wheel, not the CUDA build a plain pip install takes on a hosted runner
    assert workflow["env"]["PIP_EXTRA_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
    rounds = [f"round-{r}" for r in range(1, 6)]
    for number, name in enumerate(rounds, 1):  # one after another, each on the last's cache
        assert jobs[name]["uses"] == "./.github/workflows/train-round.yml"
        assert jobs[name]["with"]["round"] == number
        assert jobs[name]["needs"] == ("cache" if number == 1 else rounds[number - 2])
    assert [s["run"] for s in jobs["tests"]["steps"] if "run" in s][-1] == "nox -s tests"
    claims = jobs["claims"]
    assert set(rounds) | {"tests", "cache"} <= set(claims["needs"])
    assert claims["if"] == "${{ !cancelled() }}"  # a failed leg's runs are named, not skipped
    steps = claims["steps"]
    assert "nox -s claims -- --no-train" in [s.get("run", "") for s in steps]
    merged = next(s for s in steps if s.get("uses", "").startswith("actions/download-artifact"))
    assert merged["with"] == {"pattern": "runs-*", "path": ".claimbook-cache",
                              "merge-multiple": True}  # fmt: skip
    save = next(s for s in steps if s.get("uses", "").startswith("actions/cache/save"))
    assert "github.run_id" in save["with"]["key"]  # a new key each run: new entries are saved
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert "site/" in upload["with"]["path"] and "reports/results/" in upload["with"]["path"]
    pages = jobs["pages"]
    assert pages["if"] == "github.ref == 'refs/heads/main' && github.event_name == 'push'"
    assert pages["steps"][0]["uses"].startswith("actions/deploy-pages")


def test_a_leg_trains_its_part_and_uploads_only_what_it_wrote():
    leg = yaml.safe_load(ROUND.read_text())["jobs"]["leg"]
    assert leg["strategy"]["matrix"]["leg"] == [1, 2, 3] and leg["env"]["PART"].endswith("/3")
    script = "\n".join(s.get("run", "") for s in leg["steps"])
    assert 'nox -s claims -- --train-part "$PART"' in script
    assert '-newer "$RUNNER_TEMP/before"' in script
    upload = leg["steps"][-1]
    assert upload["with"]["name"] == "runs-round${{ inputs.round }}-leg${{ matrix.leg }}"


def test_the_workflow_init_writes_is_valid_and_runs_the_books_own_commands(tmp_path):
    """The book's workflow: valid against GitHub's schema, and its steps install the book's
    requirements and run the main job (tests/e2e runs those steps on the scaffold)."""
    from claimbook.__main__ import main

    assert main(["init", str(tmp_path)]) == 0
    workflow = tmp_path / ".github" / "workflows" / "claims.yml"
    result = validate(workflow)
    assert result.returncode == 0, result.stdout + result.stderr
    steps = yaml.safe_load(workflow.read_text())["jobs"]["claims"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    assert runs == ["python -m pip install -r requirements.txt", "nox -s claims"]
    assert "3.11" in str(steps)  # the Python the book's claims were written for
