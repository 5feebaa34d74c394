#include "tests/fuzz/difffuzz/ProgramText.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>
#include <utility>

#include "ir/Error.h"

namespace tessera::fuzz {

namespace {

// In StmtKind's order.
constexpr std::array kKindNames = {"load",   "constant", "index",     "unary",  "binary", "compare", "select",
                                   "fma",    "cast",     "bitcast",   "broadcast", "permute", "reshape", "cat",
                                   "join-split", "reduce", "scan",    "dot",    "store",  "atomic",  "atomic-cas",
                                   "assign", "for",      "while",     "if",     "assert", "debug-print"};
static_assert(kKindNames.size() == static_cast<size_t>(StmtKind::DebugPrint) + 1, "a name for every StmtKind");

constexpr std::array kMaskNames = {"none", "limit", "limit-other"};  // in MaskKind's order

std::string typeText(const ValueType& t) {
  std::string s = std::string(ir::scalarKindName(t.dtype)) + "[";
  for (size_t i = 0; i < t.log2Shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.log2Shape[i]);
  return s + "]";
}

std::string numberText(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// The stored dimensions as they run: the program's shrink applied.
ValueType shrunk(const Program& p, const ValueType& t) {
  ValueType out{t.dtype, {}};
  for (int d : t.log2Shape) out.log2Shape.push_back(std::max(0, d - p.shrink));
  return out;
}

void formatBody(const Program& p, const std::vector<Stmt>& body, int depth, std::ostringstream& os) {
  const std::string indent(static_cast<size_t>(2 * depth), ' ');
  for (const Stmt& s : body) {
    if (s.deleted) continue;
    os << indent << kKindNames[static_cast<size_t>(s.kind)];
    if (s.result >= 0) os << " result=" << s.result;
    os << " type=" << typeText(shrunk(p, s.type));
    if (s.op) os << " op=" << s.op;
    if (s.axis) os << " axis=" << s.axis;
    if (s.flag) os << " flag=1";
    if (s.buffer >= 0) os << " buffer=" << s.buffer;
    if (s.mask != MaskKind::None) os << " mask=" << kMaskNames[static_cast<size_t>(s.mask)];
    if (s.constant != 0) os << " constant=" << numberText(s.constant);
    if (!s.order.empty()) {
      os << " order=";
      for (size_t i = 0; i < s.order.size(); ++i) os << (i ? "," : "") << s.order[i];
    }
    for (size_t i = 0; i < s.args.size(); ++i) os << " arg=" << s.args[i] << ":" << typeText(shrunk(p, s.argTypes[i]));
    os << "\n";
    formatBody(p, s.body, depth + 1, os);
    if (s.kind == StmtKind::If) {
      os << indent << "else\n";
      formatBody(p, s.orelse, depth + 1, os);
    }
  }
}

class StatementParser {
 public:
  StatementParser(const std::vector<NumberedLine>& lines, const std::string& fileName)
      : lines_(lines), fileName_(fileName) {}

  std::vector<Stmt> run() {
    std::vector<Stmt> body = parseBody(0);
    if (next_ < lines_.size()) throw bad(lines_[next_], "indented deeper than its statement's body");
    return body;
  }

 private:
  Error bad(const NumberedLine& line, const std::string& why) const {
    return Error(fileName_ + ":" + std::to_string(line.number) + ": " + why + ": '" + line.text + "'");
  }

  static int indentOf(const std::string& text) {
    return static_cast<int>(std::min(text.find_first_not_of(' '), text.size()));
  }

  // The statements at exactly `depth` from the next line on, with their bodies.
  std::vector<Stmt> parseBody(int depth) {
    std::vector<Stmt> body;
    while (next_ < lines_.size()) {
      const NumberedLine& line = lines_[next_];
      const int indent = indentOf(line.text);
      if (indent < 2 * depth) break;
      if (indent != 2 * depth) throw bad(line, "indented deeper than its statement's body");
      if (line.text.substr(static_cast<size_t>(indent)) == "else") break;
      ++next_;
      body.push_back(parseStatement(line));
      Stmt& s = body.back();
      const bool control = s.kind == StmtKind::For || s.kind == StmtKind::While || s.kind == StmtKind::If;
      if (!control) continue;
      s.body = parseBody(depth + 1);
      const std::string elseLine = std::string(static_cast<size_t>(2 * depth), ' ') + "else";
      if (s.kind == StmtKind::If && next_ < lines_.size() && lines_[next_].text == elseLine) {
        ++next_;
        s.orelse = parseBody(depth + 1);
      }
    }
    return body;
  }

  ValueType parseType(const NumberedLine& line, const std::string& text) const {
    const size_t open = text.find('[');
    if (open == std::string::npos || text.back() != ']') throw bad(line, "a type is dtype[log2 dims], not " + text);
    ValueType t;
    const std::optional<ScalarKind> kind = ir::scalarKindFromName(text.substr(0, open));
    if (!kind) throw bad(line, "unknown dtype in " + text);
    t.dtype = *kind;
    t.log2Shape = parseInts(line, text.substr(open + 1, text.size() - open - 2));
    for (int d : t.log2Shape)
      if (d < 0 || d > 10) throw bad(line, "a log2 dimension must be 0 to 10 in " + text);
    if (t.log2Shape.size() > 3) throw bad(line, "a type has at most 3 dimensions: " + text);
    return t;
  }

  std::vector<int> parseInts(const NumberedLine& line, const std::string& list) const {
    std::vector<int> out;
    std::istringstream in(list);
    for (std::string item; std::getline(in, item, ',');) out.push_back(parseInt(line, item));
    return out;
  }

  // All of `text` converted by `convert` (std::stoi, std::stod), or an error saying it is not `what`.
  template <class Convert>
  auto parseWhole(const NumberedLine& line, const std::string& text, Convert convert, const char* what) const {
    size_t used = 0;
    decltype(convert(text, &used)) v{};
    try {
      v = convert(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size()) throw bad(line, "'" + text + "' is not " + what);
    return v;
  }
  int parseInt(const NumberedLine& line, const std::string& text) const {
    return parseWhole(line, text, [](const std::string& t, size_t* used) { return std::stoi(t, used); }, "an integer");
  }
  double parseNumber(const NumberedLine& line, const std::string& text) const {
    return parseWhole(line, text, [](const std::string& t, size_t* used) { return std::stod(t, used); }, "a number");
  }

  Stmt parseStatement(const NumberedLine& line) {
    std::istringstream words(line.text);
    std::string kind;
    words >> kind;
    const auto named = std::find(kKindNames.begin(), kKindNames.end(), kind);
    if (named == kKindNames.end()) throw bad(line, "unknown statement kind '" + kind + "'");
    Stmt s;
    s.kind = static_cast<StmtKind>(named - kKindNames.begin());
    bool typed = false;
    for (std::string word; words >> word;) {
      const size_t eq = word.find('=');
      if (eq == std::string::npos) throw bad(line, "'" + word + "' is not key=value");
      const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "result") s.result = parseInt(line, value);
      else if (key == "type") s.type = parseType(line, value), typed = true;
      else if (key == "op") s.op = parseInt(line, value);
      else if (key == "axis") s.axis = parseInt(line, value);
      else if (key == "flag") s.flag = parseInt(line, value) != 0;
      else if (key == "buffer") s.buffer = parseInt(line, value);
      else if (key == "mask") s.mask = parseMask(line, value);
      else if (key == "constant") s.constant = parseNumber(line, value);
      else if (key == "order") s.order = parseInts(line, value);
      else if (key == "arg") {
        const size_t colon = value.find(':');
        if (colon == std::string::npos) throw bad(line, "an arg is slot:type, not " + value);
        s.args.push_back(parseInt(line, value.substr(0, colon)));
        s.argTypes.push_back(parseType(line, value.substr(colon + 1)));
      } else {
        throw bad(line, "unknown attribute '" + key + "'");
      }
    }
    if (!typed) throw bad(line, "no type=");
    for (int slot : s.args)
      if (slot < 0) throw bad(line, "a negative slot");
    return s;
  }

  MaskKind parseMask(const NumberedLine& line, const std::string& name) const {
    const auto named = std::find(kMaskNames.begin(), kMaskNames.end(), name);
    if (named == kMaskNames.end()) throw bad(line, "unknown mask '" + name + "'");
    return static_cast<MaskKind>(named - kMaskNames.begin());
  }

  const std::vector<NumberedLine>& lines_;
  const std::string& fileName_;
  size_t next_ = 0;
};

void highestSlot(const std::vector<Stmt>& body, int& highest) {
  for (const Stmt& s : body) {
    highest = std::max(highest, s.result);
    for (int a : s.args) highest = std::max(highest, a);
    highestSlot(s.body, highest);
    highestSlot(s.orelse, highest);
  }
}

}  // namespace

std::string formatStatements(const Program& p) {
  std::ostringstream os;
  formatBody(p, p.body, 0, os);
  return os.str();
}

std::vector<Stmt> parseStatements(const std::vector<NumberedLine>& lines, const std::string& fileName) {
  return StatementParser(lines, fileName).run();
}

int slotsUsed(const std::vector<Stmt>& body) {
  int highest = -1;
  highestSlot(body, highest);
  return highest + 1;
}

}  // namespace tessera::fuzz
