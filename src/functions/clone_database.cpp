// differential_clone_database(source, target, snapshot =>): an independent database with its own
// identity and history, starting at a snapshot of the source and sharing all its chunks.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto source = StringArgument(input, 0, "source database name");
	auto target = StringArgument(input, 1, "new database name");
	ValidateName("database", source);
	ValidateName("database", target);
	auto snapshot = NamedInteger(input, "snapshot");
	return BindRows(
	    {{"database_name", LogicalType::VARCHAR},
	     {"database_uuid", LogicalType::VARCHAR},
	     {"source_database", LogicalType::VARCHAR},
	     {"source_snapshot_id", LogicalType::BIGINT}},
	    [=](ClientContext &context) {
		    auto &metadata = *CurrentRepository(context)->metadata;
		    auto from = SnapshotOrLatest(metadata, source, snapshot, "clone");
		    auto clone = metadata.lifecycle.CloneDatabase(source, target, from);
		    return Rows {{Value(clone.name), Value(clone.uuid), Value(source), Value::BIGINT(from)}};
	    },
	    types, names);
}

TableFunction CloneDatabaseFunction() {
	auto function = MakeRowsFunction("differential_clone_database", {LogicalType::VARCHAR, LogicalType::VARCHAR},
	                                 TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("snapshot", LogicalType::BIGINT, Value(LogicalType::BIGINT));
	return function;
}

} // namespace differential
