#include "tests/fuzz/difffuzz/Reducer.h"

#include <algorithm>
#include <set>
#include <vector>

#include "tests/fuzz/difffuzz/ShapeClasses.h"

namespace tessera::fuzz {

namespace {

void collect(std::vector<Stmt>& body, std::vector<Stmt*>& out) {
  for (Stmt& s : body) {
    if (s.deleted) continue;
    out.push_back(&s);
    collect(s.body, out);
    collect(s.orelse, out);
  }
}
// The live statements in pre-order: index i names the same statement in a program and in its copies.
std::vector<Stmt*> live(Program& p) {
  std::vector<Stmt*> out;
  collect(p.body, out);
  return out;
}

bool isControl(const Stmt& s) { return s.kind == StmtKind::For || s.kind == StmtKind::While || s.kind == StmtKind::If; }

// Replaces the `k`-th live control statement (pre-order) by its body (or, for an if, its else branch).
bool inlineControl(std::vector<Stmt>& body, int& k, bool useElse) {
  for (size_t i = 0; i < body.size(); ++i) {
    Stmt& s = body[i];
    if (s.deleted) continue;
    if (isControl(s) && k-- == 0) {
      if (useElse && s.kind != StmtKind::If) return false;
      std::vector<Stmt> replacement = useElse ? s.orelse : s.body;
      body.erase(body.begin() + static_cast<std::ptrdiff_t>(i));
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(i), replacement.begin(), replacement.end());
      return true;
    }
    if (inlineControl(s.body, k, useElse) || inlineControl(s.orelse, k, useElse)) return true;
    if (k < 0) return false;
  }
  return false;
}

void markBuffers(const std::vector<Stmt>& body, std::vector<bool>& used) {
  for (const Stmt& s : body) {
    if (s.deleted) continue;
    if (s.buffer >= 0) used[static_cast<size_t>(s.buffer)] = true;
    markBuffers(s.body, used);
    markBuffers(s.orelse, used);
  }
}
void renumberBuffers(std::vector<Stmt>& body, const std::vector<int>& newIndex) {
  for (Stmt& s : body) {
    if (s.buffer >= 0) s.buffer = newIndex[static_cast<size_t>(s.buffer)];
    renumberBuffers(s.body, newIndex);
    renumberBuffers(s.orelse, newIndex);
  }
}

class Reducer {
 public:
  Reducer(Program p, const std::function<bool(const Program&)>& stillFails, int maxChecks, ReduceStats& stats)
      : best_(std::move(p)), stillFails_(stillFails), maxChecks_(maxChecks), stats_(stats) {}

  Program run() {
    stats_.statementsBefore = liveStatements(best_);
    for (bool progress = true; progress && budgetLeft();) {
      progress = false;
      progress |= deleteStatements();
      progress |= inlineControlFlow();
      progress |= simplifyStatements();
      progress |= simplifyLaunch();
      progress |= shrinkDimensions();
    }
    dropUnusedBuffers();
    stats_.statementsAfter = liveStatements(best_);
    return std::move(best_);
  }

 private:
  bool budgetLeft() const { return stats_.checks < maxChecks_; }

  // Keeps `candidate` if it still fails.
  bool attempt(Program candidate) {
    if (!budgetLeft()) return false;
    ++stats_.checks;
    if (!stillFails_(candidate)) return false;
    best_ = std::move(candidate);
    return true;
  }
  // Applies `edit` to a copy of the best program; keeps it if the edit applied and the copy still fails.
  template <class Edit> bool tryEdit(Edit edit) {
    Program candidate = best_;
    if (!edit(candidate)) return false;
    return attempt(std::move(candidate));
  }

  // ddmin over the live statements: chunks of n/2, n/4, ..., 1.
  bool deleteStatements() {
    bool progress = false;
    for (size_t chunk = std::max<size_t>(1, live(best_).size() / 2); chunk >= 1 && budgetLeft(); chunk /= 2) {
      for (size_t start = 0; start < live(best_).size() && budgetLeft();) {
        const bool removed = tryEdit([&](Program& c) {
          std::vector<Stmt*> stmts = live(c);
          if (start >= stmts.size()) return false;
          for (size_t i = start; i < std::min(stmts.size(), start + chunk); ++i) stmts[i]->deleted = true;
          return true;
        });
        progress |= removed;
        if (!removed) start += chunk;  // on success the same index now names the next statements
      }
      if (chunk == 1) break;
    }
    return progress;
  }

  bool inlineControlFlow() {
    bool progress = false;
    for (int k = 0; budgetLeft(); ++k) {
      int controls = 0;
      for (Stmt* s : live(best_)) controls += isControl(*s);
      if (k >= controls) break;
      for (bool useElse : {false, true})
        if (tryEdit([&](Program& c) {
              int index = k;
              return inlineControl(c.body, index, useElse);
            })) {
          progress = true;
          --k;  // the k-th control statement is a new one now
          break;
        }
    }
    return progress;
  }

