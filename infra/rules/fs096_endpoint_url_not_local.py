"""An endpoint URL names a remote host, or the state's endpoint would get real credentials, and the command
line did not allow it.

`endpoint_url` (and the S3 state backend's `state.endpoint_url`) send every AWS call there: Terraform's
providers, the state backend and fastscale's own checks. Those calls carry the dummy credentials
`testing`/`testing` unless the command line says `--send-credentials-to-endpoint-url`, which signs them with
the runner's real AWS credentials. A config changed in a pull request chooses these URLs, so:

- a URL whose host is neither loopback (`localhost`, 127.0.0.0/8, ::1) nor private (10/8, 172.16/12,
  192.168/16, fc00::/7) is refused without that flag: the config alone never sends requests (and, through
  the provider, every resource's attributes) to a host such as `https://attacker.example.com`. Host names
  are judged as written, never looked up in DNS; every name but `localhost` counts as remote.
- `state.endpoint_url` without `endpoint_url` is refused without that flag: the providers would then use the
  runner's real credentials for AWS, and the S3 backend would sign its state requests to that URL with the
  same credentials; a state read from a host the config chose could also name real resources for Terraform
  to change or delete.

The config cannot allow either by itself, and no environment variable can. Link-local, metadata and other
cloud-internal addresses are refused earlier, with no way to allow them (docs/emulator.md).
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.network import TRUST_FLAG, remote_hint, remote_reason
from fastscale.infra.config import FastscaleConfig, S3State
from fastscale.infra.rules import Hit, Severity, rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoint_url: https://emulator.example.com
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@rule("FS096", "endpoint-url-not-local", Severity.ERROR,
      "An endpoint URL names a remote host, or would receive real credentials, and the command line did not allow it.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    if config.sends_credentials_to_endpoint:
        return
    state_url = config.state.endpoint_url if isinstance(config.state, S3State) else None
    for path, url in (("endpoint_url", config.endpoint_url), ("state.endpoint_url", state_url)):
        reason = remote_reason(url, path) if url else None
        if url and reason:
            yield Hit(path, reason, remote_hint(url))
    if state_url and not config.endpoint_url and not remote_reason(state_url, "state.endpoint_url"):
        yield Hit(
            "state.endpoint_url",
            f"the state goes to {state_url} while the resources go to real AWS: the S3 backend would sign its "
            "requests there with the runner's real AWS credentials, which the providers need for AWS, and a "
            "state read from there could name real resources for Terraform to change or delete",
            f"set endpoint_url to the emulator too (endpoint_url: {state_url}) to rehearse against it, or remove "
            f"state.endpoint_url to keep the state in real S3; {TRUST_FLAG} on the command line allows it "
            "if you trust that host with your credentials and your state",
        )
