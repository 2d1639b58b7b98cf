// What the metadata keeps for WAL shipping (schema 6): a database's SHIP_WAL settings, which outlive the
// attachment that set them, and how far each branch has shipped.
#pragma once

#include "common/hash.hpp"
#include "metadata/metadata_core.hpp"

#include <optional>
#include <string>

namespace differential {

struct ShipSettings {
	std::string mode = "off"; //! "sync", "async" or "off"
	int64_t interval_s = 1;
	//! A random id written into every epoch of this database, so a writer knows its own epochs.
	std::string writer;
};

//! Where a branch's shipping stands: the last epoch written in `chain` (seq 0: none yet, `link` is then
//! the base), or, `fenced`, that another writer sealed the chain and this copy must not ship.
struct ShipState {
	uint64_t chain = 0;
	uint64_t seq = 0;
	Hash256 link {};
	Hash256 base {};
	bool fenced = false;
};

class ShippingStore {
public:
	explicit ShippingStore(MetadataCore &core) : core(core) {
	}
	std::optional<ShipSettings> Settings(const std::string &database);
	//! Stores the settings; a database that has none gets `writer` (or a new id), one that has keeps its id.
	ShipSettings SetSettings(const std::string &database, const std::string &mode, int64_t interval_s,
	                         const std::string &writer = "");
	std::optional<ShipState> State(const std::string &database, const std::string &branch);
	void SetState(const std::string &database, const std::string &branch, const ShipState &state);

private:
	MetadataCore &core;
};

} // namespace differential
