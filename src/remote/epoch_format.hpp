// The WAL-shipping objects (store format 2 addition): epochs, create-only and immutable, at
// `epochs/<db>/<branch>/<chain20>/<seq20>`, binary and hash-chained. docs/FORMAT.md §10.6.
#pragma once

#include "common/hash.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace differential {

//! First 8 bytes of every epoch object, then a u32 format version.
extern const char EPOCH_MAGIC[8];
static constexpr uint32_t EPOCH_FORMAT_VERSION = 1;
//! A chain is sealed and a new one started after this many epochs or this many epoch bytes.
static constexpr uint64_t CHAIN_MAX_EPOCHS = 256;
static constexpr uint64_t CHAIN_MAX_BYTES = 64ULL << 20;
extern const char *const EPOCHS_PREFIX;

//! `epochs/<db>/<branch>/<chain20>/<seq20>`: keys of a chain list in seq order.
std::string EpochKey(const std::string &database, const std::string &branch, uint64_t chain, uint64_t seq);
//! `epochs/<db>/<branch>/<chain20>/`, the listing prefix of one chain.
std::string EpochChainPrefix(const std::string &database, const std::string &branch, uint64_t chain);

enum class EpochKind : uint8_t { COMMIT = 1, SEAL = 2 };
//! Why a chain was sealed: a checkpoint emptied the WAL, a chain limit was reached, or a recovery
//! fenced the previous writer.
enum class SealReason : uint8_t { NONE = 0, CHECKPOINT = 1, LIMIT = 2, RECOVERY = 3 };
const char *SealReasonName(SealReason reason);

//! One changed chunk of the main database file, inline (DuckDB writes optimistic row-group blocks to
//! the main file before the WAL commit that names them).
struct EpochChunk {
	uint64_t index = 0;
	Hash256 sha256 {};
	std::string bytes;
};

//! One epoch object, decoded. `previous` chains it: the SHA-256 of the whole previous epoch object, or
//! for seq 1 the chain's base descriptor hash (the descriptor's key).
struct Epoch {
	EpochKind kind = EpochKind::COMMIT;
	std::string database;
	std::string branch;
	uint64_t chain = 0;
	uint64_t seq = 0;
	Hash256 previous {};
	//! Who wrote it: a random id per writing database (fencing tells its own epochs from others').
	std::string writer;
	// COMMIT
	uint64_t wal_offset = 0;  //! where `wal` starts in the chain's WAL
	std::string wal;          //! the WAL bytes appended since the previous epoch
	uint64_t file_length = 0; //! the main file's length after this epoch
	std::vector<EpochChunk> chunks;
	// SEAL
	SealReason reason = SealReason::NONE;
	uint64_t successor_chain = 0;
	//! The successor chain's base descriptor; zero when not known yet (a recovery seal: the head names
	//! it once the new leader exported it).
	Hash256 successor_base {};

	uint64_t WalEnd() const {
		return wal_offset + wal.size();
	}
};

//! The object bytes: header, body, then the SHA-256 of everything before it (32 bytes).
std::string EncodeEpoch(const Epoch &epoch);
//! False with `why` unless `blob` is a whole, undamaged epoch of a format this build reads.
bool DecodeEpoch(const std::string &blob, Epoch &out, std::string &why);
//! The epoch's identity as the next epoch's `previous`: SHA-256 of the whole object.
Hash256 EpochHash(const std::string &blob);
//! False with `why` unless `epoch` is where the key says, and links to `previous` (the hash of the epoch
//! before it, or the chain's base descriptor for seq 1), and each inline chunk matches its SHA-256.
bool VerifyEpoch(const Epoch &epoch, const std::string &database, const std::string &branch, uint64_t chain,
                 uint64_t seq, const Hash256 &previous, std::string &why);

} // namespace differential
