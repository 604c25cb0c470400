"""The one runtime a stack command reaches outside the process through: how a command finds it, and its parts."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from fastscale.cli import runtime as runtime_module
from fastscale.cli.runtime import Runtime
from fastscale.infra.model.resolved import resolve
from fastscale.infra.project.emulator import Emulator, EmulatorUnavailable
from fastscale.infra.terraform.runner import TerraformRunner
from tests.aws.factories import single_model_config


@click.command()
def which() -> None:
    click.echo("handed in" if runtime_module.current().is_interactive() == "marker" else "default")


def test_a_command_gets_the_runtime_handed_in_as_the_context_object_else_the_real_one():
    handed = Runtime.default().replace(is_interactive=lambda: "marker")
    assert CliRunner().invoke(which, [], obj=handed).output == "handed in\n"
    assert CliRunner().invoke(which, []).output == "default\n"
    assert runtime_module.current() == Runtime.default()  # outside any command too


def test_the_runtime_is_frozen_and_replace_refuses_a_part_it_does_not_have():
    rt = Runtime.default()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rt.synthesize = print  # type: ignore[misc]
    with pytest.raises(TypeError):
        rt.replace(boto3_session=lambda: None)
    swapped = rt.replace(now=lambda: "then")
    assert swapped.now() == "then" and rt.now() != "then"


def test_rollouts_are_followed_with_the_aws_clients_unless_their_own_are_given():
    stack = resolve(single_model_config())
    rt = Runtime.default().replace(aws_clients=lambda s: {"from": "aws_clients", "stack": s})
    assert rt.clients_for_rollouts(stack) == {"from": "aws_clients", "stack": stack}
    rollout = rt.replace(rollout_clients=lambda s: {"from": "rollout", "stack": s})
    assert rollout.clients_for_rollouts(stack) == {"from": "rollout", "stack": stack}


def test_the_real_emulator_part_refuses_without_moto_s_server_and_builds_an_unbound_one_with_it(monkeypatch):
    server = Runtime.default().emulator("127.0.0.1", 0)
    assert isinstance(server, Emulator) and (server.host, server.port) == ("127.0.0.1", 0)  # bind() comes later

    real = importlib.import_module

    def without_moto_server(name, *args, **kwargs):  # as on an install without the `emulator` extra
        if name.startswith("moto"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", without_moto_server)
    with pytest.raises(EmulatorUnavailable, match=r"pip install 'fastscale\[emulator\]'"):
        Runtime.default().emulator("127.0.0.1", 0)


def test_the_real_terraform_part_is_a_runner_in_the_stack_directory(tmp_path):
    (tmp_path / "main.tf.json").write_text("{}")
    seen = []
    runner = Runtime.default().terraform("/bin/true", tmp_path, env={"TF_LOG": "off"}, on_event=seen.append)
    assert isinstance(runner, TerraformRunner)
    assert (runner.binary, runner.workdir, runner.env, runner.on_event) == ("/bin/true", tmp_path, {"TF_LOG": "off"},
                                                                            seen.append)


def test_building_the_real_runtime_loads_neither_boto3_nor_the_cdk_engine():
    code = (
        "import sys; from fastscale.cli.runtime import Runtime; Runtime.default(); "
        "print(sorted(m for m in ('boto3', 'botocore', 'cdktf', 'jsii') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
