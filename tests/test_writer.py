"""The one writer (infra.base.writer): no write through a symbolic link at any component, atomic replacement,
no blocking on a FIFO, and the modes callers ask for."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from fastscale.infra.base import writer
from fastscale.infra.base.writer import OutputPathError


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """tmp_path/project is the working directory; tmp_path/outside holds what a planted link points at."""
    (tmp_path / "project").mkdir()
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "victim").write_text("precious")
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path / "project"


def outside_untouched(project: Path) -> None:
    outside = project.parent / "outside"
    assert (outside / "victim").read_text() == "precious"
    assert sorted(p.name for p in outside.iterdir()) == ["dir", "victim"]
    assert list((outside / "dir").iterdir()) == []


# ------------------------------------------------------------------------- a link at every position


#: Where a link is planted (relative to the project), what it points at, and the path then written.
POSITIONS = {
    "the file itself": ("out/stacks/demo/cdk.tf.json", "victim", "out/stacks/demo/cdk.tf.json"),
    "its directory": ("out/stacks/demo", "dir", "out/stacks/demo/cdk.tf.json"),
    "the output directory": ("out", "dir", "out/stacks/demo/cdk.tf.json"),
    "a middle component": ("out/stacks", "dir", "out/stacks/demo/cdk.tf.json"),
}


def plant(project: Path, link: str, target: str) -> Path:
    at = project / link
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(project.parent / "outside" / target)
    return at


OPERATIONS = {
    "write_file": lambda path: writer.write_file(path, "x", parents=True),
    "write_file exclusive": lambda path: writer.write_file(path, "x", exclusive=True, parents=True),
    "make_dirs": lambda path: writer.make_dirs(path),
    "check_target": lambda path: writer.check_target(path),
    "create_unique_file": lambda path: writer.create_unique_file(os.path.dirname(path), "p-", ".tfplan"),
    "create_unique_directory": lambda path: writer.create_unique_directory(os.path.dirname(path), ".run-"),
    "open_file": lambda path: writer.open_file(path, os.O_RDWR | os.O_CREAT),
}


@pytest.mark.parametrize("call,position", [
    (call, position) for call in OPERATIONS for position in POSITIONS
    # a new unique file's or directory's name is random: nobody can plant a link at it
    if not (call.startswith("create_unique") and position == "the file itself")
])
def test_a_link_at_any_component_is_refused_and_nothing_outside_changes(project, call, position):
    link, target, path = POSITIONS[position]
    plant(project, link, target)
    with pytest.raises(OutputPathError) as refused:
        OPERATIONS[call](path)
    message = str(refused.value)
    assert f"'{link}' is a symbolic link (to '{project.parent / 'outside' / target}')" in message
    assert "Remove the link" in message
    assert (project / link).is_symlink(), "the link is left for the user to remove"
    outside_untouched(project)


def test_the_message_names_the_path_asked_for_and_the_link_on_its_way(project):
    plant(project, "build", "dir")
    with pytest.raises(OutputPathError) as refused:
        writer.write_file("build/x/y.json", "{}", parents=True, what="output file")
    assert str(refused.value).startswith("cannot write output file 'build/x/y.json': 'build' is a symbolic link")


def test_a_dangling_link_is_refused_too(project):
    (project / "notes.md").symlink_to(project.parent / "outside" / "new-file")
    with pytest.raises(OutputPathError, match="'notes.md' is a symbolic link"):
        writer.write_file("notes.md", "x")
    assert not (project.parent / "outside" / "new-file").exists()


# ------------------------------------------------------------------------- where the walk starts


def test_a_path_inside_the_project_is_checked_from_the_project_even_when_absolute(project):
    plant(project, "out", "dir")
    assert writer.root_for(project / "out" / "f") == project
    with pytest.raises(OutputPathError, match=f"'{project / 'out'}' is a symbolic link"):
        writer.write_file(project / "out" / "f", "x")
    outside_untouched(project)


def test_a_place_outside_the_project_is_checked_from_the_directory_it_is_named_in(project, tmp_path):
    # The directories above a place the command line named are the user's: a link there is followed ...
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert writer.root_for(tmp_path / "alias" / "out") == tmp_path / "alias"
    writer.write_file(tmp_path / "alias" / "out" / "f.json", "{}", parents=True)
    assert (tmp_path / "real" / "out" / "f.json").read_text() == "{}"
    # ... the place itself and everything below it is not.
    (tmp_path / "real" / "linked.json").symlink_to(tmp_path / "outside" / "victim")
    with pytest.raises(OutputPathError, match="linked.json' is a symbolic link"):
        writer.write_file(tmp_path / "alias" / "linked.json", "{}")
    (tmp_path / "real" / "out" / "stacks").symlink_to(tmp_path / "outside" / "dir")
    with pytest.raises(OutputPathError, match="stacks' is a symbolic link"):
        writer.write_file(tmp_path / "alias" / "out" / "stacks" / "f.json", "{}",
                          root=writer.root_for(tmp_path / "alias" / "out"))
    outside_untouched(project)


def test_the_shells_spelling_of_the_working_directory_counts_as_the_project(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path / "real")
    monkeypatch.setenv("PWD", str(tmp_path / "alias"))
    assert writer.root_for(tmp_path / "alias" / "a" / "b") == tmp_path / "alias"
    monkeypatch.setenv("PWD", str(tmp_path))  # a $PWD that is not the working directory is ignored
    assert writer.root_for(tmp_path / "real" / "a") == tmp_path / "real"


# ------------------------------------------------------------------------- atomic, modes, specials


def test_a_file_is_replaced_by_rename_so_a_hard_link_keeps_the_old_content(project):
    (project / "f.json").write_text("old")
    os.link(project / "f.json", project / "other-name")
    before = (project / "f.json").stat().st_ino
    writer.write_file("f.json", "new")
    assert (project / "f.json").read_text() == "new"
    assert (project / "other-name").read_text() == "old"
    assert (project / "f.json").stat().st_ino != before
    assert sorted(p.name for p in project.iterdir()) == ["f.json", "other-name"], "no temporary file is left"


def test_owner_only_modes_are_exact_and_other_files_keep_their_mode(project):
    old = os.umask(0o022)
    try:
        (project / "plan").write_text("x")
        (project / "plan").chmod(0o644)
        writer.write_file("plan", "secret", mode=0o600)
        assert mode(project / "plan") == 0o600
        (project / "config.yaml").write_text("x")
        (project / "config.yaml").chmod(0o640)
        writer.write_file("config.yaml", "y")
        assert mode(project / "config.yaml") == 0o640
        writer.write_file("new.txt", "z")
        assert mode(project / "new.txt") == 0o644
        writer.make_dirs("stack", mode=0o700)
        (project / "stack").chmod(0o755)
        writer.make_dirs("stack", mode=0o700)
        assert mode(project / "stack") == 0o700
        assert mode(writer.create_unique_file("stack", "fastscale-", ".tfplan")) == 0o600
        os.umask(0o277)  # a umask that would leave a directory the owner cannot enter
        made = writer.create_unique_directory("stack", ".fastscale-run-")
        assert mode(made) == 0o700 and made.parent == Path("stack") and made.name.startswith(".fastscale-run-")
        assert writer.create_unique_directory("stack", ".fastscale-run-") != made
    finally:
        os.umask(old)


def test_exclusive_never_replaces(project):
    (project / "mine.yaml").write_text("mine")
    with pytest.raises(FileExistsError):
        writer.write_file("mine.yaml", "theirs", exclusive=True)
    assert (project / "mine.yaml").read_text() == "mine"
    assert sorted(p.name for p in project.iterdir()) == ["mine.yaml"]
    writer.write_file("fresh.yaml", "x", exclusive=True)
    assert (project / "fresh.yaml").read_text() == "x"


def test_a_directory_in_the_way_is_an_error_and_a_file_in_the_way_of_a_directory_too(project):
    (project / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        writer.write_file("d", "x")
    (project / "f").write_text("")
    with pytest.raises(NotADirectoryError):
        writer.make_dirs("f/sub")
    writer.check_target("f/sub")  # not a link: left for the write to report


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_ever_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    code = ("import os\nfrom fastscale.infra.base import writer\n"
            "for call in (lambda: writer.write_file('pipe', 'x'), lambda: writer.open_file('pipe', os.O_RDWR),\n"
            "             lambda: writer.check_target('pipe')):\n"
            "    try:\n        call()\n        print('written')\n"
            "    except writer.OutputPathError as e:\n        print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.stdout.count("is a FIFO (named pipe), not a regular file") == 3, done.stdout + done.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)
