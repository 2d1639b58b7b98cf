# Entry points; the scripts under scripts/ do the work and install what they need.
.PHONY: setup demo serve test test-asan build unit bench bench-tpch bench-sf10 bench-compilers format format-check check docs clean

# Installs what the scripts and checks need (idempotent; the other entry points run it themselves).
setup:
	bash scripts/setup.sh

demo:
	bash scripts/demo.sh

serve:
	bash scripts/serve.sh

test:
	bash scripts/test.sh

test-asan:
	bash scripts/test_asan.sh

build:
	bash scripts/build.sh differential_loadable_extension differential_shell

bench:
	bash scripts/bench.sh

# TPC-H SF1 warm and cold against native DuckDB, alone: replaces its section of bench/RESULTS.md.
bench-tpch:
	bash scripts/bench.sh tpch

# TPC-H SF10 locally and from S3, snapshot and branch on it, its exports: its section of bench/RESULTS.md.
bench-sf10:
	bash scripts/bench.sh sf10

# The extension built by GCC 12 and by clang 19 (ThinLTO), each beside native DuckDB: its section of bench/RESULTS.md.
bench-compilers:
	bash scripts/bench_compilers.sh

format:
	find src test/unit test/extensions shell -name '*.cpp' -o -name '*.hpp' | xargs clang-format -i

check: setup
	python3 scripts/check_layers.py
	python3 scripts/check_sizes.py
	bash scripts/check_aarch64.sh
	bash scripts/check_python.sh

format-check: setup
	find src test/unit test/extensions shell -name '*.cpp' -o -name '*.hpp' | xargs clang-format --dry-run --Werror

# Regenerates the lists in docs/ that the code defines (a test fails when they drift).
docs:
	.venv/bin/python scripts/generate_docs.py

clean:
	rm -rf build
