// Spawning, waiting for and stopping the tests' child processes.
#include "remote/process.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <netinet/in.h>
#include <random>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

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

static sockaddr_in Loopback(int port) {
	sockaddr_in addr {};
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons(static_cast<uint16_t>(port));
	return addr;
}

int FreeLoopbackPort() {
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	auto addr = Loopback(0);
	socklen_t len = sizeof(addr);
	int port = 0;
	if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0 &&
	    getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0) {
		port = ntohs(addr.sin_port);
	}
	close(fd);
	return port;
}

bool Accepts(int port) {
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	auto addr = Loopback(port);
	bool ok = connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0;
	close(fd);
	return ok;
}

pid_t Spawn(const std::vector<std::string> &args_p, const std::vector<std::string> &env_p,
            const std::string &log_path) {
	auto args = args_p;
	auto env = env_p;
	std::vector<char *> argv, envp;
	for (auto &a : args) {
		argv.push_back(&a[0]);
	}
	for (auto &e : env) {
		envp.push_back(&e[0]);
	}
	argv.push_back(nullptr);
	envp.push_back(nullptr);
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
	posix_spawn_file_actions_adddup2(&actions, 1, 2);
	pid_t pid = -1;
	int rc = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), envp.data());
	posix_spawn_file_actions_destroy(&actions);
	return rc == 0 ? pid : -1;
}

bool WaitListening(pid_t &pid, int port, int seconds) {
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
	while (std::chrono::steady_clock::now() < deadline) {
		if (waitpid(pid, nullptr, WNOHANG) == pid) {
			pid = -1; // exited: most likely the port was taken meanwhile
			return false;
		}
		if (Accepts(port)) {
			return true;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
	return false;
}

int Run(const std::vector<std::string> &args, const std::string &log_path) {
	pid_t pid = Spawn(args, {"PATH=/usr/bin:/bin"}, log_path);
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		return -1;
	}
	return WEXITSTATUS(status);
}

void Stop(pid_t &pid) {
	if (pid <= 0) {
		return;
	}
	kill(pid, SIGTERM);
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

std::string ReadFile(const std::string &path) {
	std::ifstream file(path);
	return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

} // namespace test
} // namespace differential
