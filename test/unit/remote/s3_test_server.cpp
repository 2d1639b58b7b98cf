// S3TestServer: spawn on free loopback ports, wait for the listener, stop with SIGTERM.
#include "remote/s3_test_server.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <mutex>
#include <netinet/in.h>
#include <random>
#include <spawn.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace differential {
namespace test {

std::string RandomToken(size_t length) {
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	std::random_device device;
	std::string out;
	for (size_t i = 0; i < length; i++) {
		out += alphabet[device() % (sizeof(alphabet) - 1)];
	}
	return out;
}

//! A port the kernel just handed out on 127.0.0.1; another process could take it before versitygw
//! binds it, so Start tries a few.
static int FreeLoopbackPort() {
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	sockaddr_in addr {};
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(addr);
	int port = 0;
	if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0 &&
	    getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0) {
		port = ntohs(addr.sin_port);
	}
	close(fd);
	return port;
}

static bool Accepts(int port) {
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	sockaddr_in addr {};
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons(static_cast<uint16_t>(port));
	bool ok = connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0;
	close(fd);
	return ok;
}

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
	std::ifstream log(log_path);
	std::string output((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
	throw std::runtime_error(binary + " did not start listening on 127.0.0.1 (3 tries); its output:\n" + output);
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
	std::vector<std::string> args = Arguments(binary);
	std::vector<std::string> env = Environment();
	std::vector<char *> argv, envp;
	for (auto &a : args) {
		argv.push_back(&a[0]);
	}
	for (auto &e : env) {
		envp.push_back(&e[0]);
	}
	argv.push_back(nullptr);
	envp.push_back(nullptr);
	// Its output goes to a file in the temp dir, shown only if it never comes up.
	log_path = data_dir.path + "/server.log";
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
	posix_spawn_file_actions_adddup2(&actions, 1, 2);
	int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
	posix_spawn_file_actions_destroy(&actions);
	if (rc != 0) {
		pid = -1;
		return false;
	}
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
	while (std::chrono::steady_clock::now() < deadline) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = -1; // exited: most likely the port was taken meanwhile
			return false;
		}
		if (Accepts(port)) {
			return true;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
	Stop();
	return false;
}

void S3TestServer::Stop() {
	if (pid <= 0) {
		return;
	}
	kill(pid, SIGTERM);
	// Wait for the exit, so a restart on the same port never meets the old listener.
	for (int i = 0; i < 250; i++) {
		if (waitpid(pid, nullptr, WNOHANG) == pid) {
			pid = -1;
			return;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
	kill(pid, SIGKILL);
	waitpid(pid, nullptr, 0);
	pid = -1;
}

} // namespace test
} // namespace differential
