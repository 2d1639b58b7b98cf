// The merge's states, phases and actions: one enum and one string table each. Text appears only where
// a value leaves the engine (SQL results, progress, crash-point labels); inside, the enums travel.
#pragma once

#include "common/merge_request_states.hpp"

namespace differential {

//! A merge call's phases, in order, with the share of the total progress each starts at and ends at.
enum class MergePhase { SELECTION, PLANNING, COMPARISON, APPLICATION, VALIDATION, PUBLICATION };

struct PhaseInfo {
	MergePhase phase;
	const char *text;
	double progress_start;
	//! Comparison and application advance table by table up to this share.
	double progress_end;
};

inline constexpr PhaseInfo MERGE_PHASES[] = {
    {MergePhase::SELECTION, "selection", 0, 0},     {MergePhase::PLANNING, "planning", 5, 5},
    {MergePhase::COMPARISON, "comparison", 10, 60}, {MergePhase::APPLICATION, "application", 60, 85},
    {MergePhase::VALIDATION, "validation", 85, 85}, {MergePhase::PUBLICATION, "publication", 95, 95}};

inline const PhaseInfo &InfoOf(MergePhase phase) {
	for (auto &info : MERGE_PHASES) {
		if (info.phase == phase) {
			return info;
		}
	}
	return MERGE_PHASES[0];
}
inline const char *ToString(MergePhase phase) {
	return InfoOf(phase).text;
}

enum class SchemaMode { STRICT, ADDITIVE, CATALOG };

inline constexpr EnumText<SchemaMode> SCHEMA_MODES[] = {
    {SchemaMode::STRICT, "strict"}, {SchemaMode::ADDITIVE, "additive"}, {SchemaMode::CATALOG, "catalog"}};

inline const char *ToString(SchemaMode mode) {
	return TextOf(SCHEMA_MODES, mode);
}

//! What the result does with a whole table, or a column of it (NONE: it is in the base and the result).
//! REPLACE: a table without a primary key that one side changed, taken whole from that side.
enum class TableAction { NONE, ADD, DROP, REPLACE };

inline constexpr EnumText<TableAction> TABLE_ACTIONS[] = {
    {TableAction::NONE, ""}, {TableAction::ADD, "add"}, {TableAction::DROP, "drop"}, {TableAction::REPLACE, "replace"}};

inline const char *ToString(TableAction action) {
	return TextOf(TABLE_ACTIONS, action);
}

//! What the result does with a view (NONE: the same on all three sides).
enum class ViewAction { NONE, ADD, DROP, REPLACE };

inline constexpr EnumText<ViewAction> VIEW_ACTIONS[] = {
    {ViewAction::NONE, ""}, {ViewAction::ADD, "add"}, {ViewAction::DROP, "drop"}, {ViewAction::REPLACE, "replace"}};

inline const char *ToString(ViewAction action) {
	return TextOf(VIEW_ACTIONS, action);
}

//! An input of the merge, or the two changed sides together (a change both made).
enum class MergeSide { NONE, BASE, OURS, THEIRS, BOTH };

inline constexpr EnumText<MergeSide> MERGE_SIDES[] = {{MergeSide::NONE, ""},
                                                      {MergeSide::BASE, "base"},
                                                      {MergeSide::OURS, "ours"},
                                                      {MergeSide::THEIRS, "theirs"},
                                                      {MergeSide::BOTH, "both"}};

inline const char *ToString(MergeSide side) {
	return TextOf(MERGE_SIDES, side);
}

//! Where a table is in a running merge (differential_merge_status).
enum class TableState { WAITING, COMPARED, APPLIED };

inline constexpr EnumText<TableState> TABLE_STATES[] = {
    {TableState::WAITING, "waiting"}, {TableState::COMPARED, "compared"}, {TableState::APPLIED, "applied"}};

inline const char *ToString(TableState state) {
	return TextOf(TABLE_STATES, state);
}

//! A preview's validation: the result staged and every constraint and view held, or not, or not tried
//! (not asked for, conflicts, or nothing to combine).
enum class ValidationState { NOT_CHECKED, VALID, INVALID };

inline constexpr EnumText<ValidationState> VALIDATION_STATES[] = {{ValidationState::NOT_CHECKED, "not_checked"},
                                                                  {ValidationState::VALID, "valid"},
                                                                  {ValidationState::INVALID, "invalid"}};

inline const char *ToString(ValidationState state) {
	return TextOf(VALIDATION_STATES, state);
}

//! A preflight's reading of the destination: a target branch that is clean, attached (open in this
//! process), locked (written by another process), dirty, or unknown; a new branch name, or an existing one.
enum class TargetState { CLEAN, ATTACHED, LOCKED, DIRTY, UNKNOWN, NEW, EXISTS };

inline constexpr EnumText<TargetState> TARGET_STATES[] = {
    {TargetState::CLEAN, "clean"},  {TargetState::ATTACHED, "attached"}, {TargetState::LOCKED, "locked"},
    {TargetState::DIRTY, "dirty"},  {TargetState::UNKNOWN, "unknown"},   {TargetState::NEW, "new"},
    {TargetState::EXISTS, "exists"}};

inline const char *ToString(TargetState state) {
	return TextOf(TARGET_STATES, state);
}

enum class ObjectType { TABLE, VIEW };

inline constexpr EnumText<ObjectType> OBJECT_TYPES[] = {{ObjectType::TABLE, "table"}, {ObjectType::VIEW, "view"}};

inline const char *ToString(ObjectType type) {
	return TextOf(OBJECT_TYPES, type);
}

} // namespace differential
