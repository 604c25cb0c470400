"""A Terraform filesystem provider mirror that holds hashicorp/aws, for the tests that run the real aws
provider offline (terraform validate of every example, the emulator lifecycle, plans of a live endpoint).

Found by fastscale.stacks.testing.terraform.find_aws_mirror (FASTSCALE_TF_MIRROR; the `filesystem_mirror`
paths of the Terraform CLI configuration; /opt/tf-plugins, where the CI image keeps its mirror; Terraform's
implicit local mirror directories on Linux). The suite finds the launcher mirror tests/provider_launcher.py makes of
that one (the same provider, a package of a few bytes for Terraform to hash at each command).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The finding lives in the package: users' own tests use it through fastscale.stacks.testing.
from fastscale.stacks.testing.terraform import (  # noqa: F401  (re-exported for the tests)
    AWS_PROVIDER,
    CANDIDATES,
    MIRROR_ENV,
    cli_config,
    find_aws_mirror,
    offline_env,
    where_looked,
)

#: Provider settings that let hashicorp/aws plan with no AWS call (with `plan -refresh=false`).
OFFLINE_PROVIDER = {"region": "us-east-1", "access_key": "AKIAEXAMPLEEXAMPLE", "secret_key": "example",
                    "skip_credentials_validation": True, "skip_requesting_account_id": True,
                    "skip_metadata_api_check": True}


class OfflineEndpointPlans:
    """A Terraform working directory with resources that are live in a hand-written state.

    `plan_types` writes the configuration and the state (resource type -> resource name -> body / state
    attributes) and returns the saved plan's path: hashicorp/aws from the mirror plans with `-refresh=false`, so
    the actions and replace paths are the provider's own and no AWS call is made. Every case a resource of its own
    puts several cases in one plan. Initialised once.
    """

    def __init__(self, root: Path, terraform: str, mirror: tuple[Path, str]):
        self.terraform, self.version = terraform, mirror[1]
        (root / "terraformrc").write_text(cli_config(mirror[0]))
        self.env = {"TF_CLI_CONFIG_FILE": str(root / "terraformrc"), "TF_DATA_DIR": str(root / "data")}
        self.child_env = {**os.environ, **self.env, "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
        self.child_env.pop("TF_PLUGIN_CACHE_DIR", None)
        self.work = root / "tf"
        self.work.mkdir()
        self._initialised = False

    def _write(self, resources: dict[str, dict[str, dict[str, Any]]]) -> None:
        (self.work / "main.tf.json").write_text(json.dumps({
            "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": self.version}}},
            "provider": {"aws": OFFLINE_PROVIDER},
            "resource": resources,
        }))

    def _state(self, states: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
        return {"version": 4, "terraform_version": "1.11.4", "serial": 1,
                "lineage": "00000000-0000-0000-0000-00000000abcd", "outputs": {},
                "resources": [{"mode": "managed", "type": resource_type, "name": name,
                               "provider": f'provider["{AWS_PROVIDER}"]',
                               "instances": [{"schema_version": 0, "attributes": attributes}]}
                              for resource_type, named in states.items() for name, attributes in named.items()]}

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([self.terraform, *args], cwd=self.work, env=self.child_env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    def plan_types(self, bodies: dict[str, dict[str, dict[str, Any]]],
                   states: dict[str, dict[str, dict[str, Any]]]) -> Path:
        """Live resources of several types (type -> resource name -> body / state attributes) in one plan."""
        self._write(bodies)
        if not self._initialised:
            self._run("init", "-input=false", "-no-color")
            self._initialised = True
        (self.work / "terraform.tfstate").write_text(json.dumps(self._state(states)))
        self._run("plan", "-refresh=false", "-input=false", "-no-color", "-out=change.tfplan")
        return self.work / "change.tfplan"


def prefixed(prefix: str, by_type: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Resource type -> name -> value, every name with ``prefix`` before it (cases of several modules in one plan)."""
    return {kind: {prefix + name: value for name, value in named.items()} for kind, named in by_type.items()}


def changes_named(plan: dict[str, Any], prefix: str) -> dict[str, dict[str, Any]]:
    """The resource changes of ``plan`` (``terraform show -json``) whose names start with ``prefix``, by name
    without it."""
    return {c["name"].removeprefix(prefix): c for c in plan["resource_changes"] if c["name"].startswith(prefix)}


