// An export run: takes the repository's export lock, exports the unexported snapshots oldest first,
// moves the heads that are behind, and words every failure as "the snapshot is local; here is the retry".
#include "export/export_pending.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "export/export_marker.hpp"
#include "export/snapshot_export.hpp"
#include "remote/export_format.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/file.h>
#include <unistd.h>

namespace differential {

ExportLock::ExportLock(const std::string &root) {
	auto path = root + "/export.lock";
	fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || flock(fd, LOCK_EX) != 0) {
		auto error = std::string(std::strerror(errno));
		if (fd >= 0) {
			close(fd);
		}
		Fail(ErrorCode::EXPORT_FAILED,
		     "Cannot take the export lock " + path + ": " + error + ". Check the repository directory's permissions.");
	}
}

ExportLock::~ExportLock() {
	flock(fd, LOCK_UN);
	close(fd);
}

static std::string RetryHint(const std::string &database) {
	return "The snapshot stays local; the next snapshot of " + database +
	       " exports it, or export it now with CALL differential_export_snapshot('" + database + "').";
}

[[noreturn]] static void RaiseFailure(const ExportContext &context, int64_t snapshot_id, const ExportFailure &e) {
	auto subject = snapshot_id < 0 ? "Database " + context.database + " has snapshots that are committed locally"
	                               : "Snapshot " + std::to_string(snapshot_id) + " of database " + context.database +
	                                     " is committed locally";
	auto what = subject + ", but exporting to " + context.store_url + " failed (" + e.what() + "). ";
	if (e.status == ObjectStatus::DENIED) {
		Fail(ErrorCode::ACCESS_DENIED,
		     what + "The store refused the credentials: check the TYPE s3 secret whose SCOPE covers " +
		         context.store_url + " (or the AWS credential chain). " + RetryHint(context.database));
	}
	Fail(ErrorCode::EXPORT_FAILED, what + RetryHint(context.database));
}

[[noreturn]] static void RaiseConflict(const ExportContext &context, int64_t snapshot_id, const std::string &why) {
	Fail(ErrorCode::HEAD_CONFLICT,
	     "Another writer publishes database " + context.database + " to " + context.store_url + ": " + why +
	         ". Nothing there was overwritten, and snapshot " + std::to_string(snapshot_id) +
	         " stays local. Attach the published head read-only to see the other writer's state; to publish this "
	         "copy, clone it under another name or give it another DATA_PATH.");
}

[[noreturn]] static void RaiseProbeRefusal(const ExportContext &context, const std::string &why) {
	Fail(ErrorCode::CONDITIONAL_WRITES_UNSUPPORTED,
	     "The store " + context.store_url + " does not honour conditional writes (" + why +
	         "), so branch heads there could silently overwrite each other; no head was published. The snapshots "
	         "stay local (their other objects may already be uploaded). Use an S3 service that honours If-None-Match "
	         "and If-Match on PUT.");
}

static void PublishHeads(ExportContext &context, ExportRun &run) {
	for (auto &newest : context.repository.metadata->remote.BranchHeadExports(context.database, context.store_url)) {
		ExportStats stats;
		try {
			if (PublishBranchHead(context, newest.branch_name, newest.snapshot_id, newest.descriptor, stats)) {
				run.heads.push_back({newest.branch_name, newest.snapshot_id});
			}
		} catch (ExportFailure &e) {
			RaiseFailure(context, newest.snapshot_id, e);
		} catch (RemoteConflict &e) {
			RaiseConflict(context, newest.snapshot_id, e.what());
		} catch (ProbeRefusal &e) {
			RaiseProbeRefusal(context, e.what());
		}
		run.stats.requests += stats.requests;
		run.stats.objects += stats.objects;
		run.stats.bytes += stats.bytes;
	}
}

//! The exported snapshots expired locally whose expiry record the store does not have yet.
static std::vector<int64_t> DueExpiryRecords(ExportContext &context) {
	auto &remote = context.repository.metadata->remote;
	std::vector<int64_t> due;
	for (auto id : remote.ExpiredExports(context.database, context.store_url)) {
		if (!remote.HasObject(context.store_url, ExpiryRecordKey(context.database, id))) {
			due.push_back(id);
		}
	}
	return due;
}

