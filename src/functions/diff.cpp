// differential_diff(database, from, to, table): the row-level diff of one table between two versions
// (snapshot ids or branch names), streamed from DuckDB's own result rather than collected first.
// Unlike the other functions, bind reads both snapshots' definitions of the table: its columns are
// typed by them.
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "merge/table_diff.hpp"

namespace differential {

using namespace duckdb;

struct DiffBindData : public TableFunctionData {
	std::string repository, database, table;
	int64_t from = -1, to = -1;
	vector<LogicalType> types;
};

struct DiffState : public GlobalTableFunctionState {
	//! Declared first so it is destroyed last: the stream reads its attachments.
	std::unique_ptr<TableDiff> diff;
	unique_ptr<QueryResultStream<ChunkFormat>> stream;
	unique_ptr<DataChunk> chunk;
	idx_t MaxThreads() const override {
		return 1;
	}
};

static unique_ptr<FunctionData> BindDiff(ClientContext &context, TableFunctionBindInput &input,
                                         vector<LogicalType> &types, vector<Identifier> &names) {
	auto data = make_uniq<DiffBindData>();
	data->database = StringArgument(input, 0, "database name");
	ValidateName("database", data->database);
	data->table = StringArgument(input, 3, "table name");
	auto repository = CurrentRepository(context);
	data->repository = repository->root;
	auto &metadata = *repository->metadata;
	if (!metadata.history.FindDatabase(data->database)) {
		Fail(ErrorCode::DATABASE_NOT_FOUND, "Database " + QuoteName(data->database) +
		                                        " does not exist. List databases with differential_databases().");
	}
	data->from = ResolveDiffVersion(metadata, data->database, input.inputs[1], "from");
	data->to = ResolveDiffVersion(metadata, data->database, input.inputs[2], "to");
	TableDiff diff(*context.db, data->repository, data->database, data->from, data->to, data->table);
	data->types = diff.Types();
	types = data->types;
	for (auto name : {"kind", "key", "before", "after"}) {
		names.push_back(Identifier(name));
	}
	return std::move(data);
}

static unique_ptr<GlobalTableFunctionState> InitDiff(ClientContext &context, TableFunctionInitInput &input) {
	return Translated([&]() -> unique_ptr<GlobalTableFunctionState> {
		auto &data = input.bind_data->Cast<DiffBindData>();
		auto state = make_uniq<DiffState>();
		state->diff =
		    std::make_unique<TableDiff>(*context.db, data.repository, data.database, data.from, data.to, data.table);
		// Snapshots never change, so this holds unless the table's snapshot was replaced under the same
		// id, which differential never does; a mismatch is our bug, not the caller's.
		if (state->diff->Types() != data.types) {
			Fail(ErrorCode::INTERNAL,
			     "The table's definition changed between binding and running differential_diff. Run it again.");
		}
		state->stream = state->diff->Stream();
		return std::move(state);
	});
}

static void ScanDiff(ClientContext &, TableFunctionInput &input, DataChunk &output) {
	auto &state = input.global_state->Cast<DiffState>();
	Translated([&]() {
		state.chunk = state.stream->Fetch();
		if (!state.chunk) {
			if (state.stream->HasError()) {
				state.stream->GetErrorObject().Throw();
			}
			output.SetCardinalityUnsafe(0);
			return;
		}
		output.Reference(*state.chunk);
	});
}

TableFunction DiffFunction() {
	TableFunction function(Identifier("differential_diff"),
	                       {LogicalType::VARCHAR, LogicalType::ANY, LogicalType::ANY, LogicalType::VARCHAR}, ScanDiff,
	                       TranslatedBind<BindDiff>, InitDiff);
	return function;
}

} // namespace differential
