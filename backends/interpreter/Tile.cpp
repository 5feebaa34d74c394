#include "backends/interpreter/Tile.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "backends/interpreter/FloatFormats.h"

namespace tessera::interp {

using ir::ScalarKind;

Tile::Tile(ir::Type t) : type(t) {
  if (t.isFloat())
    floats.assign(static_cast<size_t>(t.numElements()), 0.0);
  else
    ints.assign(static_cast<size_t>(t.numElements()), 0);
}

Tile Tile::scalarInt(ir::Type t, int64_t v) {
  Tile tile(t);
  for (int64_t& x : tile.ints) x = canonicalInt(t, v);
  return tile;
}

Tile Tile::scalarFloat(ir::Type t, double v) {
  Tile tile(t);
  for (double& x : tile.floats) x = roundToFloat(t, v);
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
    if (roundToFloat(element, std::strtod(buf, nullptr)) == v) break;
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

int64_t canonicalInt(ir::Type t, int64_t v) {
  if (t.isPtr()) return v;
  int width = t.bitWidth();
  if (width >= 64) return v;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t low = static_cast<uint64_t>(v) & mask;
  if (t.isSigned() && (low >> (width - 1)) != 0) low |= ~mask;  // sign-extend
  return static_cast<int64_t>(low);
}

double roundToFloat(ir::Type t, double v) {
  switch (t.scalarKind()) {
    case ScalarKind::F16: return roundToF16(v);
    case ScalarKind::BF16: return roundToBF16(v);
    case ScalarKind::F32: return roundToF32(v);
    case ScalarKind::F8E4M3: return roundToF8E4M3(v);
    case ScalarKind::F8E5M2: return roundToF8E5M2(v);
    default: return v;
  }
}

}  // namespace tessera::interp
