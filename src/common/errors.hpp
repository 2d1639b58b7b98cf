// Every refusal the extension raises: "[differential:<code>] <what happened>. <what to do>".
#pragma once

#include <stdexcept>
#include <string>

namespace differential {

//! The kind decides which DuckDB exception type the SQL layer raises.
//! INVALID is DuckDB's plain "Invalid Error", which the 1.1 specification shows for refusals of the
//! history's shape (merge_base_ambiguous) and of an attached merge target.
enum class ErrorKind { INVALID_INPUT, NOT_FOUND, CONFLICT, IO, INVALID, INTERNAL };

class DifferentialError : public std::runtime_error {
public:
	DifferentialError(ErrorKind kind, std::string code, const std::string &message)
	    : std::runtime_error("[differential:" + code + "] " + message), kind(kind), code(std::move(code)) {
	}
	ErrorKind kind;
	std::string code;
};

[[noreturn]] inline void Fail(ErrorKind kind, const std::string &code, const std::string &message) {
	throw DifferentialError(kind, code, message);
}

} // namespace differential
