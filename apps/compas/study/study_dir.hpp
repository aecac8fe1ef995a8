// compas study's directory (--out): which directory a study may write into, the files it wrote
// and how it touches them. A study writes only into a new or empty directory, or its own: the
// .compas-study marker it wrote ("compas study VERSION" on its first line), never a file name it
// writes (a runs.jsonl of a directory without the marker is someone else's); it deletes only
// files it wrote, listed in its manifest (the marker's lines after the first, each recorded before
// the file is written); it never opens a file there through a link, and writes its own files by
// rename (a link or a device planted under their names is replaced, never written through).
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

namespace compas::app {

// The largest file of a study's directory it reads back (runs.jsonl, the marker, a raw report,
// report.md, a plot): one limit for every reader of the same files.
inline constexpr std::uint64_t kStudyFileLimit = 256ull << 20;

// Claims `out` for a study: made when absent; taken when empty or a study's own (its marker).
// Anything else (an empty path, `/`, a file, a non-empty directory without the marker, among
// them one of a compas from before the marker, a marker that is a link) throws
// std::invalid_argument naming it and what to do. Also makes raw/ and logs/.
void claim_study_dir(const std::string& out);

// What claim_study_dir would refuse, refused without making or writing anything (--dry-run):
// the same std::invalid_argument, and also a directory that takes no new files (a read-only
// file system, no write permission), which claim_study_dir refuses first.
void check_study_dir(const std::string& out);

// The relative paths the study in `dir` wrote.
std::set<std::string> study_files(const std::filesystem::path& dir);

// Readies dir/`rel` for a file the study (or a run of it) is about to write: refuses
// (std::runtime_error) when a file of that name is there that the study did not write, records
// the name in the manifest, and removes the study's earlier file.
void prepare_study_file(const std::filesystem::path& dir, const std::string& rel);

// prepare_study_file, then `contents` written by rename (report::replace_file_atomic).
void write_study_file(const std::filesystem::path& dir, const std::string& rel,
                      const std::string& contents);

// Deletes the files the study wrote whose path starts with `prefix` and ends with `suffix`, and
// forgets them; nothing else is deleted.
void remove_study_files(const std::filesystem::path& dir, const std::string& prefix,
                        const std::string& suffix);

// Moves the regular *.png files of `drawn` (a folder the plot script drew into) to dir/plots/ as
// the study's, then removes `drawn`. A PNG of that name the study did not write stays, and the
// new one is dropped (said on stderr).
void take_study_plots(const std::filesystem::path& dir, const std::filesystem::path& drawn);

// dir/`sub` as a directory of the study: made when absent; std::invalid_argument when it is a
// link or not a directory.
void study_subdir(const std::filesystem::path& dir, const std::string& sub);

}  // namespace compas::app
