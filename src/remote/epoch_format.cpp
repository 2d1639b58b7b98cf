// Encoding of epoch objects: little-endian fields after the magic and version, strings and byte runs
// with a length in front, and the SHA-256 of all of it at the end, so a cut or damaged object never decodes.
#include "remote/epoch_format.hpp"

#include "remote/object_key.hpp"

#include <cstring>

namespace differential {

const char EPOCH_MAGIC[8] = {'D', 'I', 'F', 'E', 'P', 'O', 'C', 'H'};
const char *const EPOCHS_PREFIX = "epochs/";

std::string EpochChainPrefix(const std::string &database, const std::string &branch, uint64_t chain) {
	return std::string(EPOCHS_PREFIX) + database + "/" + branch + "/" + SortableNumber(int64_t(chain)) + "/";
}

std::string EpochKey(const std::string &database, const std::string &branch, uint64_t chain, uint64_t seq) {
	return EpochChainPrefix(database, branch, chain) + SortableNumber(int64_t(seq));
}

const char *SealReasonName(SealReason reason) {
	switch (reason) {
	case SealReason::CHECKPOINT:
		return "checkpoint";
	case SealReason::LIMIT:
		return "limit";
	case SealReason::RECOVERY:
		return "recovery";
	default:
		return "none";
	}
}

namespace {

class Writer {
public:
	std::string out;
	void U8(uint8_t v) {
		out.push_back(char(v));
	}
	void U32(uint32_t v) {
		for (int i = 0; i < 4; i++) {
			out.push_back(char((v >> (8 * i)) & 0xff));
		}
	}
	void U64(uint64_t v) {
		for (int i = 0; i < 8; i++) {
			out.push_back(char((v >> (8 * i)) & 0xff));
		}
	}
	void Hash(const Hash256 &h) {
		out.append(reinterpret_cast<const char *>(h.data()), h.size());
	}
	void Bytes(const std::string &s) {
		U64(s.size());
		out += s;
	}
};

class Reader {
public:
	Reader(const std::string &data, size_t end) : data(data), end(end) {
	}
	bool Take(size_t n) {
		if (end - pos < n) {
			ok = false;
			return false;
		}
		return true;
	}
	uint64_t Uint(int bytes) {
		if (!Take(bytes)) {
			return 0;
		}
		uint64_t v = 0;
		for (int i = 0; i < bytes; i++) {
			v |= uint64_t(uint8_t(data[pos + i])) << (8 * i);
		}
		pos += bytes;
		return v;
	}
	Hash256 Hash() {
		Hash256 h {};
		if (Take(h.size())) {
			memcpy(h.data(), data.data() + pos, h.size());
			pos += h.size();
		}
		return h;
	}
	std::string Bytes() {
		auto n = Uint(8);
		if (!ok || !Take(n)) {
			return {};
		}
		auto s = data.substr(pos, n);
		pos += n;
		return s;
	}
	const std::string &data;
	size_t end;
	size_t pos = 0;
	bool ok = true;
};

} // namespace

std::string EncodeEpoch(const Epoch &epoch) {
	Writer w;
	w.out.append(EPOCH_MAGIC, sizeof(EPOCH_MAGIC));
	w.U32(EPOCH_FORMAT_VERSION);
	w.U8(uint8_t(epoch.kind));
	w.U8(uint8_t(epoch.reason));
	w.Bytes(epoch.database);
	w.Bytes(epoch.branch);
	w.U64(epoch.chain);
	w.U64(epoch.seq);
	w.Hash(epoch.previous);
	w.Bytes(epoch.writer);
	if (epoch.kind == EpochKind::COMMIT) {
		w.U64(epoch.wal_offset);
		w.Bytes(epoch.wal);
		w.U64(epoch.file_length);
		w.U32(uint32_t(epoch.chunks.size()));
		for (auto &chunk : epoch.chunks) {
			w.U64(chunk.index);
			w.Hash(chunk.sha256);
			w.Bytes(chunk.bytes);
		}
	} else {
		w.U64(epoch.successor_chain);
		w.Hash(epoch.successor_base);
	}
	w.Hash(Sha256(w.out.data(), w.out.size()));
	return w.out;
}

Hash256 EpochHash(const std::string &blob) {
	return Sha256(blob.data(), blob.size());
}

static bool DecodeBody(Reader &r, Epoch &out) {
	if (out.kind == EpochKind::COMMIT) {
		out.wal_offset = r.Uint(8);
		out.wal = r.Bytes();
		out.file_length = r.Uint(8);
		auto count = r.Uint(4);
		for (uint64_t i = 0; r.ok && i < count; i++) {
			EpochChunk chunk;
			chunk.index = r.Uint(8);
			chunk.sha256 = r.Hash();
			chunk.bytes = r.Bytes();
			out.chunks.push_back(std::move(chunk));
		}
	} else {
		out.successor_chain = r.Uint(8);
		out.successor_base = r.Hash();
	}
	return r.ok;
}

bool DecodeEpoch(const std::string &blob, Epoch &out, std::string &why) {
	out = Epoch();
	const size_t header = sizeof(EPOCH_MAGIC) + 4;
	if (blob.size() < header + 32 || memcmp(blob.data(), EPOCH_MAGIC, sizeof(EPOCH_MAGIC)) != 0) {
		why = "not a differential epoch";
		return false;
	}
	size_t body_end = blob.size() - 32;
	auto sum = Sha256(blob.data(), body_end);
	if (memcmp(sum.data(), blob.data() + body_end, 32) != 0) {
		why = "an epoch whose checksum does not match its bytes (damaged or cut short)";
		return false;
	}
	Reader r(blob, body_end);
	r.pos = sizeof(EPOCH_MAGIC);
	auto version = r.Uint(4);
	if (version != EPOCH_FORMAT_VERSION) {
		why = "an epoch of format " + std::to_string(version) + ", which this build cannot read (it reads format " +
		      std::to_string(EPOCH_FORMAT_VERSION) + ")";
		return false;
	}
	auto kind = r.Uint(1);
	auto reason = r.Uint(1);
	if (kind != uint8_t(EpochKind::COMMIT) && kind != uint8_t(EpochKind::SEAL)) {
		why = "an epoch of unknown kind " + std::to_string(kind);
		return false;
	}
	out.kind = EpochKind(kind);
	out.reason = SealReason(reason);
	out.database = r.Bytes();
	out.branch = r.Bytes();
	out.chain = r.Uint(8);
	out.seq = r.Uint(8);
	out.previous = r.Hash();
	out.writer = r.Bytes();
	if (!DecodeBody(r, out) || r.pos != body_end) {
		why = "an epoch whose fields do not fill it exactly";
		return false;
	}
	return true;
}

bool VerifyEpoch(const Epoch &epoch, const std::string &database, const std::string &branch, uint64_t chain,
                 uint64_t seq, const Hash256 &previous, std::string &why) {
	if (epoch.database != database || epoch.branch != branch || epoch.chain != chain || epoch.seq != seq) {
		why = "the epoch at " + EpochKey(database, branch, chain, seq) + " says it is " +
		      EpochKey(epoch.database, epoch.branch, epoch.chain, epoch.seq);
		return false;
	}
	if (epoch.previous != previous) {
		why = "the epoch at " + EpochKey(database, branch, chain, seq) + " does not link to the one before it";
		return false;
	}
	if (epoch.kind == EpochKind::SEAL) {
		if (epoch.successor_chain <= chain) {
			why = "the seal at " + EpochKey(database, branch, chain, seq) + " names an earlier successor chain";
			return false;
		}
		return true;
	}
	for (auto &chunk : epoch.chunks) {
		auto sum = Sha256(chunk.bytes.data(), chunk.bytes.size());
		if (sum != chunk.sha256) {
			why = "chunk " + std::to_string(chunk.index) + " of the epoch at " +
			      EpochKey(database, branch, chain, seq) + " does not match its SHA-256";
			return false;
		}
	}
	return true;
}

} // namespace differential
