// Entry point: registers the diff:// file system, the storage extension, settings and SQL functions.
#include "catalog/attach.hpp"
#include "catalog/differential_catalog.hpp"
#include "catalog/remote_attach.hpp"
#include "common/duckdb_errors.hpp"
#include "common/duckdb_logging.hpp"
#include "duckdb.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "functions/function_access.hpp"
#include "functions/sql_functions.hpp"
#include "host/access_rules.hpp"
#include "host/s3_secret_type.hpp"
#include "host/session_settings.hpp"
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
			differential::Fail(differential::ErrorCode::INVALID_ARGUMENT,
			                   "differential_merge_max_concurrent must be 0 (no limit) or more.");
		});
	}
}

static void CheckExportConcurrency(ClientContext &, SetScope, Value &parameter) {
	if (!parameter.IsNull() && (parameter.GetValue<int64_t>() < 1 || parameter.GetValue<int64_t>() > 64)) {
		differential::Translated([&]() {
			differential::Fail(differential::ErrorCode::INVALID_ARGUMENT,
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
			differential::Fail(differential::ErrorCode::INVALID_ARGUMENT,
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
			differential::Fail(differential::ErrorCode::INVALID_ARGUMENT,
			                   "differential_lease_duration is the failover lease's duration in seconds, from 1 to "
			                   "3600 (default 30); got " +
			                       parameter.ToString() + ". Nothing was changed.");
		});
	}
}

static void CheckSqlFunctions(ClientContext &context, SetScope, Value &parameter) {
	differential::CheckSqlFunctionsSetting(context, parameter);
}

//! Each function declares whether it writes a repository; differential_sql_functions = 'read_only' refuses those.
static void RegisterFunctions(ExtensionLoader &loader) {
	using differential::FunctionAccess;
	using differential::Guarded;
	auto reads = FunctionAccess::READS;
	auto writes = FunctionAccess::WRITES;
	loader.RegisterFunction(Guarded(differential::CreateSnapshotFunction(), writes));
	loader.RegisterFunction(Guarded(differential::CreateBranchFunction(), writes));
	loader.RegisterFunction(Guarded(differential::BranchesFunction(), reads));
	loader.RegisterFunction(Guarded(differential::DatabasesFunction(), reads));
	loader.RegisterFunction(Guarded(differential::FollowersFunction(), reads));
	loader.RegisterFunction(Guarded(differential::SnapshotsFunction(), reads));
	loader.RegisterFunction(Guarded(differential::VerifyFunctions(), reads));
	loader.RegisterFunction(Guarded(differential::RestoreFunction(), writes));
	loader.RegisterFunction(Guarded(differential::CloneDatabaseFunction(), writes));
	loader.RegisterFunction(Guarded(differential::ExportSnapshotFunction(), writes));
	loader.RegisterFunction(Guarded(differential::EvictExportedFunction(), writes));
	loader.RegisterFunction(Guarded(differential::FetchEvictedFunction(), writes));
	loader.RegisterFunction(Guarded(differential::RecoverExportFunction(), writes));
	loader.RegisterFunction(Guarded(differential::RecoverBranchFunction(), writes));
	loader.RegisterFunction(Guarded(differential::ShippingFunction(), reads));
	// WAL syncs of attached shipping branches reach their shipper through storage's sync observer.
	differential::InstallWalShipping();
	loader.RegisterFunction(Guarded(differential::ResolveConflictFunction(), writes));
	loader.RegisterFunction(Guarded(differential::DropBranchFunction(), writes));
	loader.RegisterFunction(Guarded(differential::DropDatabaseFunction(), writes));
	loader.RegisterFunction(Guarded(differential::ExpireSnapshotsFunction(), writes));
	loader.RegisterFunction(Guarded(differential::CleanupOldFilesFunction(), writes));
	loader.RegisterFunction(Guarded(differential::CleanupRemoteFilesFunction(), writes));
	loader.RegisterFunction(Guarded(differential::StorageInfoFunctions(), reads));
	loader.RegisterFunction(Guarded(differential::IoCountersFunction(), reads));
	loader.RegisterFunction(Guarded(differential::MergeAncestryFunction(), reads));
	loader.RegisterFunction(Guarded(differential::MergeVirtualBaseFunction(), reads));
	loader.RegisterFunction(Guarded(differential::MergeBranchFunction(), writes));
	loader.RegisterFunction(Guarded(differential::MergeSnapshotsFunction(), writes));
	loader.RegisterFunction(Guarded(differential::MergeBranchPreflightFunction(), reads));
	loader.RegisterFunction(Guarded(differential::MergeRequestsFunction(), reads));
	loader.RegisterFunction(Guarded(differential::MergeBranchPreviewFunction(), reads));
	loader.RegisterFunction(Guarded(differential::MergeSnapshotsPreviewFunction(), reads));
	loader.RegisterFunction(Guarded(differential::DiffFunction(), reads));
	loader.RegisterFunction(Guarded(differential::AbortMergeFunction(), writes));
	loader.RegisterFunction(Guarded(differential::MergeResolutionsFunction(), reads));
	loader.RegisterFunction(Guarded(differential::MergeStatusFunction(), reads));
	differential::RegisterCatalogFunction("snapshots", differential::CatalogSnapshotsFunction());
}

static void LoadInternal(ExtensionLoader &loader) {
	auto &instance = loader.GetDatabaseInstance();
	auto &config = DBConfig::GetConfig(instance);

	differential::RegisterDuckDBLogType(instance);
	FileSystem::GetFileSystem(instance).RegisterSubSystem(make_uniq<differential::DiffFileSystem>(
	    [](const std::string &root) { return differential::OpenRepository(root)->storage; }, &instance));
	StorageExtension::Register(config, "differential", differential::CreateDifferentialStorageExtension());
	// Nothing registered now: httpfs may still load after us (host/s3_secret_type.hpp).
	differential::InstallS3SecretType(instance);
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

	config.AddExtensionOption("differential_sql_functions",
	                          "'all' (default): every differential function; 'read_only': functions that write a "
	                          "repository are refused and process-wide listings show only this instance's databases",
	                          LogicalType::VARCHAR, Value("all"), CheckSqlFunctions, SetScope::GLOBAL);
	RegisterFunctions(loader);
}

} // namespace duckdb

extern "C" {
DUCKDB_CPP_EXTENSION_ENTRY(differential, loader) {
	duckdb::LoadInternal(loader);
}
}
