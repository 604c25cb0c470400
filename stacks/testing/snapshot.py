"""A syrupy extension for stack snapshots: stored as syrupy's JSON extension stores them, compared the same way,
but a failing comparison shows what changed by resource and path,

    aws_sagemaker_endpoint_configuration.chat_endpoint-config_F0227107 production_variants[0].instance_type: "ml.g5.xlarge" -> "ml.g6.xlarge"

instead of a line diff of the file, where a dashboard body is one long escaped string
(:func:`fastscale.infra.project.stack_snapshot.stack_changes`). Use it as
``assert template.normalized() == snapshot.use_extension(StackSnapshotExtension)``.

Needs syrupy (a test dependency): import it from this module, or as ``fastscale.stacks.testing.StackSnapshotExtension``,
which loads it on first use.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from syrupy.extensions.json import JSONSnapshotExtension

from fastscale.infra.project.stack_snapshot import stack_changes


class StackSnapshotExtension(JSONSnapshotExtension):
    """syrupy's JSON snapshot of a stack, whose failure lists the changed attributes by resource and path."""

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        try:
            stack, stored = json.loads(str(serialized_data)), json.loads(str(snapshot_data))
        except ValueError:  # not a stack document: syrupy's own line diff
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        if not (isinstance(stack, dict) and isinstance(stored, dict)):
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        changes = stack_changes(stored, stack)
        yield f"{len(changes)} change(s) from the snapshot to the synthesized stack (snapshot -> stack):"
        yield from changes
