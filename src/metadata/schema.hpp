// The metadata schema and its stepwise migrations.
#pragma once

#include <string>

namespace differential {

class SqliteDatabase;

//! Brings the metadata to the current schema in one transaction; refuses a newer schema or another
//! store format with unsupported_format.
void MigrateSchema(SqliteDatabase &db, const std::string &root);

} // namespace differential
