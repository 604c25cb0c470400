"""A resource left half-created by a failed apply blocks neither deploy nor destroy for good: the error names
it and the one command that recovers.

The case, reproduced with moto's plain server (no fastscale additions): the aws provider creates the
scalable target, then cannot read its tags (moto has no Application Auto Scaling ListTagsForResource), so
the create fails half-way and the target stays in Terraform's state. Every later refresh fails on it, in
deploy and destroy alike. The error names aws_appautoscaling_target and `fastscale sweep ... --auto-approve`;
that command, run as printed, deletes what the stack left (proven by tags), after which destroy succeeds.
Once the emulator can answer the call (fastscale's additions), the same project deploys with its scalable target
tagged: the rehearsal shows that (tests/e2e/test_emulator_lifecycle.py), so this test stops at the destroy.
"""

from __future__ import annotations

import re
import shlex

import pytest

from tests.e2e.emulator_support import MARKS, aws, fastscale, project_env, reset_moto, state_resources, summary

pytestmark = MARKS


@pytest.fixture
def plain_moto():
    """moto's own server on a port the system picks as it binds (no window for another test to take it), starting
    from an empty account: moto keeps its backends per process, and this worker may have run other tests whose
    resources (an IAM role of another `demo` project) would make this stack's creates fail."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{server.get_host_and_port()[1]}"
    try:
        reset_moto(url)
        yield url
    finally:
        server.stop()


def test_a_half_created_scalable_target_names_itself_and_the_printed_sweep_lets_destroy_through(tmp_path, plain_moto):
    env = project_env(tmp_path)
    assert fastscale(tmp_path, env, "init", "demo", "--emulator", plain_moto).returncode == 0
    demo = tmp_path / "demo"
    aas = aws(plain_moto, "application-autoscaling")

    first = fastscale(demo, env, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert first.returncode == 1
    error = summary(first)["error"]
    assert re.search(r"terraform apply failed \(exit code 1\) at aws_appautoscaling_target\.\S+: a create that "
                     "failed half-way stays in Terraform's state", error), error
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]  # created, half-way

    sweep = f"fastscale sweep fastscale.yaml --endpoint-url {plain_moto} --auto-approve"
    for args in (("deploy", "fastscale.yaml", "--auto-approve", "--json"),
                 ("destroy", "fastscale.yaml", "--auto-approve", "--json")):
        blocked = fastscale(demo, env, *args)
        assert blocked.returncode == 1, blocked.stdout + blocked.stderr
        report = summary(blocked)
        assert report["failed_resources"] == [a for a in report["failed_resources"]
                                              if a.startswith("aws_appautoscaling_target.")] != []
        assert report["recover_with"] == sweep
        assert f"`{sweep}`" in report["error"]

    # The one command, as printed.
    recovered = fastscale(demo, env, *shlex.split(sweep)[1:])
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"] == []

    destroyed = fastscale(demo, env, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert summary(destroyed)["ok"] is True
    assert [r for r in state_resources(demo) if r["mode"] == "managed"] == []
