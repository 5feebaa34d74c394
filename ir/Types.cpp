#include "ir/Types.h"

#include <cassert>
#include <mutex>
#include <unordered_map>

#include "ir/Attributes.h"
#include "ir/Error.h"

namespace tessera::ir {

struct TypeStorage {
  enum class Form { Scalar, Pointer, Tile, SharedBuffer, AsyncToken, TensorDesc, Mbarriers } form = Form::Scalar;
  ScalarKind scalar = ScalarKind::I32;  // Form::Scalar
  Type pointee;                         // Form::Pointer
  int addrSpace = kGlobalAddrSpace;     // Form::Pointer
  std::vector<int64_t> shape;           // Form::Tile; Form::SharedBuffer: one stage's shape; Form::TensorDesc: block
  int64_t stages = 0;                   // Form::SharedBuffer; Form::Mbarriers: the barrier count
  Type element;                         // Form::Tile: a scalar or pointer type; SharedBuffer, TensorDesc: a scalar
  std::shared_ptr<const Attr> encoding; // Form::Tile, optional; Form::SharedBuffer, required
  std::string text;                     // canonical spelling, also the interning key
};

namespace {
struct TypeTable {
  std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<TypeStorage>> byText;
};
TypeTable& table() {
  static TypeTable* t = new TypeTable();  // never destroyed: Types may be used during static destruction
  return *t;
}
const TypeStorage* intern(TypeStorage s) {
  TypeTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.byText.find(s.text);
  if (it != t.byText.end()) return it->second.get();
  auto owned = std::make_unique<TypeStorage>(std::move(s));
  const TypeStorage* p = owned.get();
  t.byText.emplace(p->text, std::move(owned));
  return p;
}

struct ScalarName {
  ScalarKind kind;
  const char* name;
};
constexpr ScalarName kScalarNames[] = {
    {ScalarKind::I1, "i1"},     {ScalarKind::I8, "i8"},       {ScalarKind::I16, "i16"},
    {ScalarKind::I32, "i32"},   {ScalarKind::I64, "i64"},     {ScalarKind::U8, "u8"},
    {ScalarKind::U16, "u16"},   {ScalarKind::U32, "u32"},     {ScalarKind::U64, "u64"},
    {ScalarKind::F16, "f16"},   {ScalarKind::BF16, "bf16"},   {ScalarKind::F32, "f32"},
    {ScalarKind::F64, "f64"},   {ScalarKind::F8E4M3, "f8e4m3"}, {ScalarKind::F8E5M2, "f8e5m2"},
};
}  // namespace

const char* scalarKindName(ScalarKind k) { return kScalarNames[static_cast<size_t>(k)].name; }

std::optional<ScalarKind> scalarKindFromName(const std::string& name) {
  for (const ScalarName& s : kScalarNames)
    if (name == s.name) return s.kind;
  return std::nullopt;
}

Type Type::scalar(ScalarKind k) {
  TypeStorage s;
  s.form = TypeStorage::Form::Scalar;
  s.scalar = k;
  s.text = scalarKindName(k);
  return Type(intern(std::move(s)));
}

Type Type::ptr(Type pointee, int addrSpace) {
  assert(pointee && !pointee.isTile() && !pointee.isPtr() && "pointers point at scalar element types");
  TypeStorage s;
  s.form = TypeStorage::Form::Pointer;
  s.pointee = pointee;
  s.addrSpace = addrSpace;
  s.text = "ptr<" + pointee.str() + (addrSpace == kGlobalAddrSpace ? "" : ", " + std::to_string(addrSpace)) + ">";
  return Type(intern(std::move(s)));
}

std::optional<std::string> Type::checkTileShape(const std::vector<int64_t>& shape) {
  if (shape.size() > static_cast<size_t>(kMaxTileRank))
    return "tile rank " + std::to_string(shape.size()) + " exceeds the maximum of " + std::to_string(kMaxTileRank);
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0 || (d & (d - 1)) != 0)
      return "tile dimension " + std::to_string(d) + " is not a positive power of two";
    if (d > kMaxTileElements / n)  // checked before multiplying, so huge dimensions cannot overflow
      return "tile has more than " + std::to_string(kMaxTileElements) + " elements";
    n *= d;
  }
  return std::nullopt;
}

