// differential_evict_exported(database) drops the local payload of the database's chunks its DATA_PATH
// already holds (reads fetch them back, verified); differential_fetch_evicted(database) brings them all back
// into local segments. Each returns one row: the chunks and bytes it moved.
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "repository/eviction.hpp"

namespace differential {

using namespace duckdb;

using EvictionOperation = EvictionCounts (*)(Repository &, const std::string &);

static EvictionCounts FetchAll(Repository &repository, const std::string &database) {
	return FetchEvicted(repository, database);
}

template <EvictionOperation OPERATION>
static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	bool evicting = OPERATION == &EvictExported;
	return BindRows(
	    {{evicting ? "chunks_evicted" : "chunks_fetched", LogicalType::BIGINT},
	     {evicting ? "bytes_evicted" : "bytes_fetched", LogicalType::BIGINT}},
	    [database](ClientContext &context) {
		    auto counts = OPERATION(*CurrentRepository(context), database);
		    return Rows {{Value::BIGINT(int64_t(counts.chunks)), Value::BIGINT(int64_t(counts.bytes))}};
	    },
	    types, names);
}

TableFunction EvictExportedFunction() {
	return MakeRowsFunction("differential_evict_exported", {LogicalType::VARCHAR}, TranslatedBind<Bind<EvictExported>>);
}

TableFunction FetchEvictedFunction() {
	return MakeRowsFunction("differential_fetch_evicted", {LogicalType::VARCHAR}, TranslatedBind<Bind<FetchAll>>);
}

} // namespace differential
