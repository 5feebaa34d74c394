#include "ir/Printer.h"

#include <cctype>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace tessera::ir {

namespace {

// A hint is printable as a name only if it reads back as the same hint: it must start with a letter or '_' so
// that it can never collide with the numbered names, and use only the characters the lexer accepts in names.
bool isUsableHint(const std::string& hint) {
  if (hint.empty()) return false;
  char first = hint[0];
  if (!(std::isalpha(static_cast<unsigned char>(first)) || first == '_')) return false;
  for (char c : hint)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

// Assigns every value of a function its printed name, in print order, so that a value's name does not depend on
// which part of the function is being printed.
class Namer {
 public:
  void nameFunction(const Function& f) {
    for (unsigned i = 0; i < f.numArguments(); ++i) nameValue(f.argument(i), "arg" + std::to_string(i));
    nameBlockOps(*f.body());
  }

  void nameOp(const Op& op) {
    for (unsigned i = 0; i < op.numResults(); ++i) nameValue(op.result(i), "");
    for (unsigned r = 0; r < op.numRegions(); ++r) {
      const Block& region = *op.region(r);
      for (unsigned i = 0; i < region.numArguments(); ++i) nameValue(region.argument(i), "");
      nameBlockOps(region);
    }
  }

  // Name of a value; values the naming pass never saw (not defined in the printed function, i.e. broken IR or
  // a detached op's operands) get their hint or a "?N" placeholder so the output still reads sensibly.
  std::string nameOf(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return "%" + it->second;
    std::string name = isUsableHint(v->nameHint()) ? v->nameHint() : "?" + std::to_string(nextUnknown_++);
    names_[v] = name;
    return "%" + name;
  }

 private:
  void nameBlockOps(const Block& block) {
    for (const auto& op : block.ops()) nameOp(*op);
  }

  void nameValue(const Value* v, const std::string& fallbackBase) {
    if (names_.count(v)) return;
    std::string base = isUsableHint(v->nameHint()) ? v->nameHint() : fallbackBase;
    std::string name;
    if (base.empty()) {
      name = std::to_string(nextNumber_++);  // cannot collide: hints and fallbacks start with a letter or '_'
    } else {
      name = base;
      for (int suffix = 1; used_.count(name); ++suffix) name = base + "_" + std::to_string(suffix);
    }
    used_.insert(name);
    names_[v] = name;
  }

  std::unordered_map<const Value*, std::string> names_;
  std::unordered_set<std::string> used_;
  int nextNumber_ = 0;
  int nextUnknown_ = 0;
};

std::string attrDictStr(const AttrDict& attrs) {
  std::string s = "{";
  bool first = true;
  for (const auto& [key, value] : attrs) {  // std::map: keys come sorted
    s += (first ? "" : ", ") + key + " = " + value.str();
    first = false;
  }
  return s + "}";
}

class Printer {
 public:
  Printer(const PrintOptions& opts, Namer& namer) : opts_(opts), namer_(namer) {}

  void printFunction(const Function& f) {
    out_ += "func @" + f.name() + "(";
    for (unsigned i = 0; i < f.numArguments(); ++i) {
      if (i) out_ += ", ";
      out_ += namer_.nameOf(f.argument(i)) + ": " + f.argument(i)->type().str();
      if (!f.argAttrs(i).empty()) out_ += " " + attrDictStr(f.argAttrs(i));
    }
    out_ += ")";
    if (!f.attrs().empty()) out_ += " attributes " + attrDictStr(f.attrs());
    out_ += " {\n";
    for (const auto& op : f.body()->ops()) printOp(*op, 2);
    out_ += "}\n";
  }

  void printOp(const Op& op, int indent) {
    out_ += std::string(indent, ' ');
    if (op.numResults() > 0) {
      for (unsigned i = 0; i < op.numResults(); ++i) out_ += (i ? ", " : "") + namer_.nameOf(op.result(i));
      out_ += " = ";
    }
    out_ += op.name();
    for (unsigned i = 0; i < op.numOperands(); ++i) out_ += (i ? ", " : " ") + namer_.nameOf(op.operand(i));
    if (!op.attrs().empty()) out_ += " " + attrDictStr(op.attrs());
    if (op.numResults() > 0) {
      out_ += " : ";
      for (unsigned i = 0; i < op.numResults(); ++i) out_ += (i ? ", " : "") + op.result(i)->type().str();
    }
    for (unsigned r = 0; r < op.numRegions(); ++r) printRegion(*op.region(r), indent);
    if (opts_.locations && op.loc().known()) {
      const Location& loc = op.loc();
      out_ += " loc(" + Attr::string(loc.file).str() + ":" + std::to_string(loc.line) + ":" +
              std::to_string(loc.col) + ")";
    }
    out_ += "\n";
  }

  std::string take() { return std::move(out_); }

 private:
  void printRegion(const Block& region, int indent) {
    out_ += " {\n";
    if (region.numArguments() > 0) {
      out_ += std::string(indent, ' ') + "^(";
      for (unsigned i = 0; i < region.numArguments(); ++i) {
        Value* arg = region.argument(i);
        out_ += (i ? ", " : "") + namer_.nameOf(arg) + ": " + arg->type().str();
      }
      out_ += "):\n";
    }
    for (const auto& op : region.ops()) printOp(*op, indent + 2);
    out_ += std::string(indent, ' ') + "}";
  }

  const PrintOptions& opts_;
  Namer& namer_;
  std::string out_;
};

}  // namespace

std::string print(const Module& m, const PrintOptions& opts) {
  std::string out;
  for (size_t i = 0; i < m.functions().size(); ++i) {
    if (i) out += "\n";
    out += print(*m.functions()[i], opts);
  }
  return out;
}

std::string print(const Function& f, const PrintOptions& opts) {
  Namer namer;
  namer.nameFunction(f);
  Printer printer(opts, namer);
  printer.printFunction(f);
  return printer.take();
}

std::string print(const Op& op, const PrintOptions& opts) {
  Namer namer;
  const Function* enclosing = op.parentBlock() ? op.parentBlock()->parentFunction() : nullptr;
  if (enclosing)
    namer.nameFunction(*enclosing);  // same names as in the whole function's printout
  else
    namer.nameOp(op);
  Printer printer(opts, namer);
  printer.printOp(op, 0);
  return printer.take();
}

}  // namespace tessera::ir
