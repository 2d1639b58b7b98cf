// Remote garbage collection of a DATA_PATH prefix: condemn what no branch head or unexpired snapshot
// reaches, delete it in a later run once the grace period has passed and only if it is still unreachable.
#pragma once

#include "storage/object_store.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace differential {

struct RemoteCleanupOptions {
	bool dry_run = false;
	//! How long a condemned object waits before a run may delete it (a week by default).
	int64_t grace_ms = 7LL * 24 * 60 * 60 * 1000;
	int64_t now_ms = 0;
	//! Called with (done, total) steps of the walk, for a progress bar.
	std::function<void(uint64_t, uint64_t)> progress;
};

//! Why a run stopped before deleting, as data.
enum class CleanupHold {
	NONE,
	EXPORT_RUNNING, //! another process's export marker is live: nothing is deleted this run
	CLEANUP_RUNNING //! another cleanup of the same prefix is running
};
const char *CleanupHoldName(CleanupHold hold);

struct RemoteCleanupReport {
	bool dry_run = false;
	uint64_t roots = 0;               //! distinct descriptors that heads and unexpired commit records name
	uint64_t live_objects = 0;        //! descriptors, index pages and packs they reach
	uint64_t unreachable_objects = 0; //! everything else under packs/, indexes/, descriptors/
	uint64_t condemned_objects = 0;   //! newly condemned by this run (a dry run: would be)
	uint64_t pending_objects = 0;     //! condemned earlier, still inside the grace period
	uint64_t deleted_objects = 0;     //! deleted by this run (a dry run: would be)
	uint64_t deleted_bytes = 0;
	CleanupHold hold = CleanupHold::NONE;
	std::vector<std::string> deleted_keys; //! what was (or, in a dry run, would be) deleted, sorted
};

//! Runs one cleanup of `store`. Fails (returns a non-OK outcome, with nothing deleted) when a live root's
//! descriptor or index page cannot be read: what it reaches is then unknown, so nothing may go.
ObjectOutcome CleanupRemoteFiles(ObjectStore &store, const RemoteCleanupOptions &options, RemoteCleanupReport &report);

} // namespace differential
