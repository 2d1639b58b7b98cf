// Every refusal the extension raises: "[differential:<code>] <what happened>. <what to do>".
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace differential {

//! The kind decides which DuckDB exception type the SQL layer raises.
//! INVALID is DuckDB's plain "Invalid Error": refusals of the history's shape (merge_base_ambiguous) and of
//! an attached merge target raise it (docs/MERGES.md shows them so).
enum class ErrorKind { INVALID_INPUT, NOT_FOUND, CONFLICT, IO, INVALID, PERMISSION, INTERNAL };

class DifferentialError : public std::runtime_error {
public:
	DifferentialError(ErrorKind kind, std::string code, const std::string &message)
	    : std::runtime_error("[differential:" + code + "] " + message), kind(kind), code(std::move(code)),
	      detail(message) {
	}
	ErrorKind kind;
	std::string code;
	//! The message without its "[differential:<code>] " prefix.
	std::string detail;
};

//! The one place a message is read back as an error (the boundary DuckDB draws): a refusal we raised inside SQL
//! our own code runs (an input's ATTACH on a merge's private connection, a read of its file) returns as a DuckDB
//! exception that holds only its text, "... [differential:<code>] <detail>" with whatever context DuckDB put
//! around it. Gives back that error, of `kind`, or nothing when the text holds none of ours.
std::optional<DifferentialError> ParseRaisedError(ErrorKind kind, const std::string &text);

[[noreturn]] inline void Fail(ErrorKind kind, const std::string &code, const std::string &message) {
	throw DifferentialError(kind, code, message);
}

} // namespace differential
