// The catalog of a FOLLOW attachment: an empty, read-only proxy that sends every lookup to a hidden read-only
// attachment of one followed state, the same state for the whole of a transaction (pinned at its first lookup).
#pragma once

#include "catalog/remote_catalog.hpp"
#include "duckdb/transaction/duck_transaction_manager.hpp"
#include "replication/follower.hpp"

#include <unordered_map>

namespace differential {

class FollowerCatalog : public RemoteCatalog {
public:
	FollowerCatalog(duckdb::AttachedDatabase &db, std::shared_ptr<Follower> follower, std::string locator);
	~FollowerCatalog() override;

	//! Stops the poller and detaches the hidden states.
	void OnDetach(duckdb::ClientContext &context) override;
	//! Forgets the state `transaction` read: called when it commits or rolls back.
	void Unpin(duckdb::Transaction &transaction);

	const std::shared_ptr<Follower> follower;

private:
	//! One hidden attachment of a state. Shared by the transactions pinned to it; unused old ones are detached.
	struct OpenState {
		FollowState state;
		std::string name;
		std::shared_ptr<RemoteImageFile> image; //! a shipped state's image
	};

	duckdb::CatalogEntryLookup TryLookupEntryInternal(duckdb::CatalogTransaction transaction,
	                                                  const duckdb::EntryLookupInfo &lookup_info) override;
	//! The catalog of the state `transaction` reads: its pinned one, or (first lookup) the newest, opened now.
	duckdb::Catalog &PinnedCatalog(duckdb::CatalogTransaction &transaction);
	std::shared_ptr<OpenState> OpenNewest(duckdb::ClientContext &context);
	duckdb::Catalog &CatalogOf(duckdb::ClientContext &context, const OpenState &state);
	//! Detaches opened states that are neither the newest nor pinned by a transaction.
	void ReleaseUnused(duckdb::ClientContext &context);

	std::mutex lock;
	//! Serializes opening states: two transactions that both find a newer state open it once.
	std::mutex open_lock;
	std::vector<std::shared_ptr<OpenState>> open; //! by generation, newest last
	std::unordered_map<duckdb::Transaction *, std::shared_ptr<OpenState>> pins;
};

//! A DuckTransactionManager that unpins a follower's transactions when they end.
class FollowerTransactionManager : public duckdb::DuckTransactionManager {
public:
	FollowerTransactionManager(duckdb::AttachedDatabase &db, FollowerCatalog &catalog);

	duckdb::ErrorData CommitTransaction(duckdb::ClientContext &context, duckdb::Transaction &transaction) override;
	void RollbackTransaction(duckdb::Transaction &transaction) override;

private:
	FollowerCatalog &catalog;
};

} // namespace differential
