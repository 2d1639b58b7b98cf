// Child processes for the tests: the S3 servers and Toxiproxy, on free loopback ports.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace differential {
namespace test {

//! A port the kernel just handed out on 127.0.0.1; another process could take it before the child
//! binds it, so callers that start servers try a few times.
int FreeLoopbackPort();
//! True when something accepts TCP connections on 127.0.0.1:port.
bool Accepts(int port);
//! Starts `args` (args[0] is the binary's path) with exactly `env`, its output appended to `log_path`.
//! Returns the pid, or -1.
pid_t Spawn(const std::vector<std::string> &args, const std::vector<std::string> &env, const std::string &log_path);
//! Waits until the child listens on `port` (true), exits (false, pid set to -1) or `seconds` pass (false).
bool WaitListening(pid_t &pid, int port, int seconds);
//! Runs `args` to its end (output to `log_path`); returns its exit status, or -1.
int Run(const std::vector<std::string> &args, const std::string &log_path);
//! SIGTERM, then SIGKILL after 5 s; returns once the child is gone (so its ports are free again).
void Stop(pid_t &pid);
//! The contents of a (log) file, or "".
std::string ReadFile(const std::string &path);
//! A random token of `length` letters and digits (for credentials and unique names).
std::string RandomToken(size_t length);

} // namespace test
} // namespace differential
