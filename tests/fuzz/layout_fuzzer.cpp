// libFuzzer target: the attribute parser on layout attributes and tile types ("#blocked{...}",
// "tile<16x64xf16, #shared{...}>"), Layout::fromAttr, and the layout queries the lowering relies on.
//
// Findings, besides crashes, sanitizer reports, leaks and hangs:
//   - any exception other than tessera::Error, or a tessera::Error without a message;
//   - an attribute whose canonical text does not parse back to the same attribute;
//   - a distributed layout over a shape where some thread's element lies outside the shape, some element is
//     held by no thread, or an element has other than exactly one owner (stores would be lost or duplicated);
//   - a shared layout whose offsets are not a permutation of the buffer (two elements in one slot).
// Seeds: every layout and tile type in the lit tests (tests/fuzz/make_seeds.py).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "Findings.h"
#include "ir/Layout.h"
#include "ir/Parser.h"

namespace {

using tessera::fuzz::accepted;
using tessera::fuzz::finding;
namespace ir = tessera::ir;

// Queries are exhaustive over threads, registers and elements; larger layouts only get the cheaper checks, so
// that one input runs in milliseconds under the sanitizers.
constexpr int64_t kMaxElements = 1024;
constexpr int64_t kMaxQueries = 4096;  // threads x registers per thread

std::string joined(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

// Every coordinate of `shape`, the first dimension slowest.
std::vector<std::vector<int64_t>> allCoords(const std::vector<int64_t>& shape) {
  std::vector<std::vector<int64_t>> out(1);
  for (int64_t extent : shape) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& prefix : out)
      for (int64_t i = 0; i < extent; ++i) {
        next.push_back(prefix);
        next.back().push_back(i);
      }
    out = std::move(next);
  }
  return out;
}

void checkDistributed(const ir::Layout& l, const std::vector<int64_t>& shape) {
  int64_t warps = 0, lanes = 0, regs = 0;
  if (!accepted("layout sizes", [&] {
        warps = l.numWarps();
        lanes = l.warpSize();
        regs = l.registersPerThread(shape);
      }))
    return;
  if (warps > kMaxQueries || lanes > kMaxQueries || regs > kMaxQueries || warps * lanes * regs > kMaxQueries)
    return;
  std::map<std::vector<int64_t>, std::pair<int, int>> heldAndOwned;
  for (const auto& c : allCoords(shape)) heldAndOwned[c] = {0, 0};
  const std::string context = l.str() + " over " + joined(shape);
  for (int64_t w = 0; w < warps; ++w)
    for (int64_t t = 0; t < lanes; ++t)
      for (int64_t r = 0; r < regs; ++r) {
        std::vector<int64_t> c;
        bool owner = false;
        if (!accepted("coords", [&] {
              c = l.coords(shape, w, t, r);
              owner = l.isOwner(shape, w, t, r);
            }))
          finding("a query inside the layout's own bounds failed", context);
        auto it = heldAndOwned.find(c);
        if (it == heldAndOwned.end()) finding("an element outside the shape", context + " at " + joined(c));
        ++it->second.first;
        it->second.second += owner;
      }
  for (const auto& [c, counts] : heldAndOwned) {
    if (counts.first == 0) finding("an element no thread holds", context + " at " + joined(c));
    if (counts.second != 1)
      finding(std::to_string(counts.second) + " owners for one element", context + " at " + joined(c));
  }
}

void checkShared(const ir::Layout& l, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<bool> used(static_cast<size_t>(n), false);
  const std::string context = l.str() + " over " + joined(shape);
  for (const auto& c : allCoords(shape)) {
    int64_t offset = -1;
    if (!accepted("sharedOffset", [&] { offset = l.sharedOffset(shape, c); })) return;
    if (offset < 0 || offset >= n) finding("a shared offset outside the buffer", context + " at " + joined(c));
    if (used[offset]) finding("two elements at one shared offset", context + " at " + joined(c));
    used[offset] = true;
  }
}

// The shape to query a bare layout over: each dimension a power of two up to 64 picked by the input's hash.
std::vector<int64_t> shapeFor(int rank, size_t hash) {
  std::vector<int64_t> shape;
  for (int d = 0; d < rank; ++d, hash >>= 3) shape.push_back(int64_t(1) << (hash % 7));
  return shape;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ir::Attr attr;
  if (!accepted("parseAttribute", [&] { attr = ir::parseAttribute(text); })) return 0;
  const std::string canonical = attr.str();
  ir::Attr reparsed;
  if (!accepted("parseAttribute", [&] { reparsed = ir::parseAttribute(canonical); }) || reparsed != attr)
    finding("an attribute's canonical text does not parse back to it", text + "\n--- printed as ---\n" + canonical);

  std::optional<ir::Layout> layout;
  std::vector<int64_t> shape;
  if (attr.isLayout()) {
    if (!accepted("Layout::fromAttr", [&] { layout = ir::Layout::fromAttr(attr); })) return 0;
    shape = shapeFor(layout->rank(), std::hash<std::string>{}(text));
  } else if (attr.isType() && attr.getType().isTile()) {
    if (!accepted("Layout::ofType", [&] { layout = ir::Layout::ofType(attr.getType()); }) || !layout) return 0;
    shape = attr.getType().shape();
    if (static_cast<int>(shape.size()) != layout->rank()) return 0;  // the verifier's to reject
  } else {
    return 0;
  }
  if (ir::Layout::fromAttr(ir::parseAttribute(layout->str())) != *layout)
    finding("a layout's text does not parse back to it", layout->str());

  int64_t elements = 1;
  for (int64_t s : shape) elements *= s;
  if (elements > kMaxElements) return 0;
  if (layout->isDistributed()) checkDistributed(*layout, shape);
  else checkShared(*layout, shape);
  return 0;
}
