// Turns a DifferentialError into the DuckDB exception type its kind calls for, so SQL users
// see "<Type> Error: [differential:<code>] ..." exactly as for DuckDB's own errors.
#pragma once

#include "common/errors.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/common/exception/catalog_exception.hpp"
#include "duckdb/common/exception/transaction_exception.hpp"

namespace differential {

[[noreturn]] inline void ThrowAsDuckDB(const DifferentialError &error) {
	switch (error.kind) {
	case ErrorKind::INVALID_INPUT:
		throw duckdb::InvalidInputException(error.what());
	case ErrorKind::NOT_FOUND:
		throw duckdb::CatalogException(error.what());
	case ErrorKind::CONFLICT:
		throw duckdb::TransactionException(error.what());
	case ErrorKind::IO:
		throw duckdb::IOException(error.what());
	case ErrorKind::INVALID:
		throw duckdb::Exception(duckdb::ExceptionType::INVALID, error.what());
	case ErrorKind::PERMISSION:
		throw duckdb::PermissionException(error.what());
	default:
		throw duckdb::InternalException(error.what());
	}
}

//! The kind ThrowAsDuckDB gives each exception type, read back.
inline ErrorKind KindOf(duckdb::ExceptionType type) {
	switch (type) {
	case duckdb::ExceptionType::INVALID_INPUT:
		return ErrorKind::INVALID_INPUT;
	case duckdb::ExceptionType::CATALOG:
		return ErrorKind::NOT_FOUND;
	case duckdb::ExceptionType::TRANSACTION:
		return ErrorKind::CONFLICT;
	case duckdb::ExceptionType::IO:
		return ErrorKind::IO;
	case duckdb::ExceptionType::INVALID:
		return ErrorKind::INVALID;
	case duckdb::ExceptionType::PERMISSION:
		return ErrorKind::PERMISSION;
	default:
		return ErrorKind::INTERNAL;
	}
}

//! One of our refusals raised inside SQL we ran and returned by DuckDB as `error`, fields intact; nothing when the
//! failure is DuckDB's own.
inline std::optional<DifferentialError> RaisedInside(const duckdb::ErrorData &error) {
	return ParseRaisedError(KindOf(error.Type()), error.RawMessage());
}

//! Runs `fn`, translating our errors; DuckDB's own exceptions pass through unchanged.
template <class FN>
auto Translated(FN &&fn) -> decltype(fn()) {
	try {
		return fn();
	} catch (DifferentialError &error) {
		ThrowAsDuckDB(error);
	}
}

} // namespace differential
