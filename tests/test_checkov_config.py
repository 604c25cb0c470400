"""One checkov configuration, for fastscale's own scan and for every project `fastscale init` writes."""

from __future__ import annotations

import yaml

from fastscale.infra.project.scaffold import ProjectOptions, render_project
from tests.conftest import ROOT

CONFIG = ROOT / "templates" / "project" / "checkov.yaml"


def test_repository_scan_and_generated_projects_share_the_file():
    assert (ROOT / ".checkov.yaml").resolve() == CONFIG.resolve()
    assert render_project(ProjectOptions(project="p1"))[".checkov.yaml"] == CONFIG.read_text()


def test_every_skipped_check_says_why():
    lines = CONFIG.read_text().splitlines()
    skipped = yaml.safe_load(CONFIG.read_text())["skip-check"]
    assert skipped, "the file lists the skipped checks"
    for check in skipped:
        at = lines.index(f"  - {check}")
        reason = []
        for line in reversed(lines[:at]):
            if not line.lstrip().startswith("#"):
                break
            reason.append(line)
        assert reason and f'# {check} "' in reason[-1], f"{check} has no reason above it"
