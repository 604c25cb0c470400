"""Config strings reach Terraform as literals: nothing a config holds is evaluated by Terraform or resolved by
the CDK engine.

- `escape_template` is checked against Terraform itself: an outputs-only configuration (no provider) applied
  with the real binary gives back exactly the strings that were escaped.
- Every string field of the config schema (tests/template_fields.py, generated from the JSON Schema) gets
  each payload: either validation refuses it (an error finding), or the stack is synthesized, the payload
  appears in cdk.tf.json only escaped, FS073 warns at its path, and `terraform plan` (hashicorp/aws from the
  offline mirror; it validates the configuration, the provider's checks included, before planning) shows the
  value as written in the planned resources.
- A property test: no config string appears in cdk.tf.json with an unescaped `${` or `%{`; the only
  interpolations left are the references the stack wrote.
- The checks fail when the escaping is removed.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastscale.infra.config import ConfigError, parse_config
from fastscale.infra.rules import Severity, run_rules
from tests.stacks.conftest import synth
from tests.template_fields import BASE_CONFIGS, PAYLOADS, plant, planted_configs, shown, string_fields, uncovered
from tests.tf_mirror import OFFLINE_PROVIDER, cli_config, find_aws_mirror

TERRAFORM = shutil.which("terraform")
MIRROR = find_aws_mirror()
needs_terraform = pytest.mark.skipif(TERRAFORM is None, reason="needs the terraform binary on PATH")
needs_mirror = pytest.mark.skipif(MIRROR is None, reason="needs a provider mirror with hashicorp/aws (tests/tf_mirror.py)")

#: A reference the stack writes: `${aws_iam_role.<id>.arn}`, `${data.aws_caller_identity.caller.account_id}`.
STACK_REFERENCE = re.compile(r"\$\{(data\.)?(aws|awscc)_[a-z_]+\.[A-Za-z0-9_-]+\.[a-z_]+\}")


def unescaped_openers(text: str) -> list[str]:
    """Every `${...}` / `%{...}` Terraform would evaluate in `text` (a template), as written. `$${` and
    `%%{` are Terraform's escapes; a run of `$` before `{` is read left to right as Terraform does."""
    found, i = [], 0
    while i < len(text):
        if text.startswith(("$${", "%%{"), i):
            i += 3
        elif text.startswith(("${", "%{"), i):
            end = text.find("}", i)
            found.append(text[i:end + 1 if end >= 0 else len(text)])
            i += 2
        else:
            i += 1
    return found


