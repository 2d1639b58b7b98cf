// differential_snapshots(database, page_size =>, before_snapshot_id =>) and its catalog-scoped form
// <attached>.snapshots().
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "storage/diff_file_system.hpp"

namespace differential {

using namespace duckdb;

//! A page of the listing: ids below `before`, the newest `page_size` of them; unbounded when absent.
struct SnapshotPage {
	std::optional<int64_t> before;
	std::optional<int64_t> page_size;
};

static unique_ptr<FunctionData> BindFor(std::string repository_root, std::string database, SnapshotPage page,
                                        vector<LogicalType> &types, vector<Identifier> &names) {
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
	    [repository_root, database, page](ClientContext &context) {
		    auto repository = repository_root.empty() ? CurrentRepository(context) : OpenRepository(repository_root);
		    Rows rows;
		    for (auto &s : repository->metadata->history.ListSnapshots(database, page.before, page.page_size)) {
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
	SnapshotPage page {NamedInteger(input, "before_snapshot_id"), NamedInteger(input, "page_size")};
	if (page.page_size && *page.page_size < 1) {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     "page_size must be at least 1 (got " + std::to_string(*page.page_size) +
		         "). Pass the number of snapshots per page, or leave it out to list them all.");
	}
	return BindFor("", database, page, types, names);
}

static unique_ptr<FunctionData> BindCatalog(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                            vector<Identifier> &names) {
	auto &info = input.info->Cast<CatalogFunctionInfo>();
	return BindFor(info.repository, info.database, SnapshotPage(), types, names);
}

TableFunction SnapshotsFunction() {
	auto function = MakeRowsFunction("differential_snapshots", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
	for (auto name : {"page_size", "before_snapshot_id"}) {
		function.GetSignature().AddKeywordOnly(name, LogicalType::BIGINT, Value(LogicalType::BIGINT));
	}
	return function;
}

TableFunction CatalogSnapshotsFunction() {
	return MakeRowsFunction("snapshots", {}, TranslatedBind<BindCatalog>);
}

} // namespace differential
