# Galley: `make demo` sets up, builds and runs the main job on the bundled example;
# `make test` runs the whole test suite. Both install missing system packages first.
SWIFT ?= swift
EXAMPLE ?= Examples/winter-2026
DEMO_OUT ?= build/demo
GALLEY = .build/debug/galley

PREFIX ?= /usr/local
RELEASE_GALLEY = .build/release/galley

.PHONY: setup build release demo test browser-check slow-readers bench zip64-check fuzz docs clean man completions install uninstall openapi

setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build

# The binary to install: optimised, the Swift runtime linked in (process start is most of a
# store query's time), no symbols exported to the libraries it loads and no RUNPATH of its own
# folder (an installed galley must not load a libsqlite3 put beside it). docs/benchmarks.md has
# the figures these choices are held to.
release: setup
	$(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath -Xlinker --no-export-dynamic $(RELEASE_TOOLSET)

# Linked by the toolchain's lld with packed relative relocations (DT_RELR, glibc 2.36 and
# later) where both are there: the relocation table shrinks from 3.6 MB to 30 KB, read by every
# process at start. Without them the release links as before.
SWIFT_LLD = $(wildcard $(dir $(realpath $(shell command -v $(SWIFT))))ld.lld)
GLIBC_RELR = $(shell getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ split($$2, v, "."); if (v[1] > 2 || (v[1] == 2 && v[2] >= 36)) print "yes" }')
RELEASE_TOOLSET = $(if $(and $(SWIFT_LLD),$(GLIBC_RELR)),--toolset scripts/release-toolset.json)

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

# The PostgreSQL store's tests run against a throwaway cluster on a loopback port
# (scripts/pg-test-server.sh), its S3 blobs against SeaweedFS's S3 server (scripts/s3-test-server.sh);
# GALLEY_REQUIRE_POSTGRES makes them fail, not skip, without them.
test: setup
	@bash scripts/setup.sh --test-peers
	$(SWIFT) build
	GALLEY_REQUIRE_POSTGRES=1 bash scripts/pg-test-server.sh run -- bash scripts/s3-test-server.sh run -- $(SWIFT) test

HOSTILE = Tests/Fixtures/zips/hostile-preview-error.zip

# The preview site and serve's article pages in headless Chromium: every image, sound and video
# loads and no page logs an error; galley preview's page shows a failed rebuild's findings and
# drops them once mended; the hostile issue runs no script unless --trust-bodies (which must run
# them, or the vectors prove nothing). Screenshots land in build/browser-check/.
browser-check: build
	@bash scripts/setup.sh --browser
	@mkdir -p build/browser-check
	$(GALLEY) render $(EXAMPLE) --output build/browser-check/site --force
	python3 scripts/browser_check.py build/browser-check/site --screenshots build/browser-check
	rm -rf build/browser-check/store
	$(GALLEY) pack $(EXAMPLE) --output build/browser-check/ --force -q
	$(GALLEY) import build/browser-check/com.example.harbour.2026-01.zip --store build/browser-check/store -q
	python3 scripts/browser_check.py --serve build/browser-check/store --galley $(GALLEY) --screenshots build/browser-check
	python3 scripts/browser_check.py --preview $(EXAMPLE) --galley $(GALLEY) --screenshots build/browser-check
	$(GALLEY) render $(HOSTILE) --output build/browser-check/hostile --force 2>/dev/null
	python3 scripts/browser_check.py build/browser-check/hostile --hostile --screenshots build/browser-check/hostile-shots
	$(GALLEY) render $(HOSTILE) --output build/browser-check/trusted --force --trust-bodies
	@if python3 scripts/browser_check.py build/browser-check/trusted --hostile --screenshots build/browser-check/trusted-shots >/dev/null; \
	then echo "browser-check: the hostile vectors ran no script even with --trust-bodies: they prove nothing" >&2; exit 1; \
	else echo "ok     with --trust-bodies the hostile vectors run (as they must for the check above to mean something)"; fi

# 2,000 readers that take 1 KiB every 5 s from the release binary's serve: its peak memory
# stays under 100 MB, the send timeout closes each of them, health probes stay fast (about a
# minute; CI runs it). The release binary, as servers run it: the debug one needs ~20% more.
slow-readers: release
	python3 bench/slow_readers.py

# Mutation campaigns against the release binary (a few minutes; failing inputs in fuzz-failures/).
fuzz: release
	python3 scripts/fuzz.py zips
	python3 scripts/fuzz.py manifests
	python3 scripts/fuzz.py sources
	python3 scripts/fuzz.py serve
	python3 scripts/fuzz.py sync
	python3 scripts/fuzz.py large --runs 60

# Packs a 4.3 GiB issue with --allow-zip64 and checks it with unzip, bsdtar and Python
# (needs about 10 GB free; not part of `make test`).
zip64-check: release
	@bash scripts/setup.sh --bench --postgres
	bash scripts/zip64-check.sh .build/release/galley

bench: release
	@bash scripts/setup.sh --bench --postgres
	python3 bench/pack_bench.py
	python3 bench/thumbnail_bench.py
	python3 bench/validate_bench.py
	python3 bench/render_bench.py
	python3 bench/render_bench.py --tmpfs
	python3 bench/store_bench.py
	python3 bench/import_bench.py
	python3 bench/serve_bench.py
	python3 bench/sync_bench.py
	python3 bench/sync_bench.py --articles 30000 --runs 3
	python3 bench/delta_bench.py
	python3 bench/capacity_bench.py
	python3 bench/results.py --check

docs: build
	$(GALLEY) validate --list-checks --markdown > docs/checks.md

# The man page, from the commands' own help (swift-argument-parser's generate-manual), dated by
# the last commit so that it is the same on every machine.
# docs/openapi.yaml, the self-contained document serve serves, from docs/openapi-source.yaml and
# docs/json (a test fails when they drift apart).
openapi:
	python3 scripts/bundle_openapi.py

man: release
	$(SWIFT) build --product generate-manual
	@mkdir -p build/man
	.build/debug/generate-manual $(RELEASE_GALLEY) --output-directory build/man \
		--date "$$(git log -1 --format=%cs 2>/dev/null || date -u +%F)" --authors "The Galley authors"
	@# Blank lines in the help texts are blank input lines to mdoc, which man warns of: a blank
	@# line becomes a paragraph break, and a break right after another or a heading goes.
	awk '/^$$/ { if (last !~ /^\.(Pp|Sh|Ss|It|Bl|El)/) { print ".Pp"; last = ".Pp" }; next } { print; last = $$0 }' \
		build/man/galley.1 > build/man/galley.1.tmp && mv build/man/galley.1.tmp build/man/galley.1

completions: release
	@mkdir -p build/completions
	$(RELEASE_GALLEY) --generate-completion-script bash > build/completions/galley.bash
	$(RELEASE_GALLEY) --generate-completion-script zsh > build/completions/_galley
	$(RELEASE_GALLEY) --generate-completion-script fish > build/completions/galley.fish

# Installs the release binary, the man page and the bash, zsh and fish completions under
# $(PREFIX) (default /usr/local; DESTDIR for packaging).
install: release man completions
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -s -m 755 $(RELEASE_GALLEY) $(DESTDIR)$(PREFIX)/bin/galley
	install -m 644 build/man/galley.1 $(DESTDIR)$(PREFIX)/share/man/man1/galley.1
	install -m 644 build/completions/galley.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/galley
	install -m 644 build/completions/_galley $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_galley
	install -m 644 build/completions/galley.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/galley.fish
	@echo "installed galley in $(DESTDIR)$(PREFIX)/bin (man galley; completions for bash, zsh and fish)"

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/galley $(DESTDIR)$(PREFIX)/share/man/man1/galley.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/galley $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_galley \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/galley.fish

clean:
	rm -rf .build build bench/work
