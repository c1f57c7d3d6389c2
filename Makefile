# The one test command of the README: every Rust test (unit, integration, doctests).
.PHONY: test demo
test:
	cargo test --workspace

demo:
	cargo run --release -- dedup
