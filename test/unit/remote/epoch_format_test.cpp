// Epoch objects round-trip, refuse damage, and the chain reader walks commits and seals to the tip
// (store format 2, docs/FORMAT.md §10.6), against the local object store.
#include "common/errors.hpp"
#include "remote/epoch_chain.hpp"
#include "remote/local_object_store.hpp"

#include <filesystem>
#include <gtest/gtest.h>

using namespace differential;

static Hash256 HashOf(const std::string &text) {
	return Sha256(text.data(), text.size());
}

static Epoch CommitEpoch(uint64_t chain, uint64_t seq, const Hash256 &previous, uint64_t wal_offset,
                         const std::string &wal) {
	Epoch epoch;
	epoch.database = "orders";
	epoch.branch = "main";
	epoch.chain = chain;
	epoch.seq = seq;
	epoch.previous = previous;
	epoch.writer = "w1";
	epoch.wal_offset = wal_offset;
	epoch.wal = wal;
	epoch.file_length = 12288 + 262144 * seq;
	epoch.chunks.push_back({seq, HashOf("chunk" + std::to_string(seq)), "chunk" + std::to_string(seq)});
	return epoch;
}

//! A seal of orders/main ending `chain` at `seq`, naming its successor (the base stays zero unless set).
static Epoch SealEpoch(SealReason reason, uint64_t chain, uint64_t seq, const Hash256 &previous,
                       uint64_t successor_chain) {
	Epoch seal;
	seal.kind = EpochKind::SEAL;
	seal.reason = reason;
	seal.database = "orders";
	seal.branch = "main";
	seal.chain = chain;
	seal.seq = seq;
	seal.previous = previous;
	seal.successor_chain = successor_chain;
	return seal;
}

//! The head of orders/main when it ships: its chain and that chain's base.
static BranchHead ShippingHead(uint64_t chain, const Hash256 &base) {
	BranchHead head;
	head.database = "orders";
	head.branch = "main";
	head.chain = chain;
	head.chain_base = base;
	return head;
}

//! The code of the error walking the chain from `pos` raises ("" when the walk succeeds).
static std::string WalkError(ObjectStore &store, ChainPosition &pos, ChainState &state) {
	try {
		WalkToTip(store, pos, state);
	} catch (DifferentialError &error) {
		return ToString(error.code);
	}
	return "";
}

TEST(EpochFormat, KeysListInChainAndSeqOrder) {
	EXPECT_EQ(EpochKey("orders", "main", 3, 12), "epochs/orders/main/00000000000000000003/00000000000000000012");
	EXPECT_LT(EpochKey("orders", "main", 1, 9), EpochKey("orders", "main", 1, 10));
	EXPECT_LT(EpochKey("orders", "main", 1, 999), EpochKey("orders", "main", 2, 1));
}

TEST(EpochFormat, CommitAndSealRoundTrip) {
	auto epoch = CommitEpoch(2, 5, HashOf("prev"), 100, std::string("wal\0bytes", 9));
	auto blob = EncodeEpoch(epoch);
	Epoch back;
	std::string why;
	ASSERT_TRUE(DecodeEpoch(blob, back, why)) << why;
	EXPECT_EQ(back.kind, EpochKind::COMMIT);
	EXPECT_EQ(back.chain, 2u);
	EXPECT_EQ(back.seq, 5u);
	EXPECT_EQ(back.wal, std::string("wal\0bytes", 9));
	EXPECT_EQ(back.WalEnd(), 109u);
	EXPECT_EQ(back.writer, "w1");
	ASSERT_EQ(back.chunks.size(), 1u);
	EXPECT_EQ(back.chunks[0].bytes, "chunk5");
	EXPECT_TRUE(VerifyEpoch(back, "orders", "main", 2, 5, HashOf("prev"), why)) << why;
	EXPECT_FALSE(VerifyEpoch(back, "orders", "main", 2, 6, HashOf("prev"), why));
	EXPECT_FALSE(VerifyEpoch(back, "orders", "main", 2, 5, HashOf("other"), why));

	auto seal = SealEpoch(SealReason::RECOVERY, 2, 6, EpochHash(blob), 3);
	seal.writer = "w2";
	ASSERT_TRUE(DecodeEpoch(EncodeEpoch(seal), back, why)) << why;
	EXPECT_EQ(back.kind, EpochKind::SEAL);
	EXPECT_EQ(back.reason, SealReason::RECOVERY);
	EXPECT_EQ(back.successor_chain, 3u);
	EXPECT_TRUE(IsZeroHash(back.successor_base));
	EXPECT_STREQ(SealReasonName(back.reason), "recovery");
}

