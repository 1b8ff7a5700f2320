#pragma once
// What the fuzz targets share. The readers under test take paths, so an input is written to a
// file in a folder private to this process (made on first use, removed at exit).
#include <cstddef>
#include <cstdint>
#include <string>

namespace orrery::fuzz {

// The folder: under $TMPDIR (else /tmp), writable, also the readers' scratch folder.
const std::string& scratch_dir();

// Writes `size` bytes to scratch_dir()/name, replacing what was there; returns the path.
std::string write_input(const uint8_t* data, size_t size, const std::string& name);

// An input refused with an orrery::Error, as the contract allows. Its message must be UTF-8
// (input quoted by quote_input): messages go into JSON files (eval.json names the data sets it
// skipped, and why) and nlohmann refuses to write anything else. Aborts otherwise.
void refused(const std::exception& e);

}  // namespace orrery::fuzz
