// differential_evict_exported(database): drops the local payload of the database's chunks its DATA_PATH
// already holds; reads fetch them back, verified. One row: the chunks and bytes evicted.
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "repository/eviction.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	return BindRows(
	    {{"chunks_evicted", LogicalType::BIGINT}, {"bytes_evicted", LogicalType::BIGINT}},
	    [database](ClientContext &context) {
		    auto counts = EvictExported(*CurrentRepository(context), database);
		    return Rows {{Value::BIGINT(int64_t(counts.chunks)), Value::BIGINT(int64_t(counts.bytes))}};
	    },
	    types, names);
}

TableFunction EvictExportedFunction() {
	return MakeRowsFunction("differential_evict_exported", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
}

} // namespace differential
