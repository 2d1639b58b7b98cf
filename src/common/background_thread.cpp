// The owner of one background thread (see background_thread.hpp).
#include "common/background_thread.hpp"

#include <pthread.h>

namespace differential {

BackgroundThread::~BackgroundThread() {
	Join();
}

void BackgroundThread::Start(const std::string &name, std::function<void()> body) {
	Join();
	thread = std::thread([name, body = std::move(body)]() {
		pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
		body();
	});
}

void BackgroundThread::Join() {
	if (!thread.joinable()) {
		return;
	}
	if (thread.get_id() == std::this_thread::get_id()) {
		thread.detach();
		return;
	}
	thread.join();
}

} // namespace differential
