// Object-store URLs: what DATA_PATH and remote attach will accept, and how they are spelled back.
#include "remote/object_store_url.hpp"

#include <gtest/gtest.h>

namespace differential {
namespace test {

static ObjectStoreUrl Parse(const std::string &text) {
	ObjectStoreUrl url;
	std::string why;
	EXPECT_TRUE(ParseObjectStoreUrl(text, url, why)) << text << ": " << why;
	return url;
}

static std::string Refusal(const std::string &text) {
	ObjectStoreUrl url;
	std::string why;
	EXPECT_FALSE(ParseObjectStoreUrl(text, url, why)) << text;
	return why;
}

TEST(ObjectStoreUrl, S3BucketAndPrefix) {
	auto url = Parse("s3://my-bucket/lake/");
	EXPECT_EQ(url.kind, ObjectStoreUrl::Kind::S3);
	EXPECT_EQ(url.bucket, "my-bucket");
	EXPECT_EQ(url.prefix, "lake/");
	EXPECT_EQ(Parse("s3://my-bucket/lake/db").prefix, "lake/db/"); // a prefix always ends in '/'
	EXPECT_EQ(Parse("s3://my-bucket").prefix, "");
	EXPECT_EQ(Parse("s3://my-bucket/").prefix, "");
	EXPECT_EQ(FormatObjectStoreUrl(Parse("s3://b.example-1/a/b")), "s3://b.example-1/a/b/");
}

TEST(ObjectStoreUrl, FileDirectory) {
	auto url = Parse("file:///var/lib/exports/");
	EXPECT_EQ(url.kind, ObjectStoreUrl::Kind::FILE);
	EXPECT_EQ(url.path, "/var/lib/exports");
	EXPECT_EQ(FormatObjectStoreUrl(url), "file:///var/lib/exports/");
}

TEST(ObjectStoreUrl, Refusals) {
	EXPECT_NE(Refusal("https://bucket/x").find("neither"), std::string::npos);
	EXPECT_NE(Refusal("s3://").find("bucket name"), std::string::npos);
	EXPECT_NE(Refusal("s3://ab/x").find("bucket name"), std::string::npos);
	EXPECT_NE(Refusal("s3://My_Bucket/x").find("bucket name"), std::string::npos);
	EXPECT_NE(Refusal("s3://-bucket/x").find("bucket name"), std::string::npos);
	EXPECT_NE(Refusal("s3://a..b/x").find("bucket name"), std::string::npos);
	EXPECT_NE(Refusal(std::string("s3://") + std::string(64, 'a')).find("bucket name"), std::string::npos);
	EXPECT_NE(Refusal("s3://bucket//x").find("prefix"), std::string::npos);
	EXPECT_NE(Refusal("s3://bucket/a/../b").find("prefix"), std::string::npos);
	EXPECT_NE(Refusal("s3://bucket/.differential-store/").find("prefix"), std::string::npos);
	EXPECT_NE(Refusal("file://relative/dir").find("absolute"), std::string::npos);
	EXPECT_NE(Refusal("file:///a/../b").find("absolute"), std::string::npos);
	EXPECT_NE(Refusal("file:///a/..").find("absolute"), std::string::npos);
}

} // namespace test
} // namespace differential
