// One logged GET of an object store, and the refusal a failed one becomes: every remote read (resolving an
// export, fetching chunks) goes through here, so each request shows in the log with its duration and attempts.
#pragma once

#include "storage/object_store.hpp"

namespace differential {

//! `store.Get`, logged as the event `remote_get` (duration; store, key, range, status, bytes, attempts).
GetResult LoggedGet(ObjectStore &store, const std::string &key, const std::optional<ByteRange> &range = std::nullopt);

//! Raises the refusal for a failed request that is not a missing key (callers name those themselves):
//! remote_access_denied, remote_unavailable or remote_request_failed. `what` names the object for people.
[[noreturn]] void FailRemoteRequest(ObjectStore &store, const std::string &what, const ObjectOutcome &outcome);

} // namespace differential
