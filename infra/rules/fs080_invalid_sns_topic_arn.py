"""`alarms.sns_topic_arn` must be the ARN of an SNS topic in the project's partition.

CloudWatch notifies an alarm's SNS action by the topic ARN, `arn:<partition>:sns:<region>:<account>:<topic>`
(PutMetricAlarm, AlarmActions). Topic names are 1-256 letters, digits, `-` and `_` (a FIFO topic ends in
`.fifo`). The partition is the region's (`aws`, `aws-cn` for China, `aws-us-gov` for GovCloud): an alarm
cannot notify across partitions. The topic's region must be a real region of that partition; this rule
does not require the alarm's own region, as AWS documents no such restriction for alarm actions.
Anything else (a queue or role ARN, a wildcard, an e-mail address) is refused here instead of by
CloudWatch during the deploy.

AWS sources: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html, https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-actions.html, https://docs.aws.amazon.com/sns/latest/api/API_CreateTopic.html.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fastscale.infra.base import regions
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    alarms:
      sns_topic_arn: arn:aws:sqs:us-east-1:123456789012:alerts
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

SNS_TOPIC_ARN_RE = re.compile(
    r"arn:(?P<partition>aws[a-z-]*):sns:(?P<region>[a-z0-9-]+):(?P<account>[0-9]{12}):(?P<topic>[A-Za-z0-9_-]{1,256}(?:\.fifo)?)"
)


def _problem(arn: str, region: str) -> str | None:
    m = SNS_TOPIC_ARN_RE.fullmatch(arn)
    if m is None:
        return "it is not an SNS topic ARN (arn:<partition>:sns:<region>:<12-digit account>:<topic name>)"
    expected = regions.partition_of(region)
    if m["partition"] != expected:
        return f"the topic is in partition {m['partition']}, but region {region} is in {expected}"
    part = regions.partition_named(expected)
    if part is not None and m["region"] not in part.regions:
        close = regions.suggest(m["region"], list(part.regions), n=1)
        return f"'{m['region']}' is not a region of {expected}" + (f" (did you mean {close[0]}?)" if close else "")
    return None


@rule("FS080", "invalid-sns-topic-arn", Severity.ERROR, "alarms.sns_topic_arn is not an SNS topic ARN in the project's partition.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep in endpoints(config):
        arn = ep.alarms.sns_topic_arn
        if arn is None or (problem := _problem(arn, config.region)) is None:
            continue
        yield Hit(
            f"{path}.alarms.sns_topic_arn",
            f"sns_topic_arn is not usable as an alarm action: {problem}.",
            f"give the topic's ARN, arn:{regions.partition_of(config.region)}:sns:{regions.shown(config.region)}:"
            "<account>:<topic> (aws sns list-topics), or remove sns_topic_arn",
        )
