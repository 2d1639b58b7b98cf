// The probe that decides whether a store may hold branch heads: it must refuse create-only and stale
// If-Match writes and let exactly one of 8 racing writers win, or heads could silently fork.
#pragma once

#include "storage/object_store.hpp"

#include <string>

namespace differential {

struct ProbeResult {
	bool passed = false;
	//! Which promise failed and how (for the error the extension shows), or what kept the probe from
	//! finishing (an outcome other than the ones it checks, e.g. `denied`).
	std::string failure;
	ObjectStatus status = ObjectStatus::OK; //! the status of the request that failed the probe
};

//! Runs the probe under `<scratch_prefix><random>/`, writing a handful of small objects and deleting
//! them again: create-only twice (the second must be refused), If-Match with a stale etag (refused),
//! then 8 threads racing If-Match on the same etag (exactly one wins).
ProbeResult ProbeConditionalWrites(ObjectStore &store, const std::string &scratch_prefix);

} // namespace differential
