#pragma once
// A stable sort without std::stable_sort: libstdc++ 12's std::stable_sort calls its own
// deprecated get_temporary_buffer, which clang (the sanitizer build) reports in every file that
// sorts (the dashboard's tables, the search's trial rankings). Ties keep their original order through the index, as std::stable_sort keeps them.
#include <algorithm>
#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

namespace orrery {

template <class T, class Less>
void sort_stably(std::vector<T>& items, Less less) {
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (less(items[a], items[b])) return true;
    if (less(items[b], items[a])) return false;
    return a < b;
  });
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (size_t i : order) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
}

}  // namespace orrery
