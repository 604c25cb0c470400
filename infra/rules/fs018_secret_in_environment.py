"""Secrets must not be written into a container's `environment`: use `secrets` instead.

Environment values end up in plain text in the Terraform state, the synthesized JSON, the SageMaker
model / inference-component description (readable by anyone with `Describe*` access) and usually in git.

A variable is treated as a secret by its name: the name contains one of the words TOKEN, SECRET,
PASSWORD, PASSWD, PASS, PWD, PASSPHRASE, APIKEY, CREDENTIAL(S), CREDS or AUTH, ends with KEY (`OPENAI_KEY`,
`API_KEY`; not `S3_KEY` or `CACHE_KEY`), or ends with ACCESS_KEY_ID. Trailing digits count for nothing
(`PASSWORD1`) and a trailing VALUE, STRING, RAW or TEXT is skipped (`AUTH_TOKEN_VALUE`). A name that ends
with a word describing the secret rather than holding it is not a secret: `HF_TOKEN_PATH`, `PASSWORD_FILE`,
`AUTH_TYPE`, `MAX_TOKEN_LEN`, `DB_SECRET_ARN`; nor are plural counts such as `MAX_NEW_TOKENS`.
Words are split at `_`, `-`, `.` and camelCase.
Every environment the stack writes is checked: each model's and component's, and each override of them
for a fallback instance type (`capacity.fallback[].model` / `.components`).

The value is accepted when it is empty, a plain number or switch (`4096`, `true`), or clearly a reference
rather than the secret itself: a Secrets Manager or SSM Parameter Store ARN or a dynamic reference
(`{{resolve:...}}`), passed to the container unchanged for it to resolve. Values that *look* like secrets
whatever their name are FS063's. The message never repeats the value.

A Hugging Face Hub token (`HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, ...) is almost always there for a stock
LMI, TGI or vLLM image to download gated weights at start. Those images do not read a secret ARN, so the
hint for them is the path that works on any image: download the weights once, stage them in S3 and set
`model_data` (docs/secrets.md, "Gated models on stock containers"); the token then never reaches AWS.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ContainerDefinition.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentContainerSpecification.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.regions import partition_of, shown
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.config.secrets import is_literal_secret
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import environments, key_path

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      environment:
        DB_PASS: example-not-a-real-password
"""


#: Variables through which Hugging Face's libraries (and the LMI, TGI and vLLM images) read a Hub token.
HUB_TOKEN_NAMES = frozenset({"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_HUB_TOKEN", "HF_API_TOKEN",
                             "HUGGINGFACEHUB_API_TOKEN"})


@rule("FS018", "secret-in-environment", Severity.ERROR, "A secret-looking environment variable holds a literal value.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, environment in environments(config):
        for key, value in environment.items():
            if not is_literal_secret(key, value):
                continue
            message = (f"{key} looks like a secret and holds a literal value: it would be stored in plain text in "
                       "the Terraform state, the synthesized stack and the SageMaker resource description.")
            if key.upper() in HUB_TOKEN_NAMES:
                hint = ("stock LMI/TGI/vLLM images cannot read a secret ARN: download the weights once with your "
                        "token (`huggingface-cli download`), `aws s3 sync` them to a prefix in "
                        f"{shown(config.region)}, set `model_data: s3://<bucket>/<prefix>/` and remove {key} "
                        "(docs/secrets.md, \"Gated models on stock containers\")")
            else:
                hint = (f"store it in AWS Secrets Manager and move it to `secrets: {{{key}: "
                        f"arn:{partition_of(config.region)}:secretsmanager:{shown(config.region)}:<account>:secret:<name>}}`; "
                        "the container must then read it at start itself (docs/secrets.md)")
            yield Hit(key_path(path, key), message, hint)
