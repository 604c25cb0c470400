"""Terraform template payloads in every string field of the config, through the real CLI: `validate` either
refuses the value (exit 2, an error finding, no traceback) or accepts it with an FS073 warning at its path,
exit 0 and the value not echoed. (tests/stacks/test_literal_strings.py synthesizes and plans the accepted ones.)"""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from fastscale.cli.main import cli
from tests.template_fields import PAYLOADS, planted_configs, shown


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_every_field_refuses_or_warns_about_a_template_payload(tmp_path, kind):
    payload = PAYLOADS[kind]
    outcomes = {"refused": 0, "warned": 0}
    for i, (field, base, where, data) in enumerate(planted_configs(payload)):
        path = tmp_path / f"{i}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        result = CliRunner().invoke(cli, ["validate", "--json", str(path)])
        label = f"{shown(field)} in {base}"
        assert "Traceback" not in result.output, label
        findings = json.loads(result.stdout)["files"][0]["findings"]
        if result.exit_code == 2:
            assert any(f["severity"] == "error" for f in findings), label
            outcomes["refused"] += 1
        else:
            assert result.exit_code == 0, (label, result.output)
            warnings = [f for f in findings if f["code"] == "FS073"]
            assert [f["path"] for f in warnings] == [where], label
            assert payload not in warnings[0]["message"] + warnings[0]["hint"], label
            assert warnings[0]["line"] is not None, label
            outcomes["warned"] += 1
    assert outcomes["refused"] >= 40 and outcomes["warned"] >= 6, outcomes
