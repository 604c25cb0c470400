"""An endpoint deployed by fastscale on its emulator (the real terraform binary and hashicorp/aws provider, as
`fastscale emulator` runs it), with data capture turned on through `overrides:`, its traffic recorded as data
capture files in the emulator's S3 and as CloudWatch datapoints: `fastscale recommend --from-endpoint` gets a
recommendation with no trace file, the current config first, and monthly costs; `simulate --from-endpoint`
replays the same traffic. Each step is a `fastscale` process, as a user runs it.

Skips (saying why) without terraform or a provider mirror holding hashicorp/aws, as the other emulator tests.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml

from tests.e2e.emulator_support import MARKS, aws, fastscale, fresh_emulator, project_env, summary
from tests.traffic_support import BUCKET, DESTINATION, capture_key, chat, per_minute, put_metric, record, variant_dims

pytestmark = MARKS


@pytest.fixture(scope="module")
def emulator():
    with fresh_emulator() as url:
        yield url


def test_recommend_from_a_deployed_endpoints_own_traffic(tmp_path, emulator):
    env = project_env(tmp_path)
    assert fastscale(tmp_path, env, "init", "demo", "--emulator", emulator).returncode == 0
    demo = tmp_path / "demo"
    path = demo / "fastscale.yaml"
    config = yaml.safe_load(path.read_text())
    endpoint = config["endpoints"][0]
    endpoint["overrides"] = {"aws_sagemaker_endpoint_configuration": {"data_capture_config": {
        "enable_capture": True, "initial_sampling_percentage": 100, "destination_s3_uri": DESTINATION,
        "capture_options": [{"capture_mode": "Input"}, {"capture_mode": "Output"}]}}}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    deployed = fastscale(demo, env, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    live = f"{config['project']}-{endpoint['name']}"
    sm, s3, cw = aws(emulator, "sagemaker"), aws(emulator, "s3"), aws(emulator, "cloudwatch")
    assert sm.describe_endpoint(EndpointName=live)["DataCaptureConfig"]["DestinationS3Uri"] == DESTINATION

    # Half an hour of traffic that ended a few minutes ago, as SageMaker would have recorded it.
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
    destroyed = fastscale(demo, env, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert json.loads(destroyed.stdout)["ok"] is True
