// Encoding of the export objects. Text objects (descriptors, heads, records) are `key value` lines after a
// first line naming the kind and format, so a person can read them with any S3 tool; index pages are binary.
#include "remote/export_format.hpp"

#include "remote/object_key.hpp"
#include "remote/text_object.hpp"

#include <cstring>

namespace differential {

const char *const PACKS_PREFIX = "packs/";
const char *const INDEXES_PREFIX = "indexes/";
const char *const DESCRIPTORS_PREFIX = "descriptors/";
const char *const HEADS_PREFIX = "heads/";
const char *const COMMITS_PREFIX = "commits/";
const char *const EXPIRIES_PREFIX = "expiries/";

static constexpr char INDEX_MAGIC[8] = {'D', 'I', 'F', 'X', 'I', 'D', 'X', '2'};
static constexpr size_t INDEX_HEADER_SIZE = 16;
static constexpr size_t INDEX_SLOT_SIZE = 32 + 32 + 8 + 4;

std::string PackKey(const Hash256 &pack) {
	return PACKS_PREFIX + HashToHex(pack);
}
std::string ExportIndexKey(const Hash256 &page) {
	return INDEXES_PREFIX + HashToHex(page);
}
std::string DescriptorKey(const Hash256 &descriptor) {
	return DESCRIPTORS_PREFIX + HashToHex(descriptor);
}
std::string HeadKey(const std::string &database, const std::string &branch) {
	return HEADS_PREFIX + database + "/" + branch;
}
std::string CommitRecordKey(const std::string &database, int64_t snapshot_id) {
	return COMMITS_PREFIX + database + "/" + SortableNumber(snapshot_id);
}
std::string ExpiryRecordKey(const std::string &database, int64_t snapshot_id) {
	return EXPIRIES_PREFIX + database + "/" + SortableNumber(snapshot_id);
}

static void PutU64(std::vector<uint8_t> &out, uint64_t value, int bytes) {
	for (int i = 0; i < bytes; i++) {
		out.push_back(static_cast<uint8_t>(value >> (8 * i)));
	}
}

static uint64_t GetU64(const uint8_t *in, int bytes) {
	uint64_t value = 0;
	for (int i = 0; i < bytes; i++) {
		value |= static_cast<uint64_t>(in[i]) << (8 * i);
	}
	return value;
}

std::vector<uint8_t> EncodeExportIndexPage(const std::vector<PackedChunk> &slots) {
	std::vector<uint8_t> out(INDEX_MAGIC, INDEX_MAGIC + sizeof(INDEX_MAGIC));
	PutU64(out, slots.size(), 4);
	PutU64(out, 0, 4);
	for (auto &slot : slots) {
		out.insert(out.end(), slot.chunk.begin(), slot.chunk.end());
		out.insert(out.end(), slot.pack.begin(), slot.pack.end());
		PutU64(out, slot.offset, 8);
		PutU64(out, slot.length, 4);
	}
	return out;
}

bool DecodeExportIndexPage(const std::string &blob, std::vector<PackedChunk> &out, std::string &why) {
	auto bytes = reinterpret_cast<const uint8_t *>(blob.data());
	if (blob.size() < INDEX_HEADER_SIZE || std::memcmp(bytes, INDEX_MAGIC, sizeof(INDEX_MAGIC)) != 0) {
		why = "not an export index page (bad magic)";
		return false;
	}
	auto count = GetU64(bytes + 8, 4);
	if (count > EXPORT_INDEX_SLOTS || blob.size() != INDEX_HEADER_SIZE + count * INDEX_SLOT_SIZE) {
		why = "an export index page of " + std::to_string(blob.size()) + " bytes cannot hold " + std::to_string(count) +
		      " slots";
		return false;
	}
	out.assign(count, PackedChunk());
	for (uint64_t i = 0; i < count; i++) {
		auto slot = bytes + INDEX_HEADER_SIZE + i * INDEX_SLOT_SIZE;
		std::memcpy(out[i].chunk.data(), slot, 32);
		std::memcpy(out[i].pack.data(), slot + 32, 32);
		out[i].offset = GetU64(slot + 64, 8);
		out[i].length = static_cast<uint32_t>(GetU64(slot + 72, 4));
		if (!out[i].IsHole() && (out[i].length == 0 || out[i].offset + out[i].length > MAX_PACK_BYTES)) {
			why = "slot " + std::to_string(i) + " points outside any pack";
			return false;
		}
	}
	return true;
}

std::string EncodeDescriptor(const ExportDescriptor &descriptor) {
	TextObject out("descriptor");
	out.Add("database", descriptor.database);
	out.Add("snapshot", std::to_string(descriptor.snapshot_id));
	if (descriptor.snapshot_name) {
		out.Add("name", *descriptor.snapshot_name);
	}
	out.Add("created_unix_ms", std::to_string(descriptor.created_unix_ms));
	out.Add("length", std::to_string(descriptor.length));
	for (auto &page : descriptor.index_pages) {
		out.Add("index", HashToHex(page));
	}
	return out.text;
}

bool DecodeDescriptor(const std::string &text, ExportDescriptor &out, std::string &why) {
	ParsedText parsed;
	int64_t length = 0;
	if (!parsed.Parse(text, "descriptor", why) || !parsed.Text("database", out.database, why) ||
	    !parsed.Number("snapshot", out.snapshot_id, why) ||
	    !parsed.Number("created_unix_ms", out.created_unix_ms, why) || !parsed.Number("length", length, why)) {
		return false;
	}
	out.length = static_cast<uint64_t>(length);
	out.snapshot_name = parsed.values.count("name") ? std::optional<std::string>(parsed.values["name"]) : std::nullopt;
	out.index_pages.clear();
	for (auto &hex : parsed.lists["index"]) {
		Hash256 page;
		if (!HashFromHex(hex, page)) {
			why = "an index entry is not a SHA-256";
			return false;
		}
		out.index_pages.push_back(page);
	}
	return true;
}

std::string EncodeHead(const BranchHead &head) {
	TextObject out("head");
	out.Add("database", head.database);
	out.Add("branch", head.branch);
	out.Add("snapshot", std::to_string(head.snapshot_id));
	out.Add("descriptor", HashToHex(head.descriptor));
	out.Add("previous", HashToHex(head.previous));
	if (head.chain != 0) {
		out.Add("chain", std::to_string(head.chain));
		out.Add("base", HashToHex(head.chain_base));
	}
	return out.text;
}

bool DecodeHead(const std::string &text, BranchHead &out, std::string &why) {
	ParsedText parsed;
	out.chain = 0;
	out.chain_base = Hash256();
	if (!parsed.Parse(text, "head", why) || !parsed.Text("database", out.database, why) ||
	    !parsed.Text("branch", out.branch, why) || !parsed.Number("snapshot", out.snapshot_id, why) ||
	    !parsed.HashValue("descriptor", out.descriptor, why) || !parsed.HashValue("previous", out.previous, why)) {
		return false;
	}
	// The shipping lines are optional: heads of databases that do not ship (and older heads) lack them.
	if (!parsed.values.count("chain")) {
		return true;
	}
	int64_t chain = 0;
	if (!parsed.Number("chain", chain, why) || !parsed.HashValue("base", out.chain_base, why)) {
		return false;
	}
	out.chain = uint64_t(chain);
	return true;
}

std::string EncodeSnapshotRecord(const RemoteSnapshotRecord &record, bool expiry) {
	TextObject out(expiry ? "expiry" : "commit");
	out.Add("database", record.database);
	out.Add("snapshot", std::to_string(record.snapshot_id));
	if (!expiry) {
		out.Add("descriptor", HashToHex(record.descriptor));
		if (record.parent > 0) {
			out.Add("parent", std::to_string(record.parent));
		}
	}
	return out.text;
}

bool DecodeSnapshotRecord(const std::string &text, bool expiry, RemoteSnapshotRecord &out, std::string &why) {
	ParsedText parsed;
	if (!parsed.Parse(text, expiry ? "expiry" : "commit", why) || !parsed.Text("database", out.database, why) ||
	    !parsed.Number("snapshot", out.snapshot_id, why)) {
		return false;
	}
	out.descriptor = Hash256();
	out.parent = 0;
	if (!expiry && parsed.values.count("parent") && !parsed.Number("parent", out.parent, why)) {
		return false;
	}
	return expiry || parsed.HashValue("descriptor", out.descriptor, why);
}

std::string RemoteLocator::Key() const {
	return kind == Kind::HEAD ? HeadKey(database, branch) : DescriptorKey(descriptor);
}

//! Splits `url` at the last '/' before its final `segments` path segments.
static bool SplitTail(const std::string &url, int segments, std::string &front, std::vector<std::string> &tail) {
	auto end = url.size();
	tail.assign(segments, "");
	for (int i = segments - 1; i >= 0; i--) {
		auto slash = url.rfind('/', end - 1);
		if (end == 0 || slash == std::string::npos) {
			return false;
		}
		tail[i] = url.substr(slash + 1, end - slash - 1);
		end = slash;
	}
	front = url.substr(0, end + 1);
	return true;
}

bool ParseRemoteLocator(const std::string &url, RemoteLocator &out, std::string &why) {
	out = RemoteLocator();
	std::string front;
	std::vector<std::string> tail;
	if (SplitTail(url, 3, front, tail) && tail[0] == "heads" && !tail[1].empty() && !tail[2].empty()) {
		out.kind = RemoteLocator::Kind::HEAD;
		out.store_url = front;
		out.database = tail[1];
		out.branch = tail[2];
		return true;
	}
	if (SplitTail(url, 2, front, tail) && tail[0] == "descriptors" && HashFromHex(tail[1], out.descriptor)) {
		out.kind = RemoteLocator::Kind::DESCRIPTOR;
		out.store_url = front;
		return true;
	}
	why = "it names neither a branch head (<data path>heads/<database>/<branch>) nor an export descriptor "
	      "(<data path>descriptors/<sha256>)";
	return false;
}

} // namespace differential
