// Lookup of attachments by name without touching the caller's transaction.
#include "functions/attached_catalog.hpp"

#include "catalog/attach.hpp"
#include "catalog/remote_catalog.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/database_manager.hpp"
#include "host/access_rules.hpp"
#include "host/session_settings.hpp"

namespace differential {

using namespace duckdb;

DifferentialCatalog &AttachedDifferentialCatalog(ClientContext &context, const std::string &name) {
	auto attached = DatabaseManager::Get(context).GetDatabase(Identifier(name));
	if (!attached) {
		Fail(ErrorCode::DATABASE_NOT_ATTACHED, "No database is attached as " + QuoteName(name) +
		                                           ". Attach it first with ATTACH 'differential:" + name + "' AS " +
		                                           name + ", and pass the attached name.");
	}
	if (auto remote = dynamic_cast<RemoteCatalog *>(&attached->GetCatalog())) {
		Fail(ErrorCode::NOT_SUPPORTED,
		     "The attached database " + QuoteName(name) + " is a read-only remote attachment of " + remote->locator +
		         ": it has no repository and no history. Call this function on the database in the writer's "
		         "repository.");
	}
	auto catalog = dynamic_cast<DifferentialCatalog *>(&attached->GetCatalog());
	if (!catalog) {
		Fail(ErrorCode::NOT_A_DIFFERENTIAL_DATABASE,
		     "The attached database " + QuoteName(name) +
		         " is not a differential database. Attach one with ATTACH 'differential:<name>'.");
	}
	return *catalog;
}

std::string AttachedBranchName(ClientContext &context, const Repository &repository, const std::string &database,
                               const std::string &branch, const std::string &use) {
	for (auto &attached : DatabaseManager::Get(context).GetDatabases(context)) {
		auto catalog = dynamic_cast<DifferentialCatalog *>(&attached->GetCatalog());
		if (catalog && catalog->repository->root == repository.root && catalog->database_name == database &&
		    catalog->branch_name == branch) {
			return attached->GetName().GetIdentifierName();
		}
	}
	Fail(ErrorCode::DATABASE_NOT_ATTACHED,
	     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
	         " is not attached in this session, so it has no working state here. Attach it first to " + use +
	         ": ATTACH 'differential:" + database + "' AS " + database + " (BRANCH '" + branch + "').");
}

std::shared_ptr<Repository> CurrentRepository(ClientContext &context) {
	auto root = RepositorySetting(context);
	RequireRepositoryAccess(context, root);
	return OpenRepository(root);
}

int64_t SnapshotOrLatest(MetadataStore &metadata, const std::string &database, std::optional<int64_t> snapshot,
                         const std::string &purpose) {
	if (!metadata.history.FindDatabase(database)) {
		Fail(ErrorCode::DATABASE_NOT_FOUND,
		     "Database " + QuoteName(database) + " does not exist. List databases with differential_databases().");
	}
	if (snapshot) {
		return *snapshot;
	}
	auto latest = metadata.history.LatestSnapshot(database);
	if (!latest) {
		Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
		     "Database " + QuoteName(database) + " has no snapshot on main to " + purpose +
		         ". Take one with differential_create_snapshot(), or pass snapshot => <id>.");
	}
	return latest->snapshot_id;
}

} // namespace differential
