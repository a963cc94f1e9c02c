# Galley: `make demo` sets up, builds and runs the main job on the bundled example;
# `make test` runs the whole test suite. Both install missing system packages first.
SWIFT ?= swift
EXAMPLE ?= Examples/winter-2026
DEMO_OUT ?= build/demo
GALLEY = .build/debug/galley

.PHONY: setup build demo test browser-check bench docs clean

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
	$(GALLEY) import $(DEMO_OUT)/com.example.harbour.2026-01.zip --store $(DEMO_OUT)/store
	$(GALLEY) issue show com.example.harbour.2026-01 --store $(DEMO_OUT)/store
	@echo
	@unzip -l $(DEMO_OUT)/*.zip

test: setup
	$(SWIFT) build
	$(SWIFT) test

# Opens the example's preview site in headless Chromium: every image, sound and video must load
# and no page may log an error. Screenshots land in build/browser-check/.
browser-check: build
	@bash scripts/setup.sh --browser
	@mkdir -p build/browser-check
	$(GALLEY) render $(EXAMPLE) --output build/browser-check/site --force
	python3 scripts/browser_check.py build/browser-check/site --screenshots build/browser-check

bench: setup
	@bash scripts/setup.sh --bench
	$(SWIFT) build -c release
	python3 bench/pack_bench.py
	python3 bench/validate_bench.py
	python3 bench/render_bench.py
	python3 bench/render_bench.py --tmpfs
	python3 bench/store_bench.py

docs: build
	$(GALLEY) validate --list-checks --markdown > docs/checks.md

clean:
	rm -rf .build build bench/work
