// The standby's takeover (see follower_takeover.hpp). The recovery is differential_recover_branch(...,
// same_identity => true) without a ClientContext: the base is read with the follower's store.
#include "replication/follower_takeover.hpp"

#include "common/crash_points.hpp"
#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/main/database.hpp"
#include "export/data_path.hpp"
#include "host/session_settings.hpp"
#include "metadata/metadata_core.hpp"
#include "remote/export_reader.hpp"
#include "replication/branch_recovery.hpp"
#include "repository/evicted_chunk_reader.hpp"
#include "storage/remote_cache.hpp"

namespace differential {

using namespace duckdb;

int64_t FailoverLeaseMs(ClientContext &context) {
	Value mode;
	if (!context.TryGetCurrentSetting("differential_failover", mode) || mode.IsNull() ||
	    StringUtil::Lower(mode.ToString()) != "lease") {
		return 0;
	}
	Value seconds;
	double lease_s = 30;
	if (context.TryGetCurrentSetting("differential_lease_duration", seconds) && !seconds.IsNull()) {
		lease_s = seconds.GetValue<double>();
	}
	return int64_t(lease_s * 1000);
}

TakeoverPlan PlanTakeover(ClientContext &context, const std::string &alias, const std::string &follower_alias,
                          const RemoteLocator &head, const BranchHead &head_now) {
	ValidateName("database", alias);
	TakeoverPlan plan;
	plan.mine.duration_ms = FailoverLeaseMs(context);
	if (!plan.mine.duration_ms) {
		Fail(ErrorCode::INVALID_OPTION,
		     "TAKEOVER_AS makes this follower a standby that takes the branch over when the leader's lease lapses; "
		     "run SET differential_failover = 'lease' first (nothing was attached).");
	}
	if (StringUtil::Lower(alias) == StringUtil::Lower(follower_alias)) {
		Fail(ErrorCode::INVALID_OPTION,
		     "TAKEOVER_AS names the database the new leader is attached as, so it must differ from the follower's "
		     "own name " +
		         QuoteName(follower_alias) + " (nothing was attached).");
	}
	if (head_now.chain == 0) {
		Fail(ErrorCode::NOT_SHIPPING,
		     "Branch " + head.database + "/" + head.branch +
		         " does not ship its WAL, so it has no failover lease to take over. Attach its leader with SHIP_WAL "
		         "'sync' or 'async' (and differential_failover = 'lease'), or remove TAKEOVER_AS.");
	}
	if (head.branch != "main") {
		Fail(ErrorCode::INVALID_OPTION,
		     "TAKEOVER_AS continues the branch as the same database, which recovery supports for branch main only "
		     "(this head is of " +
		         head.branch + "). Follow heads/" + head.database + "/main, or remove TAKEOVER_AS.");
	}
	plan.repository = OpenRepository(RepositorySetting(context));
	if (plan.repository->metadata->history.FindDatabase(head.database)) {
		Fail(ErrorCode::DATABASE_EXISTS, "A standby recovers the branch as database " + QuoteName(head.database) +
		                                     ", which already exists in " + plan.repository->root +
		                                     ". Use a repository without it, or drop it first with "
		                                     "differential_drop_database('" +
		                                     head.database + "').");
	}
	plan.alias = alias;
	plan.head = head;
	plan.store_url = CanonicalDataPath(head.store_url);
	plan.mine.database = head.database;
	plan.mine.branch = head.branch;
	plan.mine.holder = NewUuid();
	return plan;
}

//! differential_recover_branch(head, <db>, same_identity => true) with the lease holder's id as writer id.
static BranchRecoveryResult Recover(ObjectStore &store, const std::shared_ptr<ObjectStore> &shared,
                                    const TakeoverPlan &plan) {
	BranchRecoveryRequest request;
	request.name = plan.head.database;
	request.same_identity = true;
	request.writer = plan.mine.holder;
	request.store_url = plan.store_url;
	request.store = shared;
	auto key = plan.head.Key();
	auto got = store.Get(key);
	if (!got.outcome.Ok()) {
		FailRemote(got.outcome, store, "reading the head " + key);
	}
	std::string why;
	if (!DecodeHead(got.data, request.head, why)) {
		Fail(ErrorCode::CORRUPT_HEAD, "The head " + key + " is damaged: " + why + ". Nothing was recovered.");
	}
	request.head_etag = got.etag;
	auto locator = plan.head;
	request.load_base = [&store, locator](const Hash256 &descriptor) mutable {
		locator.kind = RemoteLocator::Kind::DESCRIPTOR;
		locator.descriptor = descriptor;
		RemoteCache cache(MemoryContentCache::Process(), nullptr);
		return ReadExport(store, locator, cache).image;
	};
	RegisterEvictionStore(request.store_url, shared, PACKS_PREFIX);
	return RecoverBranch(*plan.repository, request);
}

static std::string SqlText(const std::string &text, const char *quote = "'") {
	return quote + StringUtil::Replace(text, quote, std::string(quote) + quote) + quote;
}

//! Attaches the recovered branch as the new leader, holding the instance (`alive`, kept by the caller until the
//! thread's very end) only if it is still open: a closing instance cannot take an attachment.
static std::string AttachLeader(const duckdb::weak_ptr<DatabaseInstance> &instance,
                                duckdb::shared_ptr<DatabaseInstance> &alive, const TakeoverPlan &plan,
                                const LeaseRecord &inherited, const BranchRecoveryResult &result) {
	PausePoint("takeover.before_attach"); // tests detach the standby, or close its instance, here
	alive = instance.lock();
	if (!alive) {
		return "cancelled: the database instance closed before " + plan.alias +
		       " was attached; the recovered branch is in the repository: ATTACH it to lead";
	}
	Connection connection(*alive);
	auto attach = "ATTACH 'differential:" + plan.head.database + "' AS " + SqlText(plan.alias, "\"") + " (REPOSITORY " +
	              SqlText(plan.repository->root) + ", SHIP_WAL " + SqlText(inherited.ship_wal) + ", SHIP_INTERVAL " +
	              std::to_string(inherited.ship_interval) + ")";
	auto attached = connection.Query(attach);
	if (attached->HasError()) {
		return "failed: " + attached->GetError();
	}
	return "took over as " + plan.alias + " (recovered chain " + std::to_string(result.chain) + " epoch " +
	       std::to_string(result.seq) + ")";
}

//! `db` is used for logging only: the follower joins this thread before the instance's catalogs, and then its
//! logger, go (instance shutdown), so it is valid throughout; `instance` says whether it still accepts work.
static void Takeover(DatabaseInstance &db, const duckdb::weak_ptr<DatabaseInstance> &instance,
                     duckdb::shared_ptr<DatabaseInstance> &alive, const std::shared_ptr<ObjectStore> &store,
                     const TakeoverPlan &plan, std::shared_ptr<Lease> lease,
                     const std::function<void(const std::string &)> &report) {
	DuckDBLogScope log(db);
	LogTimer timer;
	auto inherited = lease->Mine();
	std::string outcome;
	try {
		LeaseKeeper keeper(lease, &db);
		auto result = Recover(*store, store, plan);
		outcome = AttachLeader(instance, alive, plan, inherited, result);
	} catch (std::exception &error) {
		outcome = std::string("failed: ") + error.what();
	}
	if (outcome.rfind("took over", 0) != 0) {
		LogWarning("takeover", plan.head.database + "/" + plan.head.branch + ": " + outcome);
	} else {
		LogEvent("takeover", timer.ElapsedMs(), plan.head.database + "/" + plan.head.branch + ": " + outcome);
	}
	report(outcome);
}

void StartTakeover(BackgroundThread &thread, DatabaseInstance &db, std::shared_ptr<ObjectStore> store,
                   TakeoverPlan plan, std::shared_ptr<Lease> lease, std::function<void(const std::string &)> report) {
	duckdb::weak_ptr<DatabaseInstance> instance = db.shared_from_this();
	auto *logs = &db;
	thread.Start("diff-takeover", [logs, instance, store, plan, lease, report]() {
		// Released after everything else of the takeover: if it is the instance's last reference, the instance
		// closes on this thread, and the follower's Stop then detaches this thread instead of joining itself.
		duckdb::shared_ptr<DatabaseInstance> alive;
		Takeover(*logs, instance, alive, store, plan, lease, report);
	});
}

} // namespace differential
