// Factories of every SQL function the extension registers; one function per file.
#pragma once

#include "duckdb/function/function_set.hpp"
#include "duckdb/function/table_function.hpp"

namespace differential {

duckdb::TableFunction CreateSnapshotFunction();
duckdb::TableFunction CreateBranchFunction();
duckdb::TableFunction BranchesFunction();
duckdb::TableFunction DatabasesFunction();
duckdb::TableFunction SnapshotsFunction();
//! The catalog-scoped form, answered as `<attached>.snapshots()`.
duckdb::TableFunction CatalogSnapshotsFunction();
duckdb::TableFunctionSet VerifyFunctions();
duckdb::TableFunction RestoreFunction();
duckdb::TableFunction CloneDatabaseFunction();
duckdb::TableFunction ExportSnapshotFunction();
duckdb::TableFunction EvictExportedFunction();
duckdb::TableFunction FetchEvictedFunction();
duckdb::TableFunction RecoverExportFunction();
duckdb::TableFunction RecoverBranchFunction();
duckdb::TableFunction ShippingFunction();
duckdb::TableFunction ResolveConflictFunction();
duckdb::TableFunction DropBranchFunction();
duckdb::TableFunction DropDatabaseFunction();
duckdb::TableFunction ExpireSnapshotsFunction();
duckdb::TableFunction CleanupOldFilesFunction();
duckdb::TableFunction CleanupRemoteFilesFunction();
duckdb::TableFunctionSet StorageInfoFunctions();
duckdb::TableFunction IoCountersFunction();
duckdb::TableFunction MergeAncestryFunction();
duckdb::TableFunction MergeVirtualBaseFunction();
duckdb::TableFunction MergeBranchFunction();
duckdb::TableFunction MergeSnapshotsFunction();
duckdb::TableFunction MergeBranchPreflightFunction();
duckdb::TableFunction MergeRequestsFunction();
duckdb::TableFunction MergeBranchPreviewFunction();
duckdb::TableFunction MergeSnapshotsPreviewFunction();
duckdb::TableFunction AbortMergeFunction();
duckdb::TableFunction MergeResolutionsFunction();
duckdb::TableFunction MergeStatusFunction();
duckdb::TableFunction DiffFunction();
duckdb::TableFunction FollowersFunction();

} // namespace differential
