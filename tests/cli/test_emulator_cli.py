"""`fastscale emulator`: runs in the foreground, prints its URL and environment, stops cleanly."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys

import boto3
import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.cli.runtime import Runtime
from fastscale.infra.project.emulator import INSTALL_COMMAND, EmulatorUnavailable

CODE = "import sys; from fastscale.cli.main import cli; sys.argv = ['fastscale', *sys.argv[1:]]; cli()"


def start(*args: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    proc = subprocess.Popen([sys.executable, "-c", CODE, "emulator", "--port", "0", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("Ctrl-C stops it"):
            break
    url = re.search(r"listening on (http://\S+) ", "".join(lines).replace("\n", " "))
    assert url, "".join(lines) + proc.stderr.read()
    return proc, url.group(1), lines


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serves_tags_prints_the_environment_and_stops_cleanly(sig, ctrl_c):
    proc, url, lines = start()
    try:
        text = "".join(lines)
        assert f"export FASTSCALE_ENDPOINT_URL={url}" in text and "export AWS_ACCESS_KEY_ID=testing" in text
        assert "export AWS_DEFAULT_REGION=us-east-1" in text
        assert f"fastscale init demo --emulator {url}" in text
        aas = boto3.client("application-autoscaling", region_name="us-east-1", endpoint_url=url,
                           aws_access_key_id="testing", aws_secret_access_key="testing")
        arn = aas.register_scalable_target(
            ServiceNamespace="sagemaker", ResourceId="endpoint/e/variant/v", MinCapacity=1, MaxCapacity=2,
            ScalableDimension="sagemaker:variant:DesiredInstanceCount", Tags={"k": "v"})["ScalableTargetARN"]
        assert aas.list_tags_for_resource(ResourceARN=arn)["Tags"] == {"k": "v"}
    finally:
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "fastscale emulator stopped" in err and "Traceback" not in err


def test_a_port_in_use_exits_1_naming_the_port():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["emulator", "--port", str(port)])
    assert result.exit_code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.output and "--port" in result.output


def test_without_moto_exits_1_naming_the_install_command():
    # The runtime's `emulator` part is what finds moto's server missing (tests/test_emulator.py: require_moto).
    def missing(host, port):
        raise EmulatorUnavailable(f"the emulator needs moto's server: run {INSTALL_COMMAND}")

    result = CliRunner().invoke(cli, ["emulator", "--port", "0"], obj=Runtime.default().replace(emulator=missing))
    assert result.exit_code == 1
    assert "pip install 'fastscale[emulator]'" in result.output


def test_a_port_out_of_range_is_bad_input():
    result = CliRunner().invoke(cli, ["emulator", "--port", "70000"])
    assert result.exit_code == 2 and "--port" in result.output
