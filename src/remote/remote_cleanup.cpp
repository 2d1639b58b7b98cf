// The walk: heads and unexpired commit records → descriptors → export index pages → packs. A real run
// first leaves its own marker and checks for exporters' markers, and only then walks, so an export that
// finishes during the walk was either seen by the check (the run holds) or sees this run's marker (and
// waits for it): a head can never come to name an object this run deletes.
#include "remote/remote_cleanup.hpp"

#include "remote/export_format.hpp"
#include "remote/remote_journal.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace differential {

const char *CleanupHoldName(CleanupHold hold) {
	switch (hold) {
	case CleanupHold::NONE:
		return "none";
	case CleanupHold::EXPORT_RUNNING:
		return "export_running";
	case CleanupHold::CLEANUP_RUNNING:
		return "cleanup_running";
	}
	return "none";
}

static ObjectOutcome Damaged(const std::string &key, const std::string &why) {
	return {ObjectStatus::INVALID, "the object " + key + " is damaged: " + why, 0};
}

//! Reads a content-addressed object and checks its bytes against the hash its key names.
static ObjectOutcome GetVerified(ObjectStore &store, const std::string &key, const Hash256 &hash, std::string &data) {
	auto got = store.Get(key);
	if (!got.outcome.Ok()) {
		return got.outcome;
	}
	if (Sha256(got.data.data(), got.data.size()) != hash) {
		return Damaged(key, "its SHA-256 is not the one its key names");
	}
	data = std::move(got.data);
	return got.outcome;
}

static ObjectOutcome HeadDescriptors(ObjectStore &store, std::set<Hash256> &roots) {
	std::vector<ObjectInfo> heads;
	auto outcome = ListAll(store, HEADS_PREFIX, heads);
	for (size_t i = 0; outcome.Ok() && i < heads.size(); i++) {
		auto got = store.Get(heads[i].key);
		BranchHead head;
		std::string why;
		if (got.outcome.status == ObjectStatus::NOT_FOUND) {
			continue; // a head deleted since the listing names nothing
		}
		if (!got.outcome.Ok()) {
			return got.outcome;
		}
		if (!DecodeHead(got.data, head, why)) {
			return Damaged(heads[i].key, why);
		}
		roots.insert(head.descriptor);
		if (!IsZeroHash(head.chain_base)) {
			roots.insert(head.chain_base); // the base readers of a shipping head's WAL chain start from
		}
	}
	return outcome;
}

static ObjectOutcome UnexpiredDescriptors(ObjectStore &store, std::set<Hash256> &roots) {
	std::vector<ObjectInfo> commits, expiries;
	auto outcome = ListAll(store, COMMITS_PREFIX, commits);
	if (outcome.Ok()) {
		outcome = ListAll(store, EXPIRIES_PREFIX, expiries);
	}
	std::set<std::string> expired;
	for (auto &expiry : expiries) {
		expired.insert(expiry.key.substr(std::string(EXPIRIES_PREFIX).size()));
	}
	for (size_t i = 0; outcome.Ok() && i < commits.size(); i++) {
		if (expired.count(commits[i].key.substr(std::string(COMMITS_PREFIX).size()))) {
			continue;
		}
		auto got = store.Get(commits[i].key);
		RemoteSnapshotRecord record;
		std::string why;
		if (!got.outcome.Ok()) {
			return got.outcome;
		}
		if (!DecodeSnapshotRecord(got.data, false, record, why)) {
			return Damaged(commits[i].key, why);
		}
		roots.insert(record.descriptor);
	}
	return outcome;
}

