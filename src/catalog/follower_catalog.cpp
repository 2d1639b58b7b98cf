// A follower reads one state per transaction: the first lookup of a transaction pins the newest state (opening
// it as a hidden read-only remote attachment when the poller found a new one), later lookups of that
// transaction use the same one, and a state no transaction reads any more is detached once a newer one is open.
#include "catalog/follower_catalog.hpp"

#include "catalog/differential_catalog.hpp"
#include "common/duckdb_errors.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/main/database_manager.hpp"

#include <atomic>

namespace differential {

using namespace duckdb;

static constexpr const char *HIDDEN_PREFIX = "__differential_follow@";

static uint64_t NextFollowerNumber() {
	static std::atomic<uint64_t> next {1};
	return next++;
}

FollowerCatalog::FollowerCatalog(AttachedDatabase &db, std::shared_ptr<Follower> follower_p, std::string locator)
    : RemoteCatalog(db, nullptr, std::move(locator)), follower(std::move(follower_p)) {
}

FollowerCatalog::~FollowerCatalog() {
	// Instance shutdown does not detach: the poller must still be gone before the instance is.
	follower->Stop();
}

void FollowerCatalog::OnDetach(ClientContext &context) {
	RemoteCatalog::OnDetach(context);
	follower->Stop();
	std::vector<std::string> names;
	{
		std::lock_guard<std::mutex> guard(lock);
		for (auto &state : open) {
			names.push_back(state->name);
		}
	}
	// A running transaction that read a state keeps it alive (DuckDB closes a detached database at its last
	// reference); it only leaves the list of attachments here.
	auto &manager = DatabaseManager::Get(context);
	for (auto &name : names) {
		manager.DetachDatabase(context, Identifier(name), OnEntryNotFound::RETURN_NULL);
	}
}

void FollowerCatalog::Unpin(Transaction &transaction) {
	std::lock_guard<std::mutex> guard(lock);
	pins.erase(&transaction);
}

Catalog &FollowerCatalog::CatalogOf(ClientContext &context, const OpenState &state) {
	auto attached = DatabaseManager::Get(context).GetDatabase(Identifier(state.name));
	if (!attached) {
		Fail(ErrorCode::INTERNAL,
		     "The state of follower " + GetAttached().GetName().GetIdentifierName() + " (" + state.name +
		         ") was detached while a transaction read it. Retry the query in a new transaction.");
	}
	return attached->GetCatalog();
}

std::shared_ptr<FollowerCatalog::OpenState> FollowerCatalog::OpenNewest(ClientContext &context) {
	std::lock_guard<std::mutex> opening(open_lock);
	auto newest = follower->Newest();
	{
		std::lock_guard<std::mutex> guard(lock);
		if (!open.empty() && open.back()->state.generation >= newest.generation) {
			return open.back();
		}
	}
	auto state = std::make_shared<OpenState>();
	state->state = newest;
	state->name = HIDDEN_PREFIX + std::to_string(NextFollowerNumber()) + "@" +
	              GetAttached().GetName().GetIdentifierName() + "@" + std::to_string(newest.generation);
	// A private connection, so that the attachment outlives the statement that needed it (as time travel's
	// hidden snapshots do). The descriptor and index pages come from the cache the poller filled.
	auto target = "differential:" + follower->DescriptorLocator(newest.descriptor);
	if (newest.overlay) {
		// A shipped state: the base export with the epochs' chunks over it and their WAL, which DuckDB's
		// read-only open replays in memory. Registered here, held by the state until its catalog holds it.
		state->image = follower->OpenShippedImage(newest);
		target = "differential:" + RegisterRemoteImage(state->image);
	}
	Connection connection(*context.db);
	auto sql = "ATTACH " + SqlLiteral(target) + " AS " + SqlIdentifier(state->name) + " (READ_ONLY, HIDDEN)";
	auto result = connection.Query(sql);
	if (result->HasError()) {
		result->ThrowError();
	}
	std::lock_guard<std::mutex> guard(lock);
	open.push_back(state);
	return state;
}

void FollowerCatalog::ReleaseUnused(ClientContext &context) {
	std::vector<std::string> names;
	{
		std::lock_guard<std::mutex> guard(lock);
		for (size_t i = 0; i + 1 < open.size();) {
			// Held only by `open`: no transaction is pinned to it.
			if (open[i].use_count() == 1) {
				names.push_back(open[i]->name);
				open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
			} else {
				i++;
			}
		}
	}
	auto &manager = DatabaseManager::Get(context);
	for (auto &name : names) {
		manager.DetachDatabase(context, Identifier(name), OnEntryNotFound::RETURN_NULL);
	}
}

Catalog &FollowerCatalog::PinnedCatalog(CatalogTransaction &transaction) {
	auto &context = transaction.GetContext();
	auto key = transaction.transaction.get();
	{
		std::lock_guard<std::mutex> guard(lock);
		auto pinned = key ? pins.find(key) : pins.end();
		if (pinned != pins.end()) {
			auto state = pinned->second;
			return CatalogOf(context, *state);
		}
	}
	auto state = OpenNewest(context);
	if (key) {
		std::lock_guard<std::mutex> guard(lock);
		pins[key] = state;
	}
	ReleaseUnused(context);
	return CatalogOf(context, *state);
}

CatalogEntryLookup FollowerCatalog::TryLookupEntryInternal(CatalogTransaction transaction,
                                                           const EntryLookupInfo &lookup_info) {
	auto alias = GetAttached().GetName().GetIdentifierName();
	auto name = lookup_info.GetEntryName();
	if (lookup_info.GetAtClause() ||
	    (lookup_info.GetCatalogType() == CatalogType::TABLE_FUNCTION_ENTRY && IsCatalogFunction(name))) {
		return Translated([&]() -> CatalogEntryLookup {
			Fail(ErrorCode::NOT_SUPPORTED,
			     std::string(lookup_info.GetAtClause() ? "Time travel (AT)" : alias + "." + name + "()") +
			         " is not available on " + alias + ", a follower of " + locator +
			         ": it reads the newest exported state and keeps no history. Attach a descriptor "
			         "(<data path>descriptors/<sha256>) to read an older snapshot.");
		});
	}
	if (!transaction.HasContext()) {
		return {nullptr, nullptr, ErrorData()};
	}
	return Translated([&]() -> CatalogEntryLookup {
		auto &state = PinnedCatalog(transaction);
		// The lookup DuckDB makes without an AT clause, in the state's catalog and its own transaction.
		CatalogTransaction state_transaction(state, transaction.GetContext());
		auto &path = lookup_info.GetQualifiedName().Path();
		vector<Identifier> schema_path(path.begin(), path.end() - 1);
		auto schema =
		    state.LookupSchema(state_transaction, EntryLookupInfo::SchemaLookup(lookup_info, std::move(schema_path)),
		                       OnEntryNotFound::RETURN_NULL);
		if (!schema) {
			return {nullptr, nullptr, ErrorData()};
		}
		return {schema, schema->LookupEntry(state_transaction, lookup_info), ErrorData()};
	});
}

FollowerTransactionManager::FollowerTransactionManager(AttachedDatabase &db, FollowerCatalog &catalog)
    : DuckTransactionManager(db), catalog(catalog) {
}

ErrorData FollowerTransactionManager::CommitTransaction(ClientContext &context, Transaction &transaction) {
	catalog.Unpin(transaction);
	return DuckTransactionManager::CommitTransaction(context, transaction);
}

void FollowerTransactionManager::RollbackTransaction(Transaction &transaction) {
	catalog.Unpin(transaction);
	DuckTransactionManager::RollbackTransaction(transaction);
}

} // namespace differential
