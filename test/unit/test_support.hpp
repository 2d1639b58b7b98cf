// Shared helpers for the unit tests: per-test temporary directories and error-code assertions.
#pragma once

#include "common/errors.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ftw.h>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace differential {
namespace test {

//! A fresh directory under $TMPDIR (or /tmp), removed with everything in it when the object dies.
class TempDir {
public:
	TempDir() {
		const char *base = std::getenv("TMPDIR");
		std::string tmpl = std::string(base && *base ? base : "/tmp") + "/differential-unit-XXXXXX";
		std::vector<char> buf(tmpl.begin(), tmpl.end());
		buf.push_back('\0');
		if (!mkdtemp(buf.data())) {
			throw std::runtime_error("mkdtemp failed for " + tmpl);
		}
		path = buf.data();
	}
	~TempDir() {
		nftw(
		    path.c_str(), [](const char *p, const struct stat *, int, struct FTW *) { return ::remove(p); }, 16,
		    FTW_DEPTH | FTW_PHYS);
	}
	TempDir(const TempDir &) = delete;
	TempDir &operator=(const TempDir &) = delete;

	//! Creates (if needed) and returns a subdirectory.
	std::string Sub(const std::string &name) const {
		auto sub = path + "/" + name;
		mkdir(sub.c_str(), 0755);
		return sub;
	}

	std::string path;
};

//! Runs `fn` and returns the code of the DifferentialError it throws, or a marker when it throws nothing
//! (or something else), so a test can write EXPECT_EQ(RaisedCode([&] { ... }), "invalid_path").
template <class F>
std::string RaisedCode(F &&fn) {
	try {
		fn();
	} catch (const DifferentialError &e) {
		std::string message = e.what();
		// Every refusal names its code first, in the form the SQL layer shows.
		std::string code = ToString(e.code);
		EXPECT_EQ(message.rfind("[differential:" + code + "] ", 0), 0u) << message;
		return code;
	} catch (const std::exception &e) {
		return std::string("<other exception: ") + e.what() + ">";
	}
	return "<no exception>";
}

} // namespace test
} // namespace differential
