"""Claims about AWS behaviour in README.md and docs/*.md name their AWS source where they are made.

Each entry of CLAIMS is a kind of AWS claim the documentation makes (a figure AWS published, a default AWS
sets, an example AWS gives) and the AWS pages that state it. Every paragraph (or table row) of the
hand-written documentation that makes such a claim must link one of those pages, or say that what it
describes is fastscale's choice. docs/config-reference.md (generated from the schema's descriptions) is left
out. docs/rules.md (generated from the rules' docstrings) is checked rule by rule: a rule's text names its AWS
pages once, in its closing "AWS sources:" paragraph, so the unit there is the rule's whole section.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

BLOG_FAST_SCALING = ("https://aws.amazon.com/blogs/machine-learning/"
                     "amazon-sagemaker-inference-launches-faster-auto-scaling-for-generative-ai-models/")
BLOG_CONTAINER_CACHING = ("https://aws.amazon.com/blogs/machine-learning/"
                          "introducing-container-caching-in-amazon-sagemaker-ai-for-faster-model-scaling/")
BLOG_ROUTING = ("https://aws.amazon.com/blogs/machine-learning/"
                "minimize-real-time-inference-latency-by-using-amazon-sagemaker-routing-strategies/")
API = "https://docs.aws.amazon.com/sagemaker/latest/APIReference/"
GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/"
CHOICE = "fastscale's choice"

#: (what the claim is, a pattern that finds it, the AWS pages that state it)
CLAIMS = [
    ("AWS's scale-out measurement (525 s -> 258 s)", r"\b(525|258) s\b", (BLOG_CONTAINER_CACHING,)),
    ("the concurrency metrics are sub-minute", r"sub-minute", (BLOG_FAST_SCALING,)),
    ("AWS's default for detailed observability", r"detailed observability on for|turns it on for",
     (API + "API_MetricsConfig.html", GUIDE + "monitoring-detailed-observability-getting-started.html")),
    ("what the metrics publish frequency paces", r"publish frequency paces|says for `MetricPublishFrequencyInSeconds`",
     (API + "API_MetricsConfig.html",)),
    ("AWS's scale-from-zero example", r"AWS's[^|]*GreaterThanThreshold", (GUIDE + "endpoint-auto-scaling-zero-instances.html",)),
    ("random routing is AWS's default", r"AWS's default when none is set", (BLOG_ROUTING,)),
    ("what data caching does", r"caches? (the )?model artifacts and (the )?container image",
     (API + "API_InferenceComponentDataCacheConfig.html",)),
    ("the inference AMIs' instance families", r"\| AWS's: ",
     (API + "API_ProductionVariant.html", GUIDE + "inference-gpu-drivers.html")),
    ("SageMaker resolves an image tag to a digest", r"resolves a tag to a digest", (API + "API_DeployedImage.html",)),
    ("an update is blue/green by default", r"automatically uses a blue/green deployment",
     (GUIDE + "deployment-guardrails-blue-green.html",)),
]

GENERATED = {"rules.md", "config-reference.md"}
RULES_DOC = ROOT / "docs" / "rules.md"
AWS_PAGE = re.compile(r"https://(docs\.aws\.amazon\.com|aws\.amazon\.com/blogs)/")
#: A rule's text that names AWS (a service, an API, AWS itself) is taken to say something about how AWS behaves.
AWS_NAMED = re.compile(r"\b(AWS|SageMaker|CloudWatch|Application Auto Scaling|IAM|Amazon S3|ECR|KMS|Secrets Manager|[Tt]he API)\b")
#: Rules that name AWS but state nothing about how AWS behaves, so they cite no AWS page, with the reason.
NAMES_AWS_WITHOUT_CLAIM = {
    "FS015": "the regions are what deploys observed, and the text says it is no AWS statement",
    "FS017": "fastscale's naming and its case-insensitive comparison, said to be fastscale's choice",
    "FS063": "the shapes of credentials, AWS access key ids among them",
    "FS070": "where the Terraform state of an emulator target goes",
    "FS072": "which Terraform provider fastscale redirects to an emulator",
    "FS073": "Terraform's template syntax and fastscale's escaping of it",
    "FS075": "the regions come from botocore's endpoint data, named as such",
    "FS096": "which hosts fastscale sends credentials to",
    "FS106": "hashicorp/aws's own validation, measured on the provider",
}


def _documents():
    return [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in GENERATED)


def _paragraphs(text: str):
    """Blocks separated by blank lines or headings, a table row or a list item each on its own, with their first
    line."""
    start, lines = 1, []
    for number, line in enumerate(text.splitlines() + [""], start=1):
        if line.startswith("#"):  # a heading names a topic, it makes no claim
            line = ""
        own = line.startswith("|") or re.match(r"\s*([-+*]|\d+\.) ", line)
        if (not line.strip() or own) and lines:
            yield start, " ".join(lines)
            lines = []
        if line.strip():
            if not lines:
                start = number
            lines.append(line.strip())
            if line.startswith("|"):
                yield start, " ".join(lines)
                lines = []


def _rule_sections(text: str):
    """(heading, text) of each rule in docs/rules.md, without its example."""
    for section in re.split(r"(?m)^(?=## FS\d{3} )", text)[1:]:
        yield section.splitlines()[0], section.split("Example that triggers it:")[0]


def unsourced_rules(text: str):
    """(rule heading, problem) for each rule section of `text` that states AWS behaviour without an AWS page."""
    for heading, section in _rule_sections(text):
        for claim, pattern, sources in CLAIMS:
            if re.search(pattern, section) and not any(s in section for s in sources) and CHOICE not in section:
                yield heading, claim
        code = heading.split()[1]
        if AWS_NAMED.search(section) and not AWS_PAGE.search(section) and code not in NAMES_AWS_WITHOUT_CLAIM:
            yield heading, "AWS behaviour without an AWS source"
        for line in section.splitlines():
            if line.startswith("AWS sources:"):
                for url in (u.rstrip(".") for u in re.findall(r"https?://[^\s,]+", line)):
                    if not AWS_PAGE.match(url):
                        yield heading, f"not an AWS page: {url}"


def unsourced(text: str):
    """(line, claim) for each paragraph of `text` that makes a claim of CLAIMS without its source."""
    for line, paragraph in _paragraphs(text):
        for claim, pattern, sources in CLAIMS:
            if re.search(pattern, paragraph) and not any(s in paragraph for s in sources) and CHOICE not in paragraph:
                yield line, claim


@pytest.mark.parametrize("path", _documents(), ids=lambda p: p.name)
def test_every_aws_claim_names_its_source(path):
    found = [f"{path.relative_to(ROOT)}:{line}: {claim}" for line, claim in unsourced(path.read_text(encoding="utf-8"))]
    assert found == []


def test_a_claim_without_its_source_is_found():
    text = ("Intro.\n\nAWS measured 525 s for a new instance.\n\n"
            "| layer | data caching caches the model artifacts and the container image |\n\n"
            f"AWS measured 525 s ([blog]({BLOG_CONTAINER_CACHING})).\n\n"
            "# What the publish frequency paces\n"
            "`>=` where AWS's example uses GreaterThanThreshold is fastscale's choice.\n")
    assert list(unsourced(text)) == [(3, "AWS's scale-out measurement (525 s -> 258 s)"), (5, "what data caching does")]


def test_every_rule_names_the_aws_source_of_what_it_says_aws_does():
    assert list(unsourced_rules(RULES_DOC.read_text(encoding="utf-8"))) == []


def test_rules_that_name_aws_without_a_claim_still_cite_nothing():
    """An entry of NAMES_AWS_WITHOUT_CLAIM whose rule now cites an AWS page (or no longer exists) is dropped."""
    sections = {heading.split()[1]: section for heading, section in
                _rule_sections(RULES_DOC.read_text(encoding="utf-8"))}
    assert [c for c in NAMES_AWS_WITHOUT_CLAIM if c not in sections or AWS_PAGE.search(sections[c])] == []


def test_a_rule_without_its_source_is_found():
    text = ("# Validation rules\n\n## FS900 `a`\n\nThe API accepts 60 to 3600.\n\nExample that triggers it:\n\n"
            "## FS901 `b`\n\nThe API accepts 60 to 3600.\n\nAWS sources: https://docs.aws.amazon.com/x.html.\n\n"
            "## FS902 `c`\n\nAWS measured 525 s.\n\nAWS sources: https://example.com/x.html.\n\n"
            "## FS903 `d`\n\nfastscale waits 10 s (fastscale's choice).\n\n"
            "## FS015 `e`\n\nObserved in deploys, not an AWS statement.\n")
    assert list(unsourced_rules(text)) == [
        ("## FS900 `a`", "AWS behaviour without an AWS source"),
        ("## FS902 `c`", "AWS's scale-out measurement (525 s -> 258 s)"),
        ("## FS902 `c`", "AWS behaviour without an AWS source"),
        ("## FS902 `c`", "not an AWS page: https://example.com/x.html"),
    ]


def test_every_source_is_an_aws_page():
    for _, _, sources in CLAIMS:
        for url in sources:
            assert re.match(r"https://(docs\.aws\.amazon\.com|aws\.amazon\.com/blogs)/", url), url


def test_every_claim_is_made_somewhere():
    """A claim no document makes any more is dropped from CLAIMS, so the list says what the documents say."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in _documents())
    assert [claim for claim, pattern, _ in CLAIMS if not re.search(pattern, text)] == []
