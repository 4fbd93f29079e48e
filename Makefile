# Shortcuts; each target is one script in scripts/.
.PHONY: demo test bench fuzz sanitize soak bench-serve bench-cluster bench-library bench-cached-floor serve-soak
demo:
	scripts/demo
test:
	scripts/test
bench:
	scripts/bench
fuzz:
	scripts/fuzz
sanitize:
	scripts/sanitize
soak:
	scripts/soak
bench-serve:
	scripts/bench-serve
bench-cluster:
	scripts/bench-cluster
# The library's pinned target rows alone, from the release build scripts/bench makes (run that once first).
bench-library:
	scripts/bench-library --bin "$$(swift build --enable-all-traits -c release --show-bin-path)" \
		--python "$$(python3 -c 'import sys, PIL; print(sys.executable)' 2>/dev/null || echo $$PWD/.build-bench/venv/bin/python)"
# A cached answer's cost in magpie serve beside nginx and the HTTP stack alone (NIO, Hummingbird), pinned.
bench-cached-floor:
	swift build --enable-all-traits -c release --scratch-path .build-bench/swift --product magpie
	swift build --enable-all-traits -c release --scratch-path .build-bench/swift --product magpie-http-floor
	scripts/bench-cached-floor
serve-soak:
	scripts/serve-soak
