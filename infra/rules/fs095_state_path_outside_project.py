"""The local state stays inside the project, in a regular file of the user running fastscale.

fastscale hands `state.path` to Terraform as the local backend's path and makes the file owner-only (mode
0600) at every `synth`. A path outside the project (`/etc/passwd`, `../../home/ci/.bashrc`), or one that
reaches its file through a symbolic link committed to the repository, would let a config overwrite or
change the mode of any file the runner can write. So `state.path` must be relative to the project root
(the directory fastscale runs in), without `..`, and every directory on the way must be a real directory;
the state file, its `.backup` and Terraform's lock-info file beside it must each be a regular file owned by
the current user, or not exist yet. The default state file (no `state.path`) is checked the same way.
`synth`, `plan`, `deploy` and `destroy` check again right before they write, and stop with exit code 2.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from fastscale.infra.base.safe_files import state_file_problem, state_path_form_problem
from fastscale.infra.config import FastscaleConfig, LocalState
from fastscale.infra.model.state import default_state_file
from fastscale.infra.rules import Hit, Severity, rule

EXAMPLE = """\
project: demo
region: us-east-1
state: {backend: local, path: /etc/passwd}
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

HINT = ("use a relative path inside the project directory without links, e.g. `state: {backend: local, path: "
        "state/prod.tfstate}`, or leave `path` out for terraform.<project>.<region>.tfstate in the project root")


@rule("FS095", "state-path-outside-project", Severity.ERROR,
      "The local state path leaves the project, passes through a symbolic link, or is not the user's regular file.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    state = config.state
    if not isinstance(state, LocalState):
        return

    relative = state.path if state.path is not None else default_state_file(config)
    where = "state.path" if state.path is not None else "state"
    problem = state_path_form_problem(relative) or state_file_problem(Path.cwd(), relative)
    if problem is not None:
        yield Hit(where, f"the local Terraform state {problem}", HINT)
