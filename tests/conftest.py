"""Shared fixtures. Tests never reach AWS: fake credentials and no real endpoints."""

from __future__ import annotations

import copy
import os
import signal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))

# Make any accidental real AWS call fail instead of using a developer's credentials: overwritten, never
# kept (a profile, a credentials file or a real key in the environment must not reach a test).
os.environ["AWS_ACCESS_KEY_ID"] = "testing"
os.environ["AWS_SECRET_ACCESS_KEY"] = "testing"
os.environ["AWS_SESSION_TOKEN"] = "testing"
os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
os.environ.pop("AWS_PROFILE", None)
os.environ["JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"] = "18,20"

BASE_CONFIG = {
    "project": "demo",
    "region": "us-east-1",
    "endpoints": [
        {
            "name": "chat",
            "instance_type": "ml.g6.2xlarge",
            "instances": {"initial": 1, "min": 1, "max": 2},
            "model": {
                "image": "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128",
                "model_data": "s3://demo-models/qwen3-8b/",
                "model_size_gb": 16,
            },
        }
    ],
}


@pytest.fixture
def base_config() -> dict:
    """A small valid config as a dict; tests mutate their own deep copy."""
    return copy.deepcopy(BASE_CONFIG)


@pytest.fixture
def write_yaml(tmp_path):
    import yaml

    def write(data, name: str = "fastscale.yaml") -> Path:
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
        return path

    return write


@pytest.fixture
def no_credentials(monkeypatch, tmp_path):
    """A machine without any AWS credentials (and no instance metadata to ask)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    import boto3

    # boto3's default session keeps the credentials it found first (the fake ones above): start afresh.
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)


#: What a terminal (or a CI agent imitating one) tells programs about itself: a width, colour forced on or off.
#: The CLI's output depends on them (README, "Commands"); a test that needs one sets it (monkeypatch.setenv).
TERMINAL_VARIABLES = ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE",
                      "CLICOLOR", "CLICOLOR_FORCE", "JUPYTER_COLUMNS", "JUPYTER_LINES")


@pytest.fixture(autouse=True, scope="session")
def _plain_environment():
    """Every test starts as in a CI log, whatever terminal the run was started from (none of
    TERMINAL_VARIABLES set; GNU readline, loaded by tools of the run, also exports COLUMNS and LINES to the
    processes they start: pytest-xdist's workers begin with COLUMNS=80), and in a process that does not say it
    is a pytest-xdist worker (PYTEST_XDIST_*): a pytest a test starts, a generated project's, is a run of its
    own (syrupy prints no snapshot report in a worker)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in (*TERMINAL_VARIABLES, *(n for n in os.environ if n.startswith("PYTEST_XDIST_"))):
            patch.delenv(name, raising=False)
        yield


@pytest.fixture
def ctrl_c():
    """Ctrl-C as an interactive terminal delivers it, for a test of what Ctrl-C does: while the test runs, SIGINT
    raises KeyboardInterrupt in this process (Python's own handler) and a process the test starts gets SIGINT's
    default action. A run started in the background (`nohup`, `setsid`, some CI agents) inherits SIGINT ignored,
    and every process it starts would ignore it too."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