Type Type::tile(const std::vector<int64_t>& shape, Type element, std::shared_ptr<const Attr> encoding) {
  assert(element);
  element = element.element();
  if (shape.empty()) return element;
  if (auto err = checkTileShape(shape)) throw Error(*err);
  TypeStorage s;
  s.form = TypeStorage::Form::Tile;
  s.shape = shape;
  s.element = element;
  s.encoding = std::move(encoding);
  s.text = "tile<";
  for (int64_t d : shape) s.text += std::to_string(d) + "x";
  s.text += element.str();
  if (s.encoding) s.text += ", " + s.encoding->str();
  s.text += ">";
  return Type(intern(std::move(s)));
}

Type Type::sharedBuffer(int64_t stages, const std::vector<int64_t>& stageShape, Type element,
                        std::shared_ptr<const Attr> encoding) {
  assert(element && encoding);
  if (stages < 1) throw Error("a shared buffer needs at least one stage, got " + std::to_string(stages));
  if (stageShape.empty()) throw Error("a shared buffer's stage must be a tile of rank >= 1");
  if (auto err = checkTileShape(stageShape)) throw Error(*err);
  if (element.isTile() || element.isPtr() || !element.isScalar())
    throw Error("a shared buffer holds scalar elements, not " + element.str());
  TypeStorage s;
  s.form = TypeStorage::Form::SharedBuffer;
  s.stages = stages;
  s.shape = stageShape;
  s.element = element;
  s.encoding = std::move(encoding);
  s.text = "smem<" + std::to_string(stages) + "x";
  for (int64_t d : stageShape) s.text += std::to_string(d) + "x";
  s.text += element.str() + ", " + s.encoding->str() + ">";
  return Type(intern(std::move(s)));
}

Type Type::asyncToken() {
  TypeStorage s;
  s.form = TypeStorage::Form::AsyncToken;
  s.text = "async_token";
  return Type(intern(std::move(s)));
}

Type Type::mbarriers(int64_t count) {
  if (count < 1) throw Error("an mbarrier array needs at least one barrier, got " + std::to_string(count));
  TypeStorage s;
  s.form = TypeStorage::Form::Mbarriers;
  s.stages = count;
  s.text = "mbarriers<" + std::to_string(count) + ">";
  return Type(intern(std::move(s)));
}

std::optional<std::string> Type::checkDescriptorBlock(const std::vector<int64_t>& blockShape) {
  if (blockShape.empty() || blockShape.size() > static_cast<size_t>(kMaxDescriptorRank))
    return "a tensor descriptor has rank 1 to " + std::to_string(kMaxDescriptorRank) + ", not " +
           std::to_string(blockShape.size());
  for (int64_t d : blockShape)
    if (d < 1 || d > kMaxDescriptorBlockDim || (d & (d - 1)) != 0)  // a power of two: loads make tiles of it
      return "block dimension " + std::to_string(d) + " is not a power of two between 1 and " +
             std::to_string(kMaxDescriptorBlockDim);
  return std::nullopt;
}

Type Type::tensorDesc(const std::vector<int64_t>& blockShape, Type element) {
  assert(element);
  if (auto err = checkDescriptorBlock(blockShape)) throw Error(*err);
  if (element.isTile() || element.isPtr() || !element.isScalar())
    throw Error("a tensor descriptor describes scalar elements, not " + element.str());
  TypeStorage s;
  s.form = TypeStorage::Form::TensorDesc;
  s.shape = blockShape;
  s.element = element;
  s.text = "tensordesc<";
  for (int64_t d : blockShape) s.text += std::to_string(d) + "x";
  s.text += element.str() + ">";
  return Type(intern(std::move(s)));
}

