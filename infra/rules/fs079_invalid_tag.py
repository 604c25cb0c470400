"""Tags must be ones AWS accepts on every resource the stack creates.

- A key must not begin with `aws:` in any case: the prefix is reserved for AWS, and a tagging request
  with it is refused ("User-defined tag restrictions", Tagging AWS Resources user guide).
- Keys and values may hold letters, digits, spaces and `_ . : / = + - @` only (SageMaker's `TagKey` /
  `TagValue` pattern `[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*`; IAM and CloudWatch take the same set). Lengths
  (key 1-128, value 0-256) are checked when the file is read.
- A key fastscale sets itself (`fastscale:stack`, `fastscale:endpoint`, `fastscale:region`, `managed-by`)
  would be replaced by fastscale's value: teardown proves ownership by those tags, so they are not the
  user's to set.
- A resource takes at most 50 tags; fastscale adds up to four of its own to the user's.
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


@rule("FS079", "invalid-tag", Severity.ERROR, "A tag has a reserved key or characters AWS refuses, or there are too many.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, tag_map in _tag_maps(config):
        for key, value in tag_map.items():
            yield from _check_tag(key_path(path, key), key, value)
    total = max(len(naming.tags(config, ep, global_resource=True)) for ep in config.endpoints)
    if total > MAX_TAGS_PER_RESOURCE:
        yield Hit("tags", f"with fastscale's own tags a resource would carry {total} tags; AWS allows "
                  f"{MAX_TAGS_PER_RESOURCE}.", f"remove at least {total - MAX_TAGS_PER_RESOURCE} tag(s)")
