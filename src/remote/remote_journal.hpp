// The coordination objects of a shared prefix: "being written" markers (markers/) that exporters and
// cleanup leave while they run, condemnation records (condemned/) and the deletion journal (deletions/).
#pragma once

#include "storage/object_store.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace differential {

enum class MarkerKind { EXPORT, CLEANUP };

//! The wall clock markers and records are named and aged by (unix milliseconds).
int64_t NowUnixMs();

//! A marker older than this belongs to a process that died: it no longer holds anyone back.
static constexpr int64_t MARKER_LIFETIME_MS = 60LL * 60 * 1000;

//! Writes a create-only marker `markers/<kind>-<time>-<random>`; returns its key, or fails with the outcome.
ObjectOutcome WriteMarker(ObjectStore &store, MarkerKind kind, int64_t now_ms, std::string &key);
//! The markers of `kind` younger than MARKER_LIFETIME_MS at `now_ms` (their keys).
ObjectOutcome LiveMarkers(ObjectStore &store, MarkerKind kind, int64_t now_ms, std::vector<std::string> &keys);

//! A record of object keys written at one time: a condemnation or a deletion journal entry.
struct KeyRecord {
	std::string key; //! the record's own key
	int64_t created_unix_ms = 0;
	std::vector<std::string> keys;
};
enum class RecordKind { CONDEMNED, DELETIONS };

//! Writes a create-only record of `keys` under `condemned/` or `deletions/`.
ObjectOutcome WriteKeyRecord(ObjectStore &store, RecordKind kind, int64_t now_ms, const std::vector<std::string> &keys,
                             std::string &record_key);
//! Every record of `kind` whose key sorts after `after` (records are named by time, so this is "since"),
//! in key order. A record that cannot be read or parsed fails the call: callers must not act on half a list.
ObjectOutcome ReadKeyRecords(ObjectStore &store, RecordKind kind, const std::string &after,
                             std::vector<KeyRecord> &records);

} // namespace differential
