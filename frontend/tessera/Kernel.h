// Kernel definitions: turn a plain C++ kernel function into something that can be traced to IR (once per
// specialization), run on the reference interpreter, or run op by op in eager mode.
//
//   void add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, Const<int> BLOCK) { ... }
//   auto k = tessera::kernel("add", add, {"x", "y", "out", "n", "BLOCK"});
//   std::unique_ptr<ir::Module> m = k.trace({{"BLOCK", 1024}});
//   k.runEager({blocks, 1, 1}, {Buffer{x, bytes}, ..., int64_t(n)}, {{"BLOCK", 1024}});
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/LaunchArgs.h"
#include "tessera/Tensor.h"

namespace tessera {

enum class ParamKind { Pointer, Scalar, Constant, TensorDescriptor };

struct ParamInfo {
  std::string name;
  ParamKind kind;
  ir::Type type;        // pointer or scalar type; for constants: the scalar type of Const<T>'s T; for tensor
                        // descriptors: the element type (the block shape comes with each launch)
};

// Values of Const parameters, by parameter name.
using ConstValue = std::variant<int64_t, double>;
using Constants = std::map<std::string, ConstValue>;
// The type of each tensor descriptor parameter, tensordesc<block x element>, by parameter name: what a trace
// specializes on besides the Constants (the blocks of the launch's descriptors).
using DescriptorTypes = std::map<std::string, ir::Type>;

namespace detail {
// Supplies kernel parameter values while the kernel function runs (traced or eager).
class ParamSource {
 public:
  virtual ~ParamSource() = default;
  virtual Tensor tensor(size_t paramIndex) = 0;
  virtual ConstValue constant(size_t paramIndex) = 0;
};

template <class P> struct ParamTraits;
template <class E> struct ParamTraits<Ptr<E>> {
  static ParamInfo info(std::string n) { return {std::move(n), ParamKind::Pointer, ir::Type::ptr(dtype<E>())}; }
  static Ptr<E> make(ParamSource& s, size_t i) { return Ptr<E>(s.tensor(i)); }
};
template <class E> struct ParamTraits<TensorDesc<E>> {
  static ParamInfo info(std::string n) { return {std::move(n), ParamKind::TensorDescriptor, dtype<E>()}; }
  static TensorDesc<E> make(ParamSource& s, size_t i) { return TensorDesc<E>(s.tensor(i)); }
};
template <class E> struct ParamTraits<Scalar<E>> {
  static ParamInfo info(std::string n) { return {std::move(n), ParamKind::Scalar, dtype<E>()}; }
  static Scalar<E> make(ParamSource& s, size_t i) { return Scalar<E>(s.tensor(i)); }
};
template <class T> struct ParamTraits<Const<T>> {
  static_assert(std::is_arithmetic_v<T>, "Const<T> needs an integer, bool or floating-point T");
  // The type records T's range, so that values T cannot hold are rejected before the cast below (which would
  // otherwise wrap them, or be undefined for a float out of an int's range).
  static ParamInfo info(std::string n) {
    using ir::ScalarKind;
    constexpr ScalarKind kind =
        std::is_same_v<T, bool>   ? ScalarKind::I1
        : std::is_floating_point_v<T> ? (sizeof(T) == 4 ? ScalarKind::F32 : ScalarKind::F64)
        : std::is_signed_v<T> ? (sizeof(T) == 1 ? ScalarKind::I8 : sizeof(T) == 2 ? ScalarKind::I16
                                 : sizeof(T) == 4 ? ScalarKind::I32 : ScalarKind::I64)
                              : (sizeof(T) == 1 ? ScalarKind::U8 : sizeof(T) == 2 ? ScalarKind::U16
                                 : sizeof(T) == 4 ? ScalarKind::U32 : ScalarKind::U64);
    return {std::move(n), ParamKind::Constant, ir::Type::scalar(kind)};
  }
  static Const<T> make(ParamSource& s, size_t i) {
    ConstValue v = s.constant(i);
    return Const<T>{std::holds_alternative<int64_t>(v) ? static_cast<T>(std::get<int64_t>(v))
                                                       : static_cast<T>(std::get<double>(v))};
  }
};
}  // namespace detail

class KernelDef {
 public:
  using Invoker = std::function<void(detail::ParamSource&)>;
  KernelDef(std::string name, std::vector<ParamInfo> params, Invoker invoke)
      : name_(std::move(name)), params_(std::move(params)), invoke_(std::move(invoke)) {}

  const std::string& name() const { return name_; }
  const std::vector<ParamInfo>& params() const { return params_; }
  // The runtime (non-Const) parameters, in order: what run/runEager take as arguments.
  std::vector<ParamInfo> runtimeParams() const;

  // Traces the kernel with every Const parameter given by name (and the type of every descriptor parameter),
  // verifies the result and returns a module holding one function named name(). Misuse inside the kernel throws
  // tessera::Error at the author's line.
  std::unique_ptr<ir::Module> trace(const Constants& constants, const DescriptorTypes& descriptors = {},
                                    SourceLoc loc = SourceLoc::current()) const;
  // The descriptor types a launch with these runtime arguments specializes on (interp::TensorDesc blocks).
  DescriptorTypes descriptorTypes(const std::vector<interp::Arg>& args) const;

  // Runs the kernel function op by op on concrete tiles, one program after another (eager mode).
  void runEager(interp::Grid grid, const std::vector<interp::Arg>& args, const Constants& constants,
                std::ostream* debugOut = nullptr, SourceLoc loc = SourceLoc::current()) const;

  // Traces, then runs the IR on the reference interpreter.
  void runInterpreter(interp::Grid grid, const std::vector<interp::Arg>& args, const Constants& constants,
                      std::ostream* debugOut = nullptr, SourceLoc loc = SourceLoc::current()) const;

 private:
  void checkConstants(const Constants& constants, const SourceLoc& loc) const;
  std::string name_;
  std::vector<ParamInfo> params_;
  Invoker invoke_;
};

// Makes a KernelDef from a kernel function. `names` names the parameters in order (needed to pass Const values
// by name; defaults to arg0, arg1, ...).
template <class... P>
KernelDef kernel(std::string name, void (*fn)(P...), std::vector<std::string> names = {},
                 SourceLoc loc = SourceLoc::current()) {
  constexpr size_t n = sizeof...(P);
  if (names.empty())
    for (size_t i = 0; i < n; ++i) names.push_back("arg" + std::to_string(i));
  if (names.size() != n)
    throw Error("kernel '" + name + "' has " + std::to_string(n) + " parameters but " + std::to_string(names.size()) +
                    " names were given",
                Location::from(loc));
  std::vector<ParamInfo> params;
  size_t i = 0;
  (params.push_back(detail::ParamTraits<P>::info(names[i++])), ...);
  auto invoke = [fn](detail::ParamSource& src) {
    [&]<size_t... I>(std::index_sequence<I...>) { fn(detail::ParamTraits<P>::make(src, I)...); }
    (std::index_sequence_for<P...>{});
  };
  return KernelDef(std::move(name), std::move(params), std::move(invoke));
}

}  // namespace tessera

// Marks a kernel for tessera.load() (Python), naming its parameters in order:
//   TESSERA_PY_KERNEL(scale, x, out, n, alpha, BLOCK);
// In C++ it only checks that the kernel exists; tessera.load() reads these lines and binds each kernel.
#define TESSERA_PY_KERNEL(fn, ...) static_assert(sizeof(&fn) > 0, "TESSERA_PY_KERNEL names a kernel function")
