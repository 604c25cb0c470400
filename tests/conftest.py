"""Shared fixtures. Tests never reach AWS: fake credentials and no real endpoints."""

from __future__ import annotations

import copy
import gc
import os
import resource
import shutil
import signal
import time
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
# terraform and its providers are Go programs; the hashicorp/aws provider builds a large schema at every start.
# Garbage collected an eighth as often as Go's default, and one OS thread for Go code (the workers keep every core
# busy already): about a quarter less of their CPU time, for about 150 MB more at a command's peak, and nothing
# they do changes. The test processes themselves collect garbage less often too, and freeze what collection built
# (:func:`pytest_collection_finish`) out of every later scan: a worker holds millions of long-lived objects
# (botocore's service models, moto's backends, the collected tests). The measurements: docs/testing.md ("Where the
# time goes").
os.environ.setdefault("GOGC", "800")
os.environ.setdefault("GOMAXPROCS", "1")
gc.set_threshold(50_000, 20, 20)

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


@pytest.fixture(autouse=True, scope="session")
def _one_botocore_loader():
    """Every botocore session of a test process reads AWS's service models through one loader (per data path),
    as the clients of one boto3 session do. A command run in the process (CliRunner), moto's `mock_aws` (which
    starts boto3's default session afresh) and a Stubber's client each make a new session, and each new
    session would parse the models again: SageMaker's alone takes about 0.15 s, and it was about a tenth of
    `make test-fast`'s CPU time. The models are read, never changed, so sharing them changes no answer."""
    import botocore.loaders
    import botocore.session

    loaders: dict[str | None, botocore.loaders.Loader] = {}

    def shared(search_path_string: str | None = None) -> botocore.loaders.Loader:
        if search_path_string not in loaders:
            loaders[search_path_string] = botocore.loaders.create_loader(search_path_string)
        return loaders[search_path_string]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(botocore.session, "create_loader", shared)
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


# ----------------------------------------------------------------------------------------------- the suite
# `make test` runs the suite on every core (pytest-xdist, one file per worker at a time: --dist loadfile in
# pyproject.toml); `make test-fast` leaves out what is marked `slow`. Both rules below apply to every test
# by how it is marked or where it lives, so a new test gets them without doing anything (docs/testing.md).

#: What makes a test slow: a marker it carries, or the folder it is in (tests/<folder>/).
SLOW_MARKERS = ("venv", "terraform", "slow")
SLOW_FOLDERS = ("e2e",)
#: A test that is not marked slow and takes longer than this (setup, call and teardown, in seconds) is named at
#: the end of the run, so that `make test-fast` stays about a minute.
FAST_BUDGET = 2.0


def _in_slow_folder(path: Path) -> bool:
    return path.is_relative_to(ROOT / "tests") and path.relative_to(ROOT / "tests").parts[0] in SLOW_FOLDERS


def _is_slow(item: pytest.Item) -> bool:
    return _in_slow_folder(Path(item.path)) or any(item.get_closest_marker(name) for name in SLOW_MARKERS)


def pytest_configure(config: pytest.Config) -> None:
    """Every Terraform command of the run installs hashicorp/aws from the launcher mirror (tests/provider_launcher.py:
    the same provider, without hashing 707 MB against the lock file at each command). Set here, before collection
    (test modules look the mirror up when imported) and before pytest-xdist starts its workers, which inherit it."""
    from tests.provider_launcher import use_launcher_mirror  # here: it imports this module's ROOT

    use_launcher_mirror()


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow tests `slow`, and put the files that hold them first: the workers take files in this order,
    so the longest ones start at once instead of finishing last on one worker. A test marked `terraform` is
    skipped where neither terraform nor tofu is on PATH."""
    slow_files = set()
    binary = shutil.which("terraform") or shutil.which("tofu")
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
            slow_files.add(item.path)
        if binary is None and item.get_closest_marker("terraform"):
            item.add_marker(pytest.mark.skip(reason="needs terraform or tofu on PATH"))
    rank = {path: 0 if _in_slow_folder(Path(path)) else 1 for path in slow_files}
    items.sort(key=lambda item: rank.get(item.path, 2))  # stable: each file's tests keep their order


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()  # what collection built (modules, test items) stays to the end: no later collection scans it


_took: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "slow" not in report.keywords:
        _took[report.nodeid] = _took.get(report.nodeid, 0.0) + report.duration


_STARTED = pytest.StashKey[tuple[float, float]]()  # (wall clock, CPU seconds) when the session started


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_STARTED] = (time.monotonic(), _cpu_seconds())


def _cpu_seconds() -> float:
    """CPU time (user and system) of this process and of every process it started and waited for: with
    pytest-xdist, the workers and whatever they started (terraform, fastscale, pip ...)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # the run's own process reports, once
        return
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    if _STARTED in config.stash:
        # The work the run did, beside its wall time: a slower run on the same work is the machine's doing.
        # (pytest-xdist has stopped and waited for its workers by now, so their time is counted.)
        wall0, cpu0 = config.stash[_STARTED]
        cpu, wall = _cpu_seconds() - cpu0, max(time.monotonic() - wall0, 1e-9)
        terminalreporter.write_line(f"CPU time of the run: {cpu:.0f} s in {wall:.0f} s of wall time, {cpu / wall:.2f} "
                                    f"of {os.cpu_count()} cores busy on average (load average {load})")
    over = sorted(((took, nodeid) for nodeid, took in _took.items() if took > FAST_BUDGET), reverse=True)
    if over:
        terminalreporter.section("tests over the fast budget")
        terminalreporter.write_line(
            f"{len(over)} test(s) not marked slow took over {FAST_BUDGET:.0f} s (load average {load}): make them "
            "faster or mark them `slow` (docs/testing.md), so that `make test-fast` stays about a minute.")
        for took, nodeid in over[:20]:
            terminalreporter.write_line(f"  {took:6.1f} s  {nodeid}")
