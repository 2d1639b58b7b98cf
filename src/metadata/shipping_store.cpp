// The WAL-shipping rows of schema 6, keyed by the database's uuid so that a dropped and re-created
// database never inherits the settings of its namesake.
#include "metadata/shipping_store.hpp"

#include "common/errors.hpp"
#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

namespace differential {

static const char *UUID_OF = "(SELECT database_uuid FROM databases WHERE database_name = ?)";

std::optional<ShipSettings> ShippingStore::Settings(const std::string &database) {
	auto session = core.Read();
	auto stmt = session.db.Prepare(std::string("SELECT mode, interval_s, writer FROM wal_shipping WHERE "
	                                           "database_uuid = ") +
	                               UUID_OF);
	stmt.Bind(1, database);
	if (!stmt.Step()) {
		return std::nullopt;
	}
	ShipSettings settings {stmt.Text(0), stmt.Int(1), stmt.Text(2)};
	// Read back as written: anything else is damage, reported instead of acted on.
	bool known_mode = settings.mode == "sync" || settings.mode == "async" || settings.mode == "off";
	if (!known_mode || settings.interval_s < 1 || settings.interval_s > 86400 || settings.writer.empty()) {
		Fail(ErrorCode::CORRUPT_METADATA,
		     "The WAL shipping settings stored for database " + database +
		         " are not valid (mode, interval or writer id). Attach it with SHIP_WAL 'off' to store valid settings "
		         "again (then SHIP_WAL 'async' or 'sync' to ship), and run differential_verify().");
	}
	return settings;
}

ShipSettings ShippingStore::SetSettings(const std::string &database, const std::string &mode, int64_t interval_s,
                                        const std::string &writer_p) {
	auto txn = core.Write();
	auto &db = txn.db;
	std::string writer = writer_p.empty() ? NewUuid() : writer_p;
	{
		auto stmt = db.Prepare(std::string("SELECT writer FROM wal_shipping WHERE database_uuid = ") + UUID_OF);
		stmt.Bind(1, database);
		if (stmt.Step()) {
			writer = stmt.Text(0);
		}
	}
	auto uuid = db.Prepare("SELECT database_uuid FROM databases WHERE database_name = ?");
	uuid.Bind(1, database);
	if (!uuid.Step()) {
		Fail(ErrorCode::DATABASE_NOT_FOUND,
		     "Database " + database +
		         " does not exist; nothing was changed. List databases with differential_databases().");
	}
	db.Prepare("INSERT OR REPLACE INTO wal_shipping(database_uuid, mode, interval_s, writer) VALUES (?, ?, ?, ?)")
	    .Bind(1, uuid.Text(0))
	    .Bind(2, mode)
	    .Bind(3, interval_s)
	    .Bind(4, writer)
	    .Run();
	txn.Commit();
	return ShipSettings {mode, interval_s, writer};
}

std::optional<ShipState> ShippingStore::State(const std::string &database, const std::string &branch) {
	auto session = core.Read();
	auto stmt = session.db.Prepare(std::string("SELECT chain, seq, link, base, fenced FROM wal_ship_state WHERE "
	                                           "branch_name = ? AND database_uuid = ") +
	                               UUID_OF);
	stmt.Bind(1, branch).Bind(2, database);
	if (!stmt.Step()) {
		return std::nullopt;
	}
	ShipState state;
	state.chain = uint64_t(stmt.Int(0));
	state.seq = uint64_t(stmt.Int(1));
	state.link = HashFromBlob(stmt.Blob(2));
	state.base = HashFromBlob(stmt.Blob(3));
	state.fenced = stmt.Int(4) != 0;
	return state;
}

void ShippingStore::SetState(const std::string &database, const std::string &branch, const ShipState &state) {
	auto txn = core.Write();
	txn.db
	    .Prepare(
	        std::string("INSERT OR REPLACE INTO wal_ship_state(database_uuid, branch_name, chain, seq, link, base, "
	                    "fenced, updated_at_us) VALUES (") +
	        UUID_OF + ", ?, ?, ?, ?, ?, ?, ?)")
	    .Bind(1, database)
	    .Bind(2, branch)
	    .Bind(3, int64_t(state.chain))
	    .Bind(4, int64_t(state.seq))
	    .BindBlob(5, state.link.data(), state.link.size())
	    .BindBlob(6, state.base.data(), state.base.size())
	    .Bind(7, int64_t(state.fenced ? 1 : 0))
	    .Bind(8, NowMicros())
	    .Run();
	txn.Commit();
}

} // namespace differential
