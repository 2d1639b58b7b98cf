// differential_expire_snapshots(database, versions => [...] | older_than => INTERVAL): retires
// snapshots (never a branch head); their data goes at the next cleanup unless a reader pins it.
#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "duckdb/common/types/interval.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "host/database_export.hpp"

namespace differential {

using namespace duckdb;

static std::optional<Value> Named(TableFunctionBindInput &input, const std::string &name) {
	for (auto &entry : input.named_parameters) {
		if (StringUtil::Lower(entry.first.GetIdentifierName()) == name && !entry.second.IsNull()) {
			return entry.second;
		}
	}
	return std::nullopt;
}

//! An S3 database's store learns of the expiry (expiry records, so remote cleanup may condemn what only
//! those snapshots reached). The expiry itself is committed already: when the store cannot be reached, the
//! records wait for the database's next export, and a warning in duckdb_logs says so.
static void PublishExpiries(ClientContext &context, Repository &repository, const std::string &database) {
	try {
		ExportDatabase(context, repository, database);
	} catch (DifferentialError &e) {
		DuckDBLogScope log(context);
		LogWarning("expiry_records_deferred", "database " + database +
		                                          ": the expiry is committed locally; its expiry records wait for the "
		                                          "next export (" +
		                                          ToString(e.code) + ")");
	}
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	auto versions = Named(input, "versions");
	auto older_than = Named(input, "older_than");
	if (versions.has_value() == older_than.has_value()) {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     "differential_expire_snapshots takes exactly one of versions => [ids] and older_than => INTERVAL.");
	}
	std::vector<int64_t> ids;
	int64_t age_us = 0;
	if (versions) {
		for (auto &child : ListValue::GetChildren(*versions)) {
			if (child.IsNull()) {
				Fail(ErrorCode::INVALID_ARGUMENT, "versions => [...] must not contain NULL.");
			}
			ids.push_back(child.GetValue<int64_t>());
		}
	} else {
		age_us = Interval::GetMicro(older_than->GetValue<interval_t>());
		if (age_us < 0) {
			Fail(ErrorCode::INVALID_ARGUMENT, "older_than => INTERVAL must not be negative.");
		}
	}
	bool by_age = older_than.has_value();
	return BindRows(
	    {{"snapshot_id", LogicalType::BIGINT}},
	    [=](ClientContext &context) {
		    auto repository = CurrentRepository(context);
		    auto &metadata = *repository->metadata;
		    auto expired = by_age ? metadata.lifecycle.ExpireSnapshotsBefore(database, NowMicros() - age_us)
		                          : metadata.lifecycle.ExpireSnapshots(database, ids);
		    PublishExpiries(context, *repository, database);
		    Rows rows;
		    for (auto id : expired) {
			    rows.push_back({Value::BIGINT(id)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction ExpireSnapshotsFunction() {
	auto function = MakeRowsFunction("differential_expire_snapshots", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("versions", LogicalType::LIST(LogicalType::BIGINT),
	                                       Value(LogicalType::LIST(LogicalType::BIGINT)));
	function.GetSignature().AddKeywordOnly("older_than", LogicalType::INTERVAL, Value(LogicalType::INTERVAL));
	return function;
}

} // namespace differential
