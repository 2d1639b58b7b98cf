// Lookup of attachments by name without touching the caller's transaction.
#include "functions/attached_catalog.hpp"

#include "catalog/attach.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/database_manager.hpp"

namespace differential {

using namespace duckdb;

DifferentialCatalog &AttachedDifferentialCatalog(ClientContext &context, const std::string &name) {
	auto attached = DatabaseManager::Get(context).GetDatabase(Identifier(name));
	if (!attached) {
		Fail(ErrorKind::NOT_FOUND, "database_not_attached",
		     "No database is attached as " + QuoteName(name) + ". Attach it first with ATTACH 'differential:" + name +
		         "' AS " + name + ", and pass the attached name.");
	}
	auto catalog = dynamic_cast<DifferentialCatalog *>(&attached->GetCatalog());
	if (!catalog) {
		Fail(ErrorKind::INVALID_INPUT, "not_a_differential_database",
		     "The attached database " + QuoteName(name) +
		         " is not a differential database. Attach one with ATTACH 'differential:<name>'.");
	}
	return *catalog;
}

std::shared_ptr<Repository> CurrentRepository(ClientContext &context) {
	return OpenRepository(RepositorySetting(context));
}

} // namespace differential
