#include "backends/interpreter/Tile.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "ir/FloatFormats.h"
#include "ir/IntegerSemantics.h"

namespace tessera::interp {

Tile::Tile(ir::Type t) : type(t) {
  if (t.isFloat())
    floats.assign(static_cast<size_t>(t.numElements()), 0.0);
  else
    ints.assign(static_cast<size_t>(t.numElements()), 0);
}

Tile Tile::scalarInt(ir::Type t, int64_t v) {
  Tile tile(t);
  const int64_t canonical = ir::IntFormat(t).wrap(static_cast<uint64_t>(v));
  for (int64_t& x : tile.ints) x = canonical;
  return tile;
}

Tile Tile::scalarFloat(ir::Type t, double v) {
  Tile tile(t);
  const double rounded = ir::roundToFloat(t.scalarKind(), v);
  for (double& x : tile.floats) x = rounded;
  return tile;
}

double Tile::asDouble(int64_t i) const {
  if (usesFloats()) return floats[i];
  if (type.isInt() && type.isUnsigned()) return static_cast<double>(static_cast<uint64_t>(ints[i]));
  return static_cast<double>(ints[i]);
}

namespace {

// Shortest "%g" text that reads back to the same value of the element type.
std::string floatText(ir::Type element, double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (ir::roundToFloat(element.scalarKind(), std::strtod(buf, nullptr)) == v) break;
  }
  return buf;
}

std::string elementText(const Tile& t, int64_t i) {
  ir::Type element = t.type.element();
  if (element.isFloat()) return floatText(element, t.floats[i]);
  char buf[32];
  if (element.isPtr())
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, static_cast<uint64_t>(t.ints[i]));
  else if (element.isUnsigned())
    std::snprintf(buf, sizeof buf, "%" PRIu64, static_cast<uint64_t>(t.ints[i]));
  else
    std::snprintf(buf, sizeof buf, "%" PRId64, t.ints[i]);
  return buf;
}

void appendNested(const Tile& t, size_t dim, int64_t offset, int64_t stride, std::string& out) {
  const auto& shape = t.shape();
  int64_t innerStride = stride / shape[dim];
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i) out += ", ";
    if (dim + 1 == shape.size())
      out += elementText(t, offset + i);
    else
      appendNested(t, dim + 1, offset + i * innerStride, innerStride, out);
  }
  out += ']';
}

}  // namespace

std::string Tile::str() const {
  if (shape().empty()) return elementText(*this, 0);
  std::string out;
  appendNested(*this, 0, 0, size(), out);
  return out;
}

}  // namespace tessera::interp
