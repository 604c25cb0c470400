"""The CLI tests' fixtures (moto clients handed to every command through the runtime, a project directory, a
fixture synth), for the takeover cases that run the CLI against moto and the real terraform binary."""

from tests.cli.conftest import _moto, aws, project, quotas, runtime, synth  # noqa: F401
from tests.cli.test_ownership_cli import sagemaker_plan  # noqa: F401
