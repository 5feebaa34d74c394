// Textual tile IR parser: a hand-written lexer (tokens carry 1-based line/column) feeding a recursive-descent
// parser. Every error is a tessera::Error located at the offending token; the parser never asserts on input.
#include "ir/Parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace tessera::ir {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isNameChar(char c) { return isLetter(c) || isDigit(c) || c == '.'; }
bool isHexDigit(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hexValue(char c) { return isDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }

// A decimal number made only of digits, if it fits in 64 bits.
std::optional<uint64_t> parseDigits(const std::string& s) {
  if (s.empty()) return std::nullopt;
  for (char c : s)
    if (!isDigit(c)) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// ---------------------------------------------------------------- lexer

enum class Tok {
  Eof, Word, ValueName, FuncName, HashName, String,
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Less, Greater, Comma, Colon, Equal, Minus, Caret,
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text;  // words: the spelling; names: without the sigil; strings: the decoded contents
  unsigned line = 1;
  unsigned col = 1;
};

class Lexer {
 public:
  Lexer(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  Token next() {
    skipSpaceAndComments();
    Token t;
    t.line = line_;
    t.col = col_;
    if (atEnd()) return t;
    char c = text_[pos_];
    if (auto punct = punctuation(c)) {
      advance();
      t.kind = *punct;
      t.text = std::string(1, c);
      return t;
    }
    if (c == '%' || c == '@' || c == '#') {
      advance();
      t.kind = c == '%' ? Tok::ValueName : c == '@' ? Tok::FuncName : Tok::HashName;
      t.text = readWhile(isNameChar);
      if (t.text.empty()) fail(t.line, t.col, std::string("expected a name after '") + c + "'");
      return t;
    }
    if (c == '"') return lexString(t);
    if (isLetter(c)) {
      t.kind = Tok::Word;
      t.text = readWhile(isNameChar);
      return t;
    }
    if (isDigit(c)) return lexNumberWord(t);
    char buf[32];
    if (c > 0x20 && c < 0x7f)
      std::snprintf(buf, sizeof buf, "unexpected character '%c'", c);
    else
      std::snprintf(buf, sizeof buf, "unexpected byte 0x%02X", static_cast<unsigned char>(c));
    fail(t.line, t.col, buf);
  }

 private:
  bool atEnd() const { return pos_ >= text_.size(); }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  [[noreturn]] void fail(unsigned line, unsigned col, const std::string& message) const {
    throw Error(message, Location{file_, line, col});
  }

  static std::optional<Tok> punctuation(char c) {
    switch (c) {
      case '(': return Tok::LParen;
      case ')': return Tok::RParen;
      case '{': return Tok::LBrace;
      case '}': return Tok::RBrace;
      case '[': return Tok::LBracket;
      case ']': return Tok::RBracket;
      case '<': return Tok::Less;
      case '>': return Tok::Greater;
      case ',': return Tok::Comma;
      case ':': return Tok::Colon;
      case '=': return Tok::Equal;
      case '-': return Tok::Minus;
      case '^': return Tok::Caret;
      default: return std::nullopt;
    }
  }

  void skipSpaceAndComments() {
    while (!atEnd()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (!atEnd() && text_[pos_] != '\n') advance();
      } else {
        return;
      }
    }
  }

  template <typename Pred>
  std::string readWhile(Pred pred) {
    size_t start = pos_;
    while (!atEnd() && pred(text_[pos_])) advance();
    return text_.substr(start, pos_ - start);
  }

  // Numbers and tile shapes both start with a digit: "42", "1.5e-07", "128x64xf32". A sign is part of the word
  // only as an exponent sign, which a shape (it contains an 'x') never has.
  Token lexNumberWord(Token t) {
    t.kind = Tok::Word;
    size_t start = pos_;
    bool sawX = false;
    while (!atEnd()) {
      char c = text_[pos_];
      if (c == 'x') sawX = true;
      bool exponentSign = (c == '+' || c == '-') && !sawX && (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E');
      if (!isNameChar(c) && !exponentSign) break;
      advance();
    }
    t.text = text_.substr(start, pos_ - start);
    return t;
  }

  Token lexString(Token t) {
    t.kind = Tok::String;
    advance();  // opening quote
    while (true) {
      if (atEnd() || text_[pos_] == '\n') fail(t.line, t.col, "unterminated string");
      char c = text_[pos_];
      if (c == '"') {
        advance();
        return t;
      }
      if (c != '\\') {
        t.text += c;
        advance();
        continue;
      }
      unsigned escLine = line_, escCol = col_;
      advance();
      if (atEnd()) fail(t.line, t.col, "unterminated string");
      char e = text_[pos_];
      if (e == '"' || e == '\\') {
        t.text += e;
        advance();
      } else if (e == 'n' || e == 't') {
        t.text += e == 'n' ? '\n' : '\t';
        advance();
      } else if (isHexDigit(e) && pos_ + 1 < text_.size() && isHexDigit(text_[pos_ + 1])) {
        t.text += static_cast<char>(hexValue(e) * 16 + hexValue(text_[pos_ + 1]));
        advance();
        advance();
      } else {
        std::string shown = (e > 0x20 && e < 0x7f) ? std::string(1, e) : "?";
        fail(escLine, escCol, "invalid escape sequence '\\" + shown + "' in string (use \\\" \\\\ \\n \\t or \\XY)");
      }
    }
  }

  const std::string& text_;
  const std::string& file_;
  size_t pos_ = 0;
  unsigned line_ = 1;
  unsigned col_ = 1;
};

// ---------------------------------------------------------------- parser

// Deep nesting (arrays in arrays, regions in regions) is bounded so that hostile input cannot overflow the stack.
constexpr int kMaxNesting = 200;

class Parser {
 public:
  Parser(const std::string& text, const std::string& file) : lexer_(text, file), file_(file) {}

  std::unique_ptr<Module> parseModule() {
    auto module = std::make_unique<Module>();
    while (!is(Tok::Eof)) {
      if (!isWord("func")) failExpected("'func'");
      parseFunction(*module);
    }
    return module;
  }

  Attr parseWholeAttribute() {
    Attr a = parseAttr();
    if (!is(Tok::Eof)) failExpected("end of input after the attribute");
    return a;
  }

 private:
  // ---- token stream
  const Token& peek(size_t ahead = 0) {
    while (buffer_.size() <= ahead) buffer_.push_back(lexer_.next());
    return buffer_[ahead];
  }
  Token take() {
    peek();
    Token t = std::move(buffer_.front());
    buffer_.pop_front();
    return t;
  }
  bool is(Tok kind, size_t ahead = 0) { return peek(ahead).kind == kind; }
  bool isWord(const char* word) { return is(Tok::Word) && peek().text == word; }
  bool accept(Tok kind) {
    if (!is(kind)) return false;
    take();
    return true;
  }
  Token expect(Tok kind, const std::string& what) {
    if (!is(kind)) failExpected(what);
    return take();
  }

  [[noreturn]] void failAt(unsigned line, unsigned col, const std::string& message) const {
    throw Error(message, Location{file_, line, col});
  }
  [[noreturn]] void fail(const Token& t, const std::string& message) const { failAt(t.line, t.col, message); }
  [[noreturn]] void failExpected(const std::string& what) {
    fail(peek(), "expected " + what + ", found " + describe(peek()));
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::Eof: return "end of input";
      case Tok::String: return "string " + Attr::string(t.text).str();
      case Tok::ValueName: return "'%" + t.text + "'";
      case Tok::FuncName: return "'@" + t.text + "'";
      case Tok::HashName: return "'#" + t.text + "'";
      default: return "'" + t.text + "'";
    }
  }

  struct NestingGuard {
    NestingGuard(Parser& p, const Token& at) : parser(p) {
      if (parser.depth_ >= kMaxNesting) parser.fail(at, "nesting too deep");
      ++parser.depth_;
    }
    ~NestingGuard() { --parser.depth_; }
    Parser& parser;
  };

  // ---- value names. Names are unique per function; visibility follows region nesting.
  void reserveName(const Token& name) {
    if (!definedNames_.insert(name.text).second) fail(name, "redefinition of '%" + name.text + "'");
  }
  void bindName(const Token& name, Value* v) {
    scopes_.back()[name.text] = v;
    // Numbered names are the printer's own; only real names survive as hints (so printing renumbers cleanly).
    if (isLetter(name.text[0])) v->setNameHint(name.text);
  }
  Value* lookup(const Token& name) {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->find(name.text);
      if (it != scope->end()) return it->second;
    }
    fail(name, "use of undefined value '%" + name.text + "'");
  }

  // ---- functions, regions, ops
  void parseFunction(Module& module) {
    Token funcTok = take();
    Token name = expect(Tok::FuncName, "function name such as '@kernel' after 'func'");
    if (module.lookup(name.text)) fail(name, "redefinition of function '@" + name.text + "'");
    definedNames_.clear();
    std::vector<Token> argNames;
    std::vector<Type> argTypes;
    std::vector<AttrDict> argAttrs;
    expect(Tok::LParen, "'(' after the function name");
    if (!accept(Tok::RParen)) {
      while (true) {
        argNames.push_back(expect(Tok::ValueName, "argument name"));
        reserveName(argNames.back());
        expect(Tok::Colon, "':' after argument name");
        argTypes.push_back(parseType());
        argAttrs.push_back(is(Tok::LBrace) ? parseAttrDict() : AttrDict{});
        if (accept(Tok::Comma)) continue;
        expect(Tok::RParen, "',' or ')' after function argument");
        break;
      }
    }
    AttrDict funcAttrs;
    if (isWord("attributes")) {
      take();
      funcAttrs = parseAttrDict();
    }
    auto function = std::make_unique<Function>(name.text, argTypes);
    function->setLoc(Location{file_, funcTok.line, funcTok.col});
    function->attrs() = std::move(funcAttrs);
    scopes_.assign(1, {});
    for (size_t i = 0; i < argNames.size(); ++i) {
      bindName(argNames[i], function->argument(i));
      function->argAttrs(i) = std::move(argAttrs[i]);
    }
    expect(Tok::LBrace, "'{' to begin the function body");
    parseOpsUntilRBrace(function->body());
    module.addFunction(std::move(function));
  }

  void parseOpsUntilRBrace(Block* block) {
    while (!accept(Tok::RBrace)) {
      if (is(Tok::Eof)) failExpected("'}'");
      parseOp(block);
    }
  }

  void parseRegion(Block* block) {
    NestingGuard guard(*this, peek());
    expect(Tok::LBrace, "'{' to begin a region");
    scopes_.emplace_back();
    if (accept(Tok::Caret)) {
      expect(Tok::LParen, "'(' after '^'");
      if (!accept(Tok::RParen)) {
        while (true) {
          Token name = expect(Tok::ValueName, "region argument name");
          reserveName(name);
          expect(Tok::Colon, "':' after region argument name");
          bindName(name, block->addArgument(parseType()));
          if (accept(Tok::Comma)) continue;
          expect(Tok::RParen, "',' or ')' after region argument");
          break;
        }
      }
      expect(Tok::Colon, "':' after the region argument list");
    }
    parseOpsUntilRBrace(block);
    scopes_.pop_back();
  }

  // True if the tokens from `ahead` on are "%a, %b, ... =", i.e. the results of the next op rather than
  // operands of the current one (an op without operands may be followed by an op with results).
  bool startsResultList(size_t ahead) {
    while (true) {
      if (!is(Tok::ValueName, ahead)) return false;
      if (is(Tok::Equal, ahead + 1)) return true;
      if (!is(Tok::Comma, ahead + 1)) return false;
      ahead += 2;
    }
  }

  void parseOp(Block* block) {
    Token first = peek();
    std::vector<Token> resultNames;
    if (is(Tok::ValueName)) {
      while (true) {
        resultNames.push_back(expect(Tok::ValueName, "result name"));
        reserveName(resultNames.back());
        if (!accept(Tok::Comma)) break;
      }
      expect(Tok::Equal, "'=' after result names");
    }
    Token nameTok = expect(Tok::Word, "op name");
    std::optional<OpKind> kind = opKindFromName(nameTok.text);
    if (!kind) fail(nameTok, "unknown op '" + nameTok.text + "'");
    const OpInfo& info = opInfo(*kind);

    std::vector<Value*> operands;
    if (is(Tok::ValueName) && !startsResultList(0)) {
      while (true) {
        operands.push_back(lookup(expect(Tok::ValueName, "operand name")));
        if (!accept(Tok::Comma)) break;
      }
    }

    // '{' is an attribute dictionary if the op has no regions, or if it opens with "name =".
    AttrDict attrs;
    if (is(Tok::LBrace) && (info.numRegions == 0 || (is(Tok::Word, 1) && is(Tok::Equal, 2)))) attrs = parseAttrDict();

    std::vector<Type> resultTypes;
    if (accept(Tok::Colon)) {
      do resultTypes.push_back(parseType());
      while (accept(Tok::Comma));
    }
    if (resultTypes.size() != resultNames.size())
      fail(nameTok, "expected " + std::to_string(resultNames.size()) + " result types, got " +
                        std::to_string(resultTypes.size()));

    std::unique_ptr<Op> op = Op::create(*kind, operands, resultTypes, std::move(attrs),
                                        Location{file_, first.line, first.col});
    unsigned numRegions = 0;
    while (is(Tok::LBrace)) {
      if (numRegions >= op->numRegions())
        fail(peek(), "'" + nameTok.text + "' has " + std::to_string(op->numRegions()) + " region(s), found more");
      parseRegion(op->region(numRegions++));
    }
    if (numRegions != op->numRegions())
      fail(peek(), "'" + nameTok.text + "' expects " + std::to_string(op->numRegions()) + " regions, got " +
                       std::to_string(numRegions));
    if (isWord("loc")) op->setLoc(parseLoc());

    // Results become visible only now: an op's own regions cannot use its results.
    for (size_t i = 0; i < resultNames.size(); ++i) bindName(resultNames[i], op->result(i));
    block->append(std::move(op));
  }

  Location parseLoc() {
    take();  // 'loc'
    expect(Tok::LParen, "'(' after 'loc'");
    Token file = expect(Tok::String, "file name string in loc(...)");
    expect(Tok::Colon, "':' after the file name in loc(...)");
    unsigned line = parseUnsigned("line number", std::numeric_limits<unsigned>::max());
    expect(Tok::Colon, "':' after the line number in loc(...)");
    unsigned col = parseUnsigned("column number", std::numeric_limits<unsigned>::max());
    expect(Tok::RParen, "')' to close loc(...)");
    return Location{file.text, line, col};
  }

  uint64_t parseUnsigned(const std::string& what, uint64_t max) {
    if (!is(Tok::Word) || !isDigit(peek().text[0])) failExpected(what);
    Token t = take();
    std::optional<uint64_t> v = parseDigits(t.text);
    if (!v) fail(t, "invalid " + what + " '" + t.text + "'");
    if (*v > max) fail(t, what + " " + t.text + " is too large");
    return *v;
  }

  // ---- types
  Type parseType() {
    NestingGuard guard(*this, peek());
    if (!is(Tok::Word)) failExpected("type");
    Token word = take();
    if (auto scalar = scalarKindFromName(word.text)) return Type::scalar(*scalar);
    if (word.text == "ptr") return parsePointerBody();
    if (word.text == "tile") return parseTileBody();
    if (word.text == "smem") return parseSharedBufferBody();
    if (word.text == "async_token") return Type::asyncToken();
    if (word.text == "mbarriers") return parseMbarriersBody(word);
    if (word.text == "tensordesc") return parseTensorDescBody();
    fail(word, "unknown type '" + word.text + "'");
  }

  // After "ptr": "<T>" or "<T, addrspace>".
  Type parsePointerBody() {
    expect(Tok::Less, "'<' after 'ptr'");
    Token pointeeTok = peek();
    Type pointee = parseType();
    if (pointee.isTile() || pointee.isPtr())
      fail(pointeeTok, "pointer element type must be a scalar, found '" + pointee.str() + "'");
    int addrSpace = kGlobalAddrSpace;
    if (accept(Tok::Comma)) addrSpace = static_cast<int>(parseUnsigned("address space", 1u << 24));
    expect(Tok::Greater, "'>' to close the pointer type");
    return Type::ptr(pointee, addrSpace);
  }

  // After "mbarriers": "<N>" (N barriers).
  Type parseMbarriersBody(const Token& word) {
    expect(Tok::Less, "'<' after 'mbarriers'");
    const int64_t count = static_cast<int64_t>(parseUnsigned("mbarrier count", 1u << 16));
    expect(Tok::Greater, "'>' to close the mbarriers type");
    try {
      return Type::mbarriers(count);
    } catch (const Error& e) {
      fail(word, e.message());
    }
  }

  // After "smem": "<SxD0xD1xT, #layout{...}>" (S stages of a D0xD1 tile of scalar T, a shared layout required).
  Type parseSharedBufferBody() {
    expect(Tok::Less, "'<' after 'smem'");
    if (!is(Tok::Word)) failExpected("shared buffer shape such as 3x64x32xf16");
    Token word = peek();
    auto [shape, element] = parseShapeAndElement(/*leadingStageCount=*/true);
    if (shape.size() < 2) fail(word, "a shared buffer needs a stage count and a tile shape, such as 3x64x32xf16");
    if (!element.isScalar()) fail(word, "shared buffer element type must be a scalar, found '" + element.str() + "'");
    expect(Tok::Comma, "',' and a shared layout after the shared buffer's shape");
    if (!is(Tok::HashName)) failExpected("shared layout such as #shared{...}");
    auto encoding = std::make_shared<const Attr>(parseLayout());
    expect(Tok::Greater, "'>' to close the shared buffer type");
    try {
      return Type::sharedBuffer(shape[0], std::vector<int64_t>(shape.begin() + 1, shape.end()), element,
                                std::move(encoding));
    } catch (const Error& e) {
      fail(word, e.message());
    }
  }

  // After "tensordesc": "<D0xD1xT>" (the block shape, rank 1 to 5, and a scalar element).
  Type parseTensorDescBody() {
    expect(Tok::Less, "'<' after 'tensordesc'");
    if (!is(Tok::Word)) failExpected("descriptor block shape such as 64x32xf16");
    Token word = peek();
    auto [shape, element] = parseShapeAndElement(/*leadingStageCount=*/false);
    expect(Tok::Greater, "'>' to close the tensor descriptor type");
    try {
      return Type::tensorDesc(shape, element);
    } catch (const Error& e) {
      fail(word, e.message());
    }
  }

  // After "tile": "<D0xD1xT>" (T a scalar or ptr<...>), optionally followed by ", #layout{...}", then ">".
  Type parseTileBody() {
    expect(Tok::Less, "'<' after 'tile'");
    if (!is(Tok::Word)) failExpected("tile shape such as 4x8xf32");
    Token word = peek();
    auto [shape, element] = parseShapeAndElement(/*leadingStageCount=*/false);
    if (auto err = Type::checkTileShape(shape)) fail(word, *err);

    std::shared_ptr<const Attr> encoding;
    if (accept(Tok::Comma)) {
      if (!is(Tok::HashName)) failExpected("layout encoding such as #blocked{...}");
      encoding = std::make_shared<const Attr>(parseLayout());
    }
    expect(Tok::Greater, "'>' to close the tile type");
    return Type::tile(shape, element, std::move(encoding));
  }

  // "D0xD1x...xT" of a tile or shared buffer type: its dimensions (each a positive power of two, except a shared
  // buffer's leading stage count) and its element type (a scalar or ptr<...>).
  std::pair<std::vector<int64_t>, Type> parseShapeAndElement(bool leadingStageCount) {
    Token word = take();
    // Split "128x64xf32" at each 'x', remembering where each piece starts so errors can point into the word.
    std::vector<std::pair<std::string, unsigned>> pieces;
    size_t start = 0;
    while (true) {
      size_t x = word.text.find('x', start);
      pieces.emplace_back(word.text.substr(start, x - start), word.col + static_cast<unsigned>(start));
      if (x == std::string::npos) break;
      start = x + 1;
    }
    if (pieces.size() < 2) fail(word, "expected tile shape such as 4x8xf32, found '" + word.text + "'");
    std::vector<int64_t> shape;
    for (size_t i = 0; i + 1 < pieces.size(); ++i) {
      const auto& [digits, col] = pieces[i];
      bool allDigits = !digits.empty() && std::all_of(digits.begin(), digits.end(), isDigit);
      if (!allDigits) failAt(word.line, col, "expected tile dimension, found '" + digits + "'");
      // Checked one by one first so that the error points at the dimension, and so that the whole-shape check
      // below multiplies only small numbers.
      std::optional<uint64_t> dim = parseDigits(digits);
      if (!dim || *dim > uint64_t(kMaxTileElements))
        failAt(word.line, col, "tile dimension " + digits + " exceeds the limit of " +
                                   std::to_string(kMaxTileElements) + " elements per tile");
      int64_t d = static_cast<int64_t>(*dim);
      if (leadingStageCount && i == 0) {
        if (d < 1) failAt(word.line, col, "a shared buffer needs at least one stage, got " + digits);
      } else if (auto err = Type::checkTileShape({d})) {
        failAt(word.line, col, *err);
      }
      shape.push_back(d);
    }

    const auto& [elemName, elemCol] = pieces.back();
    Type element;
    if (auto scalar = scalarKindFromName(elemName))
      element = Type::scalar(*scalar);
    else if (elemName == "ptr")
      element = parsePointerBody();
    else if (elemName.empty())
      failAt(word.line, elemCol, "expected tile element type after 'x'");
    else if (elemName == "tile")
      failAt(word.line, elemCol, "tile element type must be a scalar or pointer");
    else
      failAt(word.line, elemCol, "unknown type '" + elemName + "'");
    return {shape, element};
  }

  // ---- attributes
  AttrDict parseAttrDict() {
    NestingGuard guard(*this, peek());
    expect(Tok::LBrace, "'{' to begin an attribute dictionary");
    AttrDict dict;
    if (accept(Tok::RBrace)) return dict;
    while (true) {
      if (!is(Tok::Word) || !isLetter(peek().text[0])) failExpected("attribute name");
      Token key = take();
      if (dict.count(key.text)) fail(key, "duplicate attribute '" + key.text + "'");
      expect(Tok::Equal, "'=' after attribute name");
      dict[key.text] = parseAttr();
      if (accept(Tok::Comma)) continue;
      expect(Tok::RBrace, "',' or '}' in attribute dictionary");
      return dict;
    }
  }

  Attr parseLayout() {
    Token name = take();  // #name
    AttrDict params = parseAttrDict();
    return Attr::layout(name.text, std::move(params));
  }

  Attr parseAttr() {
    NestingGuard guard(*this, peek());
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Minus: {
        Token minus = take();
        if (!is(Tok::Word)) failExpected("number after '-'");
        return parseNumber(take(), minus, /*negative=*/true);
      }
      case Tok::Word: {
        if (t.text == "true" || t.text == "false") return Attr::boolean(take().text == "true");
        if (isDigit(t.text[0]) || t.text == "inf" || t.text == "nan") {
          Token number = take();
          return parseNumber(number, number, /*negative=*/false);
        }
        if (scalarKindFromName(t.text) || t.text == "ptr" || t.text == "tile" || t.text == "smem" ||
            t.text == "async_token" || t.text == "tensordesc")
          return Attr::type(parseType());
        failExpected("attribute value");
      }
      case Tok::String: return Attr::string(take().text);
      case Tok::HashName: return parseLayout();
      case Tok::LBracket: {
        take();
        std::vector<Attr> elements;
        if (accept(Tok::RBracket)) return Attr::array(std::move(elements));
        while (true) {
          elements.push_back(parseAttr());
          if (accept(Tok::Comma)) continue;
          expect(Tok::RBracket, "',' or ']' in array");
          return Attr::array(std::move(elements));
        }
      }
      default: failExpected("attribute value");
    }
  }

  // A number attribute: a Float if it is inf/nan or has a '.' or exponent, else an Int. `start` is the token
  // errors point at (the '-' of a negative number).
  Attr parseNumber(const Token& number, const Token& start, bool negative) {
    const std::string& s = number.text;
    double sign = negative ? -1.0 : 1.0;
    if (s == "inf") return Attr::floating(sign * std::numeric_limits<double>::infinity());
    if (s == "nan") return Attr::floating(std::copysign(std::numeric_limits<double>::quiet_NaN(), sign));
    size_t i = 0, n = s.size();
    auto skipDigits = [&] {
      size_t from = i;
      while (i < n && isDigit(s[i])) ++i;
      return i > from;
    };
    bool valid = skipDigits();
    bool isFloat = false;
    if (valid && i < n && s[i] == '.') {
      isFloat = true;
      ++i;
      skipDigits();
    }
    if (valid && i < n && (s[i] == 'e' || s[i] == 'E')) {
      isFloat = true;
      ++i;
      if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
      valid = skipDigits();
    }
    if (!valid || i != n) fail(number, "invalid number '" + s + "'");
    std::string text = (negative ? "-" : "") + s;
    if (isFloat) {
      double v = std::strtod(text.c_str(), nullptr);
      if (std::isinf(v)) fail(start, "float literal '" + text + "' is out of range");
      return Attr::floating(v);
    }
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size())
      fail(start, "integer literal '" + text + "' does not fit in 64 bits");
    return Attr::integer(v);
  }

  Lexer lexer_;
  std::string file_;
  std::deque<Token> buffer_;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
  std::unordered_set<std::string> definedNames_;  // every name defined so far in the current function
  int depth_ = 0;
};

}  // namespace

std::unique_ptr<Module> parseModule(const std::string& text, const std::string& fileName) {
  Parser parser(text, fileName);
  return parser.parseModule();
}

Attr parseAttribute(const std::string& text, const std::string& fileName) {
  Parser parser(text, fileName);
  return parser.parseWholeAttribute();
}

}  // namespace tessera::ir
