"""Every bound of the loader and the config, tested exactly at the bound and one past it.

A test far beyond a limit (500 levels, a 5000-digit number) passes whether the comparison is `>` or `>=`; these
pin down which side of the line each limit's own value falls on, so an off-by-one in either direction fails.
"""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from fastscale.infra.base.limits import INT32_MAX, INT32_MIN, ApiInt
from fastscale.infra.config import MAX_PROBLEMS_REPORTED, ConfigError, load_config, parse_config, safe_yaml


def problems(text: str) -> list[safe_yaml.YamlProblem]:
    with pytest.raises(safe_yaml.UnsafeYamlError) as exc:
        safe_yaml.load(text)
    return exc.value.problems


# --------------------------------------------------------------------------------------------- YAML depth


def nested_lists(levels: int) -> str:
    return "[" * levels + "]" * levels


def nested_mappings(levels: int) -> str:
    """`levels` mappings in block style, one key per level, ending in a scalar."""
    return "".join("  " * i + f"k{i}:\n" for i in range(levels - 1)) + "  " * (levels - 1) + "last: 1\n"


def depth_of(data: object) -> int:
    depth = 0
    while isinstance(data, (list, dict)):
        depth += 1
        if not data:
            break
        data = data[0] if isinstance(data, list) else next(iter(data.values()))
    return depth


@pytest.mark.parametrize("text_of", [nested_lists, nested_mappings])
def test_nesting_exactly_at_the_limit_loads(text_of):
    assert depth_of(safe_yaml.load(text_of(safe_yaml.MAX_DEPTH)).data) == safe_yaml.MAX_DEPTH


@pytest.mark.parametrize(("text_of", "line"), [(nested_lists, 1), (nested_mappings, safe_yaml.MAX_DEPTH + 1)])
def test_nesting_one_past_the_limit_is_refused_where_it_starts(text_of, line):
    (problem,) = problems(text_of(safe_yaml.MAX_DEPTH + 1))
    assert problem.message == f"nesting is deeper than {safe_yaml.MAX_DEPTH} levels (a fastscale config needs about 8)"
    assert problem.line == line


# --------------------------------------------------------------------------------------------- YAML sizes


def test_integer_literal_exactly_at_the_length_limit_is_read():
    assert safe_yaml.load("a: " + "9" * safe_yaml.MAX_INT_CHARS + "\n").data == {"a": int("9" * safe_yaml.MAX_INT_CHARS)}


def test_integer_literal_one_past_the_length_limit_is_a_located_problem():
    (problem,) = problems("a: 1\nb: " + "9" * (safe_yaml.MAX_INT_CHARS + 1) + "\n")
    assert problem.line == 2
    assert problem.message.startswith(f"b: an integer of {safe_yaml.MAX_INT_CHARS + 1} characters")


def test_text_exactly_at_the_size_limit_loads_and_one_past_is_refused():
    at = "a: " + "x" * (safe_yaml.MAX_BYTES - 4) + "\n"
    assert len(at.encode()) == safe_yaml.MAX_BYTES
    assert safe_yaml.load(at).data == {"a": "x" * (safe_yaml.MAX_BYTES - 4)}
    (problem,) = problems("a: " + "x" * (safe_yaml.MAX_BYTES - 3) + "\n")
    assert problem.message.startswith(f"the file is larger than {safe_yaml.MAX_BYTES // 1024} KiB")


def test_size_limit_counts_bytes_not_characters():
    # 'é' is two bytes in UTF-8: one of them makes a text of MAX_BYTES - 1 characters exactly MAX_BYTES bytes long.
    at = "a: é" + "x" * (safe_yaml.MAX_BYTES - 6) + "\n"
    assert len(at) == safe_yaml.MAX_BYTES - 1 and len(at.encode()) == safe_yaml.MAX_BYTES
    assert safe_yaml.load(at).data == {"a": "é" + "x" * (safe_yaml.MAX_BYTES - 6)}
    past = "a: é" + "x" * (safe_yaml.MAX_BYTES - 5) + "\n"
    assert len(past) == safe_yaml.MAX_BYTES and len(past.encode()) == safe_yaml.MAX_BYTES + 1
    assert "larger than" in problems(past)[0].message


