# Shortcuts; each target is one script in scripts/.
.PHONY: demo test bench fuzz sanitize soak bench-serve bench-cluster
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
