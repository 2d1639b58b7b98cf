// Entry point: registers the diff:// file system, the storage extension, settings and SQL functions.
#include "catalog/access_rules.hpp"
#include "catalog/attach.hpp"
#include "catalog/differential_catalog.hpp"
#include "catalog/object_store_access.hpp"
#include "catalog/remote_attach.hpp"
#include "common/duckdb_errors.hpp"
#include "common/duckdb_logging.hpp"
#include "duckdb.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "functions/sql_functions.hpp"
#include "replication/wal_shipper.hpp"
#include "repository/repository.hpp"
#include "storage/diff_file_system.hpp"

namespace duckdb {

static void CheckRepositorySetting(ClientContext &context, SetScope, Value &parameter) {
	if (parameter.IsNull()) {
		return;
	}
	differential::Translated([&]() {
		auto root = differential::NormalizeRepositoryPath(parameter.ToString());
		differential::RequireRepositoryAccess(context, root);
		parameter = Value(root);
	});
}

static void CheckMaxConcurrent(ClientContext &, SetScope, Value &parameter) {
	if (!parameter.IsNull() && parameter.GetValue<int64_t>() < 0) {
		differential::Translated([&]() {
			differential::Fail(differential::ErrorKind::INVALID_INPUT, "invalid_argument",
			                   "differential_merge_max_concurrent must be 0 (no limit) or more.");
		});
	}
}

static void CheckExportConcurrency(ClientContext &, SetScope, Value &parameter) {
	if (!parameter.IsNull() && (parameter.GetValue<int64_t>() < 1 || parameter.GetValue<int64_t>() > 64)) {
		differential::Translated([&]() {
			differential::Fail(differential::ErrorKind::INVALID_INPUT, "invalid_argument",
			                   "differential_export_concurrency must be between 1 (one pack upload at a time) and 64.");
		});
	}
}

static void CheckRemoteCacheSize(ClientContext &, SetScope, Value &parameter) {
	if (!parameter.IsNull()) {
		differential::Translated([&]() { differential::ParseRemoteCacheSize(parameter.ToString()); });
	}
}

static void CheckFailover(ClientContext &, SetScope, Value &parameter) {
	auto mode = parameter.IsNull() ? std::string() : StringUtil::Lower(parameter.ToString());
	if (mode != "off" && mode != "lease") {
		differential::Translated([&]() {
			differential::Fail(differential::ErrorKind::INVALID_INPUT, "invalid_argument",
			                   "differential_failover takes 'off' (failover is the caller's: "
			                   "differential_recover_branch) or 'lease' (leaders renew a lease in S3, standbys "
			                   "attached with TAKEOVER_AS take over when it lapses); got " +
			                       parameter.ToString() + ". Nothing was changed.");
		});
	}
}

static void CheckLeaseDuration(ClientContext &, SetScope, Value &parameter) {
	double seconds = parameter.IsNull() ? 0 : parameter.GetValue<double>();
	if (!(seconds >= 1 && seconds <= 3600)) {
		differential::Translated([&]() {
			differential::Fail(differential::ErrorKind::INVALID_INPUT, "invalid_argument",
			                   "differential_lease_duration is the failover lease's duration in seconds, from 1 to "
			                   "3600 (default 30); got " +
			                       parameter.ToString() + ". Nothing was changed.");
		});
	}
}

static void LoadInternal(ExtensionLoader &loader) {
	auto &instance = loader.GetDatabaseInstance();
	auto &config = DBConfig::GetConfig(instance);

	differential::RegisterDuckDBLogType(instance);
	FileSystem::GetFileSystem(instance).RegisterSubSystem(make_uniq<differential::DiffFileSystem>(
	    [](const std::string &root) { return differential::OpenRepository(root)->storage; }, &instance));
	StorageExtension::Register(config, "differential", differential::CreateDifferentialStorageExtension());
	differential::RegisterS3SecretType(loader);
	config.AddExtensionOption("differential_repository",
	                          "Absolute path of the differential repository that holds the databases",
	                          LogicalType::VARCHAR, Value(), CheckRepositorySetting, SetScope::GLOBAL);
	config.AddExtensionOption("differential_merge_max_concurrent",
	                          "How many merges this process runs at once; more are refused with merge_busy (0: no "
	                          "limit)",
	                          LogicalType::BIGINT, Value::BIGINT(2), CheckMaxConcurrent, SetScope::GLOBAL);
	config.AddExtensionOption(
	    "differential_remote_cache_size",
	    "Bytes of fetched remote chunks kept on disk for remote attachments made after it, shared by "
	    "the processes of a repository ('1GB', '512MiB', a number of bytes; 0: no disk cache)",
	    LogicalType::VARCHAR, Value("0"), CheckRemoteCacheSize, SetScope::GLOBAL);
	config.AddExtensionOption("differential_evict_after_export",
	                          "After each export of an S3 database, drop the local payload of its chunks the "
	                          "DATA_PATH now holds (reads fetch them back; cleanup reclaims the space)",
	                          LogicalType::BOOLEAN, Value::BOOLEAN(false));
	config.AddExtensionOption("differential_export_concurrency",
	                          "How many pack uploads an export of an S3 database keeps in flight at once (1-64)",
	                          LogicalType::BIGINT, Value::BIGINT(4), CheckExportConcurrency, SetScope::GLOBAL);
	config.AddExtensionOption("differential_merge_skip_unchanged",
	                          "Let merges skip reading a side's table whose storage is byte-identical to the base's "
	                          "(false: read all three sides, the reference method)",
	                          LogicalType::BOOLEAN, Value::BOOLEAN(true));

	config.AddExtensionOption("differential_failover",
	                          "'off' (default): failover is the caller's; 'lease': shipping leaders renew a lease in "
	                          "S3 and standbys attached with TAKEOVER_AS take over when it lapses",
	                          LogicalType::VARCHAR, Value("off"), CheckFailover, SetScope::GLOBAL);
	config.AddExtensionOption("differential_lease_duration",
	                          "Seconds of silence (an unchanged lease object, on the standby's own clock) after "
	                          "which a standby takes over; leaders renew every third of it",
	                          LogicalType::DOUBLE, Value::DOUBLE(30), CheckLeaseDuration, SetScope::GLOBAL);

	loader.RegisterFunction(differential::CreateSnapshotFunction());
	loader.RegisterFunction(differential::CreateBranchFunction());
	loader.RegisterFunction(differential::BranchesFunction());
	loader.RegisterFunction(differential::DatabasesFunction());
	loader.RegisterFunction(differential::FollowersFunction());
	loader.RegisterFunction(differential::SnapshotsFunction());
	loader.RegisterFunction(differential::VerifyFunctions());
	loader.RegisterFunction(differential::RestoreFunction());
	loader.RegisterFunction(differential::CloneDatabaseFunction());
	loader.RegisterFunction(differential::ExportSnapshotFunction());
	loader.RegisterFunction(differential::EvictExportedFunction());
	loader.RegisterFunction(differential::FetchEvictedFunction());
	loader.RegisterFunction(differential::RecoverExportFunction());
	loader.RegisterFunction(differential::RecoverBranchFunction());
	loader.RegisterFunction(differential::ShippingFunction());
	// WAL syncs of attached shipping branches reach their shipper through storage's sync observer.
	differential::InstallWalShipping();
	loader.RegisterFunction(differential::ResolveConflictFunction());
	loader.RegisterFunction(differential::DropBranchFunction());
	loader.RegisterFunction(differential::DropDatabaseFunction());
	loader.RegisterFunction(differential::ExpireSnapshotsFunction());
	loader.RegisterFunction(differential::CleanupOldFilesFunction());
	loader.RegisterFunction(differential::CleanupRemoteFilesFunction());
	loader.RegisterFunction(differential::StorageInfoFunctions());
	loader.RegisterFunction(differential::IoCountersFunction());
	loader.RegisterFunction(differential::MergeAncestryFunction());
	loader.RegisterFunction(differential::MergeBranchFunction());
	loader.RegisterFunction(differential::MergeSnapshotsFunction());
	loader.RegisterFunction(differential::MergeBranchPreflightFunction());
	loader.RegisterFunction(differential::MergeRequestsFunction());
	loader.RegisterFunction(differential::MergeBranchPreviewFunction());
	loader.RegisterFunction(differential::MergeSnapshotsPreviewFunction());
	loader.RegisterFunction(differential::DiffFunction());
	loader.RegisterFunction(differential::AbortMergeFunction());
	loader.RegisterFunction(differential::MergeResolutionsFunction());
	loader.RegisterFunction(differential::MergeStatusFunction());
	differential::RegisterCatalogFunction("snapshots", differential::CatalogSnapshotsFunction());
}

} // namespace duckdb

extern "C" {
DUCKDB_CPP_EXTENSION_ENTRY(differential, loader) {
	duckdb::LoadInternal(loader);
}
}
