// The stores the object-store tests run against: a local directory, and a bucket on the shared
// versitygw server (each test under its own random prefix, so tests never see each other's keys).
#pragma once

#include "remote/local_object_store.hpp"
#include "remote/s3_object_store.hpp"
#include "remote/versitygw_server.hpp"

#include <memory>
#include <string>

namespace differential {
namespace test {

//! Credentials for the shared server (path style, plain HTTP on loopback).
inline S3Credentials VersitygwCredentials(const VersitygwServer &server) {
	S3Credentials credentials;
	credentials.key_id = server.AccessKey();
	credentials.secret = server.SecretKey();
	credentials.endpoint = server.Endpoint();
	credentials.url_style = S3UrlStyle::PATH;
	credentials.use_ssl = false;
	return credentials;
}

//! The bucket every test shares, created once per run through the store itself.
inline const std::string &SharedBucket() {
	static const std::string bucket = [] {
		std::string name = "differential-tests";
		S3ObjectStore store({name, ""}, VersitygwCredentials(VersitygwServer::Shared()));
		auto outcome = store.CreateBucket();
		if (!outcome.Ok()) {
			throw std::runtime_error("cannot create the test bucket: " + outcome.detail);
		}
		return name;
	}();
	return bucket;
}

struct LocalStoreKind {
	static constexpr const char *NAME = "Local";
	std::unique_ptr<TempDir> dir;

	std::unique_ptr<ObjectStore> Make() {
		dir = std::make_unique<TempDir>();
		return std::make_unique<LocalObjectStore>(dir->Sub("store"));
	}
};

struct VersitygwStoreKind {
	static constexpr const char *NAME = "Versitygw";

	//! Throws (and so fails the test) when versitygw is not installed or does not start.
	std::unique_ptr<ObjectStore> Make() {
		auto &server = VersitygwServer::Shared();
		return std::make_unique<S3ObjectStore>(S3Location {SharedBucket(), "t-" + RandomToken(10) + "/"},
		                                       VersitygwCredentials(server));
	}
};

} // namespace test
} // namespace differential
