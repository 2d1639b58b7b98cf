// Markers and records are named `<prefix><20-digit unix ms>-<16 hex random>`, so listing order is time
// order and two writers in the same millisecond never collide (each write is create-only anyway).
#include "remote/remote_journal.hpp"

#include "remote/object_key.hpp"
#include "remote/text_object.hpp"

#include <chrono>
#include <random>

namespace differential {

static const char *const MARKERS_PREFIX = "markers/";

int64_t NowUnixMs() {
	return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
	    .count();
}

static std::string TimedName(int64_t now_ms) {
	std::random_device random;
	static const char *hex = "0123456789abcdef";
	std::string suffix;
	for (int i = 0; i < 16; i++) {
		suffix += hex[random() & 15];
	}
	return SortableNumber(now_ms) + "-" + suffix;
}

//! The time in a timed name (after `prefix`), or -1 when the name is not one.
static int64_t TimeOfName(const std::string &key, size_t prefix_length) {
	if (key.size() < prefix_length + 20) {
		return -1;
	}
	int64_t value = 0;
	for (size_t i = prefix_length; i < prefix_length + 20; i++) {
		if (key[i] < '0' || key[i] > '9') {
			return -1;
		}
		value = value * 10 + (key[i] - '0');
	}
	return value;
}

static std::string MarkerPrefix(MarkerKind kind) {
	return std::string(MARKERS_PREFIX) + (kind == MarkerKind::EXPORT ? "export-" : "cleanup-");
}

ObjectOutcome WriteMarker(ObjectStore &store, MarkerKind kind, int64_t now_ms, std::string &key) {
	key = MarkerPrefix(kind) + TimedName(now_ms);
	TextObject marker("marker");
	marker.Add("created_unix_ms", std::to_string(now_ms));
	PutRequest put;
	put.key = key;
	put.data = marker.text.data();
	put.size = marker.text.size();
	put.condition = PutCondition::CreateOnly();
	return store.Put(put).outcome;
}

ObjectOutcome LiveMarkers(ObjectStore &store, MarkerKind kind, int64_t now_ms, std::vector<std::string> &keys) {
	auto prefix = MarkerPrefix(kind);
	std::vector<ObjectInfo> listed;
	auto outcome = ListAll(store, prefix, listed);
	keys.clear();
	for (auto &object : listed) {
		auto created = TimeOfName(object.key, prefix.size());
		if (created >= 0 && created + MARKER_LIFETIME_MS > now_ms) {
			keys.push_back(object.key);
		}
	}
	return outcome;
}

static const char *RecordPrefix(RecordKind kind) {
	return kind == RecordKind::CONDEMNED ? "condemned/" : "deletions/";
}

static const char *RecordKindName(RecordKind kind) {
	return kind == RecordKind::CONDEMNED ? "condemned" : "deletions";
}

ObjectOutcome WriteKeyRecord(ObjectStore &store, RecordKind kind, int64_t now_ms, const std::vector<std::string> &keys,
                             std::string &record_key) {
	record_key = RecordPrefix(kind) + TimedName(now_ms);
	TextObject record(RecordKindName(kind));
	record.Add("created_unix_ms", std::to_string(now_ms));
	for (auto &key : keys) {
		record.Add("key", key);
	}
	PutRequest put;
	put.key = record_key;
	put.data = record.text.data();
	put.size = record.text.size();
	put.condition = PutCondition::CreateOnly();
	return store.Put(put).outcome;
}

static ObjectOutcome ReadKeyRecord(ObjectStore &store, RecordKind kind, const std::string &key, KeyRecord &out) {
	auto got = store.Get(key);
	if (!got.outcome.Ok()) {
		return got.outcome;
	}
	ParsedText parsed;
	std::string why;
	if (!parsed.Parse(got.data, RecordKindName(kind), why) ||
	    !parsed.Number("created_unix_ms", out.created_unix_ms, why)) {
		return {ObjectStatus::INVALID, "the record " + key + " is damaged: " + why, got.outcome.attempts};
	}
	out.key = key;
	out.keys = parsed.lists["key"];
	return got.outcome;
}

ObjectOutcome ReadKeyRecords(ObjectStore &store, RecordKind kind, const std::string &after,
                             std::vector<KeyRecord> &records) {
	std::vector<ObjectInfo> listed;
	auto outcome = ListAll(store, RecordPrefix(kind), listed);
	records.clear();
	if (!outcome.Ok()) {
		return outcome;
	}
	for (auto &object : listed) {
		if (object.key <= after) {
			continue;
		}
		KeyRecord record;
		auto read = ReadKeyRecord(store, kind, object.key, record);
		if (!read.Ok()) {
			return read;
		}
		records.push_back(std::move(record));
	}
	return outcome;
}

} // namespace differential
