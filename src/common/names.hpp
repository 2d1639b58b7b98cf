// Validation of user-supplied names: they become directory and lock-file names, so they must be safe.
#pragma once

#include <string>

namespace differential {

//! Throws invalid_name unless `name` is 1..128 characters of [A-Za-z0-9_.-], not starting with '.' or '-'.
void ValidateName(const std::string &what, const std::string &name);
//! A branch name a user may create: ValidateName, and not starting with "__", which is reserved
//! for the extension's own branches (merge staging).
void ValidateNewBranchName(const std::string &name);
//! Renders a name for an error message without letting control characters through.
std::string QuoteName(const std::string &name);

} // namespace differential
