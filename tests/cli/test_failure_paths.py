"""Failure injection: AWS errors, a missing node, unusable output paths, broken terraform binaries.

Each failure must end the command with one `error:` line naming what failed and the documented exit
code (2 bad input, 1 failed operation), and with --json one JSON object carrying `error` on stdout.
Never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from botocore.stub import Stubber
from click.testing import CliRunner

import fastscale.infra.terraform.runner as tf
from fastscale.cli.main import cli
from fastscale.infra.aws.clients import client
from fastscale.infra.model.naming import all_endpoint_names
from tests.aws.factories import REGION, single_model_config
from tests.cli.support import REAL_BINARY, current_runtime, needs_binary

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "qwen3-8b.yaml"


@pytest.fixture(autouse=True)
def _log_width(monkeypatch):
    """As in a CI log: no terminal and no COLUMNS, so an error is one physical line."""
    monkeypatch.delenv("COLUMNS", raising=False)


def invoke(*args: str):
    return CliRunner().invoke(cli, list(map(str, args)), obj=current_runtime())


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("error:")]


def assert_one_line_failure(result, code: int, *needles: str) -> str:
    """Human output: exit ``code``, exactly one `error:` line holding every needle, no traceback."""
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def assert_json_failure(result, code: int, *needles: str) -> dict:
    """--json: exit ``code`` and stdout is exactly one JSON object whose `error` holds every needle."""
    assert result.exit_code == code, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    doc = json.loads(result.stdout)  # the whole of stdout: one object, nothing else
    assert isinstance(doc, dict) and doc["ok"] is False and doc["exit_code"] == code, doc
    assert "\n" not in doc["error"]
    for needle in needles:
        assert needle in doc["error"], (needle, doc["error"])
    return doc


# --------------------------------------------------------------------------------------------- AWS


def _stubbed_sagemaker(runtime, monkeypatch, **error):
    """Every command's AWS calls go to a SageMaker client whose first call (DescribeEndpoint) fails."""
    sm = client("sagemaker", REGION)
    stubber = Stubber(sm)
    endpoint = all_endpoint_names(single_model_config())[0].endpoint
    stubber.add_client_error("describe_endpoint", expected_params={"EndpointName": endpoint}, **error)
    stubber.activate()
    runtime.use(aws_clients=lambda config: {"sagemaker": sm})
    return endpoint


AWS_FAILURES = {
    "throttling": (
        {"service_error_code": "ThrottlingException", "service_message": "Rate exceeded", "http_status_code": 400},
        ["AWS throttled DescribeEndpoint", "ThrottlingException: Rate exceeded", "wait a minute"],
    ),
    "5xx": (
        {"service_error_code": "InternalFailure", "service_message": "We encountered an internal error",
         "http_status_code": 500},
        ["server error on DescribeEndpoint", "HTTP 500", "InternalFailure", "run again later"],
    ),
    "unsupported operation": (
        {"service_error_code": "UnknownOperationException", "service_message": "", "http_status_code": 400},
        ["does not support DescribeEndpoint", "UnknownOperationException", "AWS_ENDPOINT_URL"],
    ),
    "other client error": (
        {"service_error_code": "ValidationException", "service_message": "1 validation error detected",
         "http_status_code": 400},
        ["AWS rejected DescribeEndpoint", "ValidationException: 1 validation error detected"],
    ),
}


@pytest.mark.parametrize("kind", AWS_FAILURES)
def test_aws_errors_are_one_line_naming_code_operation_and_resource(runtime, project, monkeypatch, kind):
    error, needles = AWS_FAILURES[kind]
    endpoint = _stubbed_sagemaker(runtime, monkeypatch, **error)
    result = invoke("status", "fastscale.yaml")
    assert_one_line_failure(result, 1, *needles, f"EndpointName={endpoint}")


@pytest.mark.parametrize("kind", AWS_FAILURES)
def test_aws_errors_with_json_print_one_object_with_the_error(runtime, project, monkeypatch, kind):
    error, needles = AWS_FAILURES[kind]
    endpoint = _stubbed_sagemaker(runtime, monkeypatch, **error)
    doc = assert_json_failure(invoke("status", "fastscale.yaml", "--json"), 1, *needles, f"EndpointName={endpoint}")
    assert (doc["command"], doc["file"]) == ("status", "fastscale.yaml")


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_missing_credentials_are_one_line(project, monkeypatch, tmp_path):
    import boto3

    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # it caches the credentials it found earlier
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_closed_port()}")  # never AWS, whatever happens
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    assert_one_line_failure(invoke("verify-cleanup", "fastscale.yaml"), 1, "no usable AWS credentials", "AWS_PROFILE")
    assert_json_failure(invoke("status", "fastscale.yaml", "--json"), 1, "no usable AWS credentials")