def strings_of(value: Any) -> list[str]:
    """Every string of a JSON document, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings_of(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings_of(v)]
    return []


def evaluated_parts(doc: dict[str, Any]) -> list[str]:
    """What Terraform would evaluate in a synthesized stack, other than the stack's own references. The
    `//` metadata is a comment, and the backend block is read without evaluation."""
    declared = {f"${{var.{name}}}" for name in doc.get("variable", {})}  # the stack's own input variables
    doc = {k: v for k, v in doc.items() if k != "//"}
    doc["terraform"] = {k: v for k, v in doc.get("terraform", {}).items() if k != "backend"}
    return [o for s in strings_of(doc) for o in unescaped_openers(s)
            if not STACK_REFERENCE.fullmatch(o) and o not in declared]


def test_the_opener_scan_reads_escapes_as_terraform_does():
    assert unescaped_openers('a ${file("x")} b') == ['${file("x")}']
    assert unescaped_openers("$${x} %%{ if } $$${y} ${z}") == ["${z}"]
    assert unescaped_openers("%{ if true }y%{ endif }") == ["%{ if true }", "%{ endif }"]
    assert unescaped_openers("$5 {x} 100% $") == []


# ------------------------------------------------------------------------------------------------ escape


TRICKY = ['${file("x")}', "%{ if true }y%{ endif }", "${TfToken[TOKEN.1]}", "$${a}", "$$${b}", "%%{c}", "%%%{d}",
          "$", "%", "${", "%{", "a\\nb", '"quoted"', "\\${e}", "{}", "$$", "}${"]


@pytest.mark.terraform
@needs_terraform
@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet=st.sampled_from(list("${}%ab\\\" \n")), max_size=16), min_size=40, max_size=40))
def test_terraform_reads_every_escaped_string_back_as_written(tmp_path_factory, generated):
    from fastscale.stacks.resources.base import escape_template

    texts = TRICKY + generated
    work = tmp_path_factory.mktemp("escape")
    outputs = {f"o{i}": {"value": escape_template(t)} for i, t in enumerate(texts)}
    outputs["keys"] = {"value": {escape_template(t) + f"#{i}": "k" for i, t in enumerate(texts)}}
    (work / "main.tf.json").write_text(json.dumps({"output": outputs}))
    env = {**os.environ, "TF_CLI_CONFIG_FILE": os.devnull, "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    for args in (["init", "-input=false"], ["apply", "-auto-approve", "-input=false"]):
        done = subprocess.run([TERRAFORM, *args, "-no-color"], cwd=work, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    values = json.loads(subprocess.run([TERRAFORM, "output", "-json"], cwd=work, env=env, capture_output=True,
                                       text=True, check=True).stdout)
    assert [values[f"o{i}"]["value"] for i in range(len(texts))] == texts
    assert sorted(values["keys"]["value"]) == sorted(t + f"#{i}" for i, t in enumerate(texts))


# ------------------------------------------------------------------------------------------------ every field


def test_every_string_field_of_the_schema_is_planted_somewhere():
    fields = string_fields()
    assert len(fields) >= 40  # the schema walk found the config's strings, not an empty list
    assert uncovered() == [], "add these sections to a base config in tests/template_fields.py"


@pytest.mark.parametrize("name", sorted(BASE_CONFIGS))
def test_the_base_configs_are_valid(name):
    config = parse_config(BASE_CONFIGS[name])
    assert [f for f in run_rules(config) if f.severity is Severity.ERROR] == []


def _outcome(data: dict[str, Any]) -> list[str] | None:
    """The error paths validation reports (schema or rules), or None when the config is valid."""
    try:
        config = parse_config(data)
    except ConfigError as exc:
        return [p.path for p in exc.problems]
    errors = [f.path for f in run_rules(config) if f.severity is Severity.ERROR]
    return errors or None


def accepted_fields(payload: str) -> dict[str, list[tuple[str, str]]]:
    """base config -> [(field, config path)] of the fields that accept `payload`; asserts that every other
    field is refused by validation."""
    accepted: dict[str, list[tuple[str, str]]] = {}
    for field, base, where, data in planted_configs(payload):
        errors = _outcome(data)
        if errors is None:
            accepted.setdefault(base, []).append((shown(field), where))
        else:
            assert errors, f"{shown(field)} in {base}: refused without a finding"
    return accepted


def plant_all(base: str, payload: str, fields: list[tuple[str, str]]) -> dict[str, Any]:
    data = copy.deepcopy(BASE_CONFIGS[base])
    by_shown = {shown(f): f for f in string_fields()}
    for field, _ in fields:
        plant(data, by_shown[field], payload)
    return data


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> dict[tuple[str, str], tuple[list[tuple[str, str]], dict[str, Any], Any]]:
    """(payload kind, base) -> (accepted fields, config dict, synthesized stack): every field that accepts
    the payload gets it at once, one synthesis per base config and payload."""
    root = tmp_path_factory.mktemp("planted")
    out = {}
    for kind in sorted(PAYLOADS):
        for base, fields in accepted_fields(PAYLOADS[kind]).items():
            data = plant_all(base, PAYLOADS[kind], fields)
            out[(kind, base)] = (fields, data, synth(parse_config(data), root / f"{kind}-{base}" / "out"))
    return out


def test_each_payload_is_accepted_by_many_fields_and_refused_by_the_rest(planted):
    # Not vacuous: every environment the stack writes, and the VPC ids, take every payload. (Names, tags,
    # images, model data and ARNs are refused: AWS's own patterns for them exclude `$`, `{` and spaces.)
    for kind in PAYLOADS:
        fields = {f for (k, _), (accepted, _, _) in planted.items() if k == kind for f, _ in accepted}
        assert {"endpoints[].model.environment.*", "endpoints[].inference_components[].environment.*",
                "endpoints[].capacity.fallback[].model.environment.*",
                "endpoints[].capacity.fallback[].components.*.environment.*",
                "endpoints[].vpc.subnets[]", "endpoints[].vpc.security_groups[]"} <= fields, kind
        assert len(fields) >= 7, (kind, sorted(fields))


def test_planted_payloads_are_escaped_in_the_stack_and_warned_about(planted):
    from fastscale.stacks.resources.base import escape_template

    assert len(planted) >= 9  # every payload in at least three of the base configs
    for (kind, _base), (fields, data, stack) in planted.items():
        payload = PAYLOADS[kind]
        assert evaluated_parts(stack.doc) == []
        if any(not w.startswith("state.") for _, w in fields):  # the backend block holds it verbatim (below)
            assert json.dumps(escape_template(payload))[1:-1] in json.dumps(stack.doc)
        if ("state.*", "state.key") in [(f.split(".")[0] + ".*", w) for f, w in fields]:
            # The backend block is read without evaluation: the key as written, not escaped.
            assert stack.doc["terraform"]["backend"]["s3"]["key"] == payload
        warned = {f.path for f in run_rules(parse_config(data)) if f.code == "FS073"}
        # A mapping's value planted after its key was renamed to the payload sits under the new key.
        renamed = {f.removesuffix("<key>") for f, _ in fields if f.endswith("<key>")}
        assert {w for f, w in fields if f.removesuffix("*") not in renamed} <= warned
        assert len(warned) >= len(fields) - len(renamed)


def test_the_engine_token_is_refused_where_the_engine_renders_the_value():
    # The backend and provider settings: validation refuses, and synthesis would too (engine_verbatim).
    from fastscale.stacks.resources.base import EngineTokenError, engine_verbatim

    refused = []
    for _, _, where, data in planted_configs(PAYLOADS["engine-token"]):
        if where.startswith(("state.", "region", "endpoint_url")):
            assert _outcome(data) is not None, where
            refused.append(where)
    assert {"state.key", "state.path", "state.dynamodb_table", "region"} <= set(refused)
    with pytest.raises(EngineTokenError, match="state.key"):
        engine_verbatim({"key": PAYLOADS["engine-token"]}, "state.key")


def aws_plan_part(doc: dict[str, Any], version: str) -> dict[str, Any]:
    """The aws-only part of a stack (as tests/contract/test_terraform_validate.py cuts it), with the account
    id a literal instead of the caller-identity data source, so `plan` needs no AWS call."""
    from tests.contract.test_terraform_validate import aws_part

    part, _ = aws_part(doc, version)
    part.pop("data", None)
    text = json.dumps(part).replace("${data.aws_caller_identity.caller.account_id}", "123456789012")
    part = json.loads(text)
    part["provider"] = {"aws": [OFFLINE_PROVIDER]}
    # hashicorp/aws checks the shape of a model's S3 URI and of alarm action ARNs (its `validate` errors show
    # the planted text as written, unevaluated); such values are replaced by valid ones for the plan.
    for body in part["resource"].get("aws_sagemaker_model", {}).values():
        for source in body["primary_container"].get("model_data_source", {}).get("s3_data_source", []):
            if not source["s3_uri"].startswith("s3://"):
                source["s3_uri"] = "s3://bucket-for-the-plan/"
    def valid_arns(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (v if not isinstance(v, str) or v.startswith(("arn:", "${")) else
                        "arn:aws:iam::123456789012:role/plan") if k.endswith("arn") else valid_arns(v)
                    for k, v in value.items()}
        return [valid_arns(v) for v in value] if isinstance(value, list) else value

    part["resource"] = valid_arns(part["resource"])
    for body in part["resource"].get("aws_cloudwatch_metric_alarm", {}).values():
        for key in ("alarm_actions", "ok_actions"):
            if key in body:
                body[key] = [a if a.startswith(("arn:", "${")) else "arn:aws:sns:us-east-1:123456789012:plan"
                             for a in body[key]]
    return part


@needs_terraform
@pytest.mark.terraform
@needs_mirror
def test_terraform_plans_every_planted_value_as_written(planted, tmp_path):
    """One root module, one child module per planted stack: `plan` (which fails on anything `validate` would
    refuse: Terraform validates the configuration before it plans); the planned values hold
    each payload as often as the stack wrote it escaped, and nothing was evaluated (`file("x")` would fail
    the plan: there is no file x; the directive would have become `y`)."""
    from fastscale.stacks.resources.base import escape_template

    assert MIRROR is not None and TERRAFORM is not None
    mirror, version = MIRROR
    root = tmp_path / "plan"
    expected: dict[str, int] = {}
    kind_of: dict[str, str] = {}
    for (kind, base), (_, _, stack) in planted.items():
        part = aws_plan_part(stack.doc, version)
        name = f"{kind}_{base}".replace("-", "_")
        kind_of[name] = kind
        expected[name] = json.dumps(part).count(json.dumps(escape_template(PAYLOADS[kind]))[1:-1])
        (root / name).mkdir(parents=True)
        (root / name / "main.tf.json").write_text(json.dumps({k: v for k, v in part.items() if k != "provider"}))
    assert sum(expected.values()) >= 12
    (root / "main.tf.json").write_text(json.dumps({
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": version}}},
        "provider": {"aws": OFFLINE_PROVIDER},
        "module": {name: {"source": f"./{name}"} for name in expected},
    }))
    (tmp_path / "terraformrc").write_text(cli_config(mirror))
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(tmp_path / "terraformrc"), "TF_DATA_DIR": str(tmp_path / "data"),
           "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    env.pop("TF_PLUGIN_CACHE_DIR", None)

    def run(*args: str) -> str:
        done = subprocess.run([TERRAFORM, *args, "-no-color"], cwd=root, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    run("init", "-backend=false", "-input=false")
    run("plan", "-refresh=false", "-input=false", "-out=planted.tfplan")
    plan = json.loads(run("show", "-json", "planted.tfplan"))
    by_module: dict[str, list[str]] = {name: [] for name in expected}
    for child in plan["planned_values"]["root_module"]["child_modules"]:
        name = child["address"].removeprefix("module.")
        by_module[name] = [s for r in child["resources"] for s in strings_of(r["values"])]
    for name, count in expected.items():
        planned = sum(s.count(PAYLOADS[kind_of[name]]) for s in by_module[name])
        # tags_all repeats tags, so a payload may appear more often than written, never less.
        assert planned >= count, (name, planned, count)


# ------------------------------------------------------------------------------------------------ property


config_text = st.text(alphabet=st.sampled_from(list("${}%ab-_ \"\\")), min_size=1, max_size=24)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(env=config_text, tag_key=config_text, tag=config_text, image_tail=config_text, data=config_text)
def test_no_config_string_reaches_the_stack_unescaped(tmp_path_factory, env, tag_key, tag, image_tail, data):
    config = copy.deepcopy(BASE_CONFIGS["components"])
    config["tags"] = {"k" + tag_key: tag}
    component = config["endpoints"][0]["inference_components"][0]
    component["environment"] = {"VALUE": env}
    component["image"] += image_tail
    component["model_data"] += data
    stack = synth(parse_config(config), tmp_path_factory.mktemp("property") / "out")
    assert evaluated_parts(stack.doc) == []


def test_removing_the_escaping_fails_these_checks(monkeypatch, tmp_path):
    from fastscale.stacks.resources import tokens

    data = plant_all("single-model", PAYLOADS["file"], [("endpoints[].model.environment.*", "")])
    assert evaluated_parts(synth(parse_config(data), tmp_path / "escaped" / "out").doc) == []
    monkeypatch.setattr(tokens, "escape_template", lambda text: text)
    assert evaluated_parts(synth(parse_config(data), tmp_path / "unescaped" / "out").doc) == [PAYLOADS["file"]]


def test_references_stay_references_next_to_escaped_literals(tmp_path):
    """The trust policy mixes the account's reference with literal text: the reference is unescaped, the
    literal text (here the region and partition; a config string elsewhere) is escaped."""
    from fastscale.stacks.resources.base import Interpolated, Ref, json_text, render, tf_format

    account = Ref("${data.aws_caller_identity.caller.account_id}")
    arn = tf_format("arn:{}:sagemaker:{}:{}:*", "aws", "us-${x}", account)
    assert isinstance(arn, Interpolated) and arn == "arn:aws:sagemaker:us-${x}:${data.aws_caller_identity.caller.account_id}:*"
    assert render(arn) == "arn:aws:sagemaker:us-$${x}:${data.aws_caller_identity.caller.account_id}:*"
    document = json_text({"a": arn, "b": 'say "${hi}"', "c": [account]}, sort_keys=True)
    assert json.loads(document) == {"a": str(arn), "b": 'say "${hi}"', "c": [str(account)]}
    assert render(document) == ('{"a": "arn:aws:sagemaker:us-$${x}:${data.aws_caller_identity.caller.account_id}:*", '
                                '"b": "say \\"$${hi}\\"", "c": ["${data.aws_caller_identity.caller.account_id}"]}')
    assert render(account + "/x${y}") == "${data.aws_caller_identity.caller.account_id}/x$${y}"
    assert render("p${q}" + account) == "p$${q}${data.aws_caller_identity.caller.account_id}"
    assert render(f"{account}") == "$${data.aws_caller_identity.caller.account_id}"  # an f-string makes a literal
