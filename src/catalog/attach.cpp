// ATTACH hook: validates every option before anything is created, so a refused ATTACH leaves
// the repository as it was.
#include "catalog/attach.hpp"
#include "host/session_settings.hpp"

#include "catalog/differential_catalog.hpp"
#include "catalog/follower_catalog.hpp"
#include "catalog/remote_attach.hpp"
#include "common/duckdb_errors.hpp"
#include "common/duckdb_logging.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/database_manager.hpp"
#include "duckdb/parser/parsed_data/attach_info.hpp"
#include "duckdb/storage/storage_info.hpp"
#include "duckdb/storage/storage_options.hpp"
#include "duckdb/transaction/duck_transaction_manager.hpp"
#include "export/data_path.hpp"
#include "host/access_rules.hpp"
#include "host/data_path_probe.hpp"
#include "host/object_store_access.hpp"
#include "remote/export_format.hpp"
#include "replication/follower_takeover.hpp"
#include "replication/imported_chunk_fetch.hpp"
#include "replication/shared_writers.hpp"
#include "replication/wal_shipper.hpp"
#include "repository/evicted_chunk_reader.hpp"
#include "storage/branch_lock.hpp"
#include "storage/diff_path.hpp"

#include <optional>
#include <set>

namespace differential {

using namespace duckdb;

// DuckDB's own storage options, passed through unchanged.
static const std::set<std::string> NATIVE_OPTIONS = {"block_size", "row_group_size", "storage_version", "compress"};

static std::string StringOption(const std::string &name, const Value &value) {
	if (value.IsNull() || value.type().id() != LogicalTypeId::VARCHAR) {
		Fail(ErrorCode::INVALID_OPTION, "ATTACH option " + StringUtil::Upper(name) + " takes a string, got " +
		                                    value.ToString() + ". Write it as " + StringUtil::Upper(name) +
		                                    " '<value>'.");
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
		Fail(ErrorCode::INVALID_OPTION, "ATTACH option SHIP_WAL takes 'sync', 'async' or 'off', got " +
		                                    value.ToString() + " (nothing was changed).");
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
		Fail(ErrorCode::INVALID_OPTION,
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
		Fail(ErrorCode::INVALID_OPTION,
		     "ATTACH option SNAPSHOT takes a snapshot id (a positive integer), got " + value.ToString() + ".");
	}
	return snapshot_id;
}

//! Runs DuckDB's own checks of its native storage options now, so that a value DuckDB would refuse when it
//! opens the file is refused before the ATTACH writes anything (DuckDB's error, unchanged).
static void CheckNativeOptions(const AttachOptions &options) {
	unordered_map<string, Value> native;
	for (auto &option : options.options) {
		native[StringUtil::Lower(option.first)] = option.second;
	}
	StorageOptions storage;
	storage.Initialize(native);
	if (storage.block_alloc_size.IsValid()) {
		Storage::VerifyBlockAllocSize(storage.block_alloc_size.GetIndex());
	}
	if (storage.row_group_size.IsValid()) {
		auto size = storage.row_group_size.GetIndex();
		if (size == 0 || size % STANDARD_VECTOR_SIZE != 0) {
			Fail(ErrorCode::INVALID_OPTION, "ATTACH option ROW_GROUP_SIZE must be a positive multiple of " +
			                                    std::to_string(STANDARD_VECTOR_SIZE) + ", got " + std::to_string(size) +
			                                    " (nothing was changed).");
		}
	}
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
			Fail(ErrorCode::INVALID_OPTION,
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
			Fail(ErrorCode::UNKNOWN_OPTION,
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
		Fail(ErrorCode::INVALID_OPTION,
		     "ATTACH takes either BRANCH or SNAPSHOT, not both: a snapshot belongs to the database, not to a branch.");
	}
	CheckNativeOptions(options);
	return request;
}

static void RefuseMissingDatabase(const std::string &root, const std::string &database) {
	Fail(ErrorCode::DATABASE_NOT_FOUND,
	     "Database " + QuoteName(database) + " does not exist in the repository " + root +
	         ". Create it with ATTACH 'differential:" + database +
	         "' (read-write, main branch), or list databases with differential_databases().");
}

//! The diff:// path of what the request names; `create` is set when a writable ATTACH of the main branch
//! is the first to name the database (it is created once every check passed).
static std::string ResolveAttachPath(Repository &repository, const AttachRequest &request, bool read_only,
                                     bool &create) {
	auto &history = repository.metadata->history;
	auto &database = request.database;
	create = !history.FindDatabase(database);
	if (create) {
		if (read_only || request.branch != "main") {
			RefuseMissingDatabase(repository.root, database);
		}
		return BranchPath(repository.root, database, request.branch);
	}
	if (request.snapshot_id) {
		if (!history.FindSnapshot(database, *request.snapshot_id)) {
			Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
			     "Database " + QuoteName(database) + " has no snapshot " + std::to_string(*request.snapshot_id) +
			         ". List its snapshots with differential_snapshots('" + database + "').");
		}
		return SnapshotPath(repository.root, database, *request.snapshot_id);
	}
	if (!history.FindBranch(database, request.branch)) {
		Fail(ErrorCode::BRANCH_NOT_FOUND,
		     "Database " + QuoteName(database) + " has no branch " + QuoteName(request.branch) +
		         ". Create it with differential_create_branch('" + database + "', '" + request.branch +
		         "'), or list branches with differential_branches('" + database + "').");
	}
	return BranchPath(repository.root, database, request.branch);
}

//! Checks the DATA_PATH against the database's and returns the one to record once the attachment
//! opened: a read-write ATTACH gives it to a database that has none (a new one, or a local one, which
//! exports from its next snapshot on); any ATTACH must repeat the one it has (or omit it).
static std::optional<std::string> CheckDataPath(Repository &repository, const AttachRequest &request, bool read_only,
                                                bool exists) {
	auto current = exists ? repository.metadata->remote.DataPath(request.database) : std::nullopt;
	if (current && current->store_url == *request.data_path) {
		return std::nullopt;
	}
	if (current) {
		Fail(ErrorCode::DATA_PATH_MISMATCH,
		     "Database " + QuoteName(request.database) + " exports to " + current->store_url + ", not " +
		         *request.data_path +
		         " (nothing was changed). A database has one DATA_PATH: attach it without "
		         "DATA_PATH or with " +
		         current->store_url + ", or clone it under a new name to publish a copy elsewhere.");
	}
	if (read_only) {
		Fail(ErrorCode::READ_ONLY,
		     "Database " + QuoteName(request.database) +
		         " has no DATA_PATH, and a read-only ATTACH cannot give it one. Attach it read-write with DATA_PATH, "
		         "or without DATA_PATH to read it.");
	}
	return request.data_path;
}

//! Reads of chunks evicted after an export need the database's store with this session's credentials;
//! ATTACH is where a ClientContext meets the database. The credentials are resolved here and the store
//! opens at the first evicted read: setting up an S3 client (the CRT, a TLS context parsing the system's CA
//! certificates) cost every attachment of an exported database about 70 ms. A store that cannot be reached
//! is not an error here: only a read of an evicted chunk needs it, and that read says what is missing.
static void RegisterStoreForEvictedReads(ClientContext &context, Repository &repository, const std::string &database) {
	auto data_path = repository.metadata->remote.DataPath(database);
	if (!data_path) {
		return;
	}
	try {
		RegisterEvictionStore(data_path->store_url, ObjectStoreOpener(context, data_path->store_url), PACKS_PREFIX);
	} catch (DifferentialError &error) {
		DuckDBLogScope log(context);
		LogWarning("eviction_store_unavailable", database + ": " + error.what());
	}
}

//! The shipping settings this writable attachment runs with (stored with the database once it opened),
//! or none when it does not ship. Refuses SHIP_WAL / SHIP_INTERVAL that cannot apply, before anything is
//! written, and a stored mode that has no DATA_PATH to ship to.
static std::optional<ShipSettings> PlanShipping(Repository &repository, const AttachRequest &request, bool read_only,
                                                bool exists) {
	if ((request.ship_wal || request.ship_interval) && (read_only || request.snapshot_id)) {
		Fail(ErrorCode::READ_ONLY,
		     "SHIP_WAL and SHIP_INTERVAL apply to a writable attachment of a branch; this one is read-only. Remove "
		     "them, or attach the branch read-write to change its shipping (nothing was changed).");
	}
	if (read_only) {
		return std::nullopt;
	}
	// SHIP_WAL 'off' needs nothing stored: it also repairs settings that no longer read back.
	bool turning_off = request.ship_wal && *request.ship_wal == "off";
	auto stored = exists && !turning_off ? repository.metadata->shipping.Settings(request.database) : std::nullopt;
	ShipSettings plan = stored.value_or(ShipSettings());
	plan.mode = request.ship_wal.value_or(plan.mode);
	plan.interval_s = request.ship_interval.value_or(plan.interval_s);
	if (plan.mode == "off") {
		if (request.ship_interval && !request.ship_wal) {
			Fail(ErrorCode::INVALID_OPTION, "SHIP_INTERVAL applies only to a database that ships its WAL; " +
			                                    QuoteName(request.database) +
			                                    " does not. Add SHIP_WAL 'async' (nothing was changed).");
		}
		return request.ship_wal ? std::optional<ShipSettings>(plan) : std::nullopt;
	}
	if (!request.data_path && !(exists && repository.metadata->remote.DataPath(request.database))) {
		Fail(ErrorCode::DATA_PATH_REQUIRED,
		     "SHIP_WAL '" + plan.mode + "' ships the WAL to the database's DATA_PATH, and " +
		         QuoteName(request.database) + " has none. Add DATA_PATH 's3://bucket/prefix/' to this ATTACH, or " +
		         "SHIP_WAL 'off' (nothing was changed).");
	}
	if (plan.writer.empty()) {
		plan.writer = NewUuid();
	}
	return plan;
}

//! The shipper of this writable attachment, when it ships.
static std::shared_ptr<WalShipper> StartShipping(ClientContext &context, AttachedDatabase &db,
                                                 std::shared_ptr<Repository> repository, const AttachRequest &request,
                                                 const ShipSettings &settings) {
	if (settings.mode == "off") {
		return nullptr;
	}
	auto data_path = repository->metadata->remote.DataPath(request.database);
	ShipTarget target;
	target.repository = repository;
	target.database = request.database;
	target.branch = request.branch;
	target.store_url = data_path ? data_path->store_url : request.data_path.value();
	target.store = OpenObjectStore(context, target.store_url);
	target.settings = settings;
	target.lease_ms = FailoverLeaseMs(context);
	target.instance = &db.GetDatabase();
	auto shipper = std::make_shared<WalShipper>(std::move(target));
	FileAddress owner = ParseDiffPath(BranchPath(repository->root, request.database, request.branch));
	RegisterShipper(owner.OwnerKey(), shipper);
	return shipper;
}

//! Whether the request reads a snapshot of a database this instance has attached: time travel reads history of
//! what is attached, which stays readable whatever external access says now (as DuckDB's attached files do).
static bool SnapshotOfAttached(ClientContext &context, const std::string &root, const AttachRequest &request) {
	if (!request.snapshot_id) {
		return false;
	}
	for (auto &attached : DatabaseManager::Get(context).GetDatabases()) {
		auto catalog = dynamic_cast<DifferentialCatalog *>(&attached->GetCatalog());
		if (catalog && catalog->repository->root == root && catalog->database_name == request.database) {
			return true;
		}
	}
	return false;
}

//! The repository the request names, checked against DuckDB's access settings first; a repository that
//! does not exist yet is created only by an ATTACH that can succeed in it (read-write, main branch).
//! `probed` says whether the DATA_PATH was probed here: a repository that does not exist yet is created by the
//! open, so a new DATA_PATH's store is asked before it.
static std::shared_ptr<Repository> OpenAttachRepository(ClientContext &context, const AttachRequest &request,
                                                        bool read_only, bool &probed) {
	auto root =
	    request.repository_path.empty() ? RepositorySetting(context) : NormalizeRepositoryPath(request.repository_path);
	if (!SnapshotOfAttached(context, root, request)) {
		RequireRepositoryAccess(context, root);
	}
	if (request.data_path) {
		RequireStoreAccess(context, *request.data_path);
	}
	auto exists = RepositoryExists(root);
	if (!exists && (read_only || request.snapshot_id || request.branch != "main")) {
		RefuseMissingDatabase(root, request.database);
	}
	probed = !exists && request.data_path;
	if (probed) {
		ProbeDataPath(context, *request.data_path, request.database);
	}
	return OpenRepository(root);
}

//! A local ATTACH in two halves: every check (options, access, existence, settings, the branch lock)
//! before the first write, so a refusal leaves the repository as it was; then the writes the open needs.
//! What only matters once DuckDB opened the file (DATA_PATH, shipping and shared-writer settings) waits
//! for FinalizeLoad.
static unique_ptr<Catalog> AttachLocal(ClientContext &context, AttachedDatabase &db, AttachInfo &info,
                                       AttachOptions &options) {
	auto request = ReadAttachOptions(info.path, options);
	bool read_only = options.access_mode == AccessMode::READ_ONLY;
	if (request.snapshot_id) {
		// A snapshot is immutable: attach it read-only whatever was asked.
		options.access_mode = AccessMode::READ_ONLY;
		db.SetReadOnlyDatabase();
		read_only = true;
	}
	bool probed = false;
	auto repository = OpenAttachRepository(context, request, read_only, probed);
	bool create = false;
	info.path = ResolveAttachPath(*repository, request, read_only, create);
	auto shipping = PlanShipping(*repository, request, read_only, !create);
	CheckSharedWriterRequest(*repository, request.database, request.shared, request.data_path.has_value(), read_only);
	std::optional<std::string> adopt;
	if (request.data_path) {
		adopt = CheckDataPath(*repository, request, read_only, !create);
	}
	if (adopt && !probed) {
		// Only a DATA_PATH this ATTACH gives: one the database has keeps working locally whatever its store says.
		// The local refusal first: a request to the store is the slowest check.
		if (!read_only) {
			RequireNoWriterHere(repository->root, request.database, request.branch);
		}
		ProbeDataPath(context, *adopt, request.database);
	}
	std::shared_ptr<BranchLock> lock;
	if (!read_only) {
		lock = ReserveBranchLock(repository->root, request.database, request.branch);
	}
	auto shared = PlanSharedWriters(context, *repository, request.database, request.branch, request.shared,
	                                request.data_path, read_only || request.snapshot_id);
	// DuckDB reports the blocks a checkpoint freed only with trim_free_blocks on; without it their
	// stale bytes would stay in the branch's chunk map, and cleanup could never reclaim them.
	DBConfig::GetConfig(context).options.trim_free_blocks = true;
	if (create) {
		repository->metadata->history.EnsureDatabase(request.database);
	}
	if (shared.active) {
		FollowStoreHead(context, *repository, request.database, request.branch, *shared.store_url);
	}
	RegisterStoreForEvictedReads(context, *repository, request.database);
	AllowDatabaseFile(context, info.path);
	auto catalog = make_uniq<DifferentialCatalog>(db, repository, request.database,
	                                              request.snapshot_id ? std::string() : request.branch,
	                                              request.snapshot_id.value_or(-1));
	catalog->reserved_lock = std::move(lock);
	catalog->adopt_data_path = adopt;
	if (request.ship_wal || request.ship_interval) {
		catalog->adopt_shipping = shipping;
	}
	catalog->adopt_shared = shared.settings;
	if (shipping) {
		catalog->wal_shipper = StartShipping(context, db, repository, request, *shipping);
	}
	if (shared.active) {
		catalog->chunk_fetch = StartImportedChunkFetch(context, repository, request.database);
	}
	return unique_ptr<Catalog>(std::move(catalog));
}

static unique_ptr<Catalog> AttachDifferential(optional_ptr<StorageExtensionInfo>, ClientContext &context,
                                              AttachedDatabase &db, const string &name, AttachInfo &info,
                                              AttachOptions &options) {
	return Translated([&]() -> unique_ptr<Catalog> {
		if (IsRemoteLocatorPath(info.path)) {
			return AttachRemote(context, db, info, options);
		}
		return AttachLocal(context, db, info, options);
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
