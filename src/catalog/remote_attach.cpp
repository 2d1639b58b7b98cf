// The remote ATTACH: options and locator checked first (nothing is fetched for a refused ATTACH), then the
// export resolved through the object store, then DuckDB's storage pointed at the registered image.
#include "catalog/remote_attach.hpp"

#include "catalog/follower_catalog.hpp"
#include "catalog/remote_catalog.hpp"
#include "common/duckdb_errors.hpp"
#include "common/duckdb_logging.hpp"
#include "common/names.hpp"
#include "duckdb/main/client_context.hpp"
#include "host/export_opening.hpp"
#include "host/object_store_access.hpp"
#include "host/session_settings.hpp"
#include "remote/export_reader.hpp"
#include "storage/remote_cache.hpp"

#include <cmath>
#include <cstdlib>
#include <optional>

namespace differential {

using namespace duckdb;

bool IsRemoteLocatorPath(const std::string &path) {
	return path.find("://") != std::string::npos;
}

//! A remote attachment is read-only and names everything in its locator: no option applies to it.
static void CheckRemoteOptions(const std::string &path, AttachOptions &options) {
	for (auto &option : options.options) {
		Fail(ErrorCode::INVALID_OPTION,
		     "ATTACH option " + StringUtil::Upper(option.first) + " does not apply to a remote attachment of " + path +
		         ": the locator names the branch head or snapshot, and it is read-only. Remove the option.");
	}
	if (options.access_mode == AccessMode::READ_WRITE) {
		Fail(ErrorCode::READ_ONLY,
		     "A remote attachment of " + path +
		         " is read-only: it reads an export. Attach it without READ_WRITE, and write to the database where "
		         "it is exported from.");
	}
}

//! FOLLOW and FOLLOW_INTERVAL, taken out of the options. The interval is in seconds, 10 by default.
struct FollowOptions {
	bool follow = false;
	double interval_seconds = 10;
	//! TAKEOVER_AS: the follower is a standby (differential_failover = 'lease').
	std::optional<std::string> takeover_as;
};

static constexpr double MIN_FOLLOW_INTERVAL = 0.1;
static constexpr double MAX_FOLLOW_INTERVAL = 86400;

static FollowOptions TakeFollowOptions(const std::string &path, AttachOptions &options) {
	FollowOptions follow;
	bool interval_given = false;
	for (auto &option : options.options) {
		auto key = StringUtil::Lower(option.first);
		if (key == "follow") {
			try {
				follow.follow =
				    !option.second.IsNull() && option.second.DefaultCastAs(LogicalType::BOOLEAN).GetValue<bool>();
			} catch (std::exception &) {
				Fail(ErrorCode::INVALID_OPTION, "FOLLOW must be true or false, got " + option.second.ToString() + ".");
			}
		} else if (key == "follow_interval") {
			double seconds = std::nan("");
			try {
				seconds = option.second.IsNull() ? seconds
				                                 : option.second.DefaultCastAs(LogicalType::DOUBLE).GetValue<double>();
			} catch (std::exception &) {
			}
			if (!(seconds >= MIN_FOLLOW_INTERVAL && seconds <= MAX_FOLLOW_INTERVAL)) {
				Fail(ErrorCode::INVALID_OPTION,
				     "FOLLOW_INTERVAL is the number of seconds between two checks of the branch head, from 0.1 to "
				     "86400; got " +
				         option.second.ToString() + ". The default is 10.");
			}
			follow.interval_seconds = seconds;
			interval_given = true;
		} else if (key == "takeover_as") {
			if (option.second.IsNull() || option.second.type().id() != LogicalTypeId::VARCHAR) {
				Fail(ErrorCode::INVALID_OPTION,
				     "TAKEOVER_AS takes the name the new leader gets in this DuckDB, as a string; got " +
				         option.second.ToString() + ".");
			}
			follow.takeover_as = option.second.ToString();
		}
	}
	options.options.erase("follow");
	options.options.erase("follow_interval");
	options.options.erase("takeover_as");
	if (follow.takeover_as && !follow.follow) {
		Fail(ErrorCode::INVALID_OPTION, "TAKEOVER_AS makes a follower a standby: add FOLLOW true to the ATTACH of " +
		                                    path + ", or remove TAKEOVER_AS.");
	}
	if (interval_given && !follow.follow) {
		Fail(ErrorCode::INVALID_OPTION,
		     "FOLLOW_INTERVAL applies to a follower only: add FOLLOW true to the ATTACH of " + path +
		         ", or remove FOLLOW_INTERVAL.");
	}
	return follow;
}

//! A follower: the head resolved now (so a bad one is refused here), then a poller and a proxy catalog over
//! an empty in-memory database, whose lookups go to hidden attachments of the states it finds.
static unique_ptr<Catalog> AttachFollower(ClientContext &context, AttachedDatabase &db, AttachInfo &info,
                                          AttachOptions &options, const RemoteLocator &locator,
                                          const FollowOptions &follow) {
	auto path = info.path;
	if (locator.kind != RemoteLocator::Kind::HEAD) {
		Fail(ErrorCode::INVALID_OPTION,
		     "FOLLOW follows a branch head, and " + path +
		         " names a descriptor, which never changes. Attach <data path>heads/<database>/<branch> to follow, "
		         "or remove FOLLOW.");
	}
	auto store = std::make_shared<CountingObjectStore>(OpenObjectStore(context, locator.store_url));
	auto cache = RemoteCacheFor(context);
	auto resolved = ReadExport(*store, locator, *cache);
	FollowState initial;
	initial.descriptor = resolved.descriptor_hash;
	initial.snapshot_id = resolved.descriptor.snapshot_id;
	std::optional<ChainPosition> position;
	ChainState chain;
	if (resolved.head->chain != 0) {
		// The database ships its WAL: follow its epochs from the chain the head names, to the tip.
		position = ChainPosition::FromHead(*resolved.head);
		WalkToTip(*store, *position, chain);
		auto base_length = resolved.descriptor.length;
		if (chain.base != resolved.descriptor_hash) {
			RemoteLocator base = locator;
			base.kind = RemoteLocator::Kind::DESCRIPTOR;
			base.descriptor = chain.base;
			base_length = ReadExport(*store, base, *cache).descriptor.length;
		}
		initial = Follower::ChainFollowState(chain, base_length, resolved.descriptor.snapshot_id);
	}
	initial.generation = 1;
	auto alias = db.GetName().GetIdentifierName();
	std::optional<TakeoverPlan> takeover;
	if (follow.takeover_as) {
		takeover = PlanTakeover(context, *follow.takeover_as, alias, locator, *resolved.head);
	}
	auto follower = std::make_shared<Follower>(*context.db, store, locator, alias, path, follow.interval_seconds,
	                                           initial, resolved.head_etag);
	if (position) {
		follower->FollowCommits(std::move(*position), std::move(chain));
	}
	if (takeover) {
		follower->EnableTakeover(std::move(*takeover));
	}
	// DuckDB refuses a read-only in-memory database, so the proxy's own (always empty) storage is writable;
	// the attachment itself is read-only, which is what refuses writes through it.
	options.access_mode = AccessMode::READ_WRITE;
	db.SetReadOnlyDatabase();
	info.path = ":memory:";
	auto catalog = make_uniq<FollowerCatalog>(db, follower, path);
	follower->Start(follower);
	return unique_ptr<Catalog>(std::move(catalog));
}

unique_ptr<Catalog> AttachRemote(ClientContext &context, AttachedDatabase &db, AttachInfo &info,
                                 AttachOptions &options) {
	auto path = info.path;
	if (IsRemoteImagePath(path)) {
		// An image registered in this process: a follower's shipped state (an export with epochs applied).
		CheckRemoteOptions(path, options);
		bool is_database_file = false;
		auto image = FindRemoteImage(path, is_database_file);
		if (!image || !is_database_file) {
			Fail(ErrorCode::FILE_NOT_FOUND,
			     "No remote image at " + path + ": it was detached. Attach a branch head or a descriptor.");
		}
		options.access_mode = AccessMode::READ_ONLY;
		db.SetReadOnlyDatabase();
		return make_uniq<RemoteCatalog>(db, image, image->Locator());
	}
	auto follow = TakeFollowOptions(path, options);
	CheckRemoteOptions(path, options);
	auto locator = ParseLocator(path);
	if (follow.follow) {
		DuckDBLogScope log(context);
		return AttachFollower(context, db, info, options, locator, follow);
	}
	options.access_mode = AccessMode::READ_ONLY;
	db.SetReadOnlyDatabase();
	DuckDBLogScope log(context);
	std::shared_ptr<ObjectStore> store = OpenObjectStore(context, locator.store_url);
	auto cache = RemoteCacheFor(context);
	auto resolved = ReadExport(*store, locator, *cache);
	auto image = std::make_shared<RemoteImageFile>(store, PACKS_PREFIX, std::move(resolved.image), path, cache);
	info.path = RegisterRemoteImage(image);
	return make_uniq<RemoteCatalog>(db, image, path);
}

} // namespace differential
