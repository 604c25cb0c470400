"""An endpoint URL names a host that is neither local nor private, and the command line did not allow it.

`endpoint_url` (and the S3 state backend's `state.endpoint_url`) send every AWS call there, signed with
the runner's AWS credentials: Terraform's providers, the state backend and fastscale's own checks. A config
changed in a pull request could otherwise collect signed requests (and plan, through the provider, every
resource's attributes) at `https://attacker.example.com`. Loopback (`localhost`, 127.0.0.0/8, ::1) and
private addresses (10/8, 172.16/12, 192.168/16, fc00::/7) are accepted; any other host, including every
host name but `localhost`, is refused unless the command that runs says `--send-credentials-to-endpoint-url`
(or FASTSCALE_SEND_CREDENTIALS_TO_ENDPOINT_URL=1). The config cannot allow it by itself. Host names are
judged as written, never looked up in DNS. Link-local and cloud metadata addresses are refused earlier,
with no way to allow them (docs/emulator.md).
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.network import remote_hint, remote_reason
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
      "An endpoint URL names a remote host, and the command line did not allow sending credentials there.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    if config.remote_endpoint_trusted:
        return
    urls = [("endpoint_url", config.endpoint_url)]
    if isinstance(config.state, S3State):
        urls.append(("state.endpoint_url", config.state.endpoint_url))
    for path, url in urls:
        reason = remote_reason(url, path) if url else None
        if url and reason:
            yield Hit(path, reason, remote_hint(url))
