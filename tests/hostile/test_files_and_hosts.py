"""Hostile places rather than hostile text: a FIFO, a device or a socket where a file is expected, a state
path that leaves the project or passes through a link, endpoint URLs that name hosts the user did not
choose, and a server that accepts connections and never answers.

Commands that could hang run in a fresh process with a timeout: a regression fails the test instead of
stalling the suite.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import fastscale.infra.aws.clients as clients
import fastscale.infra.aws.clients.calls as calls
from fastscale.cli.main import cli

CONFIG = """\
project: demo
region: us-east-1
{extra}
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

#: Longest a refused special file may take, Python start-up included (it used to block for ever).
QUICK_S = 20


def fastscale(cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = QUICK_S):
    code = "import sys; from fastscale.cli.main import cli; sys.argv[0] = 'fastscale'; cli()"
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "300", **(env or {})})
    return done, time.monotonic() - started


def write_config(directory: Path, extra: str = "", name: str = "fastscale.yaml") -> Path:
    path = directory / name
    path.write_text(CONFIG.format(extra=extra))
    return path


# --------------------------------------------------------------------------------------------- special files


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", [["validate"], ["validate", "--json"], ["synth"], ["status", "--json"],
                                     ["estimate"]])
def test_a_fifo_as_the_config_is_refused_at_once(tmp_path, fifo, command):
    done, _ = fastscale(tmp_path, *command, fifo.name)
    assert done.returncode == 2, done.stderr
    assert "is a FIFO (named pipe), not a regular file" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    if "--json" in command and command[0] == "status":
        assert json.loads(done.stdout)["exit_code"] == 2


