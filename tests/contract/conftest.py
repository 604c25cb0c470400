"""What the contract tests that plan live resources offline share: one plan of all their cases.

Each module of :data:`PLANNED` defines ``planned_cases(root) -> (bodies, states)`` (resource type -> resource name
-> body / state attributes), its resource names starting with its own prefix (``tests.tf_mirror.prefixed``, and
``changes_named`` to read them back). :func:`offline_plan` plans them all
at once with hashicorp/aws from the mirror (``tests.tf_mirror.OfflineEndpointPlans``: ``-refresh=false``, no AWS
call) and reads the plan back with fastscale's runner (``terraform show -json``).
"""

from __future__ import annotations

import fcntl
import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fastscale.infra.terraform.runner import TerraformRunner
from tests.tf_mirror import OfflineEndpointPlans, find_aws_mirror

#: The test modules whose cases share the plan.
PLANNED = ("tests.contract.test_update_classes_aws", "tests.contract.test_plan_classification_aws",
           "tests.contract.test_rollback_replaces_endpoint")


@pytest.fixture(scope="session")
def offline_plan(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The plan of every module's cases, as ``terraform show -json`` gives it. The workers of a pytest-xdist run
    share it: the first that needs it plans, the others read what it wrote (a plan starts hashicorp/aws, a few
    seconds of CPU each time)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if hasattr(request.config, "workerinput") else base  # the run's, above each worker's
    with open(shared / "offline-plan.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        written = shared / "offline-plan.json"
        if not written.is_file():
            written.write_text(json.dumps(_plan(tmp_path_factory.mktemp("offline-plan"))))
        return json.loads(written.read_text())


def _plan(root: Path) -> dict[str, Any]:
    terraform, mirror = shutil.which("terraform"), find_aws_mirror()
    assert terraform is not None and mirror is not None
    bodies: dict[str, dict[str, Any]] = {}
    states: dict[str, dict[str, Any]] = {}
    for name in PLANNED:
        module_bodies, module_states = importlib.import_module(name).planned_cases(root / name.rsplit(".", 1)[1])
        for kind, named in module_bodies.items():
            assert not set(named) & set(bodies.get(kind, {})), f"{name} reuses a resource name"
            bodies.setdefault(kind, {}).update(named)
        for kind, named in module_states.items():
            states.setdefault(kind, {}).update(named)
    plans = OfflineEndpointPlans(root, terraform, mirror)
    plan_file = plans.plan_types(bodies, states)
    return TerraformRunner(terraform, plans.work, env=plans.env).show_plan(plan_file)
