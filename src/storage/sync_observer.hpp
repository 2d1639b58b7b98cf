// The hook through which a layer above storage learns that a file of a branch became durable (its
// FileSync published it). Replication installs one to ship the WAL; storage never knows what it does.
#pragma once

#include "storage/diff_path.hpp"
#include "storage/versioned_file.hpp"

#include <memory>

namespace differential {

class SyncObserver {
public:
	virtual ~SyncObserver() = default;
	//! Called after `file` (of a branch, open for writing) was published by a FileSync, on DuckDB's
	//! thread; `main_file` is the branch's database file when this process has it open for writing. An
	//! exception fails the FileSync (a commit then fails, and DuckDB reverts it).
	virtual void AfterSync(const FileAddress &address, VersionedFile &file, VersionedFile *main_file) = 0;
	//! Whether any file is observed now. Asked (without a lock) before anything else on every sync, so a
	//! process that ships nothing pays one atomic load per commit. Must turn true before the first sync of a
	//! file the observer wants.
	virtual bool Watching() const = 0;
};

//! Installs the process's observer (replaces any earlier one; nullptr removes it).
void InstallSyncObserver(std::shared_ptr<SyncObserver> observer);
std::shared_ptr<SyncObserver> CurrentSyncObserver();

} // namespace differential
