// Every refusal the extension raises: "[differential:<code>] <what happened>. <what to do>".
#pragma once

#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

namespace differential {

//! The kind decides which DuckDB exception type the SQL layer raises.
//! INVALID is DuckDB's plain "Invalid Error", which the 1.1 specification shows for refusals of the
//! history's shape (merge_base_ambiguous) and of an attached merge target.
enum class ErrorKind { INVALID_INPUT, NOT_FOUND, CONFLICT, IO, INVALID, PERMISSION, INTERNAL };

class DifferentialError;

//! The errors raised lately in this process, newest last. A refusal raised inside SQL that our own
//! code runs (an input's ATTACH on a merge's private connection, a read of its file) comes back as a
//! DuckDB exception that holds only the text: Find gives back the error itself, fields and all, so
//! nothing has to parse a code out of a message.
class RaisedErrors {
public:
	static void Remember(const DifferentialError &error);
	//! The latest error whose whole message `text` contains (DuckDB may add context around it).
	static std::optional<DifferentialError> Find(const std::string &text);

private:
	//! A few suffice: the lookup happens right after the statement that raised the error fails.
	static constexpr size_t KEPT = 32;
	static std::mutex &Lock() {
		static std::mutex lock;
		return lock;
	}
	static std::deque<DifferentialError> &Kept();
};

class DifferentialError : public std::runtime_error {
public:
	DifferentialError(ErrorKind kind, std::string code, const std::string &message)
	    : std::runtime_error("[differential:" + code + "] " + message), kind(kind), code(std::move(code)),
	      detail(message) {
		RaisedErrors::Remember(*this);
	}
	ErrorKind kind;
	std::string code;
	//! The message without its "[differential:<code>] " prefix.
	std::string detail;
};

inline std::deque<DifferentialError> &RaisedErrors::Kept() {
	static std::deque<DifferentialError> kept;
	return kept;
}

inline void RaisedErrors::Remember(const DifferentialError &error) {
	std::lock_guard<std::mutex> guard(Lock());
	auto &kept = Kept();
	kept.push_back(error);
	if (kept.size() > KEPT) {
		kept.pop_front();
	}
}

inline std::optional<DifferentialError> RaisedErrors::Find(const std::string &text) {
	std::lock_guard<std::mutex> guard(Lock());
	auto &kept = Kept();
	for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
		if (text.find(it->what()) != std::string::npos) {
			return *it;
		}
	}
	return std::nullopt;
}

[[noreturn]] inline void Fail(ErrorKind kind, const std::string &code, const std::string &message) {
	throw DifferentialError(kind, code, message);
}

} // namespace differential
