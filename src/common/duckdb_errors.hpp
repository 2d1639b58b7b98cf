// Turns a DifferentialError into the DuckDB exception type its kind calls for, so SQL users
// see "<Type> Error: [differential:<code>] ..." exactly as for DuckDB's own errors.
#pragma once

#include "common/errors.hpp"
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
