// Starts the pinned versitygw S3 server on a free loopback port over a temp directory, for the tests.
#pragma once

#include "test_support.hpp"

#include <memory>
#include <string>
#include <sys/types.h>

namespace differential {
namespace test {

//! One versitygw process with fresh random root credentials, which live only in this process's memory
//! and the child's environment. The binary comes from the path the build was configured with
//! (VERSITYGW_BIN, installed by scripts/setup_versitygw.sh); a missing binary is an error, not a skip.
class VersitygwServer {
public:
	//! Starts the server and waits until it accepts connections; throws std::runtime_error on failure.
	//! With `tls`, it serves HTTPS with a fresh self-signed certificate for 127.0.0.1 (see CaFile).
	explicit VersitygwServer(bool tls = false);
	~VersitygwServer();
	VersitygwServer(const VersitygwServer &) = delete;
	VersitygwServer &operator=(const VersitygwServer &) = delete;

	//! The process-wide server shared by every test of the run (started on first use).
	static VersitygwServer &Shared();

	std::string Endpoint() const {
		return "127.0.0.1:" + std::to_string(port);
	}
	const std::string &AccessKey() const {
		return access_key;
	}
	const std::string &SecretKey() const {
		return secret_key;
	}
	int Port() const {
		return port;
	}
	//! The PEM certificate a client must trust to reach a TLS server; empty without TLS.
	const std::string &CaFile() const {
		return ca_file;
	}

private:
	bool Start(const std::string &binary);
	void Stop();

	TempDir data_dir;
	std::string log_path;
	std::string ca_file;
	std::string key_file;
	std::string access_key;
	std::string secret_key;
	pid_t pid = -1;
	int port = 0;
};

//! A random token of `length` letters and digits (for credentials and unique names).
std::string RandomToken(size_t length);

} // namespace test
} // namespace differential