def test_config_file_exactly_at_the_size_limit_is_read_and_one_byte_more_is_not(tmp_path, base_config):
    import yaml

    body = yaml.safe_dump(base_config, sort_keys=False)
    path = tmp_path / "fastscale.yaml"
    path.write_text(body + "#" * (safe_yaml.MAX_BYTES - len(body.encode()) - 1) + "\n")
    assert path.stat().st_size == safe_yaml.MAX_BYTES
    assert load_config(path).project == base_config["project"]
    path.write_text(body + "#" * (safe_yaml.MAX_BYTES - len(body.encode())) + "\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert "larger than" in exc.value.problems[0].message


# --------------------------------------------------------------------------------------------- problem caps


def duplicates(count: int) -> str:
    return "".join(f"k{i}: 1\nk{i}: 2\n" for i in range(count))


def test_duplicate_keys_exactly_at_the_cap_are_all_reported():
    found = problems(duplicates(safe_yaml.MAX_PROBLEMS_REPORTED))
    assert [p.line for p in found] == [2 * i + 2 for i in range(safe_yaml.MAX_PROBLEMS_REPORTED)]


def test_duplicate_keys_one_past_the_cap_report_the_first_ones():
    found = problems(duplicates(safe_yaml.MAX_PROBLEMS_REPORTED + 1))
    assert [p.line for p in found] == [2 * i + 2 for i in range(safe_yaml.MAX_PROBLEMS_REPORTED)]


def unknown_keys(base_config: dict, count: int) -> dict:
    return {**base_config, **{f"unknown_{i:03}": i for i in range(count)}}


def test_config_problems_exactly_at_the_cap_are_all_shown_without_a_remainder_line(base_config):
    with pytest.raises(ConfigError) as exc:
        parse_config(unknown_keys(base_config, MAX_PROBLEMS_REPORTED))
    shown = exc.value.problems
    assert len(shown) == MAX_PROBLEMS_REPORTED
    assert [p.path for p in shown] == [f"unknown_{i:03}" for i in range(MAX_PROBLEMS_REPORTED)]
    assert not any("not shown" in p.message for p in shown)


def test_config_problems_one_past_the_cap_end_in_one_remainder_line(base_config):
    with pytest.raises(ConfigError) as exc:
        parse_config(unknown_keys(base_config, MAX_PROBLEMS_REPORTED + 1))
    shown = exc.value.problems
    assert [p.path for p in shown[:-1]] == [f"unknown_{i:03}" for i in range(MAX_PROBLEMS_REPORTED)]
    assert shown[-1].path == "" and shown[-1].message.startswith("1 more problems not shown")


# --------------------------------------------------------------------------------------------- 32-bit integers

API_INT = TypeAdapter(ApiInt)


@pytest.mark.parametrize("value", [INT32_MIN, INT32_MAX, -(2**31), 2**31 - 1])
def test_the_32_bit_extremes_are_integers_the_apis_carry(value):
    assert API_INT.validate_python(value) == value


@pytest.mark.parametrize("value", [INT32_MIN - 1, INT32_MAX + 1])
def test_one_past_either_32_bit_extreme_is_refused(value):
    with pytest.raises(ValidationError, match=f"at most {INT32_MAX}"):
        API_INT.validate_python(value)


@pytest.mark.parametrize("value", [-(2**31), 2**31 - 1])
def test_config_keeps_a_32_bit_extreme_exactly(base_config, value):
    base_config["endpoints"][0]["instances"]["max"] = value
    assert parse_config(base_config).endpoints[0].instances.max == value


@pytest.mark.parametrize("value", [-(2**31) - 1, 2**31])
def test_config_refuses_one_past_a_32_bit_extreme_naming_the_field(base_config, value):
    base_config["endpoints"][0]["instances"]["max"] = value
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    (problem,) = exc.value.problems
    assert problem.path == "endpoints[0].instances.max" and "10-digit number is more than AWS APIs accept" in problem.message


def test_a_32_bit_extreme_reaches_the_loaded_config_from_yaml(write_yaml, base_config):
    import yaml

    base_config["endpoints"][0]["instances"]["max"] = 2**31 - 1
    text = yaml.safe_dump(base_config, sort_keys=False)
    assert load_config(write_yaml(text)).endpoints[0].instances.max == 2147483647
    with pytest.raises(ConfigError) as exc:
        load_config(write_yaml(text.replace("2147483647", "2147483648")))
    (problem,) = exc.value.problems
    assert problem.path == "endpoints[0].instances.max" and problem.line is not None
