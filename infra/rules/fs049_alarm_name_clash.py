"""Two alarms of the stack must not share a name.

A component's own rollback alarms are named `<project>-<component>-5xx-errors` and `...-model-latency`, an
endpoint's alarms `<project>-<endpoint>-<kind>`. A component named like an endpoint of the same file would
give two alarms one name: CloudWatch keeps one alarm per name, so each apply overwrites the other, one of
them watches the wrong metric, and an update rolls back (or does not) on the wrong signal.

AWS sources: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: llama
    instance_type: ml.g6.12xlarge
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
"""


@stack_rule("FS049", "alarm-name-clash", Severity.ERROR, "Two alarms of the stack would have the same name.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    owners: dict[str, str] = {}
    for ep in stack.endpoints:
        named = [(f"{ep.path}.name", a) for a in ep.alarms.names.values()]
        for c in ep.components:
            zero = c.scaling.scale_from_zero
            named += [(f"{ep.path}.{c.path}.name", a)
                      for a in (*c.alarms.values(), zero.alarm if zero else None, c.stuck_at_zero_alarm) if a]
        for path, alarm in named:
            key = alarm.lower()
            first = owners.setdefault(key, path)
            # two endpoints or two components of one name are FS017's finding
            if first != path and ("inference_components" in first) != ("inference_components" in path):
                yield Hit(path, f"the alarm '{alarm}' of this name is also the alarm of {first}: CloudWatch keeps one "
                          "alarm per name, so one would overwrite the other.", "rename the component or the endpoint")
