#!/usr/bin/env python3
"""Extract the Terraform resource schemas that fastscale's stacks rely on.

fastscale renders a stack's Terraform JSON itself, through its own resource
layer (``stacks/resources/``), not through a prebuilt provider binding. The
schemas this script extracts feed that layer twice: ``scripts/gen_resource_props.py``
generates the props classes of every resource type from them, and
``tests/contract`` checks every synthesized resource against them. Which types
are extracted is the one list in ``infra/base/resource_types.py``.

Where the schemas come from: the prebuilt bindings published on PyPI
(``cdktf-cdktf-provider-aws`` for hashicorp/aws, ``cdktn-provider-awscc`` for
hashicorp/awscc) are generated from ``terraform providers schema -json`` and
ship that knowledge as a jsii assembly (``<pkg>/_jsii/*.jsii.tgz``, an npm
tarball holding ``package/.jsii``). For each resource the assembly has a
``*Config`` struct listing every settable argument with an ``optional`` flag
and a type that points at further structs for nested blocks and nested
attributes. The Terraform name of each argument is read from the registry
link in its docs (``...#production_variants``), which is exact even where
jsii had to rename a property; the snake_case of the jsii name is only a
fallback.

What the assembly cannot say, and therefore the output does not record:
computed-only attributes (``arn``, ``id`` of most resources), whether a
collection is a list or a set (both are JSON arrays), and ``max_items``
other than 1 (a block limited to one item is generated as a single struct,
which is recorded as ``"type": "object"``).

The wheels are fetched from PyPI with ``pip download --no-deps`` into a
temporary directory that is removed afterwards: about 160 MB (59 MB for
cdktf-cdktf-provider-aws 21.22.1, 101 MB for cdktn-provider-awscc 1.8.0). The
script keeps no cache of its own; to run it again without downloading, keep
the wheels (``pip download --no-deps --only-binary=:all: -d DIR <package>==<version>``
for both) and pass ``--wheel-dir DIR``. The ``.jsii`` file is read straight out
of the wheel, so nothing is installed and the project's own environment is
never touched.

Output: ``tests/contract/provider_schemas.json`` (sorted keys, indent 1), so
that re-running the script on the same package versions gives the same bytes.
``--check`` compares instead of writing, to detect a hand-edited or stale file.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from fastscale.infra.base.resource_types import PROVIDER_RESOURCE_TYPES

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "tests" / "contract" / "provider_schemas.json"

# Bump FORMAT when the shape of the JSON file changes, so the checker can
# refuse a file it does not understand instead of misreading it.
FORMAT = 1


@dataclass(frozen=True)
class ProviderPackage:
    """One prebuilt binding on PyPI and the resources we need from it."""

    provider: str  # local provider name, the prefix of its resource types
    pypi_name: str
    pypi_version: str
    resources: tuple[str, ...]


#: The binding of each provider, and the resource types the stacks create from it
#: (`infra/base/resource_types.py`, the one list of them).
PACKAGES: tuple[ProviderPackage, ...] = (
    ProviderPackage(
        provider="aws",
        pypi_name="cdktf-cdktf-provider-aws",
        pypi_version="21.22.1",  # the last release: hashicorp/aws 6.25.0
        resources=PROVIDER_RESOURCE_TYPES["aws"],
    ),
    ProviderPackage(
        provider="awscc",
        pypi_name="cdktn-provider-awscc",
        pypi_version="1.8.0",  # hashicorp/awscc 1.106.0
        resources=PROVIDER_RESOURCE_TYPES["awscc"],
    ),
)

# "Docs at Terraform Registry: {@link https://.../resources/x#attr_name Class#attr_name}"
_DOCS_LINK = re.compile(r"Docs at Terraform Registry: \{@link (\S+?)#([A-Za-z0-9_]+) \S+?\}")
# "Represents a {@link https://registry.terraform.io/providers/hashicorp/aws/6.25.0/docs/resources/x aws_x}."
_RESOURCE_LINK = re.compile(
    r"\{@link https://registry\.terraform\.io/providers/([^/\s]+)/([^/\s]+)/([^/\s]+)/docs/resources/\S+ (\S+)\}"
)


class ExtractionError(Exception):
    """The assembly does not look like a cdktf provider binding we understand."""


def snake_case(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


# --------------------------------------------------------------------------- fetching


def download_wheel(pkg: ProviderPackage, dest: Path) -> Path:
    """Fetch one wheel (no dependencies) into ``dest`` and return its path."""
    spec = f"{pkg.pypi_name}=={pkg.pypi_version}"
    print(f"downloading {spec} ...", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "--disable-pip-version-check", "--quiet", "--dest", str(dest), spec],
        check=True,
    )
    return find_wheel(pkg, dest)


def find_wheel(pkg: ProviderPackage, directory: Path) -> Path:
    stem = f"{pkg.pypi_name.replace('-', '_')}-{pkg.pypi_version}-"
    matches = sorted(p for p in directory.glob("*.whl") if p.name.startswith(stem))
    if not matches:
        raise ExtractionError(f"no wheel for {pkg.pypi_name}=={pkg.pypi_version} in {directory}")
    return matches[0]


def read_assembly(wheel: Path) -> tuple[dict, dict]:
    """Return (jsii assembly, npm package.json) from a binding's wheel.

    The wheel ships ``<module>/_jsii/<name>@<version>.jsii.tgz``; older jsii
    releases shipped a bare ``.jsii`` (optionally gzipped), accepted too.
    """
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if "/_jsii/" in n]
        tarballs = [n for n in names if n.endswith((".tgz", ".tar.gz"))]
        if tarballs:
            data = zf.read(tarballs[0])
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tf:
                assembly = _tar_json(tf, "package/.jsii")
                package_json = _tar_json(tf, "package/package.json")
            if assembly.get("schema") == "jsii/file-redirect":
                raise ExtractionError(f"{wheel.name}: redirected assemblies are not supported")
            return assembly, package_json
        bare = [n for n in names if n.endswith((".jsii", ".jsii.gz"))]
        if bare:
            raw = zf.read(bare[0])
            if bare[0].endswith(".gz"):
                raw = gzip.decompress(raw)
            return json.loads(raw), {}
    raise ExtractionError(f"{wheel.name}: no jsii assembly under a _jsii directory")


def _tar_json(tf: tarfile.TarFile, member: str) -> dict:
    handle = tf.extractfile(member)
    if handle is None:
        raise ExtractionError(f"{member} missing from the jsii tarball")
    return json.load(handle)


# --------------------------------------------------------------------------- conversion


@dataclass
class Converter:
    """Turns jsii structs into the schema tree written to the JSON file."""

    types: dict
    notes: list[str] = field(default_factory=list)

    def resource_classes(self) -> dict[str, dict]:
        """Map Terraform resource type -> jsii class of every resource in the assembly."""
        found: dict[str, dict] = {}
        for spec in self.types.values():
            if spec.get("kind") != "class" or not str(spec.get("base", "")).endswith(".TerraformResource"):
                continue
            match = _RESOURCE_LINK.search(spec.get("docs", {}).get("summary", ""))
            if match:
                found[match.group(4)] = spec
        return found

    def resource(self, tf_type: str, cls: dict) -> dict:
        params = cls.get("initializer", {}).get("parameters", [])
        config = next((p for p in params if p["name"] == "config"), None)
        if config is None or "fqn" not in config["type"]:
            raise ExtractionError(f"{cls['fqn']}: initializer has no config struct")
        link = _RESOURCE_LINK.search(cls["docs"]["summary"])
        assert link is not None  # resource_classes only returns linked classes
        return {
            "provider_source": f"{link.group(1)}/{link.group(2)}",
            "provider_version": link.group(3),
            "jsii_class": cls["fqn"],
            "attributes": self.struct(config["type"]["fqn"], tf_type, stack=()),
        }

    def struct(self, fqn: str, where: str, stack: tuple[str, ...]) -> dict:
        if fqn in stack:
            # Provider schemas are finite trees, so a cycle means the input
            # is not what we think it is; fail rather than recurse forever.
            raise ExtractionError(f"{where}: recursive struct {fqn}")
        spec = self.types.get(fqn)
        if spec is None or not spec.get("datatype"):
            raise ExtractionError(f"{where}: {fqn} is not a struct in this assembly")
        attributes: dict[str, dict] = {}
        for prop in spec.get("properties", []):
            name = self.terraform_name(prop, where)
            if name in attributes:
                raise ExtractionError(f"{where}: two properties map to {name!r}")
            entry = {"required": not prop.get("optional", False)}
            entry.update(self.type_of(prop["type"], f"{where}.{name}", stack + (fqn,)))
            if "attributes" in entry or "attributes" in entry.get("element", {}):
                # cdktf documents blocks as "<name> block."; nested attributes
                # (the plugin framework's, e.g. all of awscc) carry their own
                # description instead. Terraform only accepts an expression
                # in place of the latter, so the checker needs to know.
                summary = prop.get("docs", {}).get("summary", "")
                entry["block"] = summary.strip() == f"{name} block."
            attributes[name] = entry
        return attributes

    def terraform_name(self, prop: dict, where: str) -> str:
        docs = prop.get("docs", {})
        for text in (docs.get("summary", ""), docs.get("remarks", "")):
            match = _DOCS_LINK.search(text)
            if match:
                name = match.group(2)
                if name != snake_case(prop["name"]):
                    self.notes.append(f"{where}: jsii {prop['name']!r} is Terraform {name!r}")
                return name
        name = snake_case(prop["name"])
        self.notes.append(f"{where}: no registry link for {prop['name']!r}, assuming {name!r}")
        return name

    def type_of(self, jtype: dict, where: str, stack: tuple[str, ...]) -> dict:
        if "primitive" in jtype:
            primitive = jtype["primitive"]
            mapping = {"string": "string", "number": "number", "boolean": "bool", "any": "any", "json": "any"}
            if primitive not in mapping:
                raise ExtractionError(f"{where}: unknown primitive {primitive!r}")
            return {"type": mapping[primitive]}
        if "union" in jtype:
            # cdktf adds IResolvable to let a token stand in for a value;
            # the Terraform type is whatever remains.
            members = [t for t in jtype["union"]["types"] if not _is_resolvable(t)]
            if len(members) == 1:
                return self.type_of(members[0], where, stack)
            return {"type": "any"}
        if "collection" in jtype:
            kind = jtype["collection"]["kind"]
            element = self.type_of(jtype["collection"]["elementtype"], where, stack)
            return {"type": {"array": "list", "map": "map"}[kind], "element": element}
        if "fqn" in jtype:
            if _is_resolvable(jtype):
                return {"type": "any"}
            return {"type": "object", "attributes": self.struct(jtype["fqn"], where, stack)}
        raise ExtractionError(f"{where}: unsupported jsii type {jtype}")


def _is_resolvable(jtype: dict) -> bool:
    return str(jtype.get("fqn", "")).endswith(".IResolvable")


def extract(pkg: ProviderPackage, wheel: Path) -> tuple[dict, dict, list[str]]:
    """Return (provider record, {resource type: schema}, notes) for one binding."""
    assembly, package_json = read_assembly(wheel)
    converter = Converter(assembly["types"])
    classes = converter.resource_classes()
    missing = [r for r in pkg.resources if r not in classes]
    if missing:
        raise ExtractionError(f"{pkg.pypi_name}: no resource class for {', '.join(missing)}")
    resources = {r: converter.resource(r, classes[r]) for r in pkg.resources}

    versions = {schema["provider_version"] for schema in resources.values()}
    sources = {schema["provider_source"] for schema in resources.values()}
    if len(versions) != 1 or len(sources) != 1:
        raise ExtractionError(f"{pkg.pypi_name}: resources disagree on the provider: {sources} {versions}")
    (version,) = versions
    (source,) = sources
    # package.json names the wrapped provider too; a mismatch would mean the
    # docs links point somewhere else than the code was generated from.
    declared = (package_json.get("cdktf") or {}).get("provider", {}).get("version")
    if declared and declared != version:
        raise ExtractionError(f"{pkg.pypi_name}: package.json says provider {declared}, docs say {version}")

    provider = {
        "source": source,
        "version": version,
        "python_package": f"{pkg.pypi_name}=={pkg.pypi_version}",
        "jsii_assembly": f"{assembly['name']}@{assembly['version']}",
    }
    for schema in resources.values():
        del schema["provider_source"]
        schema["provider"] = pkg.provider
    return provider, resources, converter.notes


def build(wheels: dict[str, Path]) -> tuple[dict, list[str]]:
    document: dict = {"format": FORMAT, "providers": {}, "resources": {}}
    notes: list[str] = []
    for pkg in PACKAGES:
        provider, resources, pkg_notes = extract(pkg, wheels[pkg.provider])
        document["providers"][pkg.provider] = provider
        document["resources"].update(resources)
        notes.extend(pkg_notes)
    return document, notes


def render(document: dict) -> str:
    return json.dumps(document, indent=1, sort_keys=True) + "\n"


# --------------------------------------------------------------------------- command line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=(
            "Extract the aws/awscc resource schemas used by fastscale's stacks from the "
            "jsii assemblies of the prebuilt provider bindings on PyPI, and write them as "
            "the contract-test data file."
        ),
        epilog="Packages: " + ", ".join(f"{p.pypi_name}=={p.pypi_version}" for p in PACKAGES),
    )
    parser.add_argument(
        "-o", "--output", type=Path, default=DEFAULT_OUTPUT,
        help="where to write the schemas (default: %(default)s)",
    )
    parser.add_argument(
        "--wheel-dir", type=Path,
        help="read the wheels from this directory instead of downloading them into a temporary one",
    )
    parser.add_argument(
        "--check", action="store_true",
        help="do not write; exit 1 if OUTPUT differs from what the packages give",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print naming notes")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.wheel_dir:
            wheels = {p.provider: find_wheel(p, args.wheel_dir) for p in PACKAGES}
            document, notes = build(wheels)
        else:
            with tempfile.TemporaryDirectory(prefix="fastscale-schemas-") as tmp:
                wheels = {p.provider: download_wheel(p, Path(tmp)) for p in PACKAGES}
                document, notes = build(wheels)
    except (ExtractionError, subprocess.CalledProcessError, OSError, zipfile.BadZipFile) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    if args.verbose:
        for note in notes:
            print(f"note: {note}", file=sys.stderr)

    text = render(document)
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current == text:
            print(f"{args.output} is up to date", file=sys.stderr)
            return 0
        sys.stderr.writelines(
            difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                 str(args.output), "extracted", n=2)
        )
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    count = len(document["resources"])
    print(f"wrote {count} resource schemas to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
