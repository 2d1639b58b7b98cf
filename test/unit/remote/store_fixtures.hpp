// The stores the object-store tests run against: a local directory, and a bucket on a shared S3 test
// server (each test under its own random prefix, so tests never see each other's keys).
#pragma once

#include "remote/local_object_store.hpp"
#include "remote/s3_object_store.hpp"
#include "remote/s3_test_server.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>

namespace differential {
namespace test {

//! Credentials for a test server (path style, plain HTTP on loopback).
inline S3Credentials ServerCredentials(const S3TestServer &server) {
	S3Credentials credentials;
	credentials.key_id = server.AccessKey();
	credentials.secret = server.SecretKey();
	credentials.endpoint = server.Endpoint();
	credentials.url_style = S3UrlStyle::PATH;
	credentials.use_ssl = false;
	return credentials;
}

//! The bucket every test of a server shares, created once per run through the store itself. SeaweedFS
//! accepts connections before its volume server has registered, so creation is retried for a while.
inline const std::string &SharedBucket(S3ServerKind kind = S3ServerKind::VERSITYGW) {
	static const std::string name = "differential-tests";
	static bool created[2] = {false, false};
	if (!created[static_cast<int>(kind)]) {
		S3ObjectStore store({name, ""}, ServerCredentials(S3TestServer::Shared(kind)));
		auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
		ObjectOutcome outcome;
		while (!(outcome = store.CreateBucket()).Ok() && std::chrono::steady_clock::now() < deadline) {
			std::this_thread::sleep_for(std::chrono::milliseconds(250));
		}
		if (!outcome.Ok()) {
			throw std::runtime_error("cannot create the test bucket: " + outcome.detail);
		}
		created[static_cast<int>(kind)] = true;
	}
	return name;
}

struct LocalStoreKind {
	static constexpr const char *NAME = "Local";
	std::unique_ptr<TempDir> dir;

	std::unique_ptr<ObjectStore> Make() {
		dir = std::make_unique<TempDir>();
		return std::make_unique<LocalObjectStore>(dir->Sub("store"));
	}
};

template <S3ServerKind KIND>
struct ServerStoreKind {
	static constexpr const char *NAME = KIND == S3ServerKind::VERSITYGW ? "Versitygw" : "Seaweedfs";

	//! Throws (and so fails the test) when the server is not installed or does not start.
	std::unique_ptr<ObjectStore> Make() {
		auto &server = S3TestServer::Shared(KIND);
		return std::make_unique<S3ObjectStore>(S3Location {SharedBucket(KIND), "t-" + RandomToken(10) + "/"},
		                                       ServerCredentials(server));
	}
};
using VersitygwStoreKind = ServerStoreKind<S3ServerKind::VERSITYGW>;
using SeaweedfsStoreKind = ServerStoreKind<S3ServerKind::SEAWEEDFS>;

//! The stores every typed suite over ObjectStore runs against (SeaweedFS only when opted in).
#ifdef DIFFERENTIAL_TEST_SEAWEEDFS
using StoreKinds = ::testing::Types<LocalStoreKind, VersitygwStoreKind, SeaweedfsStoreKind>;
#else
using StoreKinds = ::testing::Types<LocalStoreKind, VersitygwStoreKind>;
#endif
//! Names the typed tests after the store (`…/Local`, `…/Versitygw`).
struct KindNames {
	template <class Kind>
	static std::string GetName(int) {
		return Kind::NAME;
	}
};

//! A test over one store of kind `Kind`: the store is made per test, and a store that cannot be made fails it.
template <class Kind>
class StoreTest : public ::testing::Test {
protected:
	void SetUp() override {
		try {
			store = kind.Make();
		} catch (const std::exception &e) {
			FAIL() << Kind::NAME << " store unavailable: " << e.what();
		}
	}

	PutResult PutText(const std::string &key, const std::string &text, PutCondition condition = PutCondition::None()) {
		PutRequest request;
		request.key = key;
		request.data = text.data();
		request.size = text.size();
		request.condition = std::move(condition);
		return store->Put(request);
	}

	Kind kind;
	std::unique_ptr<ObjectStore> store;
};

} // namespace test
} // namespace differential
