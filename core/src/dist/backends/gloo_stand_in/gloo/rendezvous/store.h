#pragma once
// The pip LibTorch has Gloo compiled in but ships none of the gloo headers that
// torch/csrc/distributed/c10d/ProcessGroupGloo.hpp includes. These stand-ins declare just enough
// for that header to compile in the one file that includes it (gloo_backend.cpp), which only
// calls functions libtorch_cpu exports and never constructs or derives from a gloo type. The
// virtual order below is that of the gloo inside libtorch_cpu 2.13, read from its exported
// vtables (Debian's libgloo-dev, from 2022, differs); check it again on a LibTorch upgrade.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#define GLOO_STORE_HAS_STORE_V2 1

namespace gloo {

class IStore {
 public:
  virtual ~IStore() = default;
  virtual void set(const std::string& key, const std::vector<char>& data) = 0;
  virtual std::vector<char> get(const std::string& key) = 0;
  virtual std::vector<char> wait_get(const std::string& key, const std::chrono::milliseconds& timeout);
  virtual void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) = 0;
  virtual bool has_v2_support() = 0;
  virtual std::vector<std::vector<char>> multi_get(const std::vector<std::string>& keys) = 0;
  virtual void multi_set(const std::vector<std::string>& keys, const std::vector<std::vector<char>>& values) = 0;
  virtual void append(const std::string& key, const std::vector<char>& value) = 0;
  virtual int64_t add(const std::string& key, int64_t value) = 0;
};

namespace rendezvous {
class Store : public IStore {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::seconds(30);
  ~Store() override = default;
  virtual void wait(const std::vector<std::string>& keys) = 0;
  using IStore::wait;
};
}  // namespace rendezvous

}  // namespace gloo
