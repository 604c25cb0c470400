# fastscale developer entry points. Everything installs into ./.venv, at the exact versions of constraints.txt
# (pyproject.toml holds the ranges a user's install may pick from).
PYTHON ?= python3
CONSTRAINTS := constraints.txt
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# `make demo` needs only the runtime dependencies: it installs fastscale without the [dev] extra into the same
# .venv, under its own stamp; `make test` (or `make setup`) later adds the [dev] tools to it.
DEMO_STAMP := $(VENV)/.installed-runtime
# A second environment with CDK Terrain installed, so the suite and every example run on both engines.
TERRAIN_VENV  := .venv-terrain
TERRAIN_STAMP := $(TERRAIN_VENV)/.installed
# The SageMaker Python SDK in an environment of its own, for the one test that runs the SDK itself against the
# emulator: sagemaker 3.x needs rich<15 (fastscale pins 15) and installs about 1 GB, so it is in no other one.
SDK_VENV    := .venv-sdk
SDK_VERSION := 3.27.0
SDK_STAMP   := $(SDK_VENV)/.installed-$(SDK_VERSION)

# Python keeps compiled modules (git-ignored __pycache__/) even where the environment says not to (container
# images often do): the suite starts hundreds of Python processes, each of which would compile fastscale anew,
# and pytest would rewrite every test module's asserts in every worker. That is about a fifth of
# `make test-fast`'s CPU time.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-sdk test-fast test-suite collect lint typecheck checkov test-terrain setup clean canary floor constraints mutation prices

$(STAMP): pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	PIP_CONSTRAINT=$(CURDIR)/$(CONSTRAINTS) $(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(TERRAIN_STAMP): pyproject.toml $(CONSTRAINTS)
	$(PYTHON) -m venv $(TERRAIN_VENV)
	PIP_CONSTRAINT=$(CURDIR)/$(CONSTRAINTS) $(TERRAIN_VENV)/bin/pip install --quiet -e '.[dev,terrain]'
	touch $(TERRAIN_STAMP)

$(SDK_STAMP):
	$(PYTHON) -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/pip install --quiet 'sagemaker==$(SDK_VERSION)'
	touch $(SDK_STAMP)

$(DEMO_STAMP): pyproject.toml $(CONSTRAINTS)
	@echo "demo: installing fastscale and its runtime dependencies into $(VENV) (without the [dev] tools)"
	$(PYTHON) -m venv $(VENV)
	PIP_CONSTRAINT=$(CURDIR)/$(CONSTRAINTS) $(BIN)/pip install -e .
	touch $(DEMO_STAMP)

setup: $(STAMP)

## The main job on the bundled examples: validate, synthesize and estimate (no AWS account needed), one line per
## example, then the next steps. An installed dev environment is used as it is.
demo: $(if $(wildcard $(STAMP)),$(STAMP),$(DEMO_STAMP))
	@FASTSCALE=$(BIN)/fastscale bash scripts/demo.sh

## Everything CI checks (.ci/run): lint (ruff), types (mypy), the import contracts of pyproject.toml, checkov on
## the synthesized Terraform, the CDK Terrain pass and the suite's collection, at once (they do not depend on each
## other; make -j), then the whole test suite alone on every core (pytest-xdist). Output is grouped per step.
## PYTEST_WORKERS=N sets the number of pytest workers (default: one more than the cores: the suite's processes
## also wait, on the processes they start and on the emulator's answers, and a spare worker runs meanwhile).
PYTEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 1)')
test: $(STAMP)
	$(MAKE) --no-print-directory -j4 --output-sync=target lint typecheck checkov test-terrain collect
	$(MAKE) --no-print-directory test-suite

## The suite collected once, which compiles its modules (test modules with pytest's assertion rewriting) into
## __pycache__/: on a fresh clone, each pytest-xdist worker would otherwise compile every one of them at the same
## moment, about 15 s of CPU (7 s on two cores) at the start of the suite. A module that fails to import fails here.
collect: $(STAMP)
	@out="$$($(BIN)/pytest --collect-only -q -p no:cacheprovider -p no:syrupy 2>&1)" || { printf '%s\n' "$$out" | grep -v '::'; exit 1; }; \
	  printf '%s\n' "$$out" | grep -E '^[0-9]+ tests? collected'

## The whole test suite, on every core (and one worker more). Which tests share a worker, and why the slow ones start first:
## docs/testing.md ("fastscale's own test suite").
test-suite: $(STAMP)
	$(BIN)/pytest -n $(PYTEST_WORKERS)

## The development loop: every test not marked slow (no end-to-end runs, no Terraform, no fresh virtualenvs),
## on every core: about 130 s of CPU, a minute or so on two idle cores. `make test` runs them all.
test-fast: $(STAMP)
	$(BIN)/pytest -n $(PYTEST_WORKERS) -q -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/vulture

checkov: $(STAMP)
	bash scripts/run_checkov.sh

## The SageMaker Python SDK's own calls against the emulator, then adopt -> plan -> deploy -> scale -> destroy
## (tests/e2e/test_adopt_real_sdk_emulator.py, which skips without FASTSCALE_SDK_PYTHON). Not part of `make test`:
## the SDK's environment takes about 8 minutes and 1 GB to install.
test-sdk: $(STAMP) $(SDK_STAMP)
	FASTSCALE_SDK_PYTHON=$(CURDIR)/$(SDK_VENV)/bin/python $(BIN)/pytest -q -p no:cacheprovider tests/e2e/test_adopt_real_sdk_emulator.py