TEST(EpochFormat, RefusesDamageTruncationAndOtherVersions) {
	auto blob = EncodeEpoch(CommitEpoch(1, 1, HashOf("base"), 0, "abc"));
	Epoch back;
	std::string why;
	for (size_t at : {size_t(0), size_t(9), blob.size() / 2, blob.size() - 1}) {
		auto damaged = blob;
		damaged[at] ^= 0x5a;
		EXPECT_FALSE(DecodeEpoch(damaged, back, why)) << at;
	}
	EXPECT_FALSE(DecodeEpoch(blob.substr(0, blob.size() - 1), back, why));
	EXPECT_FALSE(DecodeEpoch("", back, why));
	// A later version with a valid checksum is refused by its number, not by accident.
	auto later = blob.substr(0, blob.size() - 32);
	later[8] = 2;
	auto sum = Sha256(later.data(), later.size());
	later.append(reinterpret_cast<const char *>(sum.data()), 32);
	EXPECT_FALSE(DecodeEpoch(later, back, why));
	EXPECT_NE(why.find("format 2"), std::string::npos) << why;
	// A chunk whose bytes do not match its hash decodes but does not verify.
	auto bad = CommitEpoch(1, 1, HashOf("base"), 0, "abc");
	bad.chunks[0].bytes = "other";
	ASSERT_TRUE(DecodeEpoch(EncodeEpoch(bad), back, why));
	EXPECT_FALSE(VerifyEpoch(back, "orders", "main", 1, 1, HashOf("base"), why));
}

