import os

import pytest


@pytest.fixture(autouse=True)
def _in_project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the project root is the directory fastscale runs in


def local(config, path):
    config["state"] = {"backend": "local", "path": path}
    return config


def test_relative_path_inside_the_project_passes(run_rule, single_model, tmp_path):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "prod.tfstate").write_text("{}")
    assert run_rule("FS095", local(single_model, "state/prod.tfstate")) == []
    assert run_rule("FS095", local(single_model, "./not-yet/created.tfstate")) == []
    assert run_rule("FS095", single_model) == []  # the default file, not there yet


@pytest.mark.parametrize("path,words", [
    ("/etc/passwd", "is an absolute path"),
    ("../../home/ci/.bashrc", "climbs out of the project directory"),
    ("state/../../x", "climbs out of the project directory"),
    ("state/", "names a directory"),
    ("", "is empty"),
])
def test_path_leaving_the_project_is_an_error(run_rule, single_model, path, words):
    [finding] = run_rule("FS095", local(single_model, path))
    assert finding.path == "state.path" and words in finding.message
    assert "relative path inside the project directory" in finding.hint


def test_link_on_the_way_is_an_error(run_rule, single_model, tmp_path):
    (tmp_path / "state").symlink_to("/etc")
    [finding] = run_rule("FS095", local(single_model, "state/passwd"))
    assert "'state' is a symbolic link (to '/etc')" in finding.message


@pytest.mark.parametrize("make,words", [
    (lambda p: p.symlink_to("/etc/passwd"), "is a symbolic link"),
    (lambda p: os.mkfifo(p), "is a FIFO (named pipe)"),
    (lambda p: p.mkdir(), "is a directory"),
])
def test_state_file_that_is_not_a_regular_file_is_an_error(run_rule, single_model, tmp_path, make, words):
    make(tmp_path / "x.tfstate")
    [finding] = run_rule("FS095", local(single_model, "x.tfstate"))
    assert words in finding.message


def test_lock_info_file_beside_the_default_state_is_checked(run_rule, single_model, tmp_path):
    (tmp_path / ".terraform.demo.us-east-1.tfstate.lock.info").symlink_to("/etc/shadow")
    [finding] = run_rule("FS095", single_model)
    assert finding.path == "state" and "lock.info' is a symbolic link" in finding.message


def test_file_of_another_user_is_an_error(run_rule, single_model, tmp_path, monkeypatch):
    (tmp_path / "x.tfstate").write_text("{}")
    monkeypatch.setattr("os.geteuid", lambda: os.stat(tmp_path / "x.tfstate").st_uid + 1)
    [finding] = run_rule("FS095", local(single_model, "x.tfstate"))
    assert "belongs to another user" in finding.message


def test_s3_state_is_not_checked(run_rule, single_model):
    single_model["state"] = {"backend": "s3", "bucket": "team-state", "key": "/etc/passwd"}
    assert run_rule("FS095", single_model) == []
