// ATTACH's look at a DATA_PATH it is given: a store that refuses it refuses the ATTACH, with the code the first
// export would give, before anything is written; a store that cannot be reached only warns, so local work goes on.
#pragma once

#include "duckdb/main/client_context.hpp"

#include <string>

namespace differential {

//! One listing of at most one key under the DATA_PATH `url`, with the session's credentials. Refuses with
//! access_denied (the store refused the credentials) or export_failed (no such bucket, or the request itself was
//! refused); a store that is unreachable or failing logs `data_path_unreachable` and returns. A `file://` store
//! is not probed: its first export creates its directory.
void ProbeDataPath(duckdb::ClientContext &context, const std::string &url, const std::string &database);

} // namespace differential