class EpochChainTest : public ::testing::Test {
protected:
	void SetUp() override {
		dir =
		    std::filesystem::temp_directory_path() / ("epoch-chain-" + std::to_string(::getpid()) + "-" +
		                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
		std::filesystem::remove_all(dir);
		store = std::make_unique<LocalObjectStore>(dir.string());
	}
	void TearDown() override {
		store.reset();
		std::filesystem::remove_all(dir);
	}
	Hash256 Put(const Epoch &epoch) {
		auto blob = EncodeEpoch(epoch);
		EXPECT_TRUE(store
		                ->Put(PutOf(EpochKey(epoch.database, epoch.branch, epoch.chain, epoch.seq), blob,
		                            PutCondition::CreateOnly()))
		                .outcome.Ok());
		return EpochHash(blob);
	}
	void PutHead(uint64_t chain, const Hash256 &base) {
		auto head = ShippingHead(chain, base);
		head.snapshot_id = 1;
		auto text = EncodeHead(head);
		EXPECT_TRUE(store->Put(PutOf(HeadKey("orders", "main"), text, PutCondition::None())).outcome.Ok());
	}
	std::filesystem::path dir;
	std::unique_ptr<LocalObjectStore> store;
};

TEST_F(EpochChainTest, WalksCommitsAndFollowsSeals) {
	auto base1 = HashOf("base1"), base2 = HashOf("base2");
	PutHead(1, base1);
	auto h1 = Put(CommitEpoch(1, 1, base1, 0, "aaaa"));
	auto h2 = Put(CommitEpoch(1, 2, h1, 4, "bb"));
	auto seal = SealEpoch(SealReason::CHECKPOINT, 1, 3, h2, 2);
	seal.successor_base = base2;
	Put(seal);
	Put(CommitEpoch(2, 1, base2, 0, "c"));

	BranchHead head;
	std::string why;
	auto got = store->Get(HeadKey("orders", "main"));
	ASSERT_TRUE(DecodeHead(got.data, head, why)) << why;
	EXPECT_EQ(head.chain, 1u);
	auto pos = ChainPosition::FromHead(head);
	ChainState state;
	std::vector<ChainStep::Kind> kinds;
	EXPECT_EQ(WalkToTip(*store, pos, state, [&](const ChainStep &step) { kinds.push_back(step.kind); }), 4u);
	EXPECT_EQ(kinds, (std::vector<ChainStep::Kind> {ChainStep::Kind::COMMIT, ChainStep::Kind::COMMIT,
	                                                ChainStep::Kind::SEAL, ChainStep::Kind::COMMIT}));
	EXPECT_EQ(pos.chain, 2u);
	EXPECT_EQ(pos.seq, 1u);
	EXPECT_EQ(state.chain, 2u);
	EXPECT_EQ(state.base, base2);
	EXPECT_EQ(state.wal, "c");
	EXPECT_EQ(state.chunks.size(), 1u);
	// Nothing new: one more step finds nothing and moves nothing.
	EXPECT_EQ(ReadNextEpoch(*store, pos).kind, ChainStep::Kind::NONE);
	EXPECT_EQ(pos.seq, 1u);
}

TEST_F(EpochChainTest, ARecoverySealWaitsForTheHeadToNameTheBase) {
	auto base1 = HashOf("base1");
	PutHead(1, base1);
	auto h1 = Put(CommitEpoch(1, 1, base1, 0, "aaaa"));
	auto seal = SealEpoch(SealReason::RECOVERY, 1, 2, h1, 2);
	Put(seal);
	auto pos = ChainPosition::FromHead(ShippingHead(1, base1));
	ChainState state;
	EXPECT_EQ(WalkToTip(*store, pos, state), 2u);
	EXPECT_TRUE(pos.awaiting_base);
	// The state stays the sealed chain's tip.
	EXPECT_EQ(state.chain, 1u);
	EXPECT_EQ(state.wal, "aaaa");
	auto base2 = HashOf("base2");
	PutHead(2, base2);
	Put(CommitEpoch(2, 1, base2, 0, "z"));
	EXPECT_EQ(WalkToTip(*store, pos, state), 1u);
	EXPECT_FALSE(pos.awaiting_base);
	EXPECT_EQ(state.chain, 2u);
	EXPECT_EQ(state.wal, "z");
}

TEST_F(EpochChainTest, RefusesABrokenLinkAndAWalGap) {
	auto base1 = HashOf("base1");
	Put(CommitEpoch(1, 1, base1, 0, "aaaa"));
	Put(CommitEpoch(1, 2, HashOf("not the first"), 4, "bb"));
	auto pos = ChainPosition::FromHead(ShippingHead(1, base1));
	ChainState state;
	EXPECT_EQ(WalkError(*store, pos, state), "corrupt_epoch") << "a broken link was walked";
	EXPECT_EQ(pos.seq, 1u);
	EXPECT_EQ(state.wal, "aaaa");
	// A link that holds but a WAL that does not continue where the chain's WAL ends.
	auto base2 = HashOf("base2");
	auto g1 = Put(CommitEpoch(2, 1, base2, 0, "aaaa"));
	Put(CommitEpoch(2, 2, g1, 7, "bb"));
	auto pos2 = ChainPosition::FromHead(ShippingHead(2, base2));
	ChainState state2;
	EXPECT_EQ(WalkError(*store, pos2, state2), "corrupt_epoch") << "a WAL gap was applied";
	EXPECT_EQ(state2.wal, "aaaa");
	try {
		ChainPosition::FromHead(ShippingHead(0, base2));
		FAIL() << "a head without a chain was accepted";
	} catch (DifferentialError &error) {
		EXPECT_EQ(error.code, ErrorCode::NOT_SHIPPING);
	}
}
