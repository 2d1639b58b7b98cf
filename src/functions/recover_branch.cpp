// differential_recover_branch(head_url, name, same_identity => bool): failover from a branch's shipped WAL
// (replication/branch_recovery.hpp); returns the new database and the last epoch it applied.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "export/data_path.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "host/export_opening.hpp"
#include "replication/branch_recovery.hpp"
#include "repository/evicted_chunk_reader.hpp"

namespace differential {

using namespace duckdb;

static Rows Recover(ClientContext &context, const std::string &url, const std::string &name, bool same_identity) {
	auto repository = CurrentRepository(context);
	if (repository->metadata->history.FindDatabase(name)) {
		Fail(ErrorCode::DATABASE_EXISTS,
		     "Database " + QuoteName(name) +
		         " already exists. Recover into a new name, or drop it first with differential_drop_database('" + name +
		         "').");
	}
	auto opened = OpenExport(context, url);
	if (opened.locator.kind != RemoteLocator::Kind::HEAD) {
		Fail(ErrorCode::INVALID_LOCATOR,
		     "differential_recover_branch needs a branch head (<data path>heads/<database>/<branch>), not a "
		     "descriptor: " +
		         url + ". Use differential_recover_export for a descriptor.");
	}
	BranchRecoveryRequest request;
	request.name = name;
	request.same_identity = same_identity;
	request.store = opened.store;
	request.store_url = CanonicalDataPath(opened.locator.store_url);
	// The head again, with its etag: the new leader moves it from this version.
	auto key = opened.locator.Key();
	auto got = opened.store->Get(key);
	if (!got.outcome.Ok()) {
		FailRemote(got.outcome, *opened.store, "reading the head " + key);
	}
	std::string why;
	if (!DecodeHead(got.data, request.head, why)) {
		Fail(ErrorCode::CORRUPT_HEAD, "The head " + key + " is damaged: " + why + ". Nothing was recovered.");
	}
	request.head_etag = got.etag;
	auto store_url = opened.locator.store_url;
	request.load_base = [&context, store_url](const Hash256 &descriptor) {
		return OpenExport(context, store_url + "descriptors/" + HashToHex(descriptor)).resolved.image;
	};
	RegisterEvictionStore(request.store_url, opened.store, PACKS_PREFIX);
	auto result = RecoverBranch(*repository, request);
	return Rows {{Value(result.database), Value::BIGINT(int64_t(result.seq)), Value::BIGINT(int64_t(result.chain)),
	              Value::BIGINT(int64_t(result.wal_bytes)), Value::BOOLEAN(result.fenced)}};
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto url = StringArgument(input, 0, "head URL");
	auto name = StringArgument(input, 1, "new database name");
	ValidateName("database", name);
	bool same_identity = false;
	for (auto &entry : input.named_parameters) {
		// An omitted keyword arrives as NULL: the default, an independent copy.
		if (StringUtil::Lower(entry.first.GetIdentifierName()) == "same_identity" && !entry.second.IsNull()) {
			same_identity = entry.second.GetValue<bool>();
		}
	}
	return BindRows(
	    {{"database_name", LogicalType::VARCHAR},
	     {"shipped_epoch", LogicalType::BIGINT},
	     {"chain", LogicalType::BIGINT},
	     {"wal_bytes", LogicalType::BIGINT},
	     {"fenced", LogicalType::BOOLEAN}},
	    [url, name, same_identity](ClientContext &context) { return Recover(context, url, name, same_identity); },
	    types, names);
}

TableFunction RecoverBranchFunction() {
	auto function = MakeRowsFunction("differential_recover_branch", {LogicalType::VARCHAR, LogicalType::VARCHAR},
	                                 TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("same_identity", LogicalType::BOOLEAN, Value(LogicalType::BOOLEAN));
	return function;
}

} // namespace differential
