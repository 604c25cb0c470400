def test_accept_eula_with_model_data_passes(run_rule, single_model, components):
    single_model["endpoints"][0]["model"].update(model_data="s3://models-bucket/llama/", accept_eula=True)
    assert run_rule("FS111", single_model) == []
    assert run_rule("FS111", components) == []  # not set at all


def test_accept_eula_without_model_data_is_an_error(run_rule, hits, single_model, components):
    single_model["endpoints"][0]["model"].pop("model_data", None)
    single_model["endpoints"][0]["model"]["accept_eula"] = True
    found = run_rule("FS111", single_model)
    assert hits(found) == [("FS111", "error", "endpoints[0].model.accept_eula")]
    assert "ModelAccessConfig" in found[0].message and "set model_data" in found[0].hint

    comp = components["endpoints"][0]["inference_components"][1]
    comp.pop("model_data", None)
    comp["accept_eula"] = True
    assert hits(run_rule("FS111", components)) == [("FS111", "error", "endpoints[0].inference_components[1].accept_eula")]


def test_accept_eula_false_needs_nothing(run_rule, single_model):
    single_model["endpoints"][0]["model"].pop("model_data", None)
    single_model["endpoints"][0]["model"]["accept_eula"] = False
    assert run_rule("FS111", single_model) == []
