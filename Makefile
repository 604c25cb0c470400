# fastscale developer entry points. Everything installs into ./.venv from pinned versions.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# A second environment with CDK Terrain installed, so the suite and every example run on both engines.
TERRAIN_VENV  := .venv-terrain
TERRAIN_STAMP := $(TERRAIN_VENV)/.installed

.PHONY: demo test test-terrain typecheck setup clean engine-elements

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(TERRAIN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(TERRAIN_VENV)
	$(TERRAIN_VENV)/bin/pip install --quiet -e '.[dev,terrain]'
	touch $(TERRAIN_STAMP)

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
	$(MAKE) --no-print-directory typecheck
	$(BIN)/pytest
	bash scripts/engine_elements.sh check
	bash scripts/run_checkov.sh
	$(MAKE) --no-print-directory test-terrain

## The node package the resource layer creates a stack's elements with (node/elements -> stacks/_jsii), rebuilt
## from its TypeScript source with the pinned jsii compiler (needs npm). `make test` checks the shipped one.
engine-elements:
	bash scripts/engine_elements.sh build

## CDK Terrain as the engine: the stack snapshot and contract tests, then every example synthesized with
## both engines and compared as JSON (only the engine's version stamp may differ).
test-terrain: $(STAMP) $(TERRAIN_STAMP)
	FASTSCALE_ENGINE=cdktn $(TERRAIN_VENV)/bin/pytest -q -p no:cacheprovider tests/stacks tests/contract tests/test_engine_choice.py
	rm -rf .engines
	@for f in examples/*.yaml; do \
	  name=$$(basename $$f .yaml); \
	  FASTSCALE_ENGINE=cdktf $(BIN)/fastscale synth $$f --out .engines/cdktf/$$name --json > /dev/null || exit $$?; \
	  FASTSCALE_ENGINE=cdktn $(TERRAIN_VENV)/bin/fastscale synth $$f --out .engines/cdktn/$$name --json > /dev/null || exit $$?; \
	done
	$(BIN)/python scripts/compare_engines.py .engines/cdktf .engines/cdktn

## mypy: --strict on fastscale.infra, the default level on fastscale.cli, fastscale.stacks and fastscale.templates.
## The folders are installed as fastscale.* through pyproject's package-dir mapping, which mypy cannot read (and
## the editable install's import hook is invisible to it), so mypy reads them through a tree of symlinks,
## .mypy-src/fastscale/<folder> -> <folder> (git-ignored; mypy_path in pyproject.toml points at it).
MYPY_SRC := .mypy-src/fastscale
typecheck: $(STAMP)
	@mkdir -p $(MYPY_SRC)
	@for p in cli infra stacks templates; do ln -sfn ../../$$p $(MYPY_SRC)/$$p; done
	$(BIN)/mypy --strict -p fastscale.infra
	$(BIN)/mypy -p fastscale.cli -p fastscale.stacks -p fastscale.templates

clean:
	rm -rf cdktf.out .pytest_cache .bench .engines .mypy-src .mypy_cache
