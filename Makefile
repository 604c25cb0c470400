# fastscale developer entry points. Everything installs into ./.venv from pinned versions.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test setup clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

## The main job on the bundled examples: validate, synthesize and estimate (no AWS account needed).
demo: $(STAMP)
	$(BIN)/fastscale validate examples/*.yaml
	@for f in examples/*.yaml; do \
	  name=$$(basename $$f .yaml); \
	  $(BIN)/fastscale synth $$f --out cdktf.out/$$name || exit $$?; \
	  $(BIN)/fastscale estimate $$f || exit $$?; \
	done

## The whole test suite, then the security scan of the synthesized Terraform.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest
	bash scripts/run_checkov.sh

clean:
	rm -rf cdktf.out .pytest_cache .bench
