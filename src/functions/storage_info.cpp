// differential_storage_info([database]): how much the repository stores and how much of it is live.
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"

#include <sys/stat.h>

namespace differential {

using namespace duckdb;

static uint64_t FileSize(const std::string &path) {
	struct stat st;
	return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

static Rows Produce(ClientContext &context, const std::string &database) {
	auto repository = CurrentRepository(context);
	auto &metadata = *repository->metadata;
	auto totals = metadata.accounting.Totals(database);
	uint64_t segment_bytes = 0;
	for (auto id : metadata.accounting.AllSegmentIds()) {
		segment_bytes += FileSize(repository->storage->segments.SegmentPath(id));
	}
	uint64_t metadata_bytes =
	    FileSize(repository->root + "/metadata.sqlite") + FileSize(repository->root + "/metadata.sqlite-wal");
	// Live data is repository-wide: databases and clones share chunks.
	auto live = totals.unique_chunk_bytes + metadata.accounting.Totals("").wal_bytes;
	auto garbage = segment_bytes > live ? segment_bytes - live : 0;
	double dedup = live ? static_cast<double>(totals.logical_bytes) / static_cast<double>(live) : 0.0;
	return Rows {{database.empty() ? Value(LogicalType::VARCHAR) : Value(database),
	              Value::UBIGINT(totals.logical_bytes), Value::UBIGINT(segment_bytes + metadata_bytes),
	              Value::UBIGINT(live), Value::UBIGINT(garbage), Value::DOUBLE(dedup), Value::BIGINT(totals.chunks),
	              Value::BIGINT(totals.segments)}};
}

static unique_ptr<FunctionData> BindAll(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                        vector<Identifier> &names);

static const std::vector<ResultColumn> COLUMNS = {
    {"database_name", LogicalType::VARCHAR}, {"logical_bytes", LogicalType::UBIGINT},
    {"stored_bytes", LogicalType::UBIGINT},  {"live_bytes", LogicalType::UBIGINT},
    {"garbage_bytes", LogicalType::UBIGINT}, {"dedup_ratio", LogicalType::DOUBLE},
    {"chunks", LogicalType::BIGINT},         {"segments", LogicalType::BIGINT}};

static unique_ptr<FunctionData> BindAll(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                        vector<Identifier> &names) {
	return BindRows(
	    COLUMNS, [](ClientContext &context) { return Produce(context, ""); }, types, names);
}

static unique_ptr<FunctionData> BindOne(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                        vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	return BindRows(
	    COLUMNS, [database](ClientContext &context) { return Produce(context, database); }, types, names);
}

TableFunctionSet StorageInfoFunctions() {
	TableFunctionSet set(Identifier("differential_storage_info"));
	set.AddFunction(MakeRowsFunction("differential_storage_info", {}, TranslatedBind<BindAll>));
	set.AddFunction(MakeRowsFunction("differential_storage_info", {LogicalType::VARCHAR}, TranslatedBind<BindOne>));
	return set;
}

} // namespace differential
