"""Every resource type the stacks synthesize is a kind of the teardown inventory: otherwise destroy's proof
and sweep would never look for it, and a leftover of that type would go unseen."""

from __future__ import annotations

import importlib
import pkgutil

from fastscale.infra.aws.inventory import KINDS
from fastscale.infra.base.resource_types import BUILTIN_RESOURCE_TYPES

#: Terraform's built-in resources: they live in the state only, nothing in AWS to inventory or delete.
STATE_ONLY = set(BUILTIN_RESOURCE_TYPES)


def covered_types() -> set[str]:
    return {t for kind in KINDS for t in kind.terraform_types} | STATE_ONLY


def test_every_synthesized_resource_type_has_a_kind(examples):
    synthesized = {rtype for s in examples.values() for rtype, _, _ in s.all_resources()}
    assert synthesized, "no example synthesized any resource"
    assert synthesized - covered_types() == set()


def test_every_resource_type_of_the_resource_layer_has_a_kind():
    import fastscale.stacks.resources as package
    from fastscale.stacks.resources.base import Resource

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    declared = {cls.TYPE for cls in subclasses(Resource) if "TYPE" in vars(cls)}
    assert len(declared) >= 10
    assert declared - covered_types() == set()


def test_every_dashboard_carries_the_marker_that_proves_its_stack(examples):
    # Dashboards have no tags in Terraform: teardown proves ownership by this line in the body.
    from fastscale.infra.model.naming import dashboard_owner

    dashboards = [(s.config, body) for s in examples.values() for rtype, _, body in s.all_resources() if rtype == "aws_cloudwatch_dashboard"]
    assert dashboards
    for config, body in dashboards:
        assert dashboard_owner(body["dashboard_body"]) == (config.project, config.region)


def test_only_the_global_role_carries_the_region_tag(examples):
    from fastscale.infra.model.naming import TAG_REGION, TAG_STACK

    for s in examples.values():
        for rtype, _, body in s.all_resources():
            tags = body.get("tags")
            if isinstance(tags, list):
                tags = {t["key"]: t["value"] for t in tags}
            if not tags:
                continue
            assert tags[TAG_STACK] == s.config.project
            assert (TAG_REGION in tags) == (rtype == "aws_iam_role"), rtype
