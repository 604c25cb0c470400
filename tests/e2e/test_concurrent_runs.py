"""Two runs on one stack at once, through the real terraform binary and hashicorp/aws provider against the
AWS emulator (fastscale's, on moto's threaded server), each `fastscale` in its own process as users run it.

The first run is interactive (its standard input is a pseudo-terminal) and is held at its prompt, having
shown its plan; the second is started only then, so the order is fixed. The second must refuse, naming
the first (command and pid), and change nothing; the first, answered "y", applies its own plan, once.
This is the case that once deleted a live endpoint: a deploy waiting at "Apply these changes?" applied
the plan of a destroy started beside it.

Mirror, emulator gaps and config: as tests/e2e/moto_project.py, whose fixtures this reuses.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
import time

import pytest

from tests.e2e import moto_project as lifecycle
from tests.e2e.moto_project import STEP_TIMEOUT, fastscale, sagemaker, write_config

pytestmark = lifecycle.pytestmark
# The emulator (one per module) and the project directory with its environment.
emulator = lifecycle.emulator
project = lifecycle.project


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


def test_a_run_started_while_another_waits_at_its_prompt_is_refused_and_nothing_is_applied_twice(project, emulator):
    root, _, provider = project
    write_config(root, emulator, provider, "1.0")
    sm = sagemaker(emulator)

    # A deploy shows its plan and waits; a destroy started meanwhile must not run, nor touch its plan.
    deploy = AtThePrompt(project, "deploy", "fastscale.yaml")
    deploy.wait_for("Apply these changes?")
    [deploy_plan] = plan_files(root)
    destroy = fastscale(project, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert destroy.returncode == 1, destroy.stdout + destroy.stderr
    refusal = json.loads(destroy.stdout)
    assert f"in use by fastscale deploy (pid {deploy.proc.pid} on " in refusal["error"]
    assert refusal["locked_by"]["command"] == "deploy" and "cleanup" not in refusal
    assert plan_files(root) == [deploy_plan]
    assert sm.list_endpoints()["Endpoints"] == []

    assert deploy.answer("y\n") == 0, deploy.output()
    assert "Plan: " in deploy.output() and "checks match the config" in deploy.output()
    assert sm.describe_endpoint(EndpointName="emu-chat")["EndpointStatus"] == "InService"
    assert len(sm.list_endpoint_configs()["EndpointConfigs"]) == 1 and len(sm.list_models()["Models"]) == 1
    assert plan_files(root) == []

    # The other way round: a destroy waits at its prompt, a deploy started meanwhile is refused.
    destroy = AtThePrompt(project, "destroy", "fastscale.yaml")
    destroy.wait_for("Destroy these resources?")
    deploy = fastscale(project, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert deploy.returncode == 1, deploy.stdout + deploy.stderr
    assert f"in use by fastscale destroy (pid {destroy.proc.pid} on " in json.loads(deploy.stdout)["error"]
    assert sm.describe_endpoint(EndpointName="emu-chat")["EndpointStatus"] == "InService"

    assert destroy.answer("y\n") == 0, destroy.output()
    assert sm.list_endpoints()["Endpoints"] == [] and sm.list_models()["Models"] == []
    assert plan_files(root) == []
    assert (root / "cdktf.out" / "stacks" / "emu" / "fastscale.lock").read_text() == ""