  // One simpler attribute at a time: no mask, no transposed addressing, constants 0 then 1, constant trips.
  bool simplifyStatements() {
    bool progress = false;
    for (size_t i = 0; i < live(best_).size() && budgetLeft(); ++i) {
      auto edit = [&](auto change) {
        return tryEdit([&](Program& c) { return change(*live(c)[i]); });
      };
      progress |= edit([](Stmt& s) { return s.mask != MaskKind::None && (s.mask = MaskKind::None, true); });
      progress |= edit([](Stmt& s) {
        return s.flag && s.kind != StmtKind::Atomic && (s.flag = false, true);
      });
      const bool control = live(best_)[i]->kind == StmtKind::For || live(best_)[i]->kind == StmtKind::While;
      if (control) progress |= edit([](Stmt& s) { return s.op != 0 && (s.op = 0, true); });
      for (double v : {0.0, 1.0})
        progress |= edit([&](Stmt& s) { return s.constant != v && std::abs(s.constant) > v && (s.constant = v, true); });
    }
    return progress;
  }

  bool simplifyLaunch() {
    bool progress = false;
    while (tryEdit([](Program& c) { return ++c.shrink <= 5; })) progress = true;
    progress |= tryEdit([](Program& c) { return c.gridX * c.gridY > 1 && (c.gridX = c.gridY = 1, true); });
    progress |= tryEdit([](Program& c) { return c.gridY > 1 && (c.gridY = 1, true); });
    progress |= tryEdit([](Program& c) { return c.numWarps > 1 && (c.numWarps = 1, true); });
    progress |= tryEdit([](Program& c) { return c.limitPercent != 100 && (c.limitPercent = 100, true); });
    return progress;
  }

  // Shrinks tied dimensions (ShapeClasses.h) rather than all of them: the classes of one statement's result
  // together (its whole tile), then each class alone. A group is lowered at once until its smallest member is 0
  // if that still fails, else one step at a time.
  bool shrinkDimensions() {
    storeShrink(best_);
    const std::vector<DimClass> classes = dimensionClasses(live(best_));
    std::set<std::vector<size_t>> seen;
    std::vector<std::vector<size_t>> groups;
    for (size_t i = 0; i < live(best_).size(); ++i) {
      std::vector<size_t> group;
      auto ofResult = [&](const DimRef& r) { return r.statement == i && r.operand < 0; };
      for (size_t k = 0; k < classes.size(); ++k)
        if (std::any_of(classes[k].begin(), classes[k].end(), ofResult)) group.push_back(k);
      if (!group.empty() && seen.insert(group).second) groups.push_back(group);
    }
    for (size_t k = 0; k < classes.size(); ++k)
      if (seen.insert({k}).second) groups.push_back({k});

    bool progress = false;
    for (const std::vector<size_t>& group : groups) {
      while (budgetLeft()) {
        const int smallest = smallestDimension(classes, group);
        if (smallest == 0) break;
        if (!lowerDimensions(classes, group, smallest) && !(smallest > 1 && lowerDimensions(classes, group, 1))) break;
        progress = true;
      }
    }
    return progress;
  }
  // The program's uniform shrink, stored in its types instead (the same shapes: no check needed).
  static void storeShrink(Program& p) {
    for (Stmt* s : live(p)) {
      for (int& d : s->type.log2Shape) d = std::max(0, d - p.shrink);
      for (ValueType& t : s->argTypes)
        for (int& d : t.log2Shape) d = std::max(0, d - p.shrink);
    }
    p.shrink = 0;
  }
  int smallestDimension(const std::vector<DimClass>& classes, const std::vector<size_t>& group) {
    const std::vector<Stmt*> stmts = live(best_);
    int smallest = 10;
    for (size_t k : group)
      for (const DimRef& r : classes[k]) smallest = std::min(smallest, dimension(stmts, r));
    return smallest;
  }
  bool lowerDimensions(const std::vector<DimClass>& classes, const std::vector<size_t>& group, int step) {
    return tryEdit([&](Program& c) {
      const std::vector<Stmt*> stmts = live(c);
      for (size_t k : group)
        for (const DimRef& r : classes[k]) dimension(stmts, r) -= step;
      return reshapesKeepSizes(stmts);
    });
  }

  void dropUnusedBuffers() {
    tryEdit([](Program& c) {
      std::vector<bool> used(c.buffers.size(), false);
      markBuffers(c.body, used);
      if (std::all_of(used.begin(), used.end(), [](bool u) { return u; })) return false;
      std::vector<int> newIndex(c.buffers.size(), -1);
      std::vector<BufferSpec> kept;
      for (size_t i = 0; i < used.size(); ++i)
        if (used[i]) {
          newIndex[i] = static_cast<int>(kept.size());
          kept.push_back(c.buffers[i]);
        }
      c.buffers = kept;
      renumberBuffers(c.body, newIndex);
      return true;
    });
  }

  Program best_;
  const std::function<bool(const Program&)>& stillFails_;
  int maxChecks_;
  ReduceStats& stats_;
};

}  // namespace

Program reduceProgram(Program p, const std::function<bool(const Program&)>& stillFails, int maxChecks,
                      ReduceStats& stats) {
  return Reducer(std::move(p), stillFails, maxChecks, stats).run();
}

}  // namespace tessera::fuzz
