// The words a merge request is stored with (its state, its action): one enum and one string table
// each, shared by the merge engine and the metadata layer that keeps them as text.
#pragma once

#include "common/enum_text.hpp"

#include <string>

namespace differential {

//! A request is pending from its first attempt until it completes or is aborted; both are final. A
//! merge into an S3 database passes through the durable publication steps (docs/DURABILITY.md §13.9):
//! prepared (result checkpointed, name and snapshot number reserved), uploaded (exported), and
//! publication_uncertain (a head write was sent and its outcome is not known).
enum class RequestState { PENDING, PREPARED, UPLOADED, PUBLICATION_UNCERTAIN, COMPLETE, ABORTED };

inline constexpr EnumText<RequestState> REQUEST_STATES[] = {
    {RequestState::PENDING, "pending"},   {RequestState::PREPARED, "prepared"},
    {RequestState::UPLOADED, "uploaded"}, {RequestState::PUBLICATION_UNCERTAIN, "publication_uncertain"},
    {RequestState::COMPLETE, "complete"}, {RequestState::ABORTED, "aborted"}};

//! Whether a request holds a prepared S3 result (a retry resumes it instead of recomputing).
inline bool IsPrepared(RequestState state) {
	return state == RequestState::PREPARED || state == RequestState::UPLOADED ||
	       state == RequestState::PUBLICATION_UNCERTAIN;
}

inline const char *ToString(RequestState state) {
	return TextOf(REQUEST_STATES, state);
}
inline RequestState ParseRequestState(const std::string &text) {
	return ValueOf(REQUEST_STATES, text, "the merge request state");
}

//! What a merge did to its destination.
enum class MergeAction { CREATED_BRANCH, ALREADY_UP_TO_DATE, FAST_FORWARD, MERGED };

inline constexpr EnumText<MergeAction> MERGE_ACTIONS[] = {{MergeAction::CREATED_BRANCH, "created_branch"},
                                                          {MergeAction::ALREADY_UP_TO_DATE, "already_up_to_date"},
                                                          {MergeAction::FAST_FORWARD, "fast_forward"},
                                                          {MergeAction::MERGED, "merged"}};

inline const char *ToString(MergeAction action) {
	return TextOf(MERGE_ACTIONS, action);
}
inline MergeAction ParseMergeAction(const std::string &text) {
	return ValueOf(MERGE_ACTIONS, text, "the merge action");
}

} // namespace differential
