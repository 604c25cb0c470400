def test_kinds_and_full_names_of_the_stack_pass(run_rule, single_model, scale_to_zero):
    assert run_rule("FS047", single_model) == []
    single_model["endpoints"][0]["deployment"] = {"rollback_alarms": ["demo-chat-gpu-memory", "5xx-errors"]}
    assert run_rule("FS047", single_model) == []
    # a component that scales to zero has a stuck-at-zero alarm of its own
    scale_to_zero["endpoints"][0]["deployment"] = {"rollback_alarms": ["stuck-at-zero", "gpu-memory"]}
    assert run_rule("FS047", scale_to_zero) == []


def test_an_alarm_the_stack_does_not_create_fails(run_rule, hits, single_model, components):
    single_model["endpoints"][0]["deployment"] = {"rollback_alarms": ["5xx-errors", "other-stack-alarm"]}
    found = run_rule("FS047", single_model)
    assert hits(found) == [("FS047", "error", "endpoints[0].deployment.rollback_alarms[1]")]
    assert "alarm kind" in found[0].hint
    # no stuck-at-zero alarm without scale to zero
    components["endpoints"][0]["inference_components"][0]["deployment"] = {"rollback_alarms": ["stuck-at-zero"]}
    assert hits(run_rule("FS047", components)) == [
        ("FS047", "error", "endpoints[0].inference_components[0].deployment.rollback_alarms[0]")]


def test_operational_alarms_switched_off_cannot_be_watched(run_rule, hits, single_model):
    ep = single_model["endpoints"][0]
    ep["alarms"] = {"enabled": False}
    assert run_rule("FS047", single_model) == []  # 5xx and latency are still created for rollback
    ep["deployment"] = {"rollback_alarms": ["gpu-memory"]}
    assert hits(run_rule("FS047", single_model)) == [("FS047", "error", "endpoints[0].deployment.rollback_alarms[0]")]
