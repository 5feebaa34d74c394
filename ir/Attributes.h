// Op attributes: compile-time data attached to ops (axis numbers, predicates, constant values, layouts).
//
//   int 42    float 1.5 / 1.0e-3 / inf / nan   bool true   string "lt"   type f32
//   array [1, 0]   layout #blocked{order = [1, 0], spt = [1, 4]}
//
// A layout attribute is a name plus a sorted parameter dictionary; the layout passes give it meaning.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/Types.h"

namespace tessera::ir {

class Attr;
using AttrDict = std::map<std::string, Attr>;

class Attr {
 public:
  enum class Kind { None, Int, Float, Bool, String, Type, Array, Layout };

  Attr() = default;
  static Attr integer(int64_t v);
  static Attr floating(double v);
  static Attr boolean(bool v);
  static Attr string(std::string v);
  static Attr type(Type t);
  static Attr array(std::vector<Attr> v);
  static Attr intArray(const std::vector<int64_t>& v);
  static Attr layout(std::string name, AttrDict params);

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isFloat() const { return kind_ == Kind::Float; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isString() const { return kind_ == Kind::String; }
  bool isType() const { return kind_ == Kind::Type; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isLayout() const { return kind_ == Kind::Layout; }

  // Accessors assert the kind.
  int64_t getInt() const;
  double getFloat() const;
  bool getBool() const;
  const std::string& getString() const;   // also the name of a layout
  Type getType() const;
  const std::vector<Attr>& getArray() const;
  std::vector<int64_t> getIntArray() const;  // array whose elements are all ints
  const AttrDict& getLayoutParams() const;

  bool operator==(const Attr& o) const;
  bool operator!=(const Attr& o) const { return !(*this == o); }
  size_t hash() const;

  // Canonical text; parseable by the IR parser. Floats print so that they parse back bit-exactly.
  std::string str() const;

 private:
  Kind kind_ = Kind::None;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  Type t_;
  std::vector<Attr> arr_;
  std::shared_ptr<const AttrDict> dict_;  // layout parameters
};

std::string formatFloat(double v);  // shortest text that parses back to exactly v ("1.0", "inf", "nan", "-nan", ...)

}  // namespace tessera::ir
