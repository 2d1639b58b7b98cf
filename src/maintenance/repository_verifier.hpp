// differential_verify's engine: re-reads every stored chunk and WAL range and checks every live
// root against the metadata, reporting what it found instead of stopping at the first problem.
#pragma once

#include "repository/repository.hpp"

#include <string>
#include <vector>

namespace differential {

struct VerifyCheck {
	std::string check;
	int64_t objects_checked = 0;
	int64_t problems = 0;
	//! The first few problems, one per line.
	std::string detail;
};

//! With a database name, only roots of that database are checked (chunks are shared, so all of
//! them are still read); otherwise everything.
std::vector<VerifyCheck> VerifyRepository(Repository &repository, const std::string &database = "");

} // namespace differential