## CDK Terrain as the engine: the stack snapshot, parity (fastscale's writer against the engine's bytes) and
## contract tests, then every example synthesized by each engine itself (main.py, what `cdktf synth` runs; two
## at a time) and compared as JSON (only the engine's version stamp may differ).
test-terrain: $(STAMP) $(TERRAIN_STAMP)
	FASTSCALE_ENGINE=cdktn $(TERRAIN_VENV)/bin/pytest -n $(PYTEST_WORKERS) -q -p no:cacheprovider tests/stacks tests/contract tests/test_engine_choice.py
	rm -rf .engines
	printf '%s\0' examples/*.yaml | xargs -0 -P 2 -n 1 sh -c 'name=$$(basename "$$1" .yaml) && \
	  mkdir -p .engines/cdktf/$$name .engines/cdktn/$$name && \
	  FASTSCALE_ENGINE=cdktf FASTSCALE_CONFIG="$$1" CDKTF_OUTDIR=.engines/cdktf/$$name $(BIN)/python main.py && \
	  FASTSCALE_ENGINE=cdktn FASTSCALE_CONFIG="$$1" CDKTF_OUTDIR=.engines/cdktn/$$name $(TERRAIN_VENV)/bin/python main.py' sh
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

## Upgrade canary: the newest versions pyproject.toml's ranges allow (no constraints file), in .venv-canary, running
## the stack, contract and engine-choice tests and the two-engine comparison of every example. Green means the
## ranges may stay; red names the dependency to cap or to fix for before the constraints file moves on.
CANARY_VENV := .venv-canary
canary:
	rm -rf $(CANARY_VENV) .engines-canary
	$(PYTHON) -m venv $(CANARY_VENV)
	$(CANARY_VENV)/bin/pip install --quiet --upgrade --upgrade-strategy eager -e '.[dev,terrain]'
	$(CANARY_VENV)/bin/pip list --format=freeze | grep -iE '^(boto3|botocore|cdktf|cdktn|constructs|jsii|click|jinja2|pydantic|pyyaml|rich)=='
	FASTSCALE_ENGINE=cdktn $(CANARY_VENV)/bin/pytest -q -p no:cacheprovider tests/stacks tests/contract tests/test_engine_choice.py
	FASTSCALE_ENGINE=cdktf $(CANARY_VENV)/bin/pytest -q -p no:cacheprovider tests/stacks tests/contract tests/test_engine_choice.py
	@for f in examples/*.yaml; do \
	  name=$$(basename $$f .yaml); \
	  mkdir -p .engines-canary/cdktf/$$name .engines-canary/cdktn/$$name; \
	  FASTSCALE_ENGINE=cdktf FASTSCALE_CONFIG=$$f CDKTF_OUTDIR=.engines-canary/cdktf/$$name $(CANARY_VENV)/bin/python main.py || exit $$?; \
	  FASTSCALE_ENGINE=cdktn FASTSCALE_CONFIG=$$f CDKTF_OUTDIR=.engines-canary/cdktn/$$name $(CANARY_VENV)/bin/python main.py || exit $$?; \
	done
	$(CANARY_VENV)/bin/python scripts/compare_engines.py .engines-canary/cdktf .engines-canary/cdktn

## The lower bounds of pyproject.toml's ranges (constraints-floor.txt), in .venv-floor, with the tests that use the
## runtime dependencies most (config, rules, CLI, AWS calls, stacks).
FLOOR_VENV := .venv-floor
floor:
	rm -rf $(FLOOR_VENV)
	$(PYTHON) -m venv $(FLOOR_VENV)
	PIP_CONSTRAINT=$(CURDIR)/constraints-floor.txt $(FLOOR_VENV)/bin/pip install --quiet -e '.[dev]'
	$(FLOOR_VENV)/bin/pytest -q -p no:cacheprovider tests/rules tests/cli tests/aws tests/stacks tests/test_config.py

## Mutation testing (mutmut) of the code that deletes, applies or refuses: infra/aws/sweep.py, infra/aws/cleanup.py,
## infra/terraform/plan_session.py and the downtime classification in infra/terraform/rollout/, against the tests that cover
## them ([tool.mutmut] in pyproject.toml).
## Not part of `make test`: it takes many minutes. Prints the score and leaves the details in .mutation/
## (`cd .mutation && ../.venv/bin/mutmut show <name>`).
mutation: $(STAMP)
	bash scripts/mutation.sh

## The instance catalog's prices read again from the AWS Price List (GetProducts, AmazonSageMaker, component Hosting,
## the catalog's Region), with today's date as their as-of date: review the diff of
## infra/base/catalog/accelerators.json, then commit it. Needs AWS credentials allowed pricing:GetProducts.
prices: $(STAMP)
	$(BIN)/python scripts/update_prices.py

## constraints.txt anew: the newest versions the ranges allow, resolved in a scratch venv (review the diff, then
## run `make test`).
constraints:
	rm -rf .venv-constraints
	$(PYTHON) -m venv .venv-constraints
	.venv-constraints/bin/pip install --quiet -e '.[dev,terrain]'
	{ sed -n '1,3p' $(CONSTRAINTS); .venv-constraints/bin/pip list --format=freeze --exclude fastscale; } > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)
	rm -rf .venv-constraints

clean:
	rm -rf cdktf.out .pytest_cache .bench .engines .engines-canary .mypy-src .mypy_cache .mutation
	[ ! -x $(BIN)/python ] || rm -rf "$$($(BIN)/python -c 'from tests.venv_cache import CACHE; print(CACHE)')"