//! Adds the keys one descriptor reaches to `live`.
static ObjectOutcome WalkDescriptor(ObjectStore &store, const Hash256 &descriptor_hash, std::set<std::string> &live) {
	std::string data, why;
	auto outcome = GetVerified(store, DescriptorKey(descriptor_hash), descriptor_hash, data);
	ExportDescriptor descriptor;
	if (outcome.Ok() && !DecodeDescriptor(data, descriptor, why)) {
		return Damaged(DescriptorKey(descriptor_hash), why);
	}
	live.insert(DescriptorKey(descriptor_hash));
	for (size_t i = 0; outcome.Ok() && i < descriptor.index_pages.size(); i++) {
		auto key = ExportIndexKey(descriptor.index_pages[i]);
		if (!live.insert(key).second) {
			continue;
		}
		std::vector<PackedChunk> slots;
		outcome = GetVerified(store, key, descriptor.index_pages[i], data);
		if (outcome.Ok() && !DecodeExportIndexPage(data, slots, why)) {
			return Damaged(key, why);
		}
		for (auto &slot : slots) {
			if (!slot.IsHole()) {
				live.insert(PackKey(slot.pack));
			}
		}
	}
	return outcome;
}

static ObjectOutcome WalkLive(ObjectStore &store, const RemoteCleanupOptions &options, std::set<std::string> &live,
                              uint64_t &roots) {
	std::set<Hash256> descriptors;
	auto outcome = HeadDescriptors(store, descriptors);
	if (outcome.Ok()) {
		outcome = UnexpiredDescriptors(store, descriptors);
	}
	roots = descriptors.size();
	uint64_t done = 0;
	for (auto it = descriptors.begin(); outcome.Ok() && it != descriptors.end(); ++it) {
		outcome = WalkDescriptor(store, *it, live);
		if (options.progress) {
			options.progress(++done, descriptors.size());
		}
	}
	return outcome;
}

//! Every content-addressed object in the prefix with its size.
static ObjectOutcome ListContent(ObjectStore &store, std::map<std::string, uint64_t> &objects) {
	for (auto prefix : {PACKS_PREFIX, INDEXES_PREFIX, DESCRIPTORS_PREFIX}) {
		std::vector<ObjectInfo> listed;
		auto outcome = ListAll(store, prefix, listed);
		if (!outcome.Ok()) {
			return outcome;
		}
		for (auto &object : listed) {
			objects[object.key] = object.size;
		}
	}
	return {};
}

//! What the condemnation records say about the unreachable objects now.
struct CleanupPlan {
	std::vector<std::string> deletable; //! condemned longer than the grace period ago, still unreachable
	std::vector<std::string> condemn;   //! unreachable and in no record yet
	std::vector<std::string> processed; //! old records this run settles
	uint64_t pending = 0;
};

static CleanupPlan Plan(const std::map<std::string, uint64_t> &unreachable, const std::vector<KeyRecord> &records,
                        const RemoteCleanupOptions &options) {
	CleanupPlan plan;
	std::set<std::string> recorded, deletable;
	for (auto &record : records) {
		bool old = record.created_unix_ms + options.grace_ms <= options.now_ms;
		if (old) {
			plan.processed.push_back(record.key);
		}
		for (auto &key : record.keys) {
			recorded.insert(key);
			if (old && unreachable.count(key)) {
				deletable.insert(key);
			}
		}
	}
	for (auto &entry : unreachable) {
		if (!recorded.count(entry.first)) {
			plan.condemn.push_back(entry.first);
		} else if (!deletable.count(entry.first)) {
			plan.pending++;
		}
	}
	plan.deletable.assign(deletable.begin(), deletable.end());
	return plan;
}

//! Why this run may not delete: a live marker of an export, or of another cleanup, besides its own.
static ObjectOutcome CheckHolds(ObjectStore &store, const std::string &own_marker, int64_t now_ms, CleanupHold &hold) {
	std::vector<std::string> exports, cleanups;
	auto outcome = LiveMarkers(store, MarkerKind::EXPORT, now_ms, exports);
	if (outcome.Ok()) {
		outcome = LiveMarkers(store, MarkerKind::CLEANUP, now_ms, cleanups);
	}
	cleanups.erase(std::remove(cleanups.begin(), cleanups.end(), own_marker), cleanups.end());
	hold = !exports.empty() ? CleanupHold::EXPORT_RUNNING
	                        : (!cleanups.empty() ? CleanupHold::CLEANUP_RUNNING : CleanupHold::NONE);
	return outcome;
}

