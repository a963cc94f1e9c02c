# Galley: `make demo` sets up, builds and runs the main job on the bundled example;
# `make test` runs the whole test suite. Both install missing system packages first.
SWIFT ?= swift
EXAMPLE ?= Examples/winter-2026
DEMO_OUT ?= build/demo
GALLEY = .build/debug/galley

.PHONY: setup build demo test bench docs clean

setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build

demo: build
	@mkdir -p $(DEMO_OUT)
	$(GALLEY) validate $(EXAMPLE)
	$(GALLEY) pack $(EXAMPLE) --output $(DEMO_OUT) --force
	$(GALLEY) validate $(DEMO_OUT)
	$(GALLEY) render $(DEMO_OUT)/com.example.harbour.2026-01.zip --output $(DEMO_OUT)/preview --force
	@echo
	@unzip -l $(DEMO_OUT)/*.zip

test: setup
	$(SWIFT) build
	$(SWIFT) test

bench: setup
	$(SWIFT) build -c release
	python3 bench/pack_bench.py
	python3 bench/validate_bench.py

docs: build
	$(GALLEY) validate --list-checks --markdown > docs/checks.md

clean:
	rm -rf .build build bench/work
