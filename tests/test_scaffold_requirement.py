"""The fastscale requirement `init` writes comes from the installer's record (PEP 610 direct_url.json)."""

from __future__ import annotations

import json
from importlib import metadata

import pytest

from fastscale.infra.project.scaffold import installed_requirement

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def distribution(tmp_path, direct_url: dict | str | None, version: str = "1.2.3") -> metadata.Distribution:
    info = tmp_path / f"fastscale-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.4\nName: fastscale\nVersion: {version}\n")
    (info / "INSTALLER").write_text("pip\n")
    if direct_url is not None:
        text = direct_url if isinstance(direct_url, str) else json.dumps(direct_url)
        (info / "direct_url.json").write_text(text)
    return metadata.PathDistribution(info)


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (None, "fastscale==1.2.3"),  # from a package index: no record
        (
            {"url": "https://git.example.com/you/fastscale.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT,
                                                                            "requested_revision": "main"}},
            f"fastscale @ git+https://git.example.com/you/fastscale.git@{COMMIT}",
        ),
        (
            {"url": "https://git.example.com/mono.git", "subdirectory": "tools/fastscale",
             "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
            f"fastscale @ git+https://git.example.com/mono.git@{COMMIT}#subdirectory=tools/fastscale",
        ),
        ({"url": "file:///src/fastscale", "dir_info": {}}, "fastscale @ file:///src/fastscale"),
        ({"url": "file:///src/fastscale", "dir_info": {"editable": True}}, "fastscale @ file:///src/fastscale"),
        (
            {"url": "file:///dist/fastscale-1.2.3-py3-none-any.whl", "archive_info": {"hashes": {"sha256": "ab"}}},
            "fastscale @ file:///dist/fastscale-1.2.3-py3-none-any.whl",
        ),
        ("{not json", "fastscale==1.2.3"),  # an unreadable record still pins the installed version
        ({"dir_info": {}}, "fastscale==1.2.3"),
    ],
    ids=["index", "vcs", "vcs-subdirectory", "dir", "editable", "archive", "malformed", "no-url"],
)
def test_requirement_from_install_record(tmp_path, record, expected):
    assert installed_requirement(distribution(tmp_path, record)) == expected


def test_running_fastscale_reports_its_own_install(tmp_path, monkeypatch):
    # A build's leftover egg-info first on sys.path is no install: it must not hide the real record.
    leftover = tmp_path / "fastscale.egg-info"
    leftover.mkdir()
    (leftover / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: fastscale\nVersion: 0.0.1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    # The installed fastscale running these tests has a record (editable checkout, wheel or VCS) or a version.
    requirement = installed_requirement()
    dist = next(d for d in metadata.distributions(name="fastscale") if d.read_text("INSTALLER"))
    if dist.read_text("direct_url.json"):
        assert requirement.startswith("fastscale @ "), requirement
        assert json.loads(dist.read_text("direct_url.json"))["url"] in requirement
    else:
        assert requirement == f"fastscale=={dist.version}"
