// One Repository object per repository directory in the process, shared by every DuckDB
// instance and connection, so metadata connections and segment writers are not duplicated.
#pragma once

#include "metadata/metadata_store.hpp"
#include "storage/repository_storage.hpp"

#include <memory>
#include <string>

namespace differential {

struct Repository {
	std::string root;
	std::shared_ptr<MetadataStore> metadata;
	std::shared_ptr<RepositoryStorage> storage;
};

//! Opens (creating the directory layout if needed) the repository at an absolute path.
std::shared_ptr<Repository> OpenRepository(const std::string &root);
//! Whether `root` (normalized) already holds a repository (its metadata.sqlite); nothing is created.
bool RepositoryExists(const std::string &root);
//! Checks that a user-supplied repository path is absolute and returns it normalized.
std::string NormalizeRepositoryPath(const std::string &path);

} // namespace differential
