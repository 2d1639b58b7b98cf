// differential_snapshots(database) and its catalog-scoped form <attached>.snapshots().
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "storage/diff_file_system.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> BindFor(std::string repository_root, std::string database, vector<LogicalType> &types,
                                        vector<Identifier> &names) {
	return BindRows(
	    {{"snapshot_id", LogicalType::BIGINT},
	     {"snapshot_name", LogicalType::VARCHAR},
	     {"author", LogicalType::VARCHAR},
	     {"commit_message", LogicalType::VARCHAR},
	     {"created_at", LogicalType::TIMESTAMP_TZ},
	     {"branch_name", LogicalType::VARCHAR},
	     {"parent_snapshot_ids", LogicalType::LIST(LogicalType::BIGINT)},
	     {"open_in_process", LogicalType::BOOLEAN},
	     {"commit_extra_info", LogicalType::VARCHAR}},
	    [repository_root, database](ClientContext &context) {
		    auto repository = repository_root.empty() ? CurrentRepository(context) : OpenRepository(repository_root);
		    Rows rows;
		    for (auto &s : repository->metadata->history.ListSnapshots(database)) {
			    vector<Value> parents;
			    for (auto p : s.parents) {
				    parents.push_back(Value::BIGINT(p));
			    }
			    FileAddress address;
			    address.repository = repository->root;
			    address.database = database;
			    address.snapshot_id = s.snapshot_id;
			    // Open here means pinned by this process: a time-travel or SNAPSHOT attachment reads it.
			    bool open = DiffFileSystem::OpenHandleCount(address.OwnerKey()) > 0;
			    rows.push_back({Value::BIGINT(s.snapshot_id), OptionalText(s.name), OptionalText(s.author),
			                    OptionalText(s.message), TimestampFromMicros(s.created_at_us), Value(s.branch_name),
			                    Value::LIST(LogicalType::BIGINT, parents), Value::BOOLEAN(open),
			                    OptionalText(s.extra_info)});
		    }
		    return rows;
	    },
	    types, names);
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	return BindFor("", database, types, names);
}

static unique_ptr<FunctionData> BindCatalog(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                            vector<Identifier> &names) {
	auto &info = input.info->Cast<CatalogFunctionInfo>();
	return BindFor(info.repository, info.database, types, names);
}

TableFunction SnapshotsFunction() {
	return MakeRowsFunction("differential_snapshots", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
}

TableFunction CatalogSnapshotsFunction() {
	return MakeRowsFunction("snapshots", {}, TranslatedBind<BindCatalog>);
}

} // namespace differential
