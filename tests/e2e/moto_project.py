"""A project on fastscale's emulator (infra/project/emulator.py: moto's threaded server answering as AWS does,
Application Auto Scaling tags and an UpdateEndpoint that refuses an instance-type change of an auto-scaled
variant included), its UpdateEndpoint calls recorded (tests/e2e/update_calls.py), for
tests/e2e/test_live_updates.py; and a `fastscale` run held at its prompt (:class:`AtThePrompt`).

The provider comes from a filesystem mirror found by tests/tf_mirror.py; without one the tests skip and say why.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
import threading
import time

import boto3
import pytest

from tests.e2e.emulator_support import fresh_emulator
from tests.e2e.update_calls import recording
from tests.tf_mirror import cli_config, find_aws_mirror, where_looked

REGION = "us-east-1"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:{tag}"
BINARY = shutil.which("terraform") or shutil.which("tofu")
STEP_TIMEOUT = 600  # seconds for one command: each provider start takes 3-20 s (the aws binary is large)


FOUND = find_aws_mirror()
pytestmark = [
    pytest.mark.terraform,
    pytest.mark.skipif(BINARY is None, reason="needs terraform or tofu on PATH"),
    pytest.mark.skipif(FOUND is None, reason=f"no filesystem provider mirror with hashicorp/aws (looked in {where_looked()})"),
]


@pytest.fixture(scope="module")
def emulator():
    with fresh_emulator() as url, recording():
        yield url


@pytest.fixture
def project(tmp_path, emulator):
    mirror, version = FOUND
    rc = tmp_path / "terraformrc"
    rc.write_text(cli_config(mirror))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TF_", "FASTSCALE_"))},
        "TF_CLI_CONFIG_FILE": str(rc),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "FASTSCALE_TERRAFORM": BINARY,
    }
    return tmp_path, env, version


def fastscale(project, *args: str) -> subprocess.CompletedProcess[str]:
    root, env, _ = project
    code = "import sys; from fastscale.cli.main import cli; sys.argv = ['fastscale', *sys.argv[1:]]; cli()"
    try:
        return subprocess.run([sys.executable, "-c", code, *args], cwd=root, env=env, capture_output=True, text=True,
                              timeout=STEP_TIMEOUT)
    except subprocess.TimeoutExpired as exc:  # show where it stood instead of a bare timeout
        pytest.fail(f"fastscale {' '.join(args)} did not finish in {STEP_TIMEOUT} s:\n{exc.stdout}\n{exc.stderr}")


def sagemaker(emulator: str):
    return boto3.client("sagemaker", region_name=REGION, endpoint_url=emulator, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def summary(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


class AtThePrompt:
    """`fastscale COMMAND` with a terminal for its standard input, held until :meth:`answer`."""

    def __init__(self, project, *args: str):
        root, env, _ = project
        code = "import sys; from fastscale.cli.main import cli; sys.argv = ['fastscale', *sys.argv[1:]]; cli()"
        self.terminal, tty = pty.openpty()
        self.proc = subprocess.Popen([sys.executable, "-c", code, *args], cwd=root, env=env, stdin=tty,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(tty)
        self.err = bytearray()
        self.out = bytearray()
        self._readers = [threading.Thread(target=self._drain, args=(stream, buf), daemon=True)
                         for stream, buf in ((self.proc.stderr, self.err), (self.proc.stdout, self.out))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _drain(stream, buffer: bytearray) -> None:
        while chunk := os.read(stream.fileno(), 4096):
            buffer.extend(chunk)

    def wait_for(self, text: str) -> None:
        """Until ``text`` is on stderr (the prompt ends without a newline, so bytes, not lines)."""
        deadline = time.monotonic() + STEP_TIMEOUT
        while text.encode() not in self.err:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                pytest.fail(f"no {text!r} from {self.proc.args[3:]}:\n{self.out.decode()}\n{self.err.decode()}")
            time.sleep(0.2)

    def answer(self, text: str) -> int:
        os.write(self.terminal, text.encode())
        try:
            code = self.proc.wait(timeout=STEP_TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            os.close(self.terminal)
        for reader in self._readers:
            reader.join(timeout=10)
        return code

    def output(self) -> str:
        return self.out.decode() + self.err.decode()


def plan_files(root) -> list:
    """Plan files anywhere in the stack directory (each run plans in a directory of its own there)."""
    return sorted((root / "cdktf.out" / "stacks" / "emu").rglob("*.tfplan"))
