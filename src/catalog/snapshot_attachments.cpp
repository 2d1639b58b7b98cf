// Hidden snapshot attachments are made through a private connection so that they outlive the
// statement that first needed them, and are named so users cannot collide with them.
#include "catalog/snapshot_attachments.hpp"

#include "common/errors.hpp"
#include "common/hash.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/common/types/timestamp.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/main/database_manager.hpp"

namespace differential {

using namespace duckdb;

static constexpr const char *HIDDEN_NAME_PREFIX = "__differential_snapshot@";

bool IsSnapshotAttachmentName(const std::string &name) {
	return StringUtil::StartsWith(name, HIDDEN_NAME_PREFIX);
}

static std::string HiddenPrefix(const std::string &repository, const std::string &database) {
	auto digest = Sha256(repository.data(), repository.size());
	return HIDDEN_NAME_PREFIX + HashToHex(digest).substr(0, 16) + "@" + database + "@";
}

static std::string HiddenName(const std::string &repository, const std::string &database, int64_t snapshot_id) {
	return HiddenPrefix(repository, database) + std::to_string(snapshot_id);
}

int64_t ResolveAtClause(MetadataStore &metadata, const std::string &database, const BoundAtClause &at) {
	auto unit = StringUtil::Lower(at.Unit().GetIdentifierName());
	auto &value = at.GetValue();
	if (value.IsNull()) {
		Fail(ErrorCode::INVALID_AT_CLAUSE,
		     "AT (" + unit + " => NULL) names no snapshot. Give a snapshot id or a timestamp.");
	}
	if (unit == "version") {
		int64_t id;
		try {
			id = value.DefaultCastAs(LogicalType::BIGINT).GetValue<int64_t>();
		} catch (std::exception &) {
			Fail(ErrorCode::INVALID_AT_CLAUSE, "AT (VERSION => " + value.ToString() +
			                                       ") is not a snapshot id. Use an integer from " + database +
			                                       ".snapshots().");
		}
		metadata.history.RequireKeptSnapshot(database, id, database + ".snapshots()");
		return id;
	}
	if (unit == "timestamp") {
		timestamp_t ts;
		try {
			ts = value.DefaultCastAs(LogicalType::TIMESTAMP_TZ).GetValue<timestamp_t>();
		} catch (std::exception &) {
			Fail(ErrorCode::INVALID_AT_CLAUSE, "AT (TIMESTAMP => " + value.ToString() + ") is not a timestamp.");
		}
		auto snapshot = metadata.history.FindSnapshotAsOf(database, Timestamp::GetEpochMicroSeconds(ts));
		if (!snapshot) {
			Fail(ErrorCode::SNAPSHOT_NOT_FOUND, "Database " + QuoteName(database) + " has no snapshot at or before " +
			                                        value.ToString() + ". List its snapshots with " + database +
			                                        ".snapshots().");
		}
		return snapshot->snapshot_id;
	}
	Fail(ErrorCode::INVALID_AT_CLAUSE,
	     "AT (" + unit + " => ...) is not supported. Use AT (VERSION => <snapshot id>) or AT (TIMESTAMP => <time>).");
}

Catalog &SnapshotCatalog(ClientContext &context, const Repository &repository, const std::string &database,
                         int64_t snapshot_id) {
	auto name = HiddenName(repository.root, database, snapshot_id);
	auto &manager = DatabaseManager::Get(context);
	auto attached = manager.GetDatabase(Identifier(name));
	if (!attached) {
		Connection connection(*context.db);
		auto sql = "ATTACH IF NOT EXISTS " + SqlLiteral("differential:" + database) + " AS " + SqlIdentifier(name) +
		           " (SNAPSHOT " + std::to_string(snapshot_id) + ", REPOSITORY " + SqlLiteral(repository.root) +
		           ", READ_ONLY, HIDDEN)";
		auto result = connection.Query(sql);
		if (result->HasError()) {
			result->ThrowError();
		}
		attached = manager.GetDatabase(Identifier(name));
		if (!attached) {
			Fail(ErrorCode::INTERNAL,
			     "The snapshot attachment " + name + " vanished right after it was made. Retry the query.");
		}
	}
	return attached->GetCatalog();
}

void ReleaseSnapshotAttachments(ClientContext &context, const std::string &repository, const std::string &database) {
	auto prefix = HiddenPrefix(repository, database);
	auto &manager = DatabaseManager::Get(context);
	for (auto &db : manager.GetDatabases()) {
		auto &db_name = db->GetName().GetIdentifierName();
		if (StringUtil::StartsWith(db_name, prefix)) {
			manager.DetachDatabase(context, db->GetName(), OnEntryNotFound::RETURN_NULL);
		}
	}
}

} // namespace differential
