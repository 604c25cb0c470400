"""Placement of the local Terraform state: the project root, named with the region, never in the output
directory, never silently replaced by empty state; owner-only."""

from __future__ import annotations

import stat

import pytest

from fastscale.infra.config import parse_config
from fastscale.infra.state import StateLayoutError, local_state_placement, protect_state_files


@pytest.fixture
def config(base_config):
    return parse_config(base_config)


def _config(base_config, **state):
    base_config["state"] = {"backend": "local", **state}
    return parse_config(base_config)


def test_default_is_in_the_project_root_with_the_region(config, tmp_path):
    placement = local_state_placement(config, tmp_path / "cdktf.out", tmp_path)
    assert placement.file == tmp_path / f"terraform.demo.{config.region}.tfstate"
    assert placement.backend_path == f"../../../terraform.demo.{config.region}.tfstate"


def test_nested_output_directory_of_make_demo_keeps_state_out_of_cdktf_out(config, tmp_path):
    placement = local_state_placement(config, tmp_path / "cdktf.out" / "qwen3-8b", tmp_path)
    assert placement.file.parent == tmp_path  # `make clean` deletes cdktf.out, not the state
    assert placement.backend_path == f"../../../../terraform.demo.{config.region}.tfstate"


def test_two_regions_get_two_states(base_config, tmp_path):
    east = parse_config(base_config)
    base_config["region"] = "eu-west-1"
    west = parse_config(base_config)
    files = {local_state_placement(c, tmp_path / "out", tmp_path).file for c in (east, west)}
    assert len(files) == 2


def test_output_directory_outside_the_project_gets_an_absolute_path(config, tmp_path):
    placement = local_state_placement(config, tmp_path / "elsewhere", tmp_path / "project")
    assert placement.backend_path == str(tmp_path / "project" / f"terraform.demo.{config.region}.tfstate")


@pytest.mark.parametrize("out", [".", ".."])
def test_state_inside_the_output_directory_is_refused(config, tmp_path, out):
    with pytest.raises(StateLayoutError, match="inside the output directory"):
        local_state_placement(config, tmp_path / out, tmp_path)


def test_configured_state_inside_the_output_directory_is_refused(base_config, tmp_path):
    with pytest.raises(StateLayoutError, match="set state.path outside it"):
        local_state_placement(_config(base_config, path="cdktf.out/demo.tfstate"), tmp_path / "cdktf.out", tmp_path)


def test_remote_state_has_no_placement(base_config, tmp_path):
    base_config["state"] = {"backend": "s3", "bucket": "b", "key": "k"}
    assert local_state_placement(parse_config(base_config), tmp_path, tmp_path) is None


def test_old_default_state_in_the_output_parent_is_never_orphaned(config, tmp_path):
    # `make demo` used to leave the state in cdktf.out/ without the region in its name
    old = tmp_path / "cdktf.out" / "terraform.demo.tfstate"
    old.parent.mkdir()
    old.write_text('{"version": 4}')
    with pytest.raises(StateLayoutError) as exc:
        local_state_placement(config, tmp_path / "cdktf.out" / "qwen3-8b", tmp_path)
    new = tmp_path / f"terraform.demo.{config.region}.tfstate"
    assert f"mv {old} {new}" in str(exc.value)
    old.rename(new)  # once moved, the new place is used
    assert local_state_placement(config, tmp_path / "cdktf.out" / "qwen3-8b", tmp_path).file == new


def test_old_default_state_in_the_project_root_is_never_orphaned(config, tmp_path):
    (tmp_path / "terraform.demo.tfstate").write_text('{"version": 4}')
    with pytest.raises(StateLayoutError, match="mv "):
        local_state_placement(config, tmp_path / "cdktf.out", tmp_path)


def test_configured_relative_path_that_moved_anchor_is_never_orphaned(base_config, tmp_path):
    old = tmp_path / "cdktf.out" / "state" / "demo.tfstate"
    old.parent.mkdir(parents=True)
    old.write_text('{"version": 4}')
    with pytest.raises(StateLayoutError, match="mv "):
        local_state_placement(_config(base_config, path="state/demo.tfstate"), tmp_path / "cdktf.out" / "x", tmp_path)


def test_existing_state_and_backup_become_owner_only(config, tmp_path):
    placement = local_state_placement(config, tmp_path / "cdktf.out", tmp_path)
    backup = placement.file.with_name(placement.file.name + ".backup")
    for path in (placement.file, backup):
        path.write_text("{}")
        path.chmod(0o644)
    assert protect_state_files(placement) == [placement.file, backup]
    assert {stat.S_IMODE(p.stat().st_mode) for p in (placement.file, backup)} == {0o600}
    assert protect_state_files(placement) == []
