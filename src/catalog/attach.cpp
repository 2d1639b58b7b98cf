// ATTACH hook: validates every option before anything is created, so a refused ATTACH leaves
// the repository as it was.
#include "catalog/attach.hpp"

#include "catalog/differential_catalog.hpp"
#include "catalog/follower_catalog.hpp"
#include "catalog/follower_takeover.hpp"
#include "catalog/imported_chunk_fetch.hpp"
#include "catalog/object_store_access.hpp"
#include "catalog/remote_attach.hpp"
#include "catalog/shared_writers.hpp"
#include "common/duckdb_errors.hpp"
#include "common/duckdb_logging.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/parser/parsed_data/attach_info.hpp"
#include "duckdb/transaction/duck_transaction_manager.hpp"
#include "export/data_path.hpp"
#include "remote/export_format.hpp"
#include "replication/wal_shipper.hpp"
#include "repository/evicted_chunk_reader.hpp"
#include "storage/diff_path.hpp"

#include <optional>
#include <set>

namespace differential {

using namespace duckdb;

std::string RepositorySetting(ClientContext &context) {
	Value value;
	if (!context.TryGetCurrentSetting("differential_repository", value) || value.IsNull() || value.ToString().empty()) {
		Fail(ErrorKind::INVALID_INPUT, "repository_not_set",
		     "No repository is set. Run SET differential_repository = '/absolute/path' first (the directory is "
		     "created if needed).");
	}
	return value.ToString();
}

// DuckDB's own storage options, passed through unchanged.
static const std::set<std::string> NATIVE_OPTIONS = {"block_size", "row_group_size", "storage_version", "compress"};

static std::string StringOption(const std::string &name, const Value &value) {
	if (value.IsNull() || value.type().id() != LogicalTypeId::VARCHAR) {
		Fail(ErrorKind::INVALID_INPUT, "invalid_option",
		     "ATTACH option " + StringUtil::Upper(name) + " takes a string, got " + value.ToString() +
		         ". Write it as " + StringUtil::Upper(name) + " '<value>'.");
	}
	return value.ToString();
}

//! What an ATTACH asks for, read from its path and options before anything is opened.
struct AttachRequest {
	std::string database;
	std::string branch = "main";
	bool branch_given = false;
	std::string repository_path;
	std::optional<int64_t> snapshot_id;
	//! The canonical DATA_PATH URL, when given.
	std::optional<std::string> data_path;
	//! SHIP_WAL ('sync', 'async', 'off') and SHIP_INTERVAL (seconds), when given.
	std::optional<std::string> ship_wal;
	std::optional<int64_t> ship_interval;
	//! WRITERS and ON_CONFLICT.
	SharedWriterRequest shared;
};

static std::string ShipWalOption(const Value &value) {
	auto mode = StringUtil::Lower(StringOption("ship_wal", value));
	if (mode != "sync" && mode != "async" && mode != "off") {
		Fail(ErrorKind::INVALID_INPUT, "invalid_option",
		     "ATTACH option SHIP_WAL takes 'sync', 'async' or 'off', got " + value.ToString() +
		         " (nothing was changed).");
	}
	return mode;
}

static int64_t ShipIntervalOption(const Value &value) {
	int64_t seconds = -1;
	try {
		if (value.type().IsIntegral()) {
			seconds = value.GetValue<int64_t>();
		}
	} catch (std::exception &) {
	}
	if (seconds < 1 || seconds > 86400) {
		Fail(ErrorKind::INVALID_INPUT, "invalid_option",
		     "ATTACH option SHIP_INTERVAL takes a whole number of seconds from 1 to 86400, got " + value.ToString() +
		         " (nothing was changed).");
	}
	return seconds;
}

static int64_t SnapshotOption(const Value &value) {
	int64_t snapshot_id = -1;
	try {
		snapshot_id = value.DefaultCastAs(LogicalType::BIGINT).GetValue<int64_t>();
	} catch (std::exception &) {
		// Not a number: refused below with the same message as a number below 1.
	}
	if (snapshot_id < 1) {
		Fail(ErrorKind::INVALID_INPUT, "invalid_option",
		     "ATTACH option SNAPSHOT takes a snapshot id (a positive integer), got " + value.ToString() + ".");
	}
	return snapshot_id;
}

//! Reads (and erases) the options differential consumes; refuses unknown and unsupported ones.
static AttachRequest ReadAttachOptions(const std::string &path, AttachOptions &options) {
	AttachRequest request;
	request.database = path;
	ValidateName("database", request.database);
	for (auto &option : options.options) {
		auto key = StringUtil::Lower(option.first);
		if (key == "branch") {
			request.branch = StringOption("branch", option.second);
			request.branch_given = true;
			ValidateName("branch", request.branch);
		} else if (key == "repository") {
			request.repository_path = StringOption("repository", option.second);
		} else if (key == "snapshot") {
			request.snapshot_id = SnapshotOption(option.second);
		} else if (key == "data_path") {
			request.data_path = CanonicalDataPath(StringOption("data_path", option.second));
		} else if (key == "follow" || key == "follow_interval") {
			Fail(ErrorKind::INVALID_INPUT, "invalid_option",
			     "ATTACH option " + StringUtil::Upper(key) + " follows an exported branch head, and '" + path +
			         "' is a local database. Attach 'differential:s3://<bucket>/<prefix>/heads/<database>/<branch>' "
			         "with FOLLOW true instead, or remove the option.");
		} else if (key == "ship_wal") {
			request.ship_wal = ShipWalOption(option.second);
		} else if (key == "ship_interval") {
			request.ship_interval = ShipIntervalOption(option.second);
		} else if (key == "writers" || key == "on_conflict") {
			ReadSharedWriterOption(key, StringOption(key, option.second), request.shared);
		} else if (!NATIVE_OPTIONS.count(key)) {
			Fail(ErrorKind::INVALID_INPUT, "unknown_option",
			     "ATTACH option " + StringUtil::Upper(key) +
			         " is not supported for differential databases. Supported: BRANCH, SNAPSHOT, REPOSITORY, "
			         "DATA_PATH, SHIP_WAL, SHIP_INTERVAL, WRITERS, ON_CONFLICT, READ_ONLY, BLOCK_SIZE, ROW_GROUP_SIZE, "
			         "STORAGE_VERSION, COMPRESS.");
		}
	}
	for (auto key :
	     {"branch", "repository", "snapshot", "data_path", "ship_wal", "ship_interval", "writers", "on_conflict"}) {
		options.options.erase(key);
	}
	if (request.snapshot_id && request.branch_given) {
		Fail(ErrorKind::INVALID_INPUT, "invalid_option",
		     "ATTACH takes either BRANCH or SNAPSHOT, not both: a snapshot belongs to the database, not to a branch.");
	}
	return request;
}

//! The diff:// path of what the request names, creating the database when a writable ATTACH of its
//! main branch is the first to name it.
static std::string ResolveAttachPath(Repository &repository, const AttachRequest &request, bool read_only) {
	auto &history = repository.metadata->history;
	auto &database = request.database;
	if (!history.FindDatabase(database)) {
		if (read_only || request.branch != "main") {
			Fail(ErrorKind::NOT_FOUND, "database_not_found",
			     "Database " + QuoteName(database) + " does not exist in the repository " + repository.root +
			         ". Create it with ATTACH 'differential:" + database +
			         "' (read-write, main branch), or list databases with differential_databases().");
		}
		history.EnsureDatabase(database);
	}
	if (request.snapshot_id) {
		if (!history.FindSnapshot(database, *request.snapshot_id)) {
			Fail(ErrorKind::NOT_FOUND, "snapshot_not_found",
			     "Database " + QuoteName(database) + " has no snapshot " + std::to_string(*request.snapshot_id) +
			         ". List its snapshots with differential_snapshots('" + database + "').");
		}
		return SnapshotPath(repository.root, database, *request.snapshot_id);
	}
	if (!history.FindBranch(database, request.branch)) {
		Fail(ErrorKind::NOT_FOUND, "branch_not_found",
		     "Database " + QuoteName(database) + " has no branch " + QuoteName(request.branch) +
		         ". Create it with differential_create_branch('" + database + "', '" + request.branch +
		         "'), or list branches with differential_branches('" + database + "').");
	}
	return BranchPath(repository.root, database, request.branch);
}

//! Checks the DATA_PATH against the database's and returns the one to record once the attachment
//! opened: a read-write ATTACH gives it to a database that has none (a new one, or a local one, which
//! exports from its next snapshot on); any ATTACH must repeat the one it has (or omit it).
static std::optional<std::string> CheckDataPath(Repository &repository, const AttachRequest &request, bool read_only) {
	auto current = repository.metadata->remote.DataPath(request.database);
	if (current && current->store_url == *request.data_path) {
		return std::nullopt;
	}
	if (current) {
		Fail(ErrorKind::INVALID_INPUT, "data_path_mismatch",
		     "Database " + QuoteName(request.database) + " exports to " + current->store_url + ", not " +
		         *request.data_path +
		         " (nothing was changed). A database has one DATA_PATH: attach it without "
		         "DATA_PATH or with " +
		         current->store_url + ", or clone it under a new name to publish a copy elsewhere.");
	}
	if (read_only) {
		Fail(ErrorKind::INVALID_INPUT, "read_only",
		     "Database " + QuoteName(request.database) +
		         " has no DATA_PATH, and a read-only ATTACH cannot give it one. Attach it read-write with DATA_PATH, "
		         "or without DATA_PATH to read it.");
	}
	return request.data_path;
}

//! Reads of chunks evicted after an export need the database's store with this session's credentials;
//! ATTACH is where a ClientContext meets the database. A store that cannot be opened now is not an
//! error here: only a read of an evicted chunk needs it, and that read says what is missing.
static void RegisterStoreForEvictedReads(ClientContext &context, Repository &repository, const std::string &database) {
	auto data_path = repository.metadata->remote.DataPath(database);
	if (!data_path) {
		return;
	}
	try {
		RegisterEvictionStore(data_path->store_url, OpenObjectStore(context, data_path->store_url), PACKS_PREFIX);
	} catch (DifferentialError &error) {
		DuckDBLogScope log(context);
		LogWarning("eviction_store_unavailable", database + ": " + error.what());
	}
}

//! Refuses SHIP_WAL / SHIP_INTERVAL that cannot apply, before the ATTACH writes anything.
static void CheckShipping(Repository &repository, const AttachRequest &request, bool read_only) {
	if (!request.ship_wal && !request.ship_interval) {
		return;
	}
	if (read_only || request.snapshot_id) {
		Fail(ErrorKind::INVALID_INPUT, "read_only",
		     "SHIP_WAL and SHIP_INTERVAL apply to a writable attachment of a branch; this one is read-only. Remove "
		     "them, or attach the branch read-write to change its shipping (nothing was changed).");
	}
	bool exists = repository.metadata->history.FindDatabase(request.database).has_value();
	auto stored = exists ? repository.metadata->shipping.Settings(request.database) : std::nullopt;
	auto mode = request.ship_wal ? *request.ship_wal : (stored ? stored->mode : std::string("off"));
	if (mode == "off") {
		if (request.ship_interval && !request.ship_wal) {
			Fail(ErrorKind::INVALID_INPUT, "invalid_option",
			     "SHIP_INTERVAL applies only to a database that ships its WAL; " + QuoteName(request.database) +
			         " does not. Add SHIP_WAL 'async' (nothing was changed).");
		}
		return;
	}
	if (!request.data_path && !(exists && repository.metadata->remote.DataPath(request.database))) {
		Fail(ErrorKind::INVALID_INPUT, "data_path_required",
		     "SHIP_WAL '" + mode + "' ships the WAL to the database's DATA_PATH, and " + QuoteName(request.database) +
		         " has none. Add DATA_PATH 's3://bucket/prefix/' to this ATTACH (nothing was changed).");
	}
}

//! Stores what the ATTACH asked for and returns the shipper of this writable attachment, if the
//! database ships (its stored SHIP_WAL is not 'off').
static std::shared_ptr<WalShipper> StartShipping(ClientContext &context, AttachedDatabase &db,
                                                 std::shared_ptr<Repository> repository, const AttachRequest &request) {
	auto &shipping = repository->metadata->shipping;
	auto stored = shipping.Settings(request.database);
	if (request.ship_wal || request.ship_interval) {
		auto mode = request.ship_wal ? *request.ship_wal : stored->mode;
		auto interval = request.ship_interval ? *request.ship_interval : (stored ? stored->interval_s : 1);
		stored = shipping.SetSettings(request.database, mode, interval);
	}
	if (!stored || stored->mode == "off") {
		return nullptr;
	}
	auto data_path = repository->metadata->remote.DataPath(request.database);
	ShipTarget target;
	target.repository = repository;
	target.database = request.database;
	target.branch = request.branch;
	target.store_url = data_path ? data_path->store_url : *request.data_path;
	target.store = OpenObjectStore(context, target.store_url);
	target.settings = *stored;
	target.lease_ms = FailoverLeaseMs(context);
	target.instance = &db.GetDatabase();
	auto shipper = std::make_shared<WalShipper>(std::move(target));
	FileAddress owner = ParseDiffPath(BranchPath(repository->root, request.database, request.branch));
	RegisterShipper(owner.OwnerKey(), shipper);
	return shipper;
}

static unique_ptr<Catalog> AttachDifferential(optional_ptr<StorageExtensionInfo>, ClientContext &context,
                                              AttachedDatabase &db, const string &name, AttachInfo &info,
                                              AttachOptions &options) {
	return Translated([&]() -> unique_ptr<Catalog> {
		if (IsRemoteLocatorPath(info.path)) {
			return AttachRemote(context, db, info, options);
		}
		auto request = ReadAttachOptions(info.path, options);
		bool read_only = options.access_mode == AccessMode::READ_ONLY;
		if (request.snapshot_id) {
			// A snapshot is immutable: attach it read-only whatever was asked.
			options.access_mode = AccessMode::READ_ONLY;
			db.SetReadOnlyDatabase();
			read_only = true;
		}
		// DuckDB reports the blocks a checkpoint freed only with trim_free_blocks on; without it their
		// stale bytes would stay in the branch's chunk map, and cleanup could never reclaim them.
		DBConfig::GetConfig(context).options.trim_free_blocks = true;
		auto repository =
		    OpenRepository(request.repository_path.empty() ? RepositorySetting(context)
		                                                   : NormalizeRepositoryPath(request.repository_path));
		CheckShipping(*repository, request, read_only);
		CheckSharedWriterRequest(*repository, request.database, request.shared, request.data_path.has_value(),
		                         read_only);
		info.path = ResolveAttachPath(*repository, request, read_only);
		std::optional<std::string> adopt;
		if (request.data_path) {
			adopt = CheckDataPath(*repository, request, read_only);
		}
		bool shared_writer =
		    !request.snapshot_id && ApplySharedWriters(context, *repository, request.database, request.branch,
		                                               request.shared, request.data_path, read_only);
		RegisterStoreForEvictedReads(context, *repository, request.database);
		auto catalog = make_uniq<DifferentialCatalog>(db, repository, request.database,
		                                              request.snapshot_id ? std::string() : request.branch,
		                                              request.snapshot_id.value_or(-1));
		catalog->adopt_data_path = adopt;
		if (!read_only) {
			catalog->wal_shipper = StartShipping(context, db, repository, request);
		}
		if (shared_writer) {
			catalog->chunk_fetch = StartImportedChunkFetch(context, repository, request.database);
		}
		return unique_ptr<Catalog>(std::move(catalog));
	});
}

static unique_ptr<TransactionManager> CreateTransactionManager(optional_ptr<StorageExtensionInfo>, AttachedDatabase &db,
                                                               Catalog &catalog) {
	if (auto follower = dynamic_cast<FollowerCatalog *>(&catalog)) {
		return make_uniq<FollowerTransactionManager>(db, *follower);
	}
	return make_uniq<DuckTransactionManager>(db);
}

shared_ptr<StorageExtension> CreateDifferentialStorageExtension() {
	auto extension = make_shared_ptr<StorageExtension>();
	extension->attach = AttachDifferential;
	extension->create_transaction_manager = CreateTransactionManager;
	return extension;
}

} // namespace differential
