// Starts a real S3 server for the tests on free loopback ports over a temp directory: the pinned
// versitygw (always), or the pinned SeaweedFS (opt-in, DIFFERENTIAL_TEST_SEAWEEDFS=ON at configure).
#pragma once

#include "remote/process.hpp"
#include "test_support.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace differential {
namespace test {

enum class S3ServerKind { VERSITYGW, SEAWEEDFS };

//! One server process with fresh random root credentials, which live only in this process's memory
//! and the child's environment. The binaries come from the paths the build was configured with
//! (installed by scripts/setup_versitygw.sh, scripts/setup_seaweedfs.sh); a missing binary is an
//! error, not a skip.
class S3TestServer {
public:
	//! Starts the server and waits until it accepts connections; throws std::runtime_error on failure.
	//! With `tls` (versitygw only), it serves HTTPS with a fresh self-signed certificate (see CaFile).
	explicit S3TestServer(S3ServerKind kind = S3ServerKind::VERSITYGW, bool tls = false);
	~S3TestServer();
	S3TestServer(const S3TestServer &) = delete;
	S3TestServer &operator=(const S3TestServer &) = delete;

	//! The process-wide server of a kind, shared by every test of the run (started on first use).
	static S3TestServer &Shared(S3ServerKind kind = S3ServerKind::VERSITYGW);

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
	S3ServerKind Kind() const {
		return kind;
	}
	//! The PEM certificate a client must trust to reach a TLS server; empty without TLS.
	const std::string &CaFile() const {
		return ca_file;
	}

private:
	bool Start(const std::string &binary);
	std::vector<std::string> Arguments(const std::string &binary);
	std::vector<std::string> Environment() const;
	void Stop();

	S3ServerKind kind;
	TempDir data_dir;
	std::string log_path;
	std::string ca_file;
	std::string key_file;
	std::string access_key;
	std::string secret_key;
	pid_t pid = -1;
	int port = 0;
};

} // namespace test
} // namespace differential
