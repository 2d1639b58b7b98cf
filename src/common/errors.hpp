// Every refusal the extension raises: "[differential:<code>] <what happened>. <what to do>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace differential {

//! The kind decides which DuckDB exception type the SQL layer raises.
//! INVALID is DuckDB's plain "Invalid Error": refusals of the history's shape (merge_base_ambiguous) and of
//! an attached merge target raise it (docs/MERGES.md shows them so).
enum class ErrorKind { INVALID_INPUT, NOT_FOUND, CONFLICT, IO, INVALID, PERMISSION, INTERNAL };

//! Every code a refusal can carry, from the registry common/error_codes.def.
enum class ErrorCode : uint16_t {
#define DIFFERENTIAL_ERROR_CODE(name, text, kind, meaning) name,
#include "common/error_codes.def"
#undef DIFFERENTIAL_ERROR_CODE
};

//! How many codes the registry has (they number 0 .. ERROR_CODE_COUNT - 1).
inline constexpr size_t ERROR_CODE_COUNT = 0
#define DIFFERENTIAL_ERROR_CODE(name, text, kind, meaning) +1
#include "common/error_codes.def"
#undef DIFFERENTIAL_ERROR_CODE
    ;

//! The code as users see it in "[differential:<code>]" and in stored merge requests.
const char *ToString(ErrorCode code);
//! The kind a code is raised with unless its raise names another.
ErrorKind KindOf(ErrorCode code);
//! The code spelled `text`, or nothing for a word the registry does not have.
std::optional<ErrorCode> ErrorCodeOf(const std::string &text);

class DifferentialError : public std::runtime_error {
public:
	DifferentialError(ErrorKind kind, ErrorCode code, const std::string &message)
	    : std::runtime_error(std::string("[differential:") + ToString(code) + "] " + message), kind(kind), code(code),
	      detail(message) {
	}
	ErrorKind kind;
	ErrorCode code;
	//! The message without its "[differential:<code>] " prefix.
	std::string detail;
};

//! The one place a message is read back as an error (the boundary DuckDB draws): a refusal we raised inside SQL
//! our own code runs (an input's ATTACH on a merge's private connection, a read of its file) returns as a DuckDB
//! exception that holds only its text, "... [differential:<code>] <detail>" with whatever context DuckDB put
//! around it. Gives back that error, of `kind`, or nothing when the text holds none of ours.
std::optional<DifferentialError> ParseRaisedError(ErrorKind kind, const std::string &text);

//! Raises `code` with the kind the registry gives it.
[[noreturn]] inline void Fail(ErrorCode code, const std::string &message) {
	throw DifferentialError(KindOf(code), code, message);
}

//! Raises `code` with another kind: a code whose causes differ (bad input, or the disk refusing) keeps one name.
[[noreturn]] inline void Fail(ErrorKind kind, ErrorCode code, const std::string &message) {
	throw DifferentialError(kind, code, message);
}

} // namespace differential
