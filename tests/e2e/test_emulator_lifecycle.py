"""The rehearsal a user runs, through the real terraform binary and the real hashicorp/aws provider, against
fastscale's emulator (moto's server with fastscale's additions, as `fastscale emulator` runs it):
`fastscale init demo --emulator URL`, then in demo/ deploy → status → plan → a changed deploy → status →
recommend and simulate from the endpoint's own traffic → destroy → verify-cleanup, each as a `fastscale` process,
with auto scaling on and no edit to the generated project but the change itself. The environment has no AWS
variables: fastscale brings the emulator's dummy credentials.

The change turns data capture on (through `overrides:`) beside a new image and a higher maximum; the endpoint's
traffic is then recorded as SageMaker would have recorded it (data capture files in the emulator's S3, CloudWatch
datapoints), and `fastscale recommend --from-endpoint` gets a recommendation with no trace file, the current config
first, and monthly costs; `simulate --from-endpoint` replays the same traffic.

The provider comes from a filesystem mirror found by tests/tf_mirror.py (FASTSCALE_TF_MIRROR, the
Terraform CLI configuration, /opt/tf-plugins, Terraform's implicit mirror directories). Without a mirror
that holds hashicorp/aws the test skips and says why. The project's constraint (`>= 5.100.0, < 7.0`) admits
the mirror's release; rule FS071 checks it against what the stack writes.

What the emulator cannot hold, and so the project leaves out (docs/emulator.md): inference components and the
metrics configuration (hashicorp/awscc, AWS Cloud Control API: rule FS072), current instance types (moto only
accepts older ones; `init --emulator` picks one the model fits), and the deployment configuration of endpoints
(fastscale leaves it out for an emulator target). moto creates endpoints InService at once, so waits end on
their first look.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml

from tests.e2e.emulator_support import MARKS, aws, fastscale, fresh_emulator, project_env, state_resources, summary
from tests.traffic_support import BUCKET, DESTINATION, capture_key, chat, per_minute, put_metric, record, variant_dims

pytestmark = MARKS


@pytest.fixture(scope="module")
def emulator():
    with fresh_emulator() as url:
        yield url


def test_init_emulator_project_rehearses_deploy_change_recommend_destroy_with_auto_scaling(tmp_path, emulator):
    env = project_env(tmp_path)
    created = fastscale(tmp_path, env, "init", "demo", "--emulator", emulator)
    assert created.returncode == 0, created.stderr
    demo = tmp_path / "demo"
    sm, aas = aws(emulator, "sagemaker"), aws(emulator, "application-autoscaling")

    deployed = fastscale(demo, env, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    report = summary(deployed)
    assert report["ok"] is True and report["endpoint_url"] == emulator
    assert "EMULATOR TARGET" in deployed.stderr
    # The quota preflight says why it did not check, instead of blaming AWS.
    [quota] = report["quota_findings"]
    assert quota["message"] == (f"the emulator at {emulator} has no Service Quotas API "
                                "(UnknownOperationException from ListServiceQuotas); quotas not checked")
    endpoint = sm.describe_endpoint(EndpointName="demo-llm")
    assert endpoint["EndpointStatus"] == "InService"
    first_config = endpoint["EndpointConfigName"]
    [target] = aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    assert target["ResourceId"] == "endpoint/demo-llm/variant/AllTraffic" and target["MaxCapacity"] == 2
    tags = aas.list_tags_for_resource(ResourceARN=target["ScalableTargetARN"])["Tags"]
    assert tags.get("project") == "demo"
    [policy] = aas.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"]
    assert policy["TargetTrackingScalingPolicyConfiguration"]["PredefinedMetricSpecification"][
        "PredefinedMetricType"] == "SageMakerVariantConcurrentRequestsPerModelHighResolution"
    assert {r["type"] for r in state_resources(demo)} >= {
        "aws_sagemaker_model", "aws_sagemaker_endpoint_configuration", "aws_sagemaker_endpoint",
        "aws_appautoscaling_target", "aws_appautoscaling_policy", "aws_iam_role", "aws_cloudwatch_metric_alarm"}

    status = fastscale(demo, env, "status", "fastscale.yaml", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    assert summary(status)["ok"] is True
    # What was deployed reads back as the config: the next plan has nothing to do (no replacement from a
    # field the emulator answers differently from AWS). What Terraform calls drift after a deploy (the provider
    # reading back its own values in another form, the role's inline policy attached by the stack's role policy)
    # feeds no change: one labelled line, not a "Drift detected" line per resource above "No changes", and no
    # "Changed outside Terraform" (drift that matters, as below).
    shown = fastscale(demo, env, "plan", "fastscale.yaml")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "No changes:" in shown.stdout and "Read back differently from the saved state" in shown.stdout
    assert "Drift detected" not in shown.stdout + shown.stderr
    assert "Changed outside Terraform" not in shown.stdout
    # A value changed by hand is drift that matters: shown with what the next plan does about it (the change's
    # deploy below, which sets it back).
    cw = aws(emulator, "cloudwatch")
    alarm = cw.describe_alarms(AlarmNamePrefix="demo-llm")["MetricAlarms"][0]
    cw.put_metric_alarm(**{k: alarm[k] for k in (
        "AlarmName", "AlarmDescription", "ActionsEnabled", "Namespace", "MetricName", "Statistic", "Period",
        "EvaluationPeriods", "DatapointsToAlarm", "ComparisonOperator", "Dimensions", "AlarmActions", "OKActions",
        "InsufficientDataActions", "TreatMissingData") if k in alarm}, Threshold=alarm["Threshold"] + 7)

    # The change: a new image version (a new model and endpoint configuration; the endpoint moves to it with
    # UpdateEndpoint), one more instance allowed (the scalable target updated in place), and data capture on.
    path = demo / "fastscale.yaml"
    config = yaml.safe_load(path.read_text())
    model = config["endpoints"][0]["model"]
    model["image"] = model["image"].rsplit(":", 1)[0] + ":0.34.0-lmi16.0.0-cu128"
    config["endpoints"][0]["instances"]["max"] = 3
    config["endpoints"][0]["overrides"] = {"aws_sagemaker_endpoint_configuration": {"data_capture_config": {
        "enable_capture": True, "initial_sampling_percentage": 100, "destination_s3_uri": DESTINATION,
        "capture_options": [{"capture_mode": "Input"}, {"capture_mode": "Output"}]}}}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    updated = fastscale(demo, env, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    [by_hand] = [d for d in summary(updated)["drift"] if d["matters"]]
    assert by_hand["planned"] is True and by_hand["address"].startswith("aws_cloudwatch_metric_alarm.")
    assert [(v["path"], v["after"], v["planned"]) for v in by_hand["changed"] if v["set_back"]] == [
        ("threshold", alarm["Threshold"] + 7, alarm["Threshold"])]
    assert cw.describe_alarms(AlarmNames=[alarm["AlarmName"]])["MetricAlarms"][0]["Threshold"] == alarm["Threshold"]
    endpoint = sm.describe_endpoint(EndpointName="demo-llm")
    assert endpoint["EndpointConfigName"] != first_config
    [model_name] = [m["ModelName"] for m in sm.list_models()["Models"]]
    live_config = sm.describe_endpoint_config(EndpointConfigName=endpoint["EndpointConfigName"])
    assert live_config["ProductionVariants"][0]["ModelName"] == model_name
    assert sm.describe_model(ModelName=model_name)["PrimaryContainer"]["Image"].endswith(":0.34.0-lmi16.0.0-cu128")
    [target] = aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    assert target["MaxCapacity"] == 3
    assert endpoint["DataCaptureConfig"]["DestinationS3Uri"] == DESTINATION
    again = fastscale(demo, env, "status", "fastscale.yaml")
    assert again.returncode == 0, again.stdout + again.stderr

    recommend_from_its_own_traffic(demo, env, emulator, config["endpoints"][0], live="demo-llm")

    destroyed = fastscale(demo, env, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert sm.list_endpoints()["Endpoints"] == [] and sm.list_models()["Models"] == []
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"] == []
    assert aas.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"] == []

    verified = fastscale(demo, env, "verify-cleanup", "fastscale.yaml", "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert summary(verified)["ok"] is True


def recommend_from_its_own_traffic(demo: Path, env: dict[str, str], emulator: str, endpoint: dict, live: str) -> None:
    """Half an hour of traffic that ended a few minutes ago, as SageMaker would have recorded it (data capture
    files, half of their payloads with token counts; one Invocations datapoint a minute), then `recommend` and
    `simulate` from the live endpoint, with no trace file."""
    s3, cw = aws(emulator, "s3"), aws(emulator, "cloudwatch")
    start = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0) - dt.timedelta(minutes=40)
    lines = [record(start + dt.timedelta(seconds=10 * i), *chat("p" * 2000, "o" * 400, usage=(500, 100) if i % 2 else None),
                    encoding="BASE64" if i % 2 else "JSON", event=i) for i in range(180)]
    s3.create_bucket(Bucket=BUCKET)
    for hour in sorted({(start + dt.timedelta(seconds=10 * i)).replace(minute=0) for i in range(180)}):
        mine = [line for i, line in enumerate(lines)
                if (start + dt.timedelta(seconds=10 * i)).replace(minute=0) == hour]
        s3.put_object(Bucket=BUCKET, Key=capture_key(live, hour), Body="\n".join(mine).encode())
    put_metric(cw, "Invocations", per_minute([6] * 30, start), variant_dims(live))

    recommended = fastscale(demo, env, "recommend", "fastscale.yaml", "--from-endpoint", live, "--since", "1h",
                            "--ttft-p99", "5", "--instance-types", endpoint["instance_type"], "--workers", "1", "--json")
    assert recommended.returncode in (0, 1), recommended.stdout + recommended.stderr
    doc = summary(recommended)
    assert doc["endpoint_trace"]["source"] == "data capture" and doc["endpoint_trace"]["requests"] == 180
    assert doc["baseline"]["settings"]["endpoints[0].instance_type"] == endpoint["instance_type"]
    assert doc["baseline"]["monthly_cost_usd"] > 0 and doc["monthly"]["hours_per_month"] == 730
    assert all(row["monthly_cost_usd"] > 0 for row in doc["pareto"]) and doc["why"]

    simulated = fastscale(demo, env, "simulate", "fastscale.yaml", "--from-endpoint", endpoint["name"], "--since", "1h")
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr
    assert "from data capture: 180 requests" in " ".join(simulated.stdout.split())


def test_an_emulator_config_with_s3_state_in_real_s3_is_refused_before_terraform(tmp_path, emulator):
    env = project_env(tmp_path)
    assert fastscale(tmp_path, env, "init", "demo", "--emulator", emulator).returncode == 0
    path = tmp_path / "demo" / "fastscale.yaml"
    config = yaml.safe_load(path.read_text())
    config["state"] = {"backend": "s3", "bucket": "team-terraform-state", "key": "emu/terraform.tfstate"}
    path.write_text(yaml.safe_dump(config))
    refused = fastscale(tmp_path / "demo", env, "plan", "fastscale.yaml", "--json")
    assert refused.returncode == 2
    [report] = summary(refused)["files"]
    assert [f["code"] for f in report["findings"]] == ["FS070"]
    assert not (tmp_path / "demo" / "cdktf.out").exists()
