"""fastscale's core, in layers (highest first; each imports only the layers below it):

- ``aws``: the account, through boto3: live checks, inventory, teardown, cut-over, adoption, measurements.
- ``project``: what fastscale writes into and runs beside a user's project: ``init``'s scaffold, the emulator,
  the stack snapshot a project's own tests compare.
- ``terraform``: the runner of the real ``terraform``/``tofu`` binary, what a plan means on AWS (rollout),
  the plan session and the files a synthesis writes (outputs).
- ``analysis``: estimates, the spike simulator and ``recommend``.
- ``rules``: the FS checks behind ``validate``.
- ``model``: what a config resolves to: names, capacity, cut-over, deployment and scaling settings, state
  placement, overrides.
- ``config``: the YAML file: its schema, loading, secrets and comment-keeping edits.
- ``base``: facts and boundaries: the instance catalog, AWS facts, regions, limits, safe file reads, the one
  file writer, network and process access, artifacts, provider versions.

The import-linter contracts in pyproject.toml hold these levels. Nothing in this package imports cdktf or jsii,
and nothing below ``aws`` imports boto3, so validation, synthesis input, estimates and simulations need no AWS.
"""

__version__ = "0.1.0"