//! Writes the due expiry records (create-only; one already there, from an earlier try, is as good), so
//! remote cleanup may condemn what only those snapshots reached.
static void PublishExpiryRecords(ExportContext &context, const std::vector<int64_t> &due, ExportRun &run) {
	ExportUploader uploader(context.store, run.stats);
	for (auto id : due) {
		auto key = ExpiryRecordKey(context.database, id);
		try {
			uploader.PutRecord(key, EncodeSnapshotRecord({context.database, id, Hash256()}, true));
		} catch (ExportFailure &e) {
			RaiseFailure(context, -1, e);
		}
		context.repository.metadata->remote.RecordObject(context.store_url, key);
		run.expiry_records++;
	}
}

//! Whether some branch's head in the store is not its exported head snapshot (a head move failed earlier,
//! or a fast-forward moved the branch to an exported snapshot).
static bool HeadsBehind(ExportContext &context) {
	auto &remote = context.repository.metadata->remote;
	for (auto &newest : remote.BranchHeadExports(context.database, context.store_url)) {
		auto head = remote.Head(context.store_url, context.database, newest.branch_name);
		if (!head || head->snapshot_id != newest.snapshot_id) {
			return true;
		}
	}
	return false;
}

static void ExportObjects(ExportContext &context, const std::vector<PendingExport> &pending, ExportRun &run,
                          const std::function<void(double)> &progress) {
	for (size_t i = 0; i < pending.size(); i++) {
		auto &snapshot = pending[i];
		if (progress) {
			// Each snapshot gets an equal share of the first 90 percent, filled as its packs go up.
			context.pack_progress = [&progress, i, &pending](size_t done, size_t total) {
				double within = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
				progress(90.0 * (static_cast<double>(i) + within) / static_cast<double>(pending.size()));
			};
		}
		ExportedSnapshot exported;
		exported.snapshot_id = snapshot.snapshot_id;
		exported.branch_name = snapshot.branch_name;
		LogTimer timer;
		try {
			exported.descriptor = ExportSnapshotObjects(context, snapshot.snapshot_id, exported.stats);
		} catch (ExportFailure &e) {
			RaiseFailure(context, snapshot.snapshot_id, e);
		} catch (RemoteConflict &e) {
			RaiseConflict(context, snapshot.snapshot_id, e.what());
		}
		LogEvent("export_snapshot", timer.ElapsedMs(),
		         context.database + " snapshot " + std::to_string(snapshot.snapshot_id) + " to " + context.store_url +
		             ": " + std::to_string(exported.stats.packs) + " pack(s), " +
		             std::to_string(exported.stats.chunks) + " chunk(s), " + std::to_string(exported.stats.bytes) +
		             " bytes in " + std::to_string(exported.stats.requests) + " request(s)");
		run.stats.Add(exported.stats);
		run.snapshots.push_back(std::move(exported));
	}
}

ExportRun ExportPendingSnapshots(Repository &repository, const std::string &database, ObjectStore &store,
                                 const std::string &store_url, std::optional<int64_t> up_to,
                                 const ExportTuning &tuning) {
	ExportLock lock(repository.root);
	ExportContext context {repository, database, store, store_url, nullptr, tuning.upload_concurrency};
	auto &progress = tuning.progress;
	ExportRun run;
	auto pending = repository.metadata->remote.PendingExports(database, up_to);
	auto expiries = DueExpiryRecords(context);
	if (pending.empty() && expiries.empty() && !HeadsBehind(context)) {
		return run; // nothing to do costs no request
	}
	LogTimer timer;
	std::unique_ptr<ExportMarker> marker;
	try {
		marker = std::make_unique<ExportMarker>(context, run.stats);
	} catch (ExportFailure &e) {
		RaiseFailure(context, pending.empty() ? -1 : pending.front().snapshot_id, e);
	}
	ExportObjects(context, pending, run, progress);
	if (progress) {
		progress(90.0);
	}
	PausePoint("export.before_heads", database); // tests detach the database, or close the instance, here
	PublishHeads(context, run);
	PublishExpiryRecords(context, expiries, run);
	marker.reset(); // its DELETE counts in this run
	if (progress) {
		progress(100.0);
	}
	LogEvent("export", timer.ElapsedMs(),
	         database + " to " + store_url + ": " + std::to_string(run.snapshots.size()) + " snapshot(s), " +
	             std::to_string(run.heads.size()) + " head(s), " + std::to_string(run.expiry_records) +
	             " expiry record(s), " + std::to_string(run.stats.requests) + " request(s)");
	return run;
}

} // namespace differential
