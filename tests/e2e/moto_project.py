"""A project on fastscale's emulator (infra/project/emulator.py: moto's threaded server answering as AWS does,
Application Auto Scaling tags and an UpdateEndpoint that refuses an instance-type change of an auto-scaled
variant included), its UpdateEndpoint calls recorded (tests/e2e/update_calls.py), for
tests/e2e/test_live_updates.py; and a `fastscale` run held at its prompt (:class:`AtThePrompt`).

The provider comes from a filesystem mirror found by tests/tf_mirror.py; without one the tests skip and say why.
"""

from __future__ import annotations

import os
import pty
import subprocess
import threading
import time

import pytest

from tests.e2e import emulator_support
from tests.e2e.emulator_support import (
    BINARY,
    FOUND,
    MARKS,
    REGION,
    STEP_TIMEOUT,
    fresh_emulator,
    summary,  # noqa: F401  (re-exported for the tests of this project)
)
from tests.e2e.update_calls import recording
from tests.tf_mirror import cli_config

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:{tag}"
pytestmark = MARKS


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
    return emulator_support.fastscale(root, env, *args)


def sagemaker(emulator: str):
    return emulator_support.aws(emulator, "sagemaker")


class AtThePrompt:
    """`fastscale COMMAND` with a terminal for its standard input, held until :meth:`answer`."""

    def __init__(self, project, *args: str):
        root, env, _ = project
        self.terminal, tty = pty.openpty()
        self.proc = subprocess.Popen(emulator_support.command(*args), cwd=root, env=env, stdin=tty,
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
