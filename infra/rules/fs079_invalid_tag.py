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
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model import naming
from fastscale.infra.rules import Hit, Severity, rule
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


def _tag_maps(config: FastscaleConfig) -> Iterator[tuple[str, dict[str, str]]]:
    """(config path, tags) of the config's `tags` and of every adopted resource's live tags."""
    yield "tags", config.tags
    for i, ep in enumerate(config.endpoints):
        if ep.adopted is not None:
            for kind, kept in ep.adopted.tags:
                yield f"endpoints[{i}].adopted.tags.{kind}", kept
        for j, c in enumerate(ep.inference_components):
            if c.adopted is not None:
                for kind, kept in c.adopted.tags:
                    yield f"endpoints[{i}].inference_components[{j}].adopted.tags.{kind}", kept


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


def _tagged_resources(config: FastscaleConfig) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(what, config path to fix, the tags the stack puts on it) of each resource whose tags differ: the
    execution role (with the region tag) or, with a role of the config's own, the endpoint's resources; and
    every adopted resource with its kept live tags."""
    for i, ep in enumerate(config.endpoints):
        base = naming.tags(config, ep)
        if ep.execution_role_arn:
            yield f"endpoint {ep.name}'s resources", "tags", base
        else:
            yield f"endpoint {ep.name}'s execution role", "tags", naming.tags(config, ep, global_resource=True)
        if ep.adopted is not None:
            for kind, kept in ep.adopted.tags:
                if kept:
                    yield (f"endpoint {ep.name}'s {_KIND_LABELS[kind]}", f"endpoints[{i}].adopted.tags.{kind}",
                           naming.with_live_tags(base, kept))
        for j, c in enumerate(ep.inference_components):
            if c.adopted is not None:
                for kind, kept in c.adopted.tags:
                    if kept:
                        what = f"component {c.name}" if kind == "component" else f"component {c.name}'s {_KIND_LABELS[kind]}"
                        yield (what,
                               f"endpoints[{i}].inference_components[{j}].adopted.tags.{kind}",
                               naming.with_live_tags(base, kept))



@rule("FS079", "invalid-tag", Severity.ERROR, "A tag has a reserved key or characters AWS refuses, or there are too many.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, tag_map in _tag_maps(config):
        for key, value in tag_map.items():
            yield from _check_tag(key_path(path, key), key, value)
    for what, path, carried in _tagged_resources(config):
        total = len(carried)
        if total > MAX_TAGS_PER_RESOURCE:
            yield Hit(path, f"{what} would carry {total} tags (fastscale's own, the config's `tags` and the live tags "
                      f"adopted there); AWS allows {MAX_TAGS_PER_RESOURCE} on a resource.",
                      f"remove at least {total - MAX_TAGS_PER_RESOURCE} tag(s) from `tags` or `{path}`"
                      if path != "tags" else f"remove at least {total - MAX_TAGS_PER_RESOURCE} tag(s)")
