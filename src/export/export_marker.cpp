// Coordination with remote cleanup (remote/remote_cleanup.cpp): both write their marker first and look
// for the other's second, so of a concurrent export and cleanup at least one sees the other. Cleanup
// journals what it deletes before deleting it; reading that journal here keeps remote_chunks honest.
#include "export/export_marker.hpp"

#include "common/logging.hpp"
#include "remote/remote_journal.hpp"

#include <chrono>
#include <thread>

namespace differential {

static constexpr int CLEANUP_WAIT_SECONDS = 120;

//! Counts and logs one coordination request; a failure becomes an ExportFailure.
static void Check(const char *what, const ObjectOutcome &outcome, const LogTimer &timer, ExportStats &stats) {
	stats.requests++;
	LogEvent("export_request", timer.ElapsedMs(),
	         std::string(what) + ": " + ObjectStatusName(outcome.status) + ", " + std::to_string(outcome.attempts) +
	             " attempt(s)");
	if (!outcome.Ok()) {
		throw ExportFailure(outcome.status, outcome.detail);
	}
}

ExportMarker::ExportMarker(ExportContext &context, ExportStats &stats) : context(context), stats(stats) {
	LogTimer timer;
	Check("PUT if-none-match markers/export-…", WriteMarker(context.store, MarkerKind::EXPORT, NowUnixMs(), key), timer,
	      stats);
	try {
		WaitForCleanups(stats);
		ForgetDeletedObjects(stats);
	} catch (...) {
		context.store.Delete(key);
		throw;
	}
}

ExportMarker::~ExportMarker() {
	LogTimer timer;
	auto outcome = context.store.Delete(key);
	stats.requests++;
	if (!outcome.Ok()) {
		LogWarning("export_marker_left", key + ": " + outcome.detail + " (it stops counting after an hour)");
	} else {
		LogEvent("export_request", timer.ElapsedMs(),
		         "DELETE " + key + ": ok, " + std::to_string(outcome.attempts) + " attempt(s)");
	}
}

void ExportMarker::WaitForCleanups(ExportStats &stats) {
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(CLEANUP_WAIT_SECONDS);
	while (true) {
		std::vector<std::string> cleanups;
		LogTimer timer;
		Check("LIST markers/cleanup-", LiveMarkers(context.store, MarkerKind::CLEANUP, NowUnixMs(), cleanups), timer,
		      stats);
		if (cleanups.empty()) {
			return;
		}
		if (std::chrono::steady_clock::now() > deadline) {
			throw ExportFailure(ObjectStatus::TRANSIENT,
			                    "a remote cleanup of this prefix (" + cleanups.front() + ") kept running for " +
			                        std::to_string(CLEANUP_WAIT_SECONDS) + " s; retry once it has finished");
		}
		std::this_thread::sleep_for(std::chrono::seconds(1));
	}
}

void ExportMarker::ForgetDeletedObjects(ExportStats &stats) {
	auto &remote = context.repository.metadata->remote;
	std::vector<KeyRecord> records;
	LogTimer timer;
	Check("LIST deletions/",
	      ReadKeyRecords(context.store, RecordKind::DELETIONS, remote.DeletionsSeen(context.store_url), records), timer,
	      stats);
	if (records.empty()) {
		return;
	}
	std::vector<std::string> keys;
	for (auto &record : records) {
		keys.insert(keys.end(), record.keys.begin(), record.keys.end());
	}
	remote.ForgetDeleted(context.store_url, keys, records.back().key);
}

} // namespace differential
