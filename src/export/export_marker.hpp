// The "being written" marker an export run leaves in its prefix (markers/export-…): while it is live,
// remote cleanup deletes nothing there. The run starts only when no cleanup runs.
#pragma once

#include "export/snapshot_export.hpp"

#include <string>

namespace differential {

class ExportMarker {
public:
	//! Writes the marker, waits (up to two minutes) for a running cleanup of the prefix to finish, then
	//! forgets every object the prefix's deletion journal records since this repository last read it.
	//! Throws ExportFailure when the store cannot be written or a cleanup keeps running.
	ExportMarker(ExportContext &context, ExportStats &stats);
	//! Deletes the marker (best effort: an orphaned one stops holding cleanup back after an hour).
	~ExportMarker();
	ExportMarker(const ExportMarker &) = delete;
	ExportMarker &operator=(const ExportMarker &) = delete;

private:
	void WaitForCleanups(ExportStats &stats);
	void ForgetDeletedObjects(ExportStats &stats);

	ExportContext &context;
	ExportStats &stats;
	std::string key;
};

} // namespace differential
