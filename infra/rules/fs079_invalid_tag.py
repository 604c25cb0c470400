"""Tags must be ones AWS accepts on every resource the stack creates.

- A key must not begin with `aws:` in any case: the prefix is reserved for AWS, and a tagging request
  with it is refused ("User-defined tag restrictions", AWS Billing user guide).
- Keys and values may hold letters, digits, spaces and `_ . : / = + - @` only (SageMaker's `TagKey` /
  `TagValue` pattern `[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*`; IAM and CloudWatch take the same set). Lengths
  (key 1-128, value 0-256) are checked when the file is read.
- A key fastscale sets itself (`fastscale:stack`, `fastscale:endpoint`, `fastscale:region`, `managed-by`)
  would be replaced by fastscale's value: teardown proves ownership by those tags, so they are not the
  user's to set.
- A resource takes at most 50 tags. Counted per resource, as the stack tags it: fastscale's own (four on the
  execution role, three elsewhere), the config's `tags`, and on an adopted resource the live tags its
  `adopted.tags` keeps (one key counted once: the stack's win).

AWS sources: https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/allocation-tag-restrictions.html.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from fastscale.infra.base.aws_facts import MAX_TAGS_PER_RESOURCE, RESERVED_TAG_PREFIX
from fastscale.infra.model import naming
from fastscale.infra.model.resolved import ResolvedStack, TaggedResource
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import key_path

EXAMPLE = """\
project: demo
region: us-east-1
tags:
  aws:team: ml-platform
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

_TAG_PUNCTUATION = frozenset("_.:/=+-@")
#: The tag keys fastscale writes on what it creates, proof of ownership for teardown.
OWN_KEYS = (naming.TAG_STACK, naming.TAG_ENDPOINT, naming.TAG_REGION, naming.TAG_MANAGED_BY)


def bad_characters(text: str) -> list[str]:
    """The characters of ``text`` outside letters, digits, spaces and `_ . : / = + - @`."""
    return sorted({c for c in text if c not in _TAG_PUNCTUATION and unicodedata.category(c)[0] not in "LZN"})


def _shown(chars: list[str]) -> str:
    return " ".join(repr(c) for c in chars[:8])


def _check_tag(where: str, key: str, value: str) -> Iterator[Hit]:
    if key.lower().startswith(RESERVED_TAG_PREFIX):
        yield Hit(where, f"tag keys beginning with '{RESERVED_TAG_PREFIX}' are reserved for AWS: tagging any resource "
                  "with it would be refused.", f"rename the key without the '{RESERVED_TAG_PREFIX}' prefix")
    elif key in OWN_KEYS:
        yield Hit(where, f"fastscale sets the tag '{key}' itself on what it creates (teardown proves ownership "
                  "with it): this value would be replaced.", "use another key")
    if odd := bad_characters(key):
        yield Hit(where, f"the tag key has characters AWS refuses in tags ({_shown(odd)}).",
                  "use letters, digits, spaces and _ . : / = + - @ only")
    if odd := bad_characters(value):
        yield Hit(where, f"the value of this tag has characters AWS refuses in tags ({_shown(odd)}).",
                  "use letters, digits, spaces and _ . : / = + - @ only")


_KIND_LABELS = {"endpoint": "endpoint", "endpoint_config": "endpoint configuration", "model": "model",
                "scalable_target": "scalable target"}


def _what(endpoint: str, resource: TaggedResource) -> str:
    """How a finding names ``resource`` of the endpoint named ``endpoint``."""
    if resource.kind == "resources":
        return f"endpoint {endpoint}'s resources"
    if resource.kind == "execution_role":
        return f"endpoint {endpoint}'s execution role"
    if resource.component is None:
        return f"endpoint {endpoint}'s {_KIND_LABELS[resource.kind]}"
    if resource.kind == "component":
        return f"component {resource.component}"
    return f"component {resource.component}'s {_KIND_LABELS[resource.kind]}"


@stack_rule("FS079", "invalid-tag", Severity.ERROR, "A tag has a reserved key or characters AWS refuses, or there are too many.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, tag_map in stack.written_tags:
        for key, value in tag_map.items():
            yield from _check_tag(key_path(path, key), key, value)
    for ep in stack.endpoints:
        for resource in ep.tagged_resources:
            total, path = len(resource.tags), resource.path
            if total > MAX_TAGS_PER_RESOURCE:
                yield Hit(path, f"{_what(ep.key, resource)} would carry {total} tags (fastscale's own, the config's "
                          f"`tags` and the live tags adopted there); AWS allows {MAX_TAGS_PER_RESOURCE} on a resource.",
                          f"remove at least {total - MAX_TAGS_PER_RESOURCE} tag(s) from `tags` or `{path}`"
                          if path != "tags" else f"remove at least {total - MAX_TAGS_PER_RESOURCE} tag(s)")
