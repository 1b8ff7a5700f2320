// A main for the fuzz targets built without libFuzzer (GCC, ORRERY_FUZZ off): replays every
// file named, and every file in every folder named, through LLVMFuzzerTestOneInput once. ctest
// runs it on the seed corpus, so the crashes fuzzing found stay fixed in every build.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    if (std::filesystem::is_directory(argv[i])) {
      // Folder by folder (orrery/host/file_tree.h says why not the recursive iterator).
      std::vector<std::filesystem::path> folders{argv[i]};
      while (!folders.empty()) {
        const std::filesystem::path folder = folders.back();
        folders.pop_back();
        for (const auto& e : std::filesystem::directory_iterator(folder))
          if (e.is_directory()) folders.push_back(e.path());
          else if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.emplace_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", f.c_str());
      return 1;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return files.empty() ? 1 : 0;  // an empty corpus is a mistake, not a pass
}