@dataclass
class Validation:
    """`terraform validate -json` of several documents, its diagnostics attributed to the document (child
    module) each is about."""

    report: dict[str, Any]
    by_module: dict[str, list[dict[str, Any]]]
    unattributed: list[dict[str, Any]]
    shared_providers: dict[str, list[str]]  # a provider configuration of the root -> the documents that had it

    def errors(self, name: str) -> list[dict[str, Any]]:
        return [d for d in self.by_module[name] if d["severity"] == "error"]


def _shared_providers(docs: dict[str, dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, Any],
                                                                   dict[str, dict[str, str]], dict[str, list[str]]]:
    """The documents without their provider blocks, each distinct block once in the root instead (an alias of its
    own), and what each module call passes on: hashicorp/aws starts a process for every provider configuration
    it validates (about half a second of CPU, three with an ``endpoints`` block), and the examples share a
    handful. A document whose provider blocks are not one plain block per provider (an alias, several) keeps
    them. Returns (documents, root provider blocks, module call -> its ``providers`` map, alias -> documents)."""
    root: dict[str, list[dict[str, Any]]] = {}
    aliases: dict[str, str] = {}
    users: dict[str, list[str]] = {}
    passed: dict[str, dict[str, str]] = {}
    out = {}
    for name, doc in docs.items():
        blocks = doc.get("provider")
        if not isinstance(blocks, dict) or not blocks or any(isinstance(b, list) and len(b) != 1 for b in blocks.values()):
            out[name] = doc
            continue
        single = {kind: (b[0] if isinstance(b, list) else b) for kind, b in blocks.items()}
        if any(not isinstance(b, dict) or "alias" in b for b in single.values()):
            out[name] = doc
            continue
        passed[name] = {}
        for kind, block in single.items():
            key = f"{kind}\0{json.dumps(block, sort_keys=True)}"
            if key not in aliases:
                aliases[key] = f"shared{len(aliases)}"
                root.setdefault(kind, []).append({**block, "alias": aliases[key]})
            alias = aliases[key]
            passed[name][kind] = f"{kind}.{alias}"
            users.setdefault(f"{kind}.{alias}", []).append(name)
        out[name] = {k: v for k, v in doc.items() if k != "provider"}
    return out, root, passed, users


def validate_children(root: Path, docs: dict[str, dict[str, Any]], terraform: str, mirror: Path) -> Validation:
    """`terraform validate -json` of the documents as one child module each of a single root module: one
    `init` and one `validate` for all of them, each distinct provider block configured once (in the root, passed
    to the modules that had it). A diagnostic belongs to the module its address (``module.<call>.…``) or its
    file (``<module>/main.tf.json``) names; one about a shared provider block is unattributed (``shared_providers``
    names the documents that had it)."""
    module_root = root / "validate"
    children, providers, passed, users = _shared_providers(docs)
    for name, doc in children.items():
        (module_root / name).mkdir(parents=True)
        (module_root / name / "main.tf.json").write_text(json.dumps(doc, indent=1))
    calls = {name.replace("-", "_"): name for name in docs}
    assert len(calls) == len(docs), "two documents share a module call name"
    sources = {kind: {"source": f"hashicorp/{kind}"} for kind in providers}
    (module_root / "main.tf.json").write_text(json.dumps({
        **({"terraform": {"required_providers": sources}, "provider": providers} if providers else {}),
        "module": {call: {"source": f"./{name}", **({"providers": passed[name]} if name in passed else {})}
                   for call, name in calls.items()}}, indent=1))
    env = offline_env(root, mirror)
    init = subprocess.run([terraform, "init", "-backend=false", "-input=false", "-no-color"], cwd=module_root,
                          env=env, capture_output=True, text=True, timeout=300)
    assert init.returncode == 0, init.stdout + init.stderr
    run = subprocess.run([terraform, "validate", "-json", "-no-color"], cwd=module_root, env=env,
                         capture_output=True, text=True, timeout=300)
    report = json.loads(run.stdout)
    by_module: dict[str, list[dict[str, Any]]] = {name: [] for name in docs}
    unattributed = []
    for diagnostic in report["diagnostics"]:
        address = diagnostic.get("address") or ""
        filename = diagnostic.get("range", {}).get("filename", "")
        if address.startswith("module.") and address.split(".")[1] in calls:
            by_module[calls[address.split(".")[1]]].append(diagnostic)
        elif filename.split("/")[0] in by_module:
            by_module[filename.split("/")[0]].append(diagnostic)
        else:
            unattributed.append(diagnostic)
    return Validation(report, by_module, unattributed, users)
