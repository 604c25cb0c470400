"""Placement of the local Terraform state: the project root, named with the region, never in the output
directory, never silently replaced by empty state; owner-only."""

from __future__ import annotations

import os
import stat

import pytest

from fastscale.infra.config import parse_config
from fastscale.infra.model.state import StateLayoutError, local_state_placement, protect_state_files


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


# ----------------------------------------------------------------- the state stays inside the project


@pytest.mark.parametrize("path", ["/etc/passwd", "../x.tfstate", "a/../../x.tfstate", "state/"])
def test_placement_refuses_a_state_path_outside_the_project(base_config, tmp_path, path):
    # the last guard, whatever validation let through (a config built in code never met rule FS095)
    with pytest.raises(StateLayoutError, match="state.path: "):
        local_state_placement(_config(base_config, path=path), tmp_path / "cdktf.out", tmp_path)


def test_placement_refuses_a_linked_directory_or_file_on_the_way(base_config, tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "state").symlink_to(tmp_path / "outside")
    with pytest.raises(StateLayoutError, match="'state' is a symbolic link"):
        local_state_placement(_config(base_config, path="state/x.tfstate"), tmp_path / "cdktf.out", tmp_path)
    (tmp_path / "x.tfstate.backup").symlink_to(tmp_path / "outside" / "b")
    with pytest.raises(StateLayoutError, match=r"'x.tfstate.backup' is a symbolic link"):
        local_state_placement(_config(base_config, path="x.tfstate"), tmp_path / "cdktf.out", tmp_path)


def test_placement_refuses_a_state_file_of_another_user(base_config, tmp_path, monkeypatch):
    (tmp_path / "x.tfstate").write_text("{}")
    monkeypatch.setattr("os.geteuid", lambda: os.stat(tmp_path / "x.tfstate").st_uid + 1)
    with pytest.raises(StateLayoutError, match="belongs to another user"):
        local_state_placement(_config(base_config, path="x.tfstate"), tmp_path / "cdktf.out", tmp_path)


def test_modes_change_only_on_regular_files_the_user_owns(config, tmp_path, monkeypatch):
    placement = local_state_placement(config, tmp_path / "cdktf.out", tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("x")
    victim.chmod(0o644)
    placement.file.symlink_to(victim)  # appeared after placement was decided
    assert protect_state_files(placement) == []
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644
    placement.file.unlink()
    placement.file.write_text("{}")
    placement.file.chmod(0o644)
    monkeypatch.setattr("os.geteuid", lambda: placement.file.stat().st_uid + 1)
    assert protect_state_files(placement) == []
    assert stat.S_IMODE(placement.file.stat().st_mode) == 0o644


def test_linked_output_directory_gets_an_absolute_backend_path(config, tmp_path):
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "cdktf.out").symlink_to(tmp_path / "elsewhere" / "deep")
    placement = local_state_placement(config, tmp_path / "project" / "cdktf.out", tmp_path / "project")
    # relative, "../../../" would climb the real directories: elsewhere/, not project/
    assert placement.backend_path == str(tmp_path / "project" / f"terraform.demo.{config.region}.tfstate")
