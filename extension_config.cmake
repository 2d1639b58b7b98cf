# Tells DuckDB's build which extensions to build alongside it: ours (loadable only) and tpch for the benchmarks.
duckdb_extension_load(differential SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR} EXTENSION_VERSION v0.1.0)
duckdb_extension_load(tpch)
