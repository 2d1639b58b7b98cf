// One logged GET of an object store: every remote read (resolving an export, fetching chunks) goes through
// here, so each request shows in the log with its duration and attempts. Failures are raised by FailRemote.
#pragma once

#include "storage/object_store.hpp"

namespace differential {

//! `store.Get`, logged as the event `remote_get` (duration; store, key, range, status, bytes, attempts).
GetResult LoggedGet(ObjectStore &store, const std::string &key, const std::optional<ByteRange> &range = std::nullopt);

} // namespace differential
