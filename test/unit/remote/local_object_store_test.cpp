// What only the local store promises: content etags, clean temp files, paths as keys, and conditional
// writes that hold across processes (not only threads).
#include "common/hash.hpp"
#include "remote/local_object_store.hpp"
#include "test_support.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace differential {
namespace test {

static PutResult PutText(ObjectStore &store, const std::string &key, const std::string &text,
                         PutCondition condition = PutCondition::None()) {
	PutRequest request;
	request.key = key;
	request.data = text.data();
	request.size = text.size();
	request.condition = std::move(condition);
	return store.Put(request);
}

static size_t EntriesIn(const std::string &dir) {
	size_t count = 0;
	DIR *d = opendir(dir.c_str());
	while (d && readdir(d)) {
		count++;
	}
	if (d) {
		closedir(d);
	}
	return count >= 2 ? count - 2 : 0; // without "." and ".."
}

TEST(LocalObjectStore, EtagIsTheContentSha256AndTempFilesGo) {
	TempDir dir;
	LocalObjectStore store(dir.Sub("s"));
	auto put = PutText(store, "a/b", "hello");
	ASSERT_TRUE(put.outcome.Ok()) << put.outcome.detail;
	EXPECT_EQ(put.etag, "\"" + HashToHex(Sha256("hello", 5)) + "\"");
	PutText(store, "a/b", "again", PutCondition::CreateOnly());
	PutText(store, "a/c", "x", PutCondition::CreateOnly());
	EXPECT_EQ(EntriesIn(dir.path + "/s/.differential-store/tmp"), 0u);
	// The object is a plain file at its key's path, as in a bucket synced to disk.
	EXPECT_EQ(EntriesIn(dir.path + "/s/a"), 2u);
}

TEST(LocalObjectStore, OpeningSweepsTempFilesOfDeadWriters) {
	TempDir dir;
	std::string tmp = dir.path + "/s/.differential-store/tmp/";
	{ LocalObjectStore store(dir.Sub("s")); }
	// A writer that died two hours ago, one that died a minute ago, and this (live) process.
	pid_t dead = fork();
	if (dead == 0) {
		_exit(0);
	}
	waitpid(dead, nullptr, 0);
	auto touch = [&](const std::string &name, time_t age) {
		std::string path = tmp + name;
		close(open(path.c_str(), O_WRONLY | O_CREAT, 0644));
		struct timespec times[2] = {{time(nullptr) - age, 0}, {time(nullptr) - age, 0}};
		utimensat(AT_FDCWD, path.c_str(), times, 0);
	};
	touch(std::to_string(dead) + "-0", 7200);
	touch(std::to_string(dead) + "-1", 60);
	touch(std::to_string(getpid()) + "-7", 7200);
	LocalObjectStore reopened(dir.path + "/s");
	EXPECT_NE(access((tmp + std::to_string(dead) + "-0").c_str(), F_OK), 0);
	EXPECT_EQ(access((tmp + std::to_string(dead) + "-1").c_str(), F_OK), 0);
	EXPECT_EQ(access((tmp + std::to_string(getpid()) + "-7").c_str(), F_OK), 0);
}

TEST(LocalObjectStore, AKeyAndItsChildCannotBothExist) {
	// As on versitygw's posix backend: keys are paths, so layouts must avoid this (and are told so).
	TempDir dir;
	LocalObjectStore store(dir.Sub("s"));
	ASSERT_TRUE(PutText(store, "x", "file").outcome.Ok());
	EXPECT_EQ(PutText(store, "x/y", "child").outcome.status, ObjectStatus::INVALID);
	ASSERT_TRUE(PutText(store, "p/q", "child").outcome.Ok());
	EXPECT_EQ(PutText(store, "p", "parent").outcome.status, ObjectStatus::INVALID);
	// Deleting the child prunes its now empty directory, so the parent name is usable again.
	ASSERT_TRUE(store.Delete("p/q").Ok());
	EXPECT_TRUE(PutText(store, "p", "parent", PutCondition::CreateOnly()).outcome.Ok());
}

TEST(LocalObjectStore, CreateOnlyAcrossProcessesHasOneWinner) {
	TempDir dir;
	std::string root = dir.Sub("s");
	LocalObjectStore parent(root);
	std::vector<pid_t> children;
	int go[2];
	ASSERT_EQ(pipe(go), 0);
	for (int i = 0; i < 8; i++) {
		pid_t pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			close(go[1]);
			char c;
			(void)!read(go[0], &c, 1); // start together: wait until the parent closes the pipe
			LocalObjectStore store(root);
			auto put = PutText(store, "heads/main", "process-" + std::to_string(i), PutCondition::CreateOnly());
			_exit(put.outcome.Ok() ? 0 : put.outcome.status == ObjectStatus::PRECONDITION_FAILED ? 1 : 2);
		}
		children.push_back(pid);
	}
	close(go[0]);
	close(go[1]);
	int wins = 0, refused = 0;
	for (auto pid : children) {
		int status = 0;
		waitpid(pid, &status, 0);
		ASSERT_TRUE(WIFEXITED(status));
		wins += WEXITSTATUS(status) == 0;
		refused += WEXITSTATUS(status) == 1;
	}
	EXPECT_EQ(wins, 1);
	EXPECT_EQ(refused, 7);
}

TEST(LocalObjectStore, IfMatchAcrossProcessesLosesNoUpdate) {
	TempDir dir;
	std::string root = dir.Sub("s");
	LocalObjectStore parent(root);
	ASSERT_TRUE(PutText(parent, "counter", "0").outcome.Ok());
	std::vector<pid_t> children;
	for (int i = 0; i < 4; i++) {
		pid_t pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			LocalObjectStore store(root);
			for (int done = 0, tries = 0; done < 10 && tries < 1000; tries++) {
				auto get = store.Get("counter");
				auto put =
				    PutText(store, "counter", std::to_string(std::stoi(get.data) + 1), PutCondition::IfMatch(get.etag));
				done += put.outcome.Ok() ? 1 : 0;
			}
			_exit(0);
		}
		children.push_back(pid);
	}
	for (auto pid : children) {
		waitpid(pid, nullptr, 0);
	}
	EXPECT_EQ(parent.Get("counter").data, "40");
}

TEST(LocalObjectStore, DescribeAndUnusableRoot) {
	TempDir dir;
	LocalObjectStore store(dir.path + "/new/nested/");
	EXPECT_EQ(store.Describe(), "file://" + dir.path + "/new/nested/");
	ASSERT_TRUE(PutText(store, "f", "file").outcome.Ok());
	EXPECT_EQ(RaisedCode([&] { LocalObjectStore bad(dir.path + "/new/nested/f/below"); }), "io_error");
}

} // namespace test
} // namespace differential
