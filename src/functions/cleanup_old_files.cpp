// differential_cleanup_old_files(cleanup_all => true | older_than => INTERVAL): reclaims the space
// of expired snapshots, dropped branches and databases, and overwritten data.
#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "duckdb/common/types/interval.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "maintenance/cleanup.hpp"

namespace differential {

using namespace duckdb;

//! Without arguments only segments older than a week are reclaimed, like DuckLake's default.
static constexpr int64_t DEFAULT_AGE_US = 7LL * 24 * 3600 * 1000000;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	CleanupOptions options;
	int64_t age_us = DEFAULT_AGE_US;
	bool has_all = false, has_age = false;
	for (auto &entry : input.named_parameters) {
		auto name = StringUtil::Lower(entry.first.GetIdentifierName());
		if (entry.second.IsNull()) {
			continue;
		}
		if (name == "cleanup_all") {
			has_all = true;
			options.all = entry.second.GetValue<bool>();
		} else if (name == "older_than") {
			has_age = true;
			age_us = Interval::GetMicro(entry.second.GetValue<interval_t>());
		}
	}
	if (has_all && has_age) {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     "differential_cleanup_old_files takes cleanup_all => true or older_than => INTERVAL, not both.");
	}
	if (age_us < 0) {
		Fail(ErrorCode::INVALID_ARGUMENT, "older_than => INTERVAL must not be negative.");
	}
	return BindRows(
	    {{"bytes_freed", LogicalType::UBIGINT},
	     {"segments_deleted", LogicalType::BIGINT},
	     {"segments_compacted", LogicalType::BIGINT},
	     {"segments_in_use", LogicalType::BIGINT},
	     {"chunks_deleted", LogicalType::BIGINT},
	     {"index_pages_deleted", LogicalType::BIGINT},
	     {"roots_deleted", LogicalType::BIGINT},
	     {"pins_released", LogicalType::BIGINT}},
	    [options, age_us](ClientContext &context) mutable {
		    options.cutoff_us = NowMicros() - age_us;
		    DuckDBLogScope log(context);
		    auto r = CleanupRepository(*CurrentRepository(context), options);
		    return Rows {{Value::UBIGINT(r.bytes_freed), Value::BIGINT(r.segments_deleted),
		                  Value::BIGINT(r.segments_compacted), Value::BIGINT(r.segments_skipped_in_use),
		                  Value::BIGINT(r.chunks_deleted), Value::BIGINT(r.index_pages_deleted),
		                  Value::BIGINT(r.roots_deleted), Value::BIGINT(r.pins_released)}};
	    },
	    types, names);
}

TableFunction CleanupOldFilesFunction() {
	auto function = MakeRowsFunction("differential_cleanup_old_files", {}, TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("cleanup_all", LogicalType::BOOLEAN, Value(LogicalType::BOOLEAN));
	function.GetSignature().AddKeywordOnly("older_than", LogicalType::INTERVAL, Value(LogicalType::INTERVAL));
	return function;
}

} // namespace differential
