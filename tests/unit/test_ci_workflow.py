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


def test_the_workflow_runs_the_claims_uploads_the_site_and_deploys_from_main():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert {"push", "pull_request"} <= set(triggers)
    steps = workflow["jobs"]["claims"]["steps"]
    commands = [s.get("run", "") for s in steps]
    assert "nox -s tests" in commands and "nox -s claims" in commands
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert "site/" in upload["with"]["path"] and "reports/results/" in upload["with"]["path"]
    pages = workflow["jobs"]["pages"]
    assert pages["if"] == "github.ref == 'refs/heads/main' && github.event_name == 'push'"
    assert pages["steps"][0]["uses"].startswith("actions/deploy-pages")
