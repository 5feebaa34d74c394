#include "jit/sim/runtime/Report.h"

#include <cstdio>

#include "ir/Error.h"

namespace tessera::sim {

namespace {

std::string fixed(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string padded(const std::string& s, size_t width, bool left = false) {
  if (s.size() >= width) return s + " ";
  std::string pad(width - s.size(), ' ');
  return (left ? s + pad : pad + s) + " ";
}

std::string row(const std::string& op, const std::string& where, const Counters& c) {
  auto n = [](uint64_t v) { return std::to_string(v); };
  std::string s = padded(op, 14, true) + padded(where, 26, true);
  s += padded(n(c.globalLoad.requests), 9) + padded(fixed(c.globalLoad.sectorsPerRequest(), 2), 9) +
       padded(c.globalLoad.requests ? fixed(c.globalLoadEfficiency(), 3) : "-", 7);
  s += padded(n(c.globalStore.requests), 9) + padded(fixed(c.globalStore.sectorsPerRequest(), 2), 9) +
       padded(c.globalStore.requests ? fixed(c.globalStoreEfficiency(), 3) : "-", 7);
  s += padded(n(c.sharedLoad.requests + c.sharedStore.requests), 9) + padded(n(c.sharedBankConflicts()), 10);
  s += padded(n(c.barriers), 9) + padded(n(c.instructions(InstructionClass::Mma)), 8) +
       padded(n(c.instructions(InstructionClass::Shuffle)), 8);
  s.pop_back();
  return s + "\n";
}

}  // namespace

uint64_t Report::findingCount() const {
  uint64_t n = 0;
  for (uint64_t c : findingCounts) n += c;
  return n;
}

std::string Report::countersTable() const {
  std::string s = "sim counters for " + kernel + ", grid (" + std::to_string(grid[0]) + ", " +
                  std::to_string(grid[1]) + ", " + std::to_string(grid[2]) + ")\n";
  s += padded("op", 14, true) + padded("location", 26, true) + padded("gld.req", 9) + padded("sect/req", 9) +
       padded("ld.eff", 7) + padded("gst.req", 9) + padded("sect/req", 9) + padded("st.eff", 7) +
       padded("sh.req", 9) + padded("conflicts", 10) + padded("barriers", 9) + padded("mma", 8) + "shuffle\n";
  for (const OpCounters& op : ops) {
    std::string where = op.file.empty() ? "" : op.file + ":" + std::to_string(op.line) + ":" + std::to_string(op.column);
    // Long paths would break the columns: keep the end, which names the file.
    if (where.size() > 25) where = "..." + where.substr(where.size() - 22);
    s += row(op.op.empty() ? "(no op)" : op.op, where, op.counters);
  }
  s += row("total", "", total);
  std::string classes;
  for (size_t c = 0; c < kInstructionClassCount; ++c)
    if (total.warpInstructions[c])
      classes += std::string(classes.empty() ? "" : ", ") + instructionClassName(static_cast<InstructionClass>(c)) +
                 " " + std::to_string(total.warpInstructions[c]);
  if (!classes.empty()) s += "warp instructions: " + classes + "\n";
  std::string widths;
  for (size_t w = 0; w < kAccessWidthClasses; ++w)
    if (total.globalAccessWidths[w])
      widths += std::string(widths.empty() ? "" : ", ") + accessWidthName(w) + " " +
                std::to_string(total.globalAccessWidths[w]);
  if (!widths.empty()) s += "global lane accesses by width: " + widths + "\n";
  return s;
}

std::string Report::findingsText() const {
  std::string s;
  for (const Finding& f : findings) s += f.str() + "\n";
  for (size_t k = 0; k < kFindingKindCount; ++k) {
    uint64_t shown = 0;
    for (const Finding& f : findings) shown += static_cast<size_t>(f.kind) == k;
    if (findingCounts[k] > shown)
      s += std::to_string(findingCounts[k] - shown) + " more " + findingKindName(static_cast<FindingKind>(k)) +
           " finding(s) not shown (" + std::to_string(findingCounts[k]) + " in all)\n";
  }
  return s;
}

std::string Report::str() const {
  std::string s = countersTable();
  if (failed()) s += std::to_string(findingCount()) + " finding(s):\n" + findingsText();
  return s;
}

void Report::throwIfFailed() const {
  if (!failed()) return;
  // The error's location: the author's file:line of the first finding that has one.
  Location where;
  for (const Finding& f : findings)
    if (f.hasSite && f.line) {
      where = {f.file, f.line, f.column};
      break;
    }
  throw Error("sim: kernel '" + kernel + "' failed its checks (" + std::to_string(findingCount()) +
              " finding(s)):\n" + findingsText(), where);
}

}  // namespace tessera::sim
