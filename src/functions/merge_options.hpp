// The named options every merge function shares (schema_mode, nested, resolution_tables, limits) and the
// preview ones (validate, conflict paging), read at bind; session settings are read at execution.
#pragma once

#include "duckdb/function/table_function.hpp"
#include "merge/merge_branch.hpp"

namespace differential {

enum class MergeOptionSet { MERGE, PREVIEW, PREFLIGHT };

void AddMergeOptions(duckdb::TableFunction &function, MergeOptionSet set);
//! The expected_*_snapshot_id guards of differential_merge_branch and its preflight.
void AddExpectedSnapshotGuards(duckdb::TableFunction &function);
//! The arguments differential_merge_branch and its preflight share: database, target, source,
//! destination, the guards and (where declared) request_id, validated.
MergeBranchRequest ReadMergeBranchRequest(duckdb::TableFunctionBindInput &input);
//! The base snapshot argument of the snapshot forms: required, except with base => 'virtual', which takes
//! NULL (returned as -1) since the merge finds its bases itself.
int64_t BaseSnapshotArgument(duckdb::TableFunctionBindInput &input, size_t index);
//! Reads the options at bind; resolution table names resolve in the caller's session.
MergeOptions ReadMergeOptions(duckdb::ClientContext &context, duckdb::TableFunctionBindInput &input);
//! Fills what comes from the session running the call: TimeZone, Calendar, the concurrency limit.
void ReadSessionSettings(duckdb::ClientContext &context, MergeOptions &options);

//! Routes what a merge call reports (its phases' durations) to DuckDB's log while it lives; open it
//! where the call runs, on the call's thread.
class MergeLogScope {
public:
	explicit MergeLogScope(duckdb::ClientContext &context);

private:
	std::shared_ptr<void> scope;
};

} // namespace differential
