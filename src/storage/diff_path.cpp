// Parsing and building diff:// paths.
#include "storage/diff_path.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"

namespace differential {

static constexpr const char *SEPARATOR = "/@/";

bool IsDiffPath(const std::string &path) {
	return path.rfind(DIFF_SCHEME, 0) == 0;
}

std::string FileAddress::OwnerKey() const {
	return repository + SEPARATOR + database + "/" + (IsSnapshot() ? "~" + std::to_string(snapshot_id) : branch);
}

std::string FileAddress::ToPath() const {
	return DIFF_SCHEME + OwnerKey() + "/" + file_name;
}

FileAddress ParseDiffPath(const std::string &path) {
	auto refuse = [&]() -> FileAddress {
		Fail(ErrorCode::INVALID_PATH,
		     "The path " + QuoteName(path) +
		         " is not a differential database path. Attach databases with ATTACH 'differential:<name>'.");
	};
	if (!IsDiffPath(path)) {
		return refuse();
	}
	auto rest = path.substr(std::string(DIFF_SCHEME).size());
	auto sep = rest.rfind(SEPARATOR);
	if (sep == std::string::npos || sep == 0 || rest[0] != '/') {
		return refuse();
	}
	FileAddress addr;
	addr.repository = rest.substr(0, sep);
	auto tail = rest.substr(sep + 3);
	auto s1 = tail.find('/');
	auto s2 = s1 == std::string::npos ? std::string::npos : tail.find('/', s1 + 1);
	if (s2 == std::string::npos || tail.find('/', s2 + 1) != std::string::npos) {
		return refuse();
	}
	addr.database = tail.substr(0, s1);
	auto owner = tail.substr(s1 + 1, s2 - s1 - 1);
	addr.file_name = tail.substr(s2 + 1);
	if (addr.file_name.rfind(MAIN_FILE_NAME, 0) != 0) {
		return refuse();
	}
	ValidateName("database", addr.database);
	if (!owner.empty() && owner[0] == '~') {
		try {
			size_t used = 0;
			addr.snapshot_id = std::stoll(owner.substr(1), &used);
			// Only the canonical spelling: stoll alone would accept "~ 1", "~\n1", "~+1" and "~007".
			if (used + 1 != owner.size() || addr.snapshot_id < 0 || owner != "~" + std::to_string(addr.snapshot_id)) {
				return refuse();
			}
		} catch (std::exception &) {
			return refuse();
		}
	} else {
		ValidateName("branch", owner);
		addr.branch = owner;
	}
	return addr;
}

std::string BranchPath(const std::string &repository, const std::string &database, const std::string &branch) {
	return DIFF_SCHEME + repository + SEPARATOR + database + "/" + branch + "/" + MAIN_FILE_NAME;
}

std::string SnapshotPath(const std::string &repository, const std::string &database, int64_t snapshot_id) {
	return DIFF_SCHEME + repository + SEPARATOR + database + "/~" + std::to_string(snapshot_id) + "/" + MAIN_FILE_NAME;
}

} // namespace differential
