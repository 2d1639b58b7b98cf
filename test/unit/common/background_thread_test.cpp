// BackgroundThread: named, joined by its owner, and detached (not self-joined) when its owner goes on the thread.
#include "common/background_thread.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <pthread.h>
#include <string>

using differential::BackgroundThread;

TEST(BackgroundThread, JoinWaitsForTheBodyToEnd) {
	std::atomic<bool> ended {false};
	BackgroundThread thread;
	thread.Start("test-join", [&]() {
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
		ended = true;
	});
	EXPECT_TRUE(thread.Running());
	thread.Join();
	EXPECT_TRUE(ended);
	EXPECT_FALSE(thread.Running());
	thread.Join(); // idempotent
}

TEST(BackgroundThread, DestroyingTheOwnerJoins) {
	std::atomic<bool> ended {false};
	{
		BackgroundThread thread;
		thread.Start("test-destroy", [&]() {
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
			ended = true;
		});
	}
	EXPECT_TRUE(ended);
}

TEST(BackgroundThread, TheThreadCarriesItsName) {
	std::string seen;
	BackgroundThread thread;
	thread.Start("diff-test-name-too-long", [&]() {
		char name[16] = {};
		pthread_getname_np(pthread_self(), name, sizeof(name));
		seen = name;
	});
	thread.Join();
	EXPECT_EQ(seen, "diff-test-name-"); // cut to the kernel's 15 characters
}

TEST(BackgroundThread, AnOwnerDestroyedOnItsOwnThreadDetachesInsteadOfJoiningItself) {
	// The owner is held only by the thread: the last reference goes on the thread, as an instance closed by a
	// takeover's last reference does. A self-join would throw (std::system_error) and terminate.
	struct Owner {
		BackgroundThread thread;
	};
	std::atomic<bool> ended {false};
	auto owner = std::make_shared<Owner>();
	std::weak_ptr<Owner> watch = owner;
	auto held = std::make_shared<std::shared_ptr<Owner>>(owner);
	owner->thread.Start("test-self", [held, &ended]() {
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		held->reset(); // destroys Owner, and its BackgroundThread, on this thread
		ended = true;
	});
	owner.reset();
	for (int i = 0; i < 500 && !ended; i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	EXPECT_TRUE(ended);
	EXPECT_TRUE(watch.expired());
}
