// The owner of one background thread: named (so a test, or top -H, sees which threads are alive), and joined
// when its owner stops or goes, so that no thread of ours outlives the attachment or instance it works for.
#pragma once

#include <functional>
#include <string>
#include <thread>

namespace differential {

class BackgroundThread {
public:
	BackgroundThread() = default;
	//! Joins (see Join).
	~BackgroundThread();
	BackgroundThread(const BackgroundThread &) = delete;
	BackgroundThread &operator=(const BackgroundThread &) = delete;

	//! Starts `body` on a new thread named `name` (at most 15 characters: the kernel's limit). Call once, or
	//! again only after Join.
	void Start(const std::string &name, std::function<void()> body);
	//! Waits for the thread to end. Called on the thread itself (its owner was destroyed by the last reference
	//! the thread held), it detaches instead: the thread is then in its last steps and touches nothing of the
	//! owner's. Idempotent.
	void Join();
	bool Running() const {
		return thread.joinable();
	}

private:
	std::thread thread;
};

} // namespace differential