def test_an_unreachable_endpoint_is_one_line(runtime, project):
    import boto3
    from botocore.config import Config

    port = _closed_port()
    # One attempt: the back-off between attempts is real time; the retry bound has its own test
    # (tests/aws/test_clients.py). The command instruments the client as it does its own.
    sagemaker = boto3.client("sagemaker", region_name=REGION, endpoint_url=f"http://127.0.0.1:{port}",
                             aws_access_key_id="testing", aws_secret_access_key="testing",
                             config=Config(retries={"total_max_attempts": 1}))
    runtime.use(aws_clients=lambda config: {"sagemaker": sagemaker})
    assert_one_line_failure(invoke("status", "fastscale.yaml"), 1, "cannot reach AWS", f"127.0.0.1:{port}")


def test_an_unreachable_emulator_is_named(runtime, project):
    import boto3
    from botocore.config import Config

    url = f"http://127.0.0.1:{_closed_port()}"
    sagemaker = boto3.client("sagemaker", region_name=REGION, endpoint_url=url, aws_access_key_id="testing",
                             aws_secret_access_key="testing", config=Config(retries={"total_max_attempts": 1}))
    runtime.use(aws_clients=lambda config: {"sagemaker": sagemaker})
    result = invoke("status", "fastscale.yaml", "--endpoint-url", url)
    assert_one_line_failure(result, 1, f"is `fastscale emulator` running at {url}?")
    assert "cannot reach AWS" not in result.output and "AWS_ENDPOINT_URL" not in result.output


# --------------------------------------------------------------------------------------------- synth


