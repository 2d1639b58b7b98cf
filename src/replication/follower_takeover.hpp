// A standby's takeover (ATTACH ... (FOLLOW true, TAKEOVER_AS name) with SET differential_failover = 'lease'):
// the checks at ATTACH, and, once the follower took the lapsed lease, the recovery with the same identity (whose
// create-only seal fences the old leader) and the ATTACH of the recovered database as the new leader.
#pragma once

#include "common/background_thread.hpp"
#include "duckdb/main/client_context.hpp"
#include "remote/export_format.hpp"
#include "replication/lease.hpp"
#include "repository/repository.hpp"

#include <functional>
#include <memory>
#include <string>

namespace differential {

//! The lease's duration in ms when `differential_failover` is 'lease', else 0.
int64_t FailoverLeaseMs(duckdb::ClientContext &context);

//! What a standby needs to take a branch over.
struct TakeoverPlan {
	std::string alias; //! TAKEOVER_AS: the new leader's name in this DuckDB
	std::shared_ptr<Repository> repository;
	std::string store_url; //! the data path (canonical)
	RemoteLocator head;
	LeaseRecord mine; //! holder: the new leader's writer id
};

//! Validates TAKEOVER_AS for the follower `follower_alias` of `head` (refusals: invalid_option, not_shipping,
//! database_exists, repository_not_set) and returns the plan.
TakeoverPlan PlanTakeover(duckdb::ClientContext &context, const std::string &alias, const std::string &follower_alias,
                          const RemoteLocator &head, const BranchHead &head_now);

//! Runs the takeover on `thread`, which the follower owns and joins after its poller (it attaches a database:
//! never on the poller itself). `lease` is held; it is renewed until the new leader's shipper renews it.
//! The thread holds the instance only while it attaches the new leader: an instance closing before that
//! cancels the attach. `report` gets 'took over as <alias>', 'cancelled: ...' or 'failed: ...'.
void StartTakeover(BackgroundThread &thread, duckdb::DatabaseInstance &db, std::shared_ptr<ObjectStore> store,
                   TakeoverPlan plan, std::shared_ptr<Lease> lease, std::function<void(const std::string &)> report);

} // namespace differential
