def test_values_at_the_limits_pass(run_rule, scale_to_zero):
    ep = scale_to_zero["endpoints"][0]
    for cooldown, step in ((5, 1), (1440, 100)):
        ep["scale_in"] = {"strategy": "CONSOLIDATION", "cooldown_minutes": cooldown, "max_step": step}
        assert run_rule("FS042", scale_to_zero) == []
    ep["scale_in"] = {}  # every value left to AWS
    assert run_rule("FS042", scale_to_zero) == []


def test_values_outside_the_limits_fail(run_rule, hits, scale_to_zero):
    scale_to_zero["endpoints"][0]["scale_in"] = {"cooldown_minutes": 4, "max_step": 101}
    found = run_rule("FS042", scale_to_zero)
    assert hits(found) == [
        ("FS042", "error", "endpoints[0].scale_in.cooldown_minutes"),
        ("FS042", "error", "endpoints[0].scale_in.max_step"),
    ]
    assert [f.hint for f in found] == ["set cooldown_minutes: 5", "set max_step: 100"]
