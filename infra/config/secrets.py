"""Secrets: recognising them in a container environment, and the supported way to pass them instead.

Environment values are stored in plain text in the synthesized `cdk.tf.json`, in the Terraform state and
in the SageMaker model description. So a token never belongs there. A workload's `secrets` maps an
environment variable name to an AWS Secrets Manager secret; fastscale then

- gives the container `<NAME>_SECRET_ARN=<arn>` (the ARN is not secret; the value never leaves Secrets
  Manager), and
- allows the execution role exactly `secretsmanager:GetSecretValue` on those secrets (and `kms:Decrypt`
  through Secrets Manager on a customer managed key, when one is given).

SageMaker does not resolve secrets itself: the container's entrypoint must call `GetSecretValue` with the
role's credentials at start and export the value (docs/secrets.md shows how).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

#: Suffix of the environment variable through which a container learns where a secret lives.
SECRET_ARN_SUFFIX = "_SECRET_ARN"

_SECRET_ARN_RE = re.compile(
    r"arn:(?P<partition>aws[a-z-]*):secretsmanager:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):secret:(?P<name>[\w/+=.@-]{1,512})"
)
_KMS_KEY_ARN_RE = re.compile(
    r"arn:(?P<partition>aws[a-z-]*):kms:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):key/(?P<id>[a-zA-Z0-9-]{1,128})"
)
#: Secrets Manager appends "-" and six random characters to a secret's name to form its ARN.
_RANDOM_SUFFIX_RE = re.compile(r"-[A-Za-z0-9]{6}\Z")


@dataclass(frozen=True)
class Arn:
    partition: str
    region: str
    account: str
    resource: str


def parse_secret_arn(value: str) -> Arn | None:
    m = _SECRET_ARN_RE.fullmatch(value)
    return Arn(m["partition"], m["region"], m["account"], m["name"]) if m else None


def parse_kms_key_arn(value: str) -> Arn | None:
    m = _KMS_KEY_ARN_RE.fullmatch(value)
    return Arn(m["partition"], m["region"], m["account"], m["id"]) if m else None


def policy_resource(secret_arn: str) -> str:
    """The secret's ARN as an IAM resource. A partial ARN (the name without Secrets Manager's random
    suffix) matches only with the suffix wildcard AWS documents, `-??????`
    (https://docs.aws.amazon.com/secretsmanager/latest/userguide/permissions_grant-limited-resources.html)."""
    if _RANDOM_SUFFIX_RE.search(secret_arn):
        return secret_arn
    return f"{secret_arn}-??????"


def container_environment(workload: object) -> dict[str, str]:
    """What the container gets: its `environment` plus `<NAME>_SECRET_ARN` for every entry of `secrets`."""
    env = dict(workload.environment)  # type: ignore[attr-defined]
    for name, ref in sorted(workload.secrets.items()):  # type: ignore[attr-defined]
        env[f"{name}{SECRET_ARN_SUFFIX}"] = ref.arn
    return env


# --------------------------------------------------------------------------------------------- by name

#: Words that make an environment variable name a secret wherever they appear (digits stripped, so
#: PASSWORD1 counts).
_SECRET_WORDS = frozenset({
    "TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASS", "PWD", "PASSPHRASE", "APIKEY", "CREDENTIAL",
    "CREDENTIALS", "CREDS", "AUTH", "PRIVATEKEY", "SESSIONKEY", "BEARER", "COOKIE",
})
#: KEY is a secret when it is the name's last word (OPENAI_KEY, API_KEY), unless the word before says what
#: kind of non-secret key it is.
_NON_SECRET_KEY_KINDS = frozenset({
    "S3", "OBJECT", "CACHE", "SORT", "PARTITION", "ROUTING", "SHARD", "HASH", "LOOKUP", "PRIMARY", "FOREIGN",
    "PUBLIC", "MODEL", "PREFIX", "DICT", "JSON", "COLUMN", "INPUT", "OUTPUT", "PROMPT", "MESSAGE", "CONTENT",
})
#: A trailing word that says the variable holds something *about* a secret, not the secret: a path, a
#: name, a switch, a count (HF_TOKEN_PATH, PASSWORD_FILE, AUTH_TYPE, MAX_TOKEN_LEN, SECRET_ARN).
_DESCRIPTOR_WORDS = frozenset({
    "PATH", "FILE", "DIR", "URL", "URI", "ARN", "ID", "NAME", "TYPE", "MODE", "LEN", "LENGTH", "SIZE", "LIMIT",
    "COUNT", "ENABLED", "ENABLE", "DISABLED", "REQUIRED", "HEADER", "REGION", "ENDPOINT", "TIMEOUT", "TTL",
    "INTERVAL", "SECONDS", "METHOD", "PROVIDER", "SCHEME", "VERSION", "FORMAT", "LOCATION",
})
#: Trailing words that say "this is the value itself" and are skipped (AUTH_TOKEN_VALUE).
_VALUE_WORDS = frozenset({"VALUE", "STRING", "STR", "RAW", "PLAIN", "TEXT", "DATA"})
#: Exceptions to the descriptor rule: an access key id is itself a credential.
_CREDENTIAL_IDS = (("ACCESS", "KEY", "ID"), ("ACCESSKEY", "ID"))


def name_words(name: str) -> list[str]:
    """HF_TOKEN -> [HF, TOKEN]; openaiKey -> [OPENAI, KEY]; PASSWORD1 -> [PASSWORD]; S3_KEY -> [S3, KEY]."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    words = []
    for word in re.split(r"[_\-.\s]+", spaced.upper()):
        bare = word.rstrip("0123456789")
        # digits after a secret word are a numbering (PASSWORD1); elsewhere they are part of it (S3_KEY)
        words.append(bare if bare in _SECRET_WORDS or bare == "KEY" else word)
    return [w for w in words if w]


def is_reference(value: str) -> bool:
    """Empty, or clearly a pointer to a secret rather than the secret: a Secrets Manager / SSM ARN or a
    dynamic reference. fastscale passes it on unchanged; the container must resolve it."""
    v = value.strip()
    return not v or bool(re.match(r"(?:arn:aws[a-z-]*:(?:secretsmanager|ssm):|\{\{resolve:)", v))


def is_plain_setting(value: str) -> bool:
    """A number or a switch (`4096`, `true`): what a setting holds, never a credential worth the name."""
    v = value.strip().lower()
    return v in {"true", "false", "yes", "no", "on", "off"} or bool(re.fullmatch(r"[0-9]+(\.[0-9]+)?", v))


def is_secret_name(name: str) -> bool:
    """Whether an environment variable with this name holds a secret when set to a literal value."""
    words = name_words(name)
    if any(tuple(words[-len(tail):]) == tail for tail in _CREDENTIAL_IDS):
        return True
    while words and words[-1] in _VALUE_WORDS:
        words = words[:-1]
    if not words or words[-1] in _DESCRIPTOR_WORDS:
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    return words[-1] == "KEY" and (len(words) == 1 or words[-2] not in _NON_SECRET_KEY_KINDS)


# --------------------------------------------------------------------------------------------- by value

#: Token formats whose shape alone identifies them: (what it is, pattern found anywhere in the value).
TOKEN_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a Hugging Face access token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("an OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("an Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("a JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
)

#: Shortest run of token characters judged by entropy, and the bits per character above which it is
#: treated as random. Random base64 / base62 strings score about 5 and more; words, paths, model ids,
#: versions and hex digests (at most 4) score lower.
MIN_RANDOM_LENGTH = 24
MIN_RANDOM_BITS_PER_CHAR = 4.3
#: A run of token characters; `=` only as base64's trailing padding, so `key=value` splits at the `=`.
_RUN_RE = re.compile(rf"[A-Za-z0-9+/_-]{{{MIN_RANDOM_LENGTH},}}={{0,2}}")
#: A word of a name: lower case letters, capitalised or not (`Sage`, `Maker`, `inference`). Names AWS, the
#: SageMaker SDK, JumpStart and people give (`SageMakerExecutionRole-sdk-tags2-2026-11-30-09-41-07-512`,
#: `huggingface-pytorch-tgi-inference-...`) are such words, numbers and separators; a random key is mostly
#: letters that form no word.
_WORD_RE = re.compile(r"[A-Z]?[a-z]{3,}")
#: Share of a run that must be letters outside words for the run to count as random. Measured on random
#: base62 / base64 strings of 24-40 characters that pass the other tests: about 0.1 % of them fall below it.
MIN_STRAY_LETTER_SHARE = 0.2
#: An ARN: an identifier AWS gives a resource. Its resource part is a name, a path or an id AWS or
#: CloudFormation generated (`role/Stack-ExecutionRole8F2D7A91-1XK8Q7Z9M3N4P`), never judged by its
#: entropy; a token format inside it is still found.
_ARN_RE = re.compile(r"\barn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:(?:\d{12}|aws)?:[^\s\"',;]+")


def is_literal_secret(key: str, value: str) -> bool:
    """Whether an environment entry holds a secret as a literal value: what FS018 reports and every finding's
    text masks."""
    return is_secret_name(key) and not is_reference(value) and not is_plain_setting(value)


def shannon_bits_per_char(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(run: str) -> bool:
    """A long run with upper case, lower case and digits, and high entropy: a key, not a word or a path."""
    classes = sum(bool(re.search(p, run)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    if classes < 3 or re.fullmatch(r"[0-9a-fA-F-]+", run):
        return False
    # a path or model id made of words ("meta-llama/Llama-3.1-8B-Instruct") splits into short segments
    if max(len(s) for s in re.split(r"[/_-]", run)) < 16:
        return False
    # a name made of words and numbers ("SageMakerExecutionRole-sdk-2026-11-30-09-41-07-512")
    stray = sum(c.isalpha() for c in _WORD_RE.sub(" ", run))
    if stray < MIN_STRAY_LETTER_SHARE * len(run):
        return False
    return shannon_bits_per_char(run) >= MIN_RANDOM_BITS_PER_CHAR


#: Credentials inside a connection string or URL: (what it is, pattern whose `secret` group is the credential).
#: A URL's userinfo password (`postgres://admin:S3cr3t@db:5432/app`), and the key=value pairs of ADO.NET /
#: ODBC / JDBC connection strings (`Password=`, `Pwd=`) and of Azure Storage and Service Bus / Event Hubs
#: ones (`AccountKey=`, `SharedAccessKey=`, `SharedAccessSignature=`).
_PAIR_VALUE = r"<[^>;]*>|[^;'\"\s]+"  # a `key=value` pair's value: a <placeholder> may hold spaces
CONNECTION_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a password in a URL", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:(?P<secret>[^\s/@]+)@")),
    ("a password in a connection string",
     re.compile(r"(?i)(?<![A-Za-z0-9_])(?:password|pwd)\s*=\s*(?P<secret>" + _PAIR_VALUE + ")")),
    ("an Azure storage account key", re.compile(r"(?i)(?<![A-Za-z0-9_])accountkey\s*=\s*(?P<secret>" + _PAIR_VALUE + ")")),
    ("an Azure shared access key",
     re.compile(r"(?i)(?<![A-Za-z0-9_])sharedaccess(?:key|signature)\s*=\s*(?P<secret>" + _PAIR_VALUE + ")")),
)
#: What stands in for a credential without being one: `${VAR}`, `$VAR`, `<password>`, `****`, `{{resolve:...}}`.
_PLACEHOLDER_RE = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|<[^>]*>|\*+|x{3,}|X{3,}|\{\{.*\}\}|%[A-Za-z0-9_]+%")

#: How deep base64 is unwrapped to look inside it (base64 of JSON holding a token is still a token).
_MAX_DECODE_DEPTH = 2
#: Share of printable characters above which decoded bytes are text, not key material.
_READABLE_SHARE = 0.95
_RANDOM_KIND = "a long random string (an API key or password, by its entropy)"


@dataclass(frozen=True)
class SecretSpan:
    """Where a secret is in a value ([start, end)) and what kind it is. Never printed with the value."""

    start: int
    end: int
    kind: str


def decoded_text(run: str) -> str | None:
    """The text a base64 / base64url run decodes to, when it decodes to readable UTF-8 text; else None."""
    import base64
    import binascii

    body = run.rstrip("=").lstrip("-_/+")  # a leading '--' or '/' is the option or path around it
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    for alphabet in (None, b"-_"):
        if alphabet is None and re.search(r"[-_]", body) or alphabet is not None and re.search(r"[+/]", body):
            continue
        try:
            raw = base64.b64decode(padded, altchars=alphabet, validate=True)
            text = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if text and sum(c.isprintable() or c in "\n\r\t" for c in text) / len(text) >= _READABLE_SHARE:
            return text
    return None


def secret_spans(value: str) -> list[SecretSpan]:
    """Every secret found in ``value``: token formats, credentials in connection strings and URLs, and long
    random runs. A run that is base64 of readable text (JSON, a sentence) is not random; what it decodes to
    is searched instead, so base64 of a config holding a token is still found."""
    return list(_spans(value, 0))


@lru_cache(maxsize=16384)  # configs and messages repeat the same strings (defaults, names) many times
def _spans(value: str, _depth: int) -> tuple[SecretSpan, ...]:
    spans: list[SecretSpan] = []
    for kind, pattern in TOKEN_FORMATS:
        spans += [SecretSpan(m.start(), m.end(), kind) for m in pattern.finditer(value)]
    for kind, pattern in CONNECTION_FORMATS:
        for m in pattern.finditer(value):
            if not _PLACEHOLDER_RE.fullmatch(m["secret"]):
                spans.append(SecretSpan(m.start("secret"), m.end("secret"), kind))
    arns = [(a.start(), a.end()) for a in _ARN_RE.finditer(value)]
    for m in _RUN_RE.finditer(value):
        run = m.group()
        if any(s.start < m.end() and m.start() < s.end for s in spans):
            continue  # already a token or a credential
        if any(start <= m.start() and m.end() <= end for start, end in arns):
            continue  # part of an ARN: an identifier AWS gave
        text = decoded_text(run)
        if text is not None:
            inner = _spans(text, _depth + 1) if _depth < _MAX_DECODE_DEPTH else ()
            if inner:
                spans.append(SecretSpan(m.start(), m.end(), f"base64 of {inner[0].kind}"))
        elif looks_random(run):
            spans.append(SecretSpan(m.start(), m.end(), _RANDOM_KIND))
    return tuple(sorted(spans, key=lambda s: (s.start, -s.end)))


def secret_kind(value: str) -> str | None:
    """What kind of secret `value` contains, or None. Never returns any part of the value."""
    spans = secret_spans(value)
    return spans[0].kind if spans else None


#: What a masked secret reads as in a message.
MASK = "****"


def redact(text: str, literals: frozenset[str] | set[str] = frozenset()) -> str:
    """``text`` with every secret in it masked: what `secret_spans` finds, and each of ``literals`` (values
    known to be secrets by where they stand, such as `DB_PASSWORD`'s). Messages pass through this, so no
    finding ever repeats a credential, whatever rule wrote it."""
    for literal in sorted(literals, key=len, reverse=True):
        if len(literal) >= 4:
            text = text.replace(literal, MASK)
    out, last = [], 0
    for span in secret_spans(text):
        if span.start < last:
            continue
        out += [text[last:span.start], MASK]
        last = span.end
    return "".join(out) + text[last:]