//! Condemns the new, then (without a hold) journals and deletes the deletable and settles old records.
static ObjectOutcome Execute(ObjectStore &store, const CleanupPlan &plan, const RemoteCleanupOptions &options,
                             const std::map<std::string, uint64_t> &unreachable, RemoteCleanupReport &report) {
	std::string record_key;
	if (!plan.condemn.empty()) {
		auto outcome = WriteKeyRecord(store, RecordKind::CONDEMNED, options.now_ms, plan.condemn, record_key);
		if (!outcome.Ok()) {
			return outcome;
		}
	}
	if (report.hold != CleanupHold::NONE) {
		report.deleted_keys.clear();
		return {};
	}
	// The journal goes first: an exporter that reads it forgets these keys even if a delete below fails.
	if (!plan.deletable.empty()) {
		auto outcome = WriteKeyRecord(store, RecordKind::DELETIONS, options.now_ms, plan.deletable, record_key);
		if (!outcome.Ok()) {
			return outcome;
		}
	}
	for (auto &key : plan.deletable) {
		auto outcome = store.Delete(key);
		if (!outcome.Ok()) {
			return outcome;
		}
		report.deleted_objects++;
		report.deleted_bytes += unreachable.at(key);
	}
	for (auto &key : plan.processed) {
		auto outcome = store.Delete(key);
		if (!outcome.Ok()) {
			return outcome;
		}
	}
	return {};
}

static ObjectOutcome Run(ObjectStore &store, const RemoteCleanupOptions &options, const std::string &marker,
                         RemoteCleanupReport &report) {
	ObjectOutcome outcome;
	if (!options.dry_run) {
		outcome = CheckHolds(store, marker, options.now_ms, report.hold);
	}
	std::set<std::string> live;
	std::map<std::string, uint64_t> objects, unreachable;
	std::vector<KeyRecord> records;
	if (outcome.Ok()) {
		outcome = WalkLive(store, options, live, report.roots);
	}
	if (outcome.Ok()) {
		outcome = ListContent(store, objects);
	}
	if (outcome.Ok()) {
		outcome = ReadKeyRecords(store, RecordKind::CONDEMNED, "", records);
	}
	if (!outcome.Ok()) {
		return outcome;
	}
	for (auto &object : objects) {
		if (!live.count(object.first)) {
			unreachable.insert(object);
		}
	}
	report.live_objects = objects.size() - unreachable.size();
	report.unreachable_objects = unreachable.size();
	auto plan = Plan(unreachable, records, options);
	report.condemned_objects = plan.condemn.size();
	report.pending_objects = plan.pending;
	report.deleted_keys = plan.deletable;
	if (options.dry_run) {
		report.deleted_objects = plan.deletable.size();
		for (auto &key : plan.deletable) {
			report.deleted_bytes += unreachable.at(key);
		}
		return outcome;
	}
	return Execute(store, plan, options, unreachable, report);
}

ObjectOutcome CleanupRemoteFiles(ObjectStore &store, const RemoteCleanupOptions &options, RemoteCleanupReport &report) {
	report = RemoteCleanupReport();
	report.dry_run = options.dry_run;
	std::string marker;
	if (!options.dry_run) {
		auto outcome = WriteMarker(store, MarkerKind::CLEANUP, options.now_ms, marker);
		if (!outcome.Ok()) {
			return outcome;
		}
	}
	auto outcome = Run(store, options, marker, report);
	if (!marker.empty()) {
		// A marker left behind (the delete failed) holds exporters back only until it ages out.
		store.Delete(marker);
	}
	return outcome;
}

} // namespace differential
