#include "ir/Attributes.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

namespace tessera::ir {

Attr Attr::integer(int64_t v) { Attr a; a.kind_ = Kind::Int; a.i_ = v; return a; }
Attr Attr::floating(double v) { Attr a; a.kind_ = Kind::Float; a.f_ = v; return a; }
Attr Attr::boolean(bool v) { Attr a; a.kind_ = Kind::Bool; a.i_ = v; return a; }
Attr Attr::string(std::string v) { Attr a; a.kind_ = Kind::String; a.s_ = std::move(v); return a; }
Attr Attr::type(Type t) { Attr a; a.kind_ = Kind::Type; a.t_ = t; return a; }
Attr Attr::array(std::vector<Attr> v) { Attr a; a.kind_ = Kind::Array; a.arr_ = std::move(v); return a; }
Attr Attr::intArray(const std::vector<int64_t>& v) {
  std::vector<Attr> elems;
  for (int64_t x : v) elems.push_back(integer(x));
  return array(std::move(elems));
}
Attr Attr::layout(std::string name, AttrDict params) {
  Attr a;
  a.kind_ = Kind::Layout;
  a.s_ = std::move(name);
  a.dict_ = std::make_shared<const AttrDict>(std::move(params));
  return a;
}

int64_t Attr::getInt() const { assert(isInt()); return i_; }
double Attr::getFloat() const { assert(isFloat()); return f_; }
bool Attr::getBool() const { assert(isBool()); return i_ != 0; }
const std::string& Attr::getString() const { assert(isString() || isLayout()); return s_; }
Type Attr::getType() const { assert(isType()); return t_; }
const std::vector<Attr>& Attr::getArray() const { assert(isArray()); return arr_; }
std::vector<int64_t> Attr::getIntArray() const {
  std::vector<int64_t> out;
  for (const Attr& a : getArray()) out.push_back(a.getInt());
  return out;
}
const AttrDict& Attr::getLayoutParams() const { assert(isLayout()); return *dict_; }

bool Attr::operator==(const Attr& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::None: return true;
    case Kind::Int: case Kind::Bool: return i_ == o.i_;
    // Bitwise, so that NaN equals NaN and 0.0 differs from -0.0 (what CSE and round trips need).
    case Kind::Float: return std::memcmp(&f_, &o.f_, sizeof f_) == 0;
    case Kind::String: return s_ == o.s_;
    case Kind::Type: return t_ == o.t_;
    case Kind::Array: return arr_ == o.arr_;
    case Kind::Layout: return s_ == o.s_ && *dict_ == *o.dict_;
  }
  return false;
}

size_t Attr::hash() const { return std::hash<std::string>()(str()); }

std::string formatFloat(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";  // the parser's "-nan" keeps the sign bit
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {  // shortest precision that round-trips
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // keep floats distinguishable from ints
  return s;
}

static std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%02X", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string Attr::str() const {
  switch (kind_) {
    case Kind::None: return "none";
    case Kind::Int: return std::to_string(i_);
    case Kind::Float: return formatFloat(f_);
    case Kind::Bool: return i_ ? "true" : "false";
    case Kind::String: return quote(s_);
    case Kind::Type: return t_.str();
    case Kind::Array: {
      std::string s = "[";
      for (size_t i = 0; i < arr_.size(); ++i) s += (i ? ", " : "") + arr_[i].str();
      return s + "]";
    }
    case Kind::Layout: {
      std::string s = "#" + s_ + "{";
      bool first = true;
      for (const auto& [k, v] : *dict_) {
        s += (first ? "" : ", ") + k + " = " + v.str();
        first = false;
      }
      return s + "}";
    }
  }
  return "";
}

}  // namespace tessera::ir
