// The POSIX calls storage makes at its I/O edges, each under a fault label (common/fault_points.hpp):
// an injected fault fails the call exactly as the kernel would (-1 with errno set), so the real error path runs.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <vector>

namespace differential {
namespace sys {

int Open(const char *label, const char *path, int flags, mode_t mode = 0);
//! Writes all of `size` bytes at `offset`, retrying short writes and EINTR; -1 with errno on failure.
ssize_t PWriteAll(const char *label, int fd, const void *data, size_t size, off_t offset);
//! The same for several buffers written back to back: one pass of `label` for all of them.
ssize_t PWriteAll(const char *label, int fd, std::vector<iovec> parts, off_t offset);
//! Reads up to `size` bytes at `offset`, retrying short reads and EINTR; returns the bytes read (short
//! only at the end of the file), or -1 with errno on failure.
ssize_t PReadAll(const char *label, int fd, void *data, size_t size, off_t offset);
int FDataSync(const char *label, int fd);
int FSync(const char *label, int fd);
int FStat(const char *label, int fd, struct stat *st);
int FTruncate(const char *label, int fd, off_t length);
int Unlink(const char *label, const char *path);

} // namespace sys
} // namespace differential
