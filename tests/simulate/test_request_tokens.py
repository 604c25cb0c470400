"""``serving.request_tokens``: the mean request where no trace gives one (the KV-cache capacity without a trace)."""

from __future__ import annotations

import re

import pytest

from fastscale.infra.analysis.endpoint_traffic import DEFAULT_TOKENS
from fastscale.infra.analysis.simulate import load_params, select_workloads
from fastscale.infra.base.limits import DEFAULT_OUTPUT_TOKENS, DEFAULT_PROMPT_TOKENS
from fastscale.infra.config import ConfigError, parse_config
from fastscale.infra.model.resolved import resolve


def test_the_stated_default_is_one_request_for_the_kv_cache_and_for_traces_from_metrics():
    assert load_params().requests.default_request_tokens.value == DEFAULT_PROMPT_TOKENS + DEFAULT_OUTPUT_TOKENS
    assert (DEFAULT_TOKENS.prompt, DEFAULT_TOKENS.output) == (DEFAULT_PROMPT_TOKENS, DEFAULT_OUTPUT_TOKENS)


def test_the_configured_mean_request_sizes_the_kv_cache_capacity(base_config):
    model = base_config["endpoints"][0]["model"]
    model["autoscaling"] = {"target_concurrency": 2}
    [default] = select_workloads(resolve(parse_config(base_config))).workloads
    [tokens] = [int(m.group(1)) for n in default.notes if (m := re.search(r"holds (\d+) tokens", n))]
    assert default.capacity == tokens // 1280
    model["serving"] = {"request_tokens": {"prompt": 3000, "output": 1000}}
    [stated] = select_workloads(resolve(parse_config(base_config))).workloads
    assert stated.capacity == tokens // 4000 < default.capacity  # the same KV cache, requests of 4,000 tokens
    assert any("requests of 4000 tokens" in n for n in stated.notes)


@pytest.mark.parametrize("bad", [{"prompt": 0}, {"output": -5}, {"prompt": 100_000_001}, {"prompt": "many"}, {"mean": 3}])
def test_a_bad_request_tokens_value_names_the_field(base_config, bad):
    base_config["endpoints"][0]["model"]["serving"] = {"request_tokens": bad}
    with pytest.raises(ConfigError, match="request_tokens"):
        parse_config(base_config)
