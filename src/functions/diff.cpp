// differential_diff(database, from, to, table): the row-level diff of one table between two versions
// (snapshot ids, branch names, or '<branch>@working' for an attached branch's working state), streamed from
// DuckDB's own result rather than collected first.
// Unlike the other functions, bind reads both snapshots' definitions of the table: its columns are
// typed by them.
#include "common/names.hpp"
#include "duckdb/common/string_util.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "merge/table_diff.hpp"

namespace differential {

using namespace duckdb;

struct DiffBindData : public TableFunctionData {
	std::string repository, database, table;
	DiffVersion from, to;
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

//! Names the working state: '@' is outside the name rule, so no branch name reads as one.
static const std::string WORKING_SUFFIX = "@working";

//! A version argument: '<branch>@working' is the branch's attachment in this session, read as it stands; any
//! other value is a snapshot (ResolveDiffVersion).
static DiffVersion ResolveVersion(ClientContext &context, const Repository &repository, const std::string &database,
                                  const Value &version, const std::string &what) {
	DiffVersion out;
	if (!version.IsNull() && version.type().id() == LogicalTypeId::VARCHAR &&
	    StringUtil::EndsWith(version.ToString(), WORKING_SUFFIX)) {
		auto text = version.ToString();
		auto branch = text.substr(0, text.size() - WORKING_SUFFIX.size());
		ValidateName("branch", branch);
		out.attached = AttachedBranchName(context, repository, database, branch, "diff its working state");
		return out;
	}
	out.snapshot = ResolveDiffVersion(*repository.metadata, database, version, what);
	return out;
}

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
	data->from = ResolveVersion(context, *repository, data->database, input.inputs[1], "from");
	data->to = ResolveVersion(context, *repository, data->database, input.inputs[2], "to");
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
		// Snapshots never change; a working state may: another connection altered the table between this
		// query's bind and its run.
		if (state->diff->Types() != data.types) {
			Fail(ErrorCode::BRANCH_CHANGED, "The table " + QuoteName(data.table) +
			                                    " changed its columns between binding and running differential_diff "
			                                    "(a working state was altered meanwhile). Run the query again.");
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
