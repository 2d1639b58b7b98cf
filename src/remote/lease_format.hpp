// The failover lease object `leases/<db>/<branch>` (docs/FORMAT.md §10.7): who leads a shipping branch, for how
// long a silence means it is gone, and the SHIP_WAL settings a standby that takes over continues with.
#pragma once

#include <cstdint>
#include <string>

namespace differential {

std::string LeaseKey(const std::string &database, const std::string &branch);

//! No wall clock in it: a standby judges lapse by how long the object's ETag stays unchanged on its own monotonic
//! clock. `renewal` grows with every write, so every write has new bytes (S3's ETag of a plain PUT is their MD5).
struct LeaseRecord {
	std::string database;
	std::string branch;
	std::string holder; //! the writer id of the leader (its epochs carry the same id)
	int64_t duration_ms = 0;
	int64_t renewal = 0;
	std::string ship_wal = "sync"; //! the holder's SHIP_WAL and SHIP_INTERVAL, inherited on takeover
	int64_t ship_interval = 1;
};

std::string EncodeLease(const LeaseRecord &lease);
bool DecodeLease(const std::string &text, LeaseRecord &out, std::string &why);

} // namespace differential
