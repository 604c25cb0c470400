"""One list of the resource types a stack creates (`infra/base/resource_types.py`): a type added there and not
everywhere it must go, or anywhere else and not there, fails here.

The provider schema extractor and the props generator read the list itself; what is checked here are the
places that cannot be derived from it: a resource class per type, a teardown kind per provider type, the
committed provider schemas and the built-in types' hand-written schemas."""

from __future__ import annotations

import importlib
import pkgutil

from fastscale.infra.aws.inventory import KINDS
from fastscale.infra.base.resource_types import BUILTIN_RESOURCE_TYPES, PROVIDER_RESOURCE_TYPES, RESOURCE_TYPES
from tests.contract.schema_check import BUILTIN_RESOURCES, load_schemas

PROVIDER_TYPES = {t for types in PROVIDER_RESOURCE_TYPES.values() for t in types}


def resource_classes() -> dict[str, type]:
    """Terraform type -> the class of fastscale's resource layer that creates it."""
    import fastscale.stacks.resources as package
    from fastscale.stacks.resources.base import Resource

    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        importlib.import_module(info.name)

    def subclasses(cls: type) -> list[type]:
        return [c for sub in cls.__subclasses__() for c in (sub, *subclasses(sub))]

    found: dict[str, type] = {}
    for cls in subclasses(Resource):
        if cls.__module__.startswith(package.__name__) and "TYPE" in vars(cls):
            assert cls.TYPE not in found, f"{cls.TYPE}: two classes, {found[cls.TYPE].__name__} and {cls.__name__}"
            found[cls.TYPE] = cls
    return found


def test_the_list_is_well_formed():
    for provider, types in PROVIDER_RESOURCE_TYPES.items():
        assert types and all(t.startswith(f"{provider}_") for t in types), provider
        assert list(types) == sorted(set(types)), f"{provider}: sorted, each once"
    assert not PROVIDER_TYPES & set(BUILTIN_RESOURCE_TYPES)


def test_every_listed_type_has_one_resource_class_and_every_class_is_listed():
    classes = resource_classes()
    assert set(classes) == RESOURCE_TYPES
    for rtype, cls in classes.items():
        provider = next((p for p, types in PROVIDER_RESOURCE_TYPES.items() if rtype in types), "terraform")
        assert provider == cls.PROVIDER, cls.__name__


def test_every_provider_type_belongs_to_exactly_one_teardown_kind():
    kinds_of = {t: [k.name for k in KINDS if t in k.terraform_types] for t in PROVIDER_TYPES}
    assert {t: names for t, names in kinds_of.items() if len(names) != 1} == {}
    # and no kind claims a type the stacks do not create, nor one that holds nothing in AWS
    assert {t for k in KINDS for t in k.terraform_types} == PROVIDER_TYPES


def test_the_committed_schemas_hold_exactly_the_provider_types():
    schemas = load_schemas()
    assert set(schemas["resources"]) == PROVIDER_TYPES, "run python scripts/extract_provider_schemas.py"
    for provider, types in PROVIDER_RESOURCE_TYPES.items():
        for rtype in types:
            assert schemas["resources"][rtype]["provider"] == provider, rtype


def test_every_builtin_type_has_its_hand_written_schema():
    assert set(BUILTIN_RESOURCES) == set(BUILTIN_RESOURCE_TYPES)
