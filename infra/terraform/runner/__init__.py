"""Run the real ``terraform`` (or ``tofu``) binary on a synthesized stack directory.

fastscale does not reimplement any part of Terraform: it drives the binary the user already trusts and
reads Terraform's machine-readable UI (``-json``: one JSON message per line) as it streams, turning each
message into a typed :class:`TerraformEvent` for progress display and summing the run up in a
:class:`TerraformResult`. Failures are data, not exceptions: ``result.ok`` is False and
``result.diagnostics`` carry Terraform's own text; :meth:`TerraformResult.raise_for_status` turns that
into :class:`TerraformFailed` for callers that want an exception.

Ctrl-C matters here more than anywhere else in the tool: a Terraform run killed outright can leave the
state locked and resources half-recorded. The child therefore runs in its own process group (so the
terminal's SIGINT reaches only this process, never both), and a KeyboardInterrupt is forwarded to the
child's group exactly once, exactly as the terminal would have done. Terraform then stops gracefully,
writes its state and releases the lock; only after it exited is KeyboardInterrupt re-raised.

Pure Python: no cdktf import, so the CLI can deploy an already synthesized stack without loading jsii.

The package, one module per part: :mod:`.binary` (finding the binary, its version and the environment it runs
in), :mod:`.messages` (what a run says: events, diagnostics, the result), :mod:`.commands` (the
:class:`TerraformRunner`: the commands, the child process and Ctrl-C). The names below are the ones callers use; the
timeouts are read (and set, in tests) on the module that defines them.
"""

from __future__ import annotations

from fastscale.infra.terraform.runner.binary import (
    CLI_FLAG,
    ENV_VAR,
    TerraformError,
    TerraformNotFound,
    TerraformUnsupported,
    VersionInfo,
    find_binary,
)
from fastscale.infra.terraform.runner.commands import TerraformRunner
from fastscale.infra.terraform.runner.messages import (
    Diagnostic,
    TerraformEvent,
    TerraformFailed,
    TerraformResult,
    parse_plain_diagnostics,
)

__all__ = [
    "CLI_FLAG",
    "ENV_VAR",
    "Diagnostic",
    "TerraformError",
    "TerraformEvent",
    "TerraformFailed",
    "TerraformNotFound",
    "TerraformResult",
    "TerraformRunner",
    "TerraformUnsupported",
    "VersionInfo",
    "find_binary",
    "parse_plain_diagnostics",
]