def _synth_subprocess(tmp_path: Path, env_changes: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """synth in a fresh interpreter: the node check runs before the engine is first imported."""
    env = {**os.environ, **env_changes}
    code = "import sys; from fastscale.cli.main import cli; sys.argv[0] = 'fastscale'; cli()"
    return subprocess.run(
        [sys.executable, "-c", code, "synth", str(EXAMPLE), "--out", str(tmp_path / "out"), *args],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize("json_flag", [False, True], ids=["text", "json"])
def test_synth_needs_no_node(tmp_path, json_flag):
    """`fastscale synth` writes the engine's files from Python: without node on PATH it still works."""
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = _synth_subprocess(tmp_path, {"PATH": str(empty), "JSII_NODE": ""}, *(["--json"] if json_flag else []))
    assert proc.returncode == 0, proc.stderr
    (written,) = (tmp_path / "out" / "stacks").glob("*/cdk.tf.json")
    assert json.loads(written.read_text())["resource"]["aws_sagemaker_endpoint"]


def test_the_engine_without_node_is_one_clear_error(tmp_path):
    """What does start the engine (`cdktf synth`'s main.py, `stacks.app.build_app`) still checks node first."""
    broken = tmp_path / "node"
    broken.write_text("#!/bin/sh\necho 'node: cannot load libicu' >&2\nexit 127\n")
    broken.chmod(0o755)
    code = "import fastscale.stacks.engine"
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "JSII_NODE": str(broken)},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert (f"{broken} does not work as Node.js (`--version` exited 127 and said: node: cannot load libicu): "
            "install Node.js 20 or later, or set JSII_NODE to a working node") in proc.stderr


def _bad_outputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    return {
        "under a file": (a_file / "out", "cannot create output directory"),
        "inside .git": (tmp_path / "repo" / ".git" / "out", "inside a .git directory"),
    }


@pytest.mark.parametrize("case", ["under a file", "inside .git"])
def test_synth_refuses_output_it_cannot_or_must_not_write_with_exit_2(tmp_path, case):
    out, needle = _bad_outputs(tmp_path)[case]
    assert_one_line_failure(invoke("synth", EXAMPLE, "--out", out), 2, needle, str(out))
    doc = assert_json_failure(invoke("synth", EXAMPLE, "--out", out, "--json"), 2, needle)
    assert (doc["command"], doc["file"]) == ("synth", str(EXAMPLE))
    assert not (tmp_path / "repo").exists()  # not even the directories were created


def test_an_output_directory_nobody_can_write_into_is_refused():
    from fastscale.infra.terraform.outputs import OutputPathError, check_output_dir

    # /proc/1: a directory nobody, root included, can create files in (the command line refuses it earlier).
    with pytest.raises(OutputPathError, match="cannot write into output directory '/proc/1'"):
        check_output_dir("/proc/1")


@pytest.mark.parametrize("out", ["/proc/1", "/sys/kernel", "/dev/shm/out"])
def test_synth_never_writes_into_the_kernels_directories(out):
    result = invoke("synth", EXAMPLE, "--out", out)
    assert result.exit_code == 2 and f"is in /{out.split('/')[1]}" in result.stderr
    assert not Path("/dev/shm/out").exists()


def test_synth_does_not_write_through_a_symlinked_stack_file(tmp_path):
    out = tmp_path / "out"
    stack_dir = out / "stacks" / "chat-prod"
    stack_dir.mkdir(parents=True)
    victim = tmp_path / "elsewhere" / "profile"
    (stack_dir / "cdk.tf.json").symlink_to(victim)
    assert_one_line_failure(invoke("synth", EXAMPLE, "--out", out), 2, "is a symbolic link", str(victim))
    assert not victim.exists() and not victim.parent.exists()
    assert not (out / "manifest.json").exists()


def test_plan_reports_an_unusable_output_directory_with_exit_2(project, tmp_path):
    out = tmp_path / ".git" / "out"
    # Checked before the stack's lock is taken in it, so before synthesis too.
    assert_one_line_failure(invoke("plan", "fastscale.yaml", "--out", out), 2, "inside a .git")
    assert not out.exists()
    doc = assert_json_failure(invoke("plan", "fastscale.yaml", "--out", out, "--json"), 2, "inside a .git")
    assert doc["command"] == "plan"


# --------------------------------------------------------------------------------------------- init


def test_init_does_not_write_through_a_dangling_symlink_even_with_force(tmp_path):
    target = tmp_path / "proj"
    target.mkdir()
    outside = tmp_path / "outside" / "notes.md"
    (target / "README.md").symlink_to(outside)
    for extra in ([], ["--force"]):
        result = invoke("init", target, "--project", "p1", *extra)
        assert_one_line_failure(result, 2, "README.md", "is a symbolic link")
    assert not outside.exists()
    assert sorted(p.name for p in target.iterdir()) == ["README.md"]  # nothing else written


def test_init_refuses_a_symlinked_directory_inside_the_project(tmp_path):
    target = tmp_path / "proj"
    target.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (target / ".github").symlink_to(elsewhere, target_is_directory=True)
    assert_one_line_failure(invoke("init", target, "--project", "p1"), 2, ".github", "is a symbolic link")
    assert list(elsewhere.iterdir()) == []


def test_init_refuses_a_directory_inside_git(tmp_path):
    assert_one_line_failure(invoke("init", tmp_path / ".git" / "proj", "--project", "p1"), 2, "inside a .git")
    assert not (tmp_path / ".git").exists()


# --------------------------------------------------------------------------------------------- terraform


def _fake_terraform(directory: Path, body: str) -> Path:
    path = directory / "fake-terraform"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_a_terraform_that_hangs_on_version_is_stopped_within_the_bound(project, synth, runtime, aws):
    # Not `exec sleep`: the sleep is a grandchild holding the pipes, which a plain timeout would wait for.
    fake = _fake_terraform(project, "sleep 30\necho done\n")
    # The bound itself, shortened through the runtime's `terraform` part (the default is VERSION_TIMEOUT).
    runtime.use(terraform=lambda binary, stack_dir, **kw: tf.TerraformRunner(binary, stack_dir, version_timeout=1.0, **kw))
    started = time.monotonic()
    result = invoke("plan", "fastscale.yaml", "--terraform-bin", fake)
    assert time.monotonic() - started < 10
    assert_one_line_failure(result, 1, f"`{fake} version` did not answer within 1 s")
    assert_json_failure(invoke("plan", "fastscale.yaml", "--terraform-bin", fake, "--json"), 1, "did not answer")


@pytest.mark.parametrize(
    "answer,needle",
    [
        ("echo 'Terraform v1.1.9'", "is terraform 1.1.9, older than the 1.2.0"),
        ("echo 'hello'", "does not answer `version` as terraform or tofu does"),
    ],
    ids=["too old", "not terraform"],
)
def test_a_terraform_that_is_too_old_or_not_terraform_is_refused(project, synth, answer, needle, aws):
    fake = _fake_terraform(project, answer + "\n")
    assert_one_line_failure(invoke("plan", "fastscale.yaml", "--terraform-bin", fake), 1, needle)
    assert_json_failure(invoke("deploy", "fastscale.yaml", "--auto-approve", "--terraform-bin", fake, "--json"), 1,
                        needle)


def test_a_missing_terraform_bin_is_one_line(project, synth):
    result = invoke("plan", "fastscale.yaml", "--terraform-bin", "./no-such-terraform")
    assert_one_line_failure(result, 1, "--terraform-bin './no-such-terraform'", "no executable file")
    assert synth.calls == []


@needs_binary
def test_a_relative_terraform_bin_means_the_callers_directory(project, synth, aws):
    # Terraform runs in the stack directory; ./tf must still be the one beside the caller.
    wrapper = project / "tf"
    wrapper.write_text(f'#!/bin/sh\nexec {REAL_BINARY} "$@"\n')
    wrapper.chmod(0o755)
    result = invoke("plan", "fastscale.yaml", "--terraform-bin", "./tf", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["terraform_binary"] == str(wrapper)


# --------------------------------------------------------------------------------------------- the rest


def test_a_usage_error_with_json_still_prints_one_object(project):
    result = invoke("status", "fastscale.yaml", "--json", "--no-such-option")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["command"] == "status" and "--no-such-option" in doc["error"] and doc["exit_code"] == 2


def test_an_unexpected_error_is_one_line_pointing_at_the_debug_switch(runtime, project, monkeypatch):
    def broken(stack):
        raise KeyError("endpoints")

    runtime.use(aws_clients=broken)
    result = invoke("status", "fastscale.yaml")
    assert_one_line_failure(result, 1, "unexpected KeyError: 'endpoints'", "FASTSCALE_DEBUG=1")
    monkeypatch.setenv("FASTSCALE_DEBUG", "1")
    assert isinstance(invoke("status", "fastscale.yaml").exception, KeyError)


#: The exit codes each command's --help lists, in order (explain alone has 3: problems found).
DOCUMENTED_EXIT_CODES = {
    "validate": [0, 1, 2],
    "schema": [0, 1, 2],
    "init": [0, 1, 2],
    "estimate": [0, 1, 2],
    "simulate": [0, 1, 2],
    "synth": [0, 1, 2, 130],
    "plan": [0, 1, 2, 130],
    "deploy": [0, 1, 2, 130],
    "status": [0, 1, 2, 130],
    "destroy": [0, 1, 2, 130],
    "verify-cleanup": [0, 1, 2, 130],
    "sweep": [0, 1, 2, 130],
    "measure-scaleout": [0, 1, 2, 130],
    "explain": [0, 3, 1, 2, 130],
    "recommend": [0, 1, 2, 130],
    "emulator": [0, 1, 2],
    "adopt": [0, 1, 2, 130],
}


def exit_code_lines(help_text: str) -> dict[int, str]:
    """The first "Exit codes:" block of a --help text: code -> its explanation (continuation lines joined)."""
    found: dict[int, str] = {}
    last = None
    for line in help_text.split("Exit codes:", 1)[1].splitlines()[1:]:
        if not line.strip(" \b"):
            break  # the block ends at the first empty line
        m = re.match(r"^ {4}(\d+) +(\S.*)$", line)
        if m:
            last = int(m.group(1))
            assert last not in found, f"exit code {last} listed twice"
            found[last] = m.group(2)
        elif line.strip() and last is not None:
            found[last] += " " + line.strip()
    return found


def test_every_command_documents_its_exit_codes():
    from fastscale.cli.main import COMMANDS

    assert set(COMMANDS) == set(DOCUMENTED_EXIT_CODES)
    for name in COMMANDS:
        text = invoke(name, "--help").output
        assert text.count("Exit codes:") == 1, name
        codes = exit_code_lines(text)
        assert list(codes) == DOCUMENTED_EXIT_CODES[name], name
        # Bad input is 2 everywhere, and says so first; 0 never mentions a failure.
        assert codes[2].startswith(("bad input", "bad arguments")), (name, codes[2])
        assert "fail" not in codes[0] or name == "explain", (name, codes[0])
        if 130 in codes:
            assert codes[130].startswith("interrupted"), name


def test_invalid_yaml_config_still_gives_one_json_object(project):
    (project / "fastscale.yaml").write_text(yaml.safe_dump({"project": "demo"}))
    result = invoke("status", "fastscale.yaml", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["valid"] is False
