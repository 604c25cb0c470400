"""Claims about AWS behaviour in README.md and docs/*.md name their AWS source where they are made.

Each entry of CLAIMS is a kind of AWS claim the documentation makes (a figure AWS published, a default AWS
sets, an example AWS gives) and the AWS pages that state it. Every paragraph (or table row) of the
hand-written documentation that makes such a claim must link one of those pages, or say that what it
describes is fastscale's choice. The generated pages (docs/rules.md from the rules' docstrings,
docs/config-reference.md from the schema's descriptions) are left out: they are checked where they are
written.
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


def test_every_source_is_an_aws_page():
    for _, _, sources in CLAIMS:
        for url in sources:
            assert re.match(r"https://(docs\.aws\.amazon\.com|aws\.amazon\.com/blogs)/", url), url


def test_every_claim_is_made_somewhere():
    """A claim no document makes any more is dropped from CLAIMS, so the list says what the documents say."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in _documents())
    assert [claim for claim, pattern, _ in CLAIMS if not re.search(pattern, text)] == []
