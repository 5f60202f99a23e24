# gpucloud.baremetal: the two commands of the README are `make lab` and `make test`.
SHELL := /bin/bash
VENV := .venv
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg

.PHONY: setup lab lab-up lab-status lab-down test sanity lint ruff unit integration bench build

setup:  ## Python venv, system packages, collection link (idempotent)
	@bash tools/setup.sh

lab:  ## Set up, start the lab and run the whole rollout (site.yml) against it
	@bash lab/quickstart

lab-up: setup  ## Start the lab only
	@lab/gpucloud-lab up

lab-status:
	@lab/gpucloud-lab status

lab-down:  ## Stop the lab and remove everything it made
	@bash lab/gpucloud-lab down

test: setup  ## Every quality gate and test suite, as CI runs them
	@bash tools/test.sh

sanity: setup
	@bash tools/sanity.sh

lint: setup
	@ansible-lint --profile production

ruff: setup
	@ruff check .

unit: setup
	@python -m pytest tests/unit -q

integration: setup
	@python -m pytest tests/integration -q

bench: setup  ## Benchmarks (ratios measured side by side in one run)
	@for b in bench/bench_*.py; do echo "== $$b"; python "$$b" || exit 1; done

build: setup  ## Build the collection tarball into build/
	@ansible-galaxy collection build --force --output-path build .