def test_load_config_refuses_a_fifo_without_opening_it_for_good(tmp_path, fifo):
    code = ("from fastscale.infra.config import load_config, ConfigError\n"
            f"try:\n    load_config({str(fifo)!r})\nexcept ConfigError as e:\n    print(e.problems[0].message)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=QUICK_S)
    assert "is a FIFO (named pipe)" in done.stdout


def test_a_device_and_a_socket_as_the_config_are_refused(tmp_path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock.yaml"))
    try:
        for path, kind in (("/dev/zero", "is in /dev"), (str(tmp_path / "sock.yaml"), "a socket")):
            done, _ = fastscale(tmp_path, "validate", "--json", path)
            assert done.returncode == 2 and kind in done.stdout + done.stderr
    finally:
        server.close()


@pytest.mark.parametrize("args", [
    ["synth", "fastscale.yaml", "--out", "{fifo}"],
    ["schema", "--out", "{fifo}"],
    ["simulate", "fastscale.yaml", "--trace", "{fifo}"],
    ["simulate", "fastscale.yaml", "--plot", "{fifo}"],
    ["estimate", "fastscale.yaml", "--plot", "{fifo}"],
    ["init", "{fifo}"],
], ids=["synth-out", "schema-out", "trace", "simulate-plot", "estimate-plot", "init-dir"])
def test_a_fifo_given_for_any_path_option_is_refused_at_once(tmp_path, fifo, args):
    write_config(tmp_path)
    done, _ = fastscale(tmp_path, *[a.format(fifo=fifo.name) for a in args])
    assert done.returncode == 2, done.stdout + done.stderr
    assert "FIFO" in done.stderr or "not a directory" in done.stderr


def test_reading_a_trace_never_blocks_on_a_fifo(fifo):
    from fastscale.infra.analysis.simulate.traffic import TrafficError, read_trace

    code = ("from fastscale.infra.analysis.simulate.traffic import read_trace, TrafficError\n"
            f"try:\n    read_trace({str(fifo)!r}, duration=None, service_time=None, default_service_time=1.0)\n"
            "except TrafficError as e:\n    print(e)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=QUICK_S)
    assert "is a FIFO" in done.stdout
    assert TrafficError and read_trace  # the in-process names exist (the subprocess used them)


# --------------------------------------------------------------------------------------------- the kernel's files

SYSTEM_FILES = ["/proc/self/environ", "/proc/1/cmdline", "/sys/kernel/mm/transparent_hugepage/enabled", "/dev/null",
                "/dev/stdin", "/dev/shm/trace.csv"]
#: Each path a user names for fastscale to read: {path} is the path under test, the rest exists and is valid.
INPUTS = {
    "validate": ["validate", "{path}"],
    "validate-json": ["validate", "--json", "{path}"],
    "synth": ["synth", "{path}"],
    "status": ["status", "--json", "{path}"],
    "estimate": ["estimate", "{path}"],
    "simulate-config": ["simulate", "{path}"],
    "simulate-trace": ["simulate", "fastscale.yaml", "--trace", "{path}"],
    "simulate-requests": ["simulate", "fastscale.yaml", "--requests", "{path}"],
    "simulate-requests-json": ["simulate", "fastscale.yaml", "--requests", "{path}", "--json"],
    "simulate-profile": ["simulate", "fastscale.yaml", "--requests", "requests.csv", "--profile", "{path}"],
    "recommend-config": ["recommend", "{path}", "--trace", "requests.csv", "--ttft-p99", "1"],
    "recommend-trace": ["recommend", "fastscale.yaml", "--trace", "{path}", "--ttft-p99", "1", "--json"],
    "recommend-profile": ["recommend", "fastscale.yaml", "--trace", "requests.csv", "--ttft-p99", "1", "--profile",
                          "{path}"],
}


def _inputs_project(tmp_path: Path) -> None:
    write_config(tmp_path, "")
    (tmp_path / "requests.csv").write_text("timestamp,input_tokens,output_tokens\n0,10,10\n")


def _environment_line() -> str:
    """A whole entry of this process's /proc/self/environ: what a leak would print."""
    return next(e for e in Path("/proc/self/environ").read_bytes().decode(errors="replace").split("\0") if "=" in e)


@pytest.mark.parametrize("name", sorted(INPUTS))
@pytest.mark.parametrize("how", ["named", "linked"])
def test_the_kernels_files_are_refused_as_every_input(tmp_path, monkeypatch, name, how):
    monkeypatch.chdir(tmp_path)
    _inputs_project(tmp_path)
    path = "/proc/self/environ"
    if how == "linked":  # a link a pull request committed
        (tmp_path / "innocent.csv").symlink_to(path)
        path = "innocent.csv"
    result = CliRunner().invoke(cli, [a.format(path=path) for a in INPUTS[name]])
    assert result.exit_code == 2, result.output
    assert "is in /proc" in result.output
    assert _environment_line() not in result.output


@pytest.mark.parametrize("path", SYSTEM_FILES)
def test_proc_sys_and_dev_are_refused_wherever_in_them(tmp_path, monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    _inputs_project(tmp_path)
    result = CliRunner().invoke(cli, ["simulate", "fastscale.yaml", "--requests", path])
    assert result.exit_code == 2 and f"is in /{path.split('/')[1]}" in result.output


def test_a_trace_linked_to_the_environment_never_prints_it(tmp_path):
    """As a CI job runs it: the job's secret is in the environment, the pull request links its trace there."""
    write_config(tmp_path, "")
    (tmp_path / "trace.csv").symlink_to("/proc/self/environ")
    for args in (["--requests", "trace.csv"], ["--requests", "trace.csv", "--json"], ["--trace", "trace.csv"]):
        done, _ = fastscale(tmp_path, "simulate", "fastscale.yaml", *args, env={"JOB_SECRET": "s3cr3t-marker"})
        assert done.returncode == 2 and "is in /proc" in done.stdout + done.stderr
        assert "s3cr3t-marker" not in done.stdout + done.stderr


def test_refused_on_the_kernels_file_system_wherever_it_is_mounted(tmp_path):
    from fastscale.infra.base.safe_files import SpecialFileError, refuse_system

    outside = tmp_path / "mounted"  # as if /proc were mounted here: a file on the same device as /proc
    with pytest.raises(SpecialFileError, match="is on a kernel file system"):
        refuse_system(outside, "trace", os.stat("/proc").st_dev)
    refuse_system(outside, "trace", os.stat(tmp_path).st_dev)  # any other file system is fine


# --------------------------------------------------------------------------------------------- state path


def _synth(tmp_path: Path, monkeypatch, *args: str):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(cli, ["synth", "fastscale.yaml", "--json", *args])


@pytest.mark.parametrize("path,words", [
    ("/etc/passwd", "'/etc/passwd' is an absolute path"),
    ("../outside.tfstate", "climbs out of the project directory"),
    ("state/../../outside.tfstate", "climbs out of the project directory"),
])
def test_state_path_outside_the_project_is_refused_with_its_line(tmp_path, monkeypatch, path, words):
    write_config(tmp_path, f"state: {{backend: local, path: '{path}'}}")
    result = _synth(tmp_path, monkeypatch)
    assert result.exit_code == 2
    [finding] = [f for f in json.loads(result.stdout)["files"][0]["findings"] if f["code"] == "FS095"]
    assert (finding["path"], finding["line"]) == ("state.path", 3) and words in finding["message"]


def test_state_path_through_a_linked_directory_changes_nothing_outside(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.tfstate"
    victim.write_text("precious")
    victim.chmod(0o644)
    project = tmp_path / "project"
    project.mkdir()
    (project / "state").symlink_to(outside)
    write_config(project, "state: {backend: local, path: state/victim.tfstate}")
    result = _synth(project, monkeypatch)
    assert result.exit_code == 2
    [finding] = json.loads(result.stdout)["files"][0]["findings"]
    assert finding["code"] == "FS095" and "'state' is a symbolic link" in finding["message"]
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644 and victim.read_text() == "precious"
    assert not (project / "cdktf.out").exists()


def test_default_state_file_that_is_a_link_is_refused(tmp_path, monkeypatch):
    target = tmp_path / "elsewhere"
    target.write_text("{}")
    write_config(tmp_path)
    (tmp_path / "terraform.demo.us-east-1.tfstate").symlink_to(target)
    result = _synth(tmp_path, monkeypatch)
    assert result.exit_code == 2
    [finding] = json.loads(result.stdout)["files"][0]["findings"]
    assert (finding["code"], finding["path"]) == ("FS095", "state")
    assert "is a symbolic link" in finding["message"]


def test_state_file_that_is_a_device_or_fifo_is_refused(tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "pipe.tfstate")
    write_config(tmp_path, "state: {backend: local, path: pipe.tfstate}")
    done, _ = fastscale(tmp_path, "validate", "fastscale.yaml")
    assert done.returncode == 2 and "is a FIFO (named pipe): the state must be a regular file" in done.stdout + done.stderr


# --------------------------------------------------------------------------------------------- endpoint URLs


@pytest.fixture
def no_network(monkeypatch):
    """Every connection attempt, by anyone in this process, is recorded and refused."""
    attempts: list[object] = []
    real_connect = socket.socket.connect

    def connect(self, address):
        attempts.append(address)
        if isinstance(address, tuple):
            raise ConnectionRefusedError("test: no network")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    return attempts


@pytest.mark.parametrize("url,code,words", [
    ("https://attacker.example.com", 2, "names a host name other than localhost"),
    ("http://203.0.113.7:4566", 2, "names a public address"),
    ("http://169.254.169.254/", 2, "link-local, cloud metadata"),
    ("http://0xa9fea9fe/", 2, "link-local, cloud metadata"),
    ("http://[::ffff:169.254.169.254]/", 2, "link-local, cloud metadata"),
    ("http://100.100.100.200/", 2, "link-local, cloud metadata"),
])
@pytest.mark.parametrize("where", ["config", "flag"])
def test_refused_hosts_never_receive_a_connection(tmp_path, monkeypatch, no_network, url, code, words, where):
    monkeypatch.chdir(tmp_path)
    extra = f"endpoint_url: '{url}'" if where == "config" else ""
    write_config(tmp_path, extra)
    flag = ["--endpoint-url", url] if where == "flag" else []
    result = CliRunner().invoke(cli, ["status", "fastscale.yaml", "--json", *flag])
    assert result.exit_code == code, result.output
    assert words in result.output
    assert no_network == []


def test_a_remote_host_is_used_only_with_the_command_line_opt_in(tmp_path, monkeypatch, no_network):
    monkeypatch.chdir(tmp_path)
    write_config(tmp_path, "endpoint_url: https://emulator.example.com")
    refused = CliRunner().invoke(cli, ["validate", "--json", "fastscale.yaml"])
    assert refused.exit_code == 2
    [finding] = json.loads(refused.stdout)["files"][0]["findings"]
    assert (finding["code"], finding["line"]) == ("FS096", 3)
    assert "--send-credentials-to-endpoint-url" in finding["hint"]
    allowed = CliRunner().invoke(cli, ["validate", "--json", "--send-credentials-to-endpoint-url", "fastscale.yaml"])
    assert allowed.exit_code == 0, allowed.output
    assert no_network == []


def test_the_config_cannot_opt_in_by_itself(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_config(tmp_path, "endpoint_url: https://emulator.example.com\nsend_credentials_to_endpoint_url: true")
    result = CliRunner().invoke(cli, ["validate", "--json", "fastscale.yaml"])
    assert result.exit_code == 2 and "unknown key" in result.output


def test_clients_refuse_what_validation_refuses():
    with pytest.raises(clients.EndpointRefused, match="public address"):
        clients.AwsClients("us-east-1", endpoint_url="http://203.0.113.7")
    with pytest.raises(clients.EndpointRefused, match="metadata"):
        clients.AwsClients("us-east-1", endpoint_url="http://169.254.169.254", send_credentials=True)
    assert clients.AwsClients("us-east-1", endpoint_url="http://203.0.113.7", send_credentials=True)
    assert clients.AwsClients("us-east-1", endpoint_url="http://192.168.1.20:4566")


# --------------------------------------------------------------------------------------------- silent server


class SilentServer:
    """Accepts every connection and never answers (a black-holed proxy, a hung emulator)."""

    def __init__(self, host: str = "127.0.0.1"):
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.accepted:
            conn.close()


@pytest.fixture
def silent_server():
    server = SilentServer("0.0.0.0")
    yield server
    server.close()


def test_a_call_to_a_silent_server_ends_within_its_time_limit_and_says_what_it_waits_for(silent_server, monkeypatch):
    monkeypatch.setenv(clients.CALL_TIME_LIMIT_ENV, "3")
    monkeypatch.setattr(calls, "WAIT_NOTICE_SECONDS", 0.3)
    notices: list[str] = []
    monkeypatch.setattr(calls, "wait_reporter", notices.append)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    url = f"http://127.0.0.1:{silent_server.port}"

    @clients.translate_errors
    def describe():
        return clients.AwsClients("us-east-1", endpoint_url=url).sagemaker.describe_endpoint(EndpointName="chat")

    started = time.monotonic()
    with pytest.raises(clients.AwsError) as failed:
        describe()
    elapsed = time.monotonic() - started
    # 1.5 s to connect and 1.5 s to answer fit once in 3 s; botocore alone would try 5 times.
    assert elapsed < 3.5 and len(silent_server.accepted) == 1
    assert str(failed.value).startswith(f"no answer from {url} to DescribeEndpoint within 3 s (1 attempt(s)")
    assert "\n" not in str(failed.value)
    assert notices and notices[0].startswith(f"waiting for sagemaker DescribeEndpoint at {url} (attempt 1 of 5")


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_status_against_a_silent_server_is_bounded_with_output_and_one_error_line(tmp_path, silent_server, as_json):
    write_config(tmp_path)
    url = f"http://127.0.0.1:{silent_server.port}"
    env = {clients.CALL_TIME_LIMIT_ENV: "4", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    done, elapsed = fastscale(tmp_path, "status", "fastscale.yaml", "--endpoint-url", url,
                              *(["--json"] if as_json else []), env=env, timeout=60)
    assert done.returncode == 1
    assert elapsed < 4 + QUICK_S  # the limit plus start-up, never 5 x 60 s
    assert f"waiting for sagemaker DescribeEndpoint at {url} (attempt 1 of 5" in done.stderr
    if as_json:
        report = json.loads(done.stdout)  # stdout holds the JSON only, the waiting lines went to stderr
        assert report["exit_code"] == 1 and f"no answer from {url}" in report["error"]
    else:
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and f"no answer from {url} to DescribeEndpoint within 4 s" in errors[0]
    assert silent_server.accepted


def test_a_trusted_remote_host_name_does_receive_the_calls(tmp_path, silent_server):
    name = socket.gethostname()
    try:
        socket.gethostbyname(name)
    except OSError:
        pytest.skip(f"this machine's name {name!r} does not resolve")
    write_config(tmp_path)
    url = f"http://{name}:{silent_server.port}"
    env = {clients.CALL_TIME_LIMIT_ENV: "2", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    refused, _ = fastscale(tmp_path, "status", "fastscale.yaml", "--endpoint-url", url, env=env)
    assert refused.returncode == 2 and not silent_server.accepted
    allowed, _ = fastscale(tmp_path, "status", "fastscale.yaml", "--endpoint-url", url,
                           "--send-credentials-to-endpoint-url", env=env, timeout=60)
    assert allowed.returncode == 1 and silent_server.accepted
