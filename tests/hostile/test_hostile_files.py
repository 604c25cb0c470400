"""Hostile and unlucky files through the real CLI: each ends in exit 2 with a finding that names the
problem, as text and as JSON, and never in a traceback. Their time and memory are measured by
bench/hostile.py (under 2 s and 200 MB each), not here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.config import safe_yaml

FILES = Path(__file__).parent / "files"

#: file -> (finding code, words the first finding's message must contain)
EXPECTED: dict[str, tuple[str, str]] = {
    "alias_bomb.yaml": ("FS000", "aliases (*a0) are not supported"),
    "merge_key_alias.yaml": ("FS000", "merge keys (<<) are not supported"),
    "deep_flow_nesting.yaml": ("FS000", "nesting is deeper than"),
    "deep_block_nesting.yaml": ("FS000", "nesting is deeper than"),
    "duplicate_keys.yaml": ("FS000", "duplicate key 'instances' in endpoints[0]: first on line 6, again on line 7"),
    "duplicate_top_level.yaml": ("FS000", "duplicate key 'region': first on line 2, again on line 8"),
    "tab_indentation.yaml": ("FS000", "a tab character at line 4, column 1"),
    "nan_threshold.yaml": ("FS000", "finite number"),
    "inf_target.yaml": ("FS000", "finite number"),
    "negative_inf_size.yaml": ("FS000", "finite number"),
    "int_401_digits.yaml": ("FS000", "an integer of 401 characters"),
    "int_5000_digits.yaml": ("FS000", "an integer of 5000 characters"),
    "int_20_digits.yaml": ("FS000", "a 20-digit number is more than AWS APIs accept"),
    "timeout_beyond_int32.yaml": ("FS000", "32-bit integers"),
    "count_is_boolean.yaml": ("FS000", "got a boolean"),
    "image_1e300.yaml": ("FS060", "could never be pulled"),
    "model_1e300.yaml": ("FS007", "9.31e+299 GiB"),
    "latency_1e300.yaml": ("FS061", "model_latency_ms is 1e+300"),
    "target_1e300.yaml": ("FS062", "2^360"),
    "hf_token_literal.yaml": ("FS018", "HF_TOKEN looks like a secret"),
    "db_pass_literal.yaml": ("FS018", "DB_PASS looks like a secret"),
    "openai_key_under_other_name.yaml": ("FS063", "looks like an OpenAI API key"),
    "aws_access_key_value.yaml": ("FS063", "looks like an AWS access key id"),
    "high_entropy_value.yaml": ("FS063", "long random string"),
    "secret_arn_other_region.yaml": ("FS064", "is in region eu-west-1"),
    "two_documents.yaml": ("FS000", "more than one YAML document"),
    "not_a_mapping.yaml": ("FS000", "must be a YAML mapping"),
    "control_character.yaml": ("FS000", "control characters are not allowed"),
    "invalid_utf8.yaml": ("FS000", "not UTF-8 text"),
    "state_path_absolute.yaml": ("FS095", "'/etc/passwd' is an absolute path"),
    "state_path_climbs_out.yaml": ("FS095", "climbs out of the project directory"),
    "endpoint_url_remote_host.yaml": ("FS096", "names a host name other than localhost"),
    "endpoint_url_public_address.yaml": ("FS096", "names a public address"),
    "state_endpoint_url_remote.yaml": ("FS096", "state.endpoint_url 'https://s3.attacker.example.com'"),
    "endpoint_url_metadata.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_metadata_decimal.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_metadata_ipv6.yaml": ("FS000", "link-local, cloud metadata"),
    # every spelling of a cloud-internal address or name, refused by the schema whatever the command line says
    "endpoint_url_metadata_hex.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_metadata_octal.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_metadata_short_form.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_metadata_ipv4_mapped.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_metadata_nat64.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_metadata_trailing_dot.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_ecs_credentials.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_eks_pod_identity.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_eks_pod_identity_ipv6.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_aws_dns_ipv6.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_instance_data_name.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_metadata_name.yaml": ("FS000", "link-local, cloud metadata"),
    "endpoint_url_link_local_zone.yaml": ("FS000", "carries a zone id or percent-encoding"),
    "endpoint_url_metadata_percent_encoded.yaml": ("FS000", "carries a zone id or percent-encoding"),
    "endpoint_url_metadata_unicode_digits.yaml": ("FS000", "a character outside ASCII"),
    "state_endpoint_url_without_emulator.yaml": ("FS096", "real AWS credentials"),
    "name_trailing_newline.yaml": ("FS016", "endpoint name 'chat\\n' is not a legal SageMaker name part"),
    "escape_in_key.yaml": ("FS000", "unknown key"),
    # accepted by the schema, refused by AWS at deploy: validate refuses them, with line and fix
    "region_typo_commercial.yaml": ("FS075", "'us-eats-1' is not an AWS region"),
    "region_typo_europe.yaml": ("FS075", "'eu-wset-1' is not an AWS region"),
    "region_typo_opt_in.yaml": ("FS075", "'ap-southeast-7x' is not an AWS region"),
    "region_typo_china.yaml": ("FS075", "'cn-nrth-1' is not an AWS region"),
    "region_typo_govcloud.yaml": ("FS075", "'us-gov-wst-1' is not an AWS region"),
    "model_data_file_url.yaml": ("FS076", "it is a file:// URL"),
    "image_not_a_reference.yaml": ("FS077", "characters no image reference holds"),
    "role_arn_wildcard.yaml": ("FS078", "it has a wildcard"),
    "tag_reserved_prefix.yaml": ("FS079", "reserved for AWS"),
    "sns_topic_not_sns.yaml": ("FS080", "not an SNS topic ARN"),
    "sns_topic_other_partition.yaml": ("FS080", "partition aws-us-gov"),
    "model_dir_without_model_data.yaml": ("FS081", "no model_data is set"),
    "secret_in_tag.yaml": ("FS063", "looks like a GitHub token"),
    "url_password_in_environment.yaml": ("FS063", "looks like a password in a URL"),
    "azure_connection_string.yaml": ("FS063", "looks like an Azure storage account key"),
    "service_bus_key_in_tag.yaml": ("FS063", "looks like an Azure shared access key"),
    "password_pair_in_state_key.yaml": ("FS063", "looks like a password in a connection string"),
    # overrides that would move a resource out of the stack's region, or tie another team's model to it
    "override_moves_region.yaml": ("FS103", "the resource's region"),
    "override_shadow_foreign_model.yaml": ("FS103", "the shadow variant's model"),
}

#: Files whose first finding is a rule's (not the schema's): (line it names, words of its fix).
FIXES: dict[str, tuple[int, str]] = {
    "region_typo_commercial.yaml": (2, "did you mean us-east-1"),
    "region_typo_europe.yaml": (2, "did you mean eu-west-1"),
    "region_typo_opt_in.yaml": (2, "did you mean ap-southeast-7"),
    "region_typo_china.yaml": (2, "did you mean cn-north-1"),
    "region_typo_govcloud.yaml": (2, "did you mean us-gov-west-1"),
    "model_data_file_url.yaml": (8, "set model_data to s3://<bucket>/<prefix>/"),
    "image_not_a_reference.yaml": (7, "use registry/repository:tag"),
    "role_arn_wildcard.yaml": (6, "arn:aws:iam::<account>:role/<name>"),
    "tag_reserved_prefix.yaml": (5, "without the 'aws:' prefix"),
    "sns_topic_not_sns.yaml": (7, "arn:aws:sns:us-east-1:<account>:<topic>"),
    "sns_topic_other_partition.yaml": (7, "arn:aws:sns:us-east-1:<account>:<topic>"),
    "model_dir_without_model_data.yaml": (9, "set model_data to the S3 URI"),
    "secret_in_tag.yaml": (5, "a tag never holds a credential"),
    "url_password_in_environment.yaml": (9, "move DATABASE_URL to `secrets`"),
    "azure_connection_string.yaml": (9, "move FEEDBACK_STORE to `secrets`"),
    "service_bus_key_in_tag.yaml": (4, "a tag never holds a credential"),
    "password_pair_in_state_key.yaml": (6, "remove it from the config"),
    "override_moves_region.yaml": (10, "remove this override"),
    "override_shadow_foreign_model.yaml": (10, "remove this override"),
}

#: Control characters a terminal would act on: C0 but tab and line feed, DEL, C1.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

#: Values of the literal-secret files that must never be echoed.
SECRETS = ("hf_FAKEfake", "correct-horse", "sk-proj-FAKE", "AKIAFAKE", "Zq8vN3xR7", "ghp_FAKEfake", "S3cr3tFAKE",
           "FAKEazureKEY0fake", "FAKEsbKEY0fake", "FAKEpassw0rd")


def validate(*args: str):
    return CliRunner().invoke(cli, ["validate", *args])


def test_every_file_in_the_corpus_has_an_expectation():
    assert sorted(p.name for p in FILES.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_file_exits_2_with_its_finding(name):
    code, words = EXPECTED[name]
    path = str(FILES / name)
    text = validate(path)
    assert text.exit_code == 2, text.output
    assert text.exception is None or isinstance(text.exception, SystemExit)
    assert "Traceback" not in text.output
    flat = " ".join(text.output.split())  # the text form wraps at the terminal width
    assert (code in flat) if code != "FS000" else ("is not a valid fastscale config" in flat)
    as_json = validate("--json", path)
    assert as_json.exit_code == 2
    report = json.loads(as_json.stdout)
    assert report["valid"] is False
    (checked,) = report["files"]
    first = checked["findings"][0]
    assert (first["code"], first["severity"]) == (code, "error")
    assert words in first["message"]
    assert not any(s in as_json.stdout + text.output for s in SECRETS)
    # What reaches a terminal holds no control character but line breaks (an escape sequence in the file
    # is shown, never obeyed), while --json keeps the text exact.
    assert not RAW_CONTROL.search(text.output)
    if name in FIXES:
        line, fix = FIXES[name]
        assert (first["line"], first["path"] in flat) == (line, True)
        assert fix in first["hint"]
        assert fix in flat  # the text form shows the fix too


def test_oversized_file_exits_2_without_being_parsed(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text("project: demo\n" + "#" * (4 * safe_yaml.MAX_BYTES))
    result = validate("--json", str(path))
    assert result.exit_code == 2
    assert "larger than" in json.loads(result.stdout)["files"][0]["findings"][0]["message"]


def test_oversized_multibyte_file_is_too_large_not_undecodable(tmp_path):
    # The bounded read may cut a multi-byte character in half: size is judged before decoding.
    path = tmp_path / "huge.yaml"
    path.write_text("project: demo\n# " + "é" * safe_yaml.MAX_BYTES, encoding="utf-8")
    result = validate("--json", str(path))
    assert result.exit_code == 2
    assert "larger than" in json.loads(result.stdout)["files"][0]["findings"][0]["message"]


def test_undecodable_byte_names_its_line(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"project: demo\nregion: us-east-1\n# caf\xe9\n")
    result = validate("--json", str(path))
    assert result.exit_code == 2
    finding = json.loads(result.stdout)["files"][0]["findings"][0]
    assert "not UTF-8 text" in finding["message"] and "save it as UTF-8" in finding["message"]
    assert finding["line"] == 3


def test_an_escape_sequence_in_a_key_is_shown_escaped_and_kept_exact_in_json():
    path = str(FILES / "escape_in_key.yaml")
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x9bkey" in validate(path).output
    [finding] = json.loads(validate("--json", path).stdout)["files"][0]["findings"]
    assert finding["path"] == "\x1b]0;owned\x07\x1b[2J\x9bkey"