bool Type::isTile() const { return s_->form == TypeStorage::Form::Tile; }
bool Type::isSharedBuffer() const { return s_->form == TypeStorage::Form::SharedBuffer; }
bool Type::isAsyncToken() const { return s_->form == TypeStorage::Form::AsyncToken; }
bool Type::isTensorDesc() const { return s_->form == TypeStorage::Form::TensorDesc; }
bool Type::isMbarriers() const { return s_->form == TypeStorage::Form::Mbarriers; }
Type Type::element() const { return isTile() || isSharedBuffer() || isTensorDesc() ? s_->element : *this; }
bool Type::isPtr() const { return element().s_->form == TypeStorage::Form::Pointer; }

static bool elemIsScalar(const Type& t) {
  return !t.isPtr() && !t.isAsyncToken() && !t.isTensorDesc() && !t.isMbarriers();
}

ScalarKind Type::scalarKind() const {
  assert(elemIsScalar(*this));
  return element().s_->scalar;
}
bool Type::isInt() const {
  if (!elemIsScalar(*this)) return false;
  ScalarKind k = scalarKind();
  return k <= ScalarKind::U64;
}
bool Type::isBool() const { return elemIsScalar(*this) && scalarKind() == ScalarKind::I1; }
bool Type::isSigned() const {
  if (!elemIsScalar(*this)) return false;
  ScalarKind k = scalarKind();
  return k >= ScalarKind::I8 && k <= ScalarKind::I64;
}
bool Type::isUnsigned() const { return isInt() && !isSigned(); }
bool Type::isFloat() const { return elemIsScalar(*this) && scalarKind() >= ScalarKind::F16; }
bool Type::isFP8() const {
  return elemIsScalar(*this) && (scalarKind() == ScalarKind::F8E4M3 || scalarKind() == ScalarKind::F8E5M2);
}

Type Type::pointee() const {
  assert(isPtr());
  return element().s_->pointee;
}
int Type::addrSpace() const {
  assert(isPtr());
  return element().s_->addrSpace;
}

int Type::bitWidth() const {
  if (isPtr()) return 64;
  switch (scalarKind()) {
    case ScalarKind::I1: return 1;
    case ScalarKind::I8: case ScalarKind::U8: case ScalarKind::F8E4M3: case ScalarKind::F8E5M2: return 8;
    case ScalarKind::I16: case ScalarKind::U16: case ScalarKind::F16: case ScalarKind::BF16: return 16;
    case ScalarKind::I32: case ScalarKind::U32: case ScalarKind::F32: return 32;
    case ScalarKind::I64: case ScalarKind::U64: case ScalarKind::F64: return 64;
  }
  return 0;
}

// Every element is a whole number of bytes in memory: i1 takes a byte holding 0 or 1.
int Type::storageBytes() const { return (bitWidth() + 7) / 8; }

const std::vector<int64_t>& Type::shape() const {
  static const std::vector<int64_t> kEmpty;
  return isTile() ? s_->shape : kEmpty;
}

int64_t Type::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape()) n *= d;
  return n;
}

const std::shared_ptr<const Attr>& Type::encoding() const {
  static const std::shared_ptr<const Attr> kNone;
  return isTile() || isSharedBuffer() ? s_->encoding : kNone;
}

int64_t Type::stages() const {
  assert(isSharedBuffer() || isMbarriers());
  return s_->stages;
}
const std::vector<int64_t>& Type::stageShape() const {
  assert(isSharedBuffer());
  return s_->shape;
}
const std::vector<int64_t>& Type::blockShape() const {
  assert(isTensorDesc());
  return s_->shape;
}
Type Type::stageTile() const { return tile(stageShape(), element()); }

Type Type::withElement(Type elem) const {
  return isTile() ? tile(shape(), elem, encoding()) : elem.element();
}
Type Type::withShape(const std::vector<int64_t>& s) const { return tile(s, element()); }
Type Type::withEncoding(std::shared_ptr<const Attr> enc) const {
  return isTile() ? tile(shape(), element(), std::move(enc)) : *this;
}

std::string Type::str() const { return s_ ? s_->text : std::string("<null type>"); }

}  // namespace tessera::ir
