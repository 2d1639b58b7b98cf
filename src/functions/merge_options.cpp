// Merge options: one place that names them, so every merge function takes the same ones.
#include "functions/merge_options.hpp"

#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "duckdb/main/client_context.hpp"
#include "functions/rows_function.hpp"

namespace differential {

using namespace duckdb;

static const char *LIMIT_OPTIONS[] = {"max_rows_read", "max_bytes_read", "max_staging_bytes", "timeout_ms"};

void AddMergeOptions(TableFunction &function, MergeOptionSet set) {
	auto &signature = function.GetSignature();
	signature.AddKeywordOnly("schema_mode", LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	signature.AddKeywordOnly("nested", LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	signature.AddKeywordOnly("base", LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	auto map_type = LogicalType::MAP(LogicalType::VARCHAR, LogicalType::VARCHAR);
	signature.AddKeywordOnly("resolution_tables", map_type, Value(map_type));
	for (auto name : LIMIT_OPTIONS) {
		signature.AddKeywordOnly(name, LogicalType::BIGINT, Value(LogicalType::BIGINT));
	}
	if (set == MergeOptionSet::PREVIEW) {
		signature.AddKeywordOnly("validate", LogicalType::BOOLEAN, Value(LogicalType::BOOLEAN));
		signature.AddKeywordOnly("conflict_limit", LogicalType::BIGINT, Value(LogicalType::BIGINT));
		signature.AddKeywordOnly("conflict_offset", LogicalType::BIGINT, Value(LogicalType::BIGINT));
	}
}

void AddExpectedSnapshotGuards(TableFunction &function) {
	for (auto name : {"expected_base_snapshot_id", "expected_ours_snapshot_id", "expected_theirs_snapshot_id"}) {
		function.GetSignature().AddKeywordOnly(name, LogicalType::BIGINT, Value(LogicalType::BIGINT));
	}
}

MergeBranchRequest ReadMergeBranchRequest(TableFunctionBindInput &input) {
	MergeBranchRequest request;
	request.database = StringArgument(input, 0, "database name");
	request.target = StringArgument(input, 1, "target branch");
	request.source = StringArgument(input, 2, "source branch");
	request.destination = StringArgument(input, 3, "destination branch");
	ValidateName("database", request.database);
	for (auto name : {&request.target, &request.source}) {
		ValidateName("branch", *name);
	}
	if (request.destination != request.target) {
		ValidateNewBranchName(request.destination);
	}
	request.request_id = NamedString(input, "request_id");
	if (request.request_id) {
		ValidateName("request", *request.request_id);
	}
	request.expected_base = NamedInteger(input, "expected_base_snapshot_id");
	request.expected_ours = NamedInteger(input, "expected_ours_snapshot_id");
	request.expected_theirs = NamedInteger(input, "expected_theirs_snapshot_id");
	return request;
}

int64_t BaseSnapshotArgument(TableFunctionBindInput &input, size_t index) {
	if (ParseBaseMode(NamedString(input, "base")) != BaseMode::VIRTUAL) {
		return SnapshotArgument(input, index, "base");
	}
	if (!input.inputs[index].IsNull()) {
		Fail(ErrorCode::INVALID_ARGUMENT, "With base => 'virtual' the merge builds its base from the best common "
		                                  "ancestors of ours and theirs: pass NULL as the base snapshot.");
	}
	return -1;
}

static int64_t NonNegative(TableFunctionBindInput &input, const std::string &name, int64_t fallback) {
	auto value = NamedInteger(input, name);
	if (!value) {
		return fallback;
	}
	if (*value < 0) {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     name + " must be 0 or more (0 means no limit for the limits), not " + std::to_string(*value) + ".");
	}
	return *value;
}

MergeOptions ReadMergeOptions(ClientContext &context, TableFunctionBindInput &input) {
	MergeOptions options;
	options.schema_mode = ParseSchemaMode(NamedString(input, "schema_mode"));
	options.nested_mode = ParseNestedMode(NamedString(input, "nested"));
	options.base_mode = ParseBaseMode(NamedString(input, "base"));
	for (auto &entry : input.named_parameters) {
		if (StringUtil::Lower(entry.first.GetIdentifierName()) == "resolution_tables") {
			options.resolution_tables = ParseResolutionMapping(entry.second);
			ResolveResolutionSources(context, options.resolution_tables);
		}
		if (StringUtil::Lower(entry.first.GetIdentifierName()) == "validate" && !entry.second.IsNull()) {
			options.validate = entry.second.GetValue<bool>();
		}
	}
	options.limits.max_rows_read = NonNegative(input, "max_rows_read", options.limits.max_rows_read);
	options.limits.max_bytes_read = NonNegative(input, "max_bytes_read", options.limits.max_bytes_read);
	options.limits.max_staging_bytes = NonNegative(input, "max_staging_bytes", options.limits.max_staging_bytes);
	options.limits.timeout_ms = NonNegative(input, "timeout_ms", options.limits.timeout_ms);
	options.conflict_limit = NonNegative(input, "conflict_limit", options.conflict_limit);
	options.conflict_offset = NonNegative(input, "conflict_offset", options.conflict_offset);
	options.progress = std::make_shared<std::atomic<double>>(0.0);
	return options;
}

void ReadSessionSettings(ClientContext &context, MergeOptions &options) {
	Value value;
	// TimeZone and Calendar exist when ICU is loaded; without it there is nothing to freeze.
	if (context.TryGetCurrentSetting("TimeZone", value) && !value.IsNull()) {
		options.time_zone = value.ToString();
	}
	if (context.TryGetCurrentSetting("Calendar", value) && !value.IsNull()) {
		options.calendar = value.ToString();
	}
	if (context.TryGetCurrentSetting("differential_merge_max_concurrent", value) && !value.IsNull()) {
		options.max_concurrent = value.GetValue<int64_t>();
	}
	if (context.TryGetCurrentSetting("differential_merge_skip_unchanged", value) && !value.IsNull()) {
		options.skip_unchanged = value.GetValue<bool>();
	}
}

MergeLogScope::MergeLogScope(ClientContext &context) : scope(std::make_shared<DuckDBLogScope>(context)) {
}

} // namespace differential
