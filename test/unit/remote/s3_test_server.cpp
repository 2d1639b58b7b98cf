// S3TestServer: spawn on free loopback ports, wait for the listener, stop with SIGTERM.
#include "remote/s3_test_server.hpp"

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <unistd.h>

namespace differential {
namespace test {

//! A P-256 key and a self-signed certificate for 127.0.0.1 (openssl's CLI, from Debian's openssl).
static void MakeCertificate(const std::string &cert, const std::string &key) {
	std::string command = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
	                      "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout '" +
	                      key + "' -out '" + cert + "' 2>/dev/null";
	if (std::system(command.c_str()) != 0) {
		throw std::runtime_error("openssl could not make a test certificate");
	}
}

S3TestServer::S3TestServer(S3ServerKind kind_p, bool tls)
    : kind(kind_p), access_key(RandomToken(20)), secret_key(RandomToken(40)) {
	const std::string binary = kind == S3ServerKind::VERSITYGW ? VERSITYGW_BIN : SEAWEEDFS_BIN;
	const char *setup = kind == S3ServerKind::VERSITYGW ? "scripts/setup.sh" : "scripts/setup_seaweedfs.sh";
	if (access(binary.c_str(), X_OK) != 0) {
		throw std::runtime_error("the S3 test server is not installed at " + binary + ": run " + setup);
	}
	if (tls) {
		ca_file = data_dir.path + "/cert.pem";
		key_file = data_dir.path + "/key.pem";
		MakeCertificate(ca_file, key_file);
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		if (Start(binary)) {
			return;
		}
	}
	throw std::runtime_error(binary + " did not start listening on 127.0.0.1 (3 tries); its output:\n" +
	                         ReadFile(log_path));
}

S3TestServer::~S3TestServer() {
	Stop();
}

S3TestServer &S3TestServer::Shared(S3ServerKind kind) {
	// Deleted by an atexit handler rather than as a static, so it goes after every test and the
	// process and its temp directory never outlive the test binary.
	static S3TestServer *servers[2] = {nullptr, nullptr};
	static std::mutex lock;
	std::lock_guard<std::mutex> guard(lock);
	auto &server = servers[static_cast<int>(kind)];
	if (!server) {
		server = new S3TestServer(kind);
		if (kind == S3ServerKind::VERSITYGW) {
			std::atexit([] { delete servers[0]; });
		} else {
			std::atexit([] { delete servers[1]; });
		}
	}
	return *server;
}

std::vector<std::string> S3TestServer::Arguments(const std::string &binary) {
	port = FreeLoopbackPort();
	std::string data = data_dir.Sub("data");
	if (kind == S3ServerKind::VERSITYGW) {
		std::vector<std::string> args = {binary, "--port", "127.0.0.1:" + std::to_string(port), "--quiet"};
		if (!ca_file.empty()) {
			args.insert(args.end(), {"--cert", ca_file, "--key", key_file});
		}
		args.insert(args.end(), {"posix", data});
		return args;
	}
	// `weed server` runs master, volume server, filer and S3 gateway in one process, each with an HTTP
	// and a gRPC port: all on loopback, all picked free, no telemetry (it would leave the machine).
	auto free_port = [] {
		return std::to_string(FreeLoopbackPort());
	};
	return {binary,
	        "server",
	        "-ip=127.0.0.1",
	        "-ip.bind=127.0.0.1",
	        "-dir=" + data,
	        "-master.telemetry=false",
	        "-master.port=" + free_port(),
	        "-master.port.grpc=" + free_port(),
	        "-volume.port=" + free_port(),
	        "-volume.port.grpc=" + free_port(),
	        "-volume.max=16",
	        "-master.volumeSizeLimitMB=64",
	        "-filer",
	        "-filer.port=" + free_port(),
	        "-filer.port.grpc=" + free_port(),
	        "-s3",
	        "-s3.port=" + std::to_string(port),
	        "-s3.port.grpc=" + free_port(),
	        "-s3.port.iceberg=0",
	        "-s3.port.lance=0",
	        "-s3.autoCreateBucket=false"};
}

std::vector<std::string> S3TestServer::Environment() const {
	std::vector<std::string> env = {"HOME=" + data_dir.path, "PATH=/usr/bin:/bin"};
	if (kind == S3ServerKind::VERSITYGW) {
		env.insert(env.end(), {"ROOT_ACCESS_KEY_ID=" + access_key, "ROOT_SECRET_ACCESS_KEY=" + secret_key});
	} else {
		// SeaweedFS makes an admin identity of these, so no credentials file is needed.
		env.insert(env.end(), {"AWS_ACCESS_KEY_ID=" + access_key, "AWS_SECRET_ACCESS_KEY=" + secret_key});
	}
	return env;
}

bool S3TestServer::Start(const std::string &binary) {
	// Its output goes to a file in the temp dir, shown only if it never comes up.
	log_path = data_dir.path + "/server.log";
	pid = Spawn(Arguments(binary), Environment(), log_path);
	if (pid > 0 && WaitListening(pid, port, 60)) {
		return true;
	}
	Stop();
	return false;
}

void S3TestServer::Stop() {
	// Waits for the exit, so a restart on the same port never meets the old listener.
	test::Stop(pid);
}

} // namespace test
} // namespace differential
