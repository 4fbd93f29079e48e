# Shortcuts; each target is one script in scripts/.
.PHONY: demo test bench fuzz sanitize soak bench-serve bench-cluster serve-soak
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
serve-soak:
	scripts/serve-soak
