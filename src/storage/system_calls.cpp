// Each wrapper asks the fault hook first; unset, that is one branch on a cached flag before the real call.
#include "storage/system_calls.hpp"

#include "common/fault_points.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace differential {
namespace sys {

//! True (with errno set) when the test harness wants this pass of `label` to fail.
static bool Faulted(const char *label) {
	if (auto error = InjectedFault(label)) {
		errno = error;
		return true;
	}
	return false;
}

int Open(const char *label, const char *path, int flags, mode_t mode) {
	return Faulted(label) ? -1 : open(path, flags, mode);
}

ssize_t PWriteAll(const char *label, int fd, const void *data, size_t size, off_t offset) {
	return PWriteAll(label, fd, std::vector<iovec> {{const_cast<void *>(data), size}}, offset);
}

ssize_t PWriteAll(const char *label, int fd, std::vector<iovec> parts, off_t offset) {
	if (Faulted(label)) {
		return -1;
	}
	size_t done = 0, first = 0;
	while (first < parts.size()) {
		auto n = pwritev(fd, parts.data() + first, static_cast<int>(parts.size() - first),
		                 offset + static_cast<off_t>(done));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -1;
		}
		done += static_cast<size_t>(n);
		// Skip what was written: whole parts, then the written head of a partly written one.
		auto left = static_cast<size_t>(n);
		while (first < parts.size() && left >= parts[first].iov_len) {
			left -= parts[first].iov_len;
			first++;
		}
		if (first < parts.size()) {
			parts[first].iov_base = static_cast<char *>(parts[first].iov_base) + left;
			parts[first].iov_len -= left;
		}
	}
	return static_cast<ssize_t>(done);
}

ssize_t PReadAll(const char *label, int fd, void *data, size_t size, off_t offset) {
	if (Faulted(label)) {
		return -1;
	}
	auto p = static_cast<char *>(data);
	size_t done = 0;
	while (done < size) {
		auto n = pread(fd, p + done, size - done, offset + static_cast<off_t>(done));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -1;
		}
		if (n == 0) {
			break;
		}
		done += static_cast<size_t>(n);
	}
	return static_cast<ssize_t>(done);
}

int FDataSync(const char *label, int fd) {
	return Faulted(label) ? -1 : fdatasync(fd);
}

int FSync(const char *label, int fd) {
	return Faulted(label) ? -1 : fsync(fd);
}

int FStat(const char *label, int fd, struct stat *st) {
	return Faulted(label) ? -1 : fstat(fd, st);
}

int FTruncate(const char *label, int fd, off_t length) {
	return Faulted(label) ? -1 : ftruncate(fd, length);
}

int Unlink(const char *label, const char *path) {
	return Faulted(label) ? -1 : unlink(path);
}

} // namespace sys
} // namespace differential
