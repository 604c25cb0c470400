"""The tests `fastscale init` gives a project (tests/test_stack.py): written with their snapshot, run by
`make test` and by the pull-request job of both pipelines, passing on the fresh project and failing as soon as
the stack changes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.config import load_config
from fastscale.infra.project.scaffold import CI_FILES, DEV_REQUIREMENTS_FILE, STACK_TEST_FILE
from fastscale.infra.project.stack_snapshot import PROJECT_SNAPSHOT, snapshot_json
from fastscale.stacks.testing import synth
from tests.cli.support import current_runtime
from tests.cli.test_init_cli import _PipelineLoader


def invoke(*args):
    return CliRunner().invoke(cli, list(map(str, args)), obj=current_runtime())


def run_project_tests(project, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest on the project's tests/, from the project directory, as `make test` runs it."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", *args],
                          cwd=project, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    target = tmp_path_factory.mktemp("init") / "proj"
    result = invoke("init", target, "--project", "demo-tests")
    assert result.exit_code == 0, result.output
    assert f"  make -C {target} install-dev test\n" in result.output, "init says how to run them"
    return target


def test_init_writes_the_tests_their_snapshot_and_dev_requirements(project):
    assert (project / STACK_TEST_FILE).is_file()
    # The snapshot is the stack of the project's config, as the tests synthesize it, in syrupy's format.
    expected = snapshot_json(synth(project / "fastscale.yaml").document, {str(project.resolve()): "<project>"})
    assert (project / PROJECT_SNAPSHOT).read_text() == expected
    dev = [ln for ln in (project / DEV_REQUIREMENTS_FILE).read_text().splitlines() if ln and not ln.startswith("#")]
    assert dev[0] == "-r requirements.txt" and {re.split(r"[<>=]", ln)[0] for ln in dev[1:]} == {"pytest", "syrupy"}


@pytest.mark.slow  # runs the project's own test suite in a new process
def test_generated_tests_pass_on_the_fresh_project_then_fail_when_the_instance_type_changes(project, tmp_path):
    # Their `terraform validate` of the fresh project runs in tests/test_fresh_install.py, in the project's own
    # installed virtualenv: here the other four, and what they say once the stack changes.
    fresh = run_project_tests(project, "--deselect", "tests/test_stack.py::test_stack_is_valid_terraform")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert re.search(r"\b4 passed, 1 deselected\b", fresh.stdout), fresh.stdout
    assert "1 snapshot passed" in fresh.stdout

    changed = tmp_path / "changed"
    shutil.copytree(project, changed)
    config = changed / "fastscale.yaml"
    before = load_config(config).endpoints[0].instance_type
    config.write_text(config.read_text().replace(f"instance_type: {before}", "instance_type: ml.g6.4xlarge"))
    assert load_config(config).endpoints[0].instance_type == "ml.g6.4xlarge"
    failed = run_project_tests(changed, "--deselect", "tests/test_stack.py::test_stack_is_valid_terraform")
    assert failed.returncode == 1, failed.stdout
    assert "FAILED tests/test_stack.py::test_stack_matches_snapshot" in failed.stdout
    assert "FAILED tests/test_stack.py::test_instance_type_is_the_one_the_project_was_sized_for" in failed.stdout
    assert f"expected '{before}', found 'ml.g6.4xlarge'" in failed.stdout, "the property test says what moved"
    assert "2 failed, 2 passed" in failed.stdout
    # The snapshot's failure names the changed attribute by resource and path, not an escaped dashboard string.
    assert re.search(rf'aws_sagemaker_endpoint_configuration\.\S+ production_variants\[0\]\.instance_type: '
                     rf'"{re.escape(before)}" -> "ml.g6.4xlarge"', failed.stdout), failed.stdout
    assert re.search(r"aws_cloudwatch_dashboard\.\S+ dashboard_body<json>\.widgets\[\d+\]", failed.stdout), failed.stdout
    assert '\\"' not in failed.stdout.split("test_stack_matches_snapshot", 1)[1].split("test_instance_type", 1)[0]

    # `make snapshot` accepts the change; then only the pinned instance type still fails.
    updated = run_project_tests(changed, "--snapshot-update", "-k", "snapshot")
    assert updated.returncode == 0 and "1 snapshot updated" in updated.stdout, updated.stdout
    again = run_project_tests(changed, "--deselect", "tests/test_stack.py::test_stack_is_valid_terraform")
    assert "1 failed, 3 passed" in again.stdout and "test_instance_type_is_the_one" in again.stdout, again.stdout


@pytest.mark.slow  # runs the project's own test suite in a new process
def test_generated_tests_fail_when_data_caching_or_fast_metrics_are_turned_off(project, tmp_path):
    changed = tmp_path / "changed"
    shutil.copytree(project, changed)
    config = changed / "fastscale.yaml"
    data = yaml.safe_load(config.read_text())
    component = data["endpoints"][0]["inference_components"][0]
    component["data_cache"] = False
    component["autoscaling"]["metric"] = "invocations"
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    failed = run_project_tests(changed, "-k", "caches or 10_second")
    assert "FAILED tests/test_stack.py::test_every_inference_component_caches_its_image_and_model" in failed.stdout
    assert "/specification/data_cache_config/enable_caching: expected true, found false" in failed.stdout
    assert "FAILED tests/test_stack.py::test_target_tracking_uses_10_second_metrics" in failed.stdout
    assert "expected a string matching /HighResolution$/" in failed.stdout, failed.stdout


def test_makefile_test_target_runs_the_tests_and_snapshot_rewrites_them(project):
    makefile = (project / "Makefile").read_text()
    assert re.search(r"^test:\n\tpytest -q tests\n", makefile, re.M)
    assert re.search(r"^snapshot:\n\tpytest -q tests --snapshot-update\n", makefile, re.M)
    assert re.search(r"^install-dev:\n\tpip install -r requirements-dev.txt\n", makefile, re.M)
    readme = (project / "README.md").read_text()
    assert "pip install -r requirements-dev.txt" in readme and "make test" in readme and "make snapshot" in readme


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_the_pull_request_job_installs_the_dev_requirements_and_runs_the_tests(tmp_path, ci):
    target = tmp_path / "proj"
    assert invoke("init", target, "--project", "p1", "--ci", ci).exit_code == 0
    pipeline = yaml.load((target / CI_FILES[ci]).read_text(), Loader=_PipelineLoader)
    if ci == "github":
        steps = [step.get("run", "") for step in pipeline["jobs"]["check"]["steps"]]
    else:
        steps = [line for line in pipeline["check"]["script"] if isinstance(line, str)]
    install = next(i for i, s in enumerate(steps) if re.search(r"pip install .*-r requirements-dev\.txt", s))
    assert steps.index("make test") > install


def test_a_project_is_still_written_when_the_stack_cannot_be_synthesized(tmp_path, runtime):
    def no_engine(config, project_dir):
        raise FileNotFoundError("node: not found")

    runtime.use(stack_snapshot=no_engine)
    target = tmp_path / "proj"
    result = invoke("init", target, "--project", "p1")
    assert result.exit_code == 0, result.output
    assert (target / STACK_TEST_FILE).is_file() and not (target / PROJECT_SNAPSHOT).exists()
    assert f"{PROJECT_SNAPSHOT} was not written, so `make test` fails until `make snapshot`" in result.output
    assert "FileNotFoundError: node: not found" in result.output


def test_an_existing_snapshot_is_a_clash_like_any_project_file(tmp_path):
    target = tmp_path / "proj"
    (target / PROJECT_SNAPSHOT).parent.mkdir(parents=True)
    (target / PROJECT_SNAPSHOT).write_text("mine\n")
    result = invoke("init", target, "--project", "p1")
    assert result.exit_code == 2 and PROJECT_SNAPSHOT in result.output
    assert (target / PROJECT_SNAPSHOT).read_text() == "mine\n"


@pytest.mark.slow  # runs the project's own test suite in a new process
def test_an_emulator_projects_tests_pass_fresh_and_fail_when_it_stops_scaling(tmp_path):
    # `init --emulator` writes a single-model endpoint: its tests check the variant's scaling, not
    # inference components it does not have.
    project = tmp_path / "rehearsal"
    assert invoke("init", project, "--emulator", "http://127.0.0.1:5000").exit_code == 0
    fresh = run_project_tests(project, "--deselect", "tests/test_stack.py::test_stack_is_valid_terraform")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "4 passed" in fresh.stdout and "1 snapshot passed" in fresh.stdout, fresh.stdout

    data = yaml.safe_load((project / "fastscale.yaml").read_text())
    data["endpoints"][0]["model"]["autoscaling"] = {"enabled": False}
    (project / "fastscale.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    failed = run_project_tests(project, "--deselect", "tests/test_stack.py::test_stack_is_valid_terraform")
    assert "FAILED tests/test_stack.py::test_the_endpoint_scales_its_instances" in failed.stdout, failed.stdout
    assert "no scalable target on the endpoint's variant" in failed.stdout
