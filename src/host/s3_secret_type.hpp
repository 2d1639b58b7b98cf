// The `TYPE s3` secret when no other extension provides it: registered on first use, never at LOAD, so that httpfs
// and aws can still load into the process afterwards (docs/S3.md §4, "Coexistence with httpfs").
#pragma once

#include "duckdb/main/database.hpp"

namespace differential {

//! Arms `db` for the s3 secret: every connection, open now or later, gets a client context state that, when a
//! `CREATE SECRET (TYPE s3 …)` fails to bind because no extension provides the type (httpfs neither loaded nor
//! installed to be autoloaded) or its provider `credential_chain` (likewise aws), registers differential's and binds
//! the statement again. A later load of httpfs or aws that would collide with what was registered here is refused
//! with secret_type_taken instead of DuckDB's internal error. Registers nothing itself.
void InstallS3SecretType(duckdb::DatabaseInstance &db);

} // namespace differential
