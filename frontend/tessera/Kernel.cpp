#include "tessera/Kernel.h"

#include <cmath>
#include <limits>
#include <optional>

#include "backends/interpreter/Interpreter.h"
#include "ir/TensorDescriptor.h"
#include "ir/Verifier.h"
#include "tessera/Context.h"
#include "tessera/Eager.h"

namespace tessera {

std::vector<ParamInfo> KernelDef::runtimeParams() const {
  std::vector<ParamInfo> out;
  for (const ParamInfo& p : params_)
    if (p.kind != ParamKind::Constant) out.push_back(p);
  return out;
}

namespace {

// Why `value` cannot be given to a Const parameter of scalar type `type` (see ParamTraits<Const<T>>), if it can't.
std::optional<std::string> constantMisfit(ir::Type type, const ConstValue& value) {
  if (const double* d = std::get_if<double>(&value)) {
    if (!type.isFloat()) return "got the float " + std::to_string(*d) + "; pass an int";
    if (type.bitWidth() == 32 && std::isfinite(*d) && std::fabs(*d) > std::numeric_limits<float>::max())
      return std::to_string(*d) + " is out of its range";
    return std::nullopt;
  }
  int64_t v = std::get<int64_t>(value);
  if (type.isFloat()) return std::nullopt;
  unsigned bits = type.bitWidth();
  bool fits = type.isBool()     ? v == 0 || v == 1
              : type.isSigned() ? bits >= 64 || (v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1)))
                                : v >= 0 && (bits >= 64 || v < (int64_t{1} << bits));
  if (fits) return std::nullopt;
  return std::to_string(v) + " is out of its range";
}

}  // namespace

void KernelDef::checkConstants(const Constants& constants, const SourceLoc& loc) const {
  for (const auto& [name, value] : constants) {
    bool known = false;
    for (const ParamInfo& p : params_) known |= p.kind == ParamKind::Constant && p.name == name;
    if (!known) {
      std::string list;
      for (const ParamInfo& p : params_)
        if (p.kind == ParamKind::Constant) list += (list.empty() ? "" : ", ") + p.name;
      throw Error("kernel '" + name_ + "' has no Const parameter named '" + name + "' (its Const parameters: " +
                      (list.empty() ? "none" : list) + ")",
                  detail::toLocation(loc));
    }
  }
  for (const ParamInfo& p : params_) {
    if (p.kind != ParamKind::Constant) continue;
    auto it = constants.find(p.name);
    if (it == constants.end())
      throw Error("kernel '" + name_ + "': no value given for Const parameter '" + p.name + "'", detail::toLocation(loc));
    if (std::optional<std::string> why = constantMisfit(p.type, it->second))
      throw Error("kernel '" + name_ + "': Const parameter '" + p.name + "' is " + p.type.str() + ": " + *why,
                  detail::toLocation(loc));
  }
}

namespace {

class TraceSource : public detail::ParamSource {
 public:
  TraceSource(const std::vector<ParamInfo>& params, ir::Function* fn, const Constants& c) : params_(params), fn_(fn), c_(c) {
    unsigned arg = 0;
    for (const ParamInfo& p : params) argIndex_.push_back(p.kind == ParamKind::Constant ? -1 : static_cast<int>(arg++));
  }
  Tensor tensor(size_t i) override { return Tensor::fromTraced(fn_->argument(argIndex_[i])); }
  ConstValue constant(size_t i) override { return c_.at(params_[i].name); }

 private:
  const std::vector<ParamInfo>& params_;
  ir::Function* fn_;
  const Constants& c_;
  std::vector<int> argIndex_;
};

class EagerSource : public detail::ParamSource {
 public:
  EagerSource(const std::vector<ParamInfo>& params, const std::vector<interp::Arg>& args, const Constants& c)
      : params_(params), c_(c) {
    size_t a = 0;
    for (const ParamInfo& p : params) {
      if (p.kind == ParamKind::Constant) {
        tiles_.emplace_back();
        continue;
      }
      const interp::Arg& arg = args[a++];
      if (p.kind == ParamKind::TensorDescriptor) {
        const auto& d = std::get<interp::TensorDesc>(arg);
        tiles_.push_back(interp::descriptorTile(ir::Type::tensorDesc(d.block, p.type), d, "argument '" + p.name + "'"));
      } else if (p.kind == ParamKind::Pointer)
        tiles_.push_back(interp::Tile::scalarInt(p.type, reinterpret_cast<int64_t>(std::get<interp::Buffer>(arg).data)));
      else if (p.type.isFloat())
        tiles_.push_back(interp::Tile::scalarFloat(p.type, std::get<double>(arg)));
      else
        tiles_.push_back(interp::Tile::scalarInt(p.type, std::get<int64_t>(arg)));
    }
  }
  Tensor tensor(size_t i) override { return Tensor::fromTile(tiles_[i]); }
  ConstValue constant(size_t i) override { return c_.at(params_[i].name); }

 private:
  const std::vector<ParamInfo>& params_;
  const Constants& c_;
  std::vector<interp::Tile> tiles_;
};

void checkArgs(const std::string& kernel, const std::vector<ParamInfo>& runtime, const std::vector<interp::Arg>& args,
               const SourceLoc& loc) {
  if (args.size() != runtime.size())
    throw Error("kernel '" + kernel + "' takes " + std::to_string(runtime.size()) + " runtime arguments, got " +
                    std::to_string(args.size()),
                detail::toLocation(loc));
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo& p = runtime[i];
    bool ok = p.kind == ParamKind::Pointer            ? std::holds_alternative<interp::Buffer>(args[i])
              : p.kind == ParamKind::TensorDescriptor ? std::holds_alternative<interp::TensorDesc>(args[i])
              : p.type.isFloat()                      ? std::holds_alternative<double>(args[i])
                                                      : std::holds_alternative<int64_t>(args[i]);
    const char* want = p.kind == ParamKind::Pointer            ? "a buffer"
                       : p.kind == ParamKind::TensorDescriptor ? "a tensor descriptor"
                       : p.type.isFloat()                      ? "a floating-point number"
                                                               : "an integer";
    if (!ok)
      throw Error("kernel '" + kernel + "': argument '" + p.name + "' must be " + want + " (parameter type " +
                      p.type.str() + ")",
                  detail::toLocation(loc));
    if (const auto* d = std::get_if<interp::TensorDesc>(&args[i])) {
      const ir::TensorDescriptorFields fields{reinterpret_cast<uintptr_t>(d->buffer.data), d->shape, d->strides,
                                              d->block};
      if (auto why = ir::descriptorError(fields, p.type))
        throw Error("kernel '" + kernel + "': descriptor argument '" + p.name + "': " + *why, detail::toLocation(loc));
    }
  }
}

}  // namespace

DescriptorTypes KernelDef::descriptorTypes(const std::vector<interp::Arg>& args) const {
  DescriptorTypes types;
  std::vector<ParamInfo> runtime = runtimeParams();
  for (size_t i = 0; i < runtime.size() && i < args.size(); ++i)
    if (const auto* d = std::get_if<interp::TensorDesc>(&args[i]))
      if (runtime[i].kind == ParamKind::TensorDescriptor && !ir::Type::checkDescriptorBlock(d->block))
        types[runtime[i].name] = ir::Type::tensorDesc(d->block, runtime[i].type);
  return types;
}

std::unique_ptr<ir::Module> KernelDef::trace(const Constants& constants, const DescriptorTypes& descriptors,
                                             SourceLoc loc) const {
  checkConstants(constants, loc);
  std::vector<ir::Type> argTypes;
  for (const ParamInfo& p : params_) {
    if (p.kind == ParamKind::Constant) continue;
    if (p.kind != ParamKind::TensorDescriptor) {
      argTypes.push_back(p.type);
      continue;
    }
    auto it = descriptors.find(p.name);
    if (it == descriptors.end())
      throw Error("kernel '" + name_ + "': tracing needs the block shape of descriptor parameter '" + p.name +
                      "' (the type of the descriptor a launch passes)",
                  detail::toLocation(loc));
    if (!it->second.isTensorDesc() || it->second.element() != p.type)
      throw Error("kernel '" + name_ + "': descriptor parameter '" + p.name + "' takes a tensordesc of " +
                      p.type.str() + ", not " + it->second.str(),
                  detail::toLocation(loc));
    argTypes.push_back(it->second);
  }
  auto module = std::make_unique<ir::Module>();
  ir::Function* fn = module->addFunction(std::make_unique<ir::Function>(name_, argTypes));
  fn->setLoc(detail::toLocation(loc));
  unsigned arg = 0;
  for (const ParamInfo& p : params_) {
    if (p.kind == ParamKind::Constant) {
      const ConstValue& v = constants.at(p.name);
      fn->attrs()[p.name] = std::holds_alternative<int64_t>(v) ? ir::Attr::integer(std::get<int64_t>(v))
                                                               : ir::Attr::floating(std::get<double>(v));
    } else {
      fn->argument(arg++)->setNameHint(p.name);
    }
  }
  {
    detail::Context ctx(fn, fn->body());
    TraceSource src(params_, fn, constants);
    invoke_(src);
    ctx.checkPendingError();
    // The function stands at the kernel's first traced line and its return at the last (its author's code), not
    // at the trace's caller, which is Tessera's JIT when a launch traces: what a pass rejects about the whole
    // function points into the kernel, and line tables name no file but the kernel's.
    Location first, last = detail::toLocation(loc);
    for (const auto& op : fn->body()->ops())
      if (op->loc().known()) {
        if (!first.known()) first = op->loc();
        last = op->loc();
      }
    if (first.known()) fn->setLoc(first);
    ctx.builder().setLoc(last);
    ctx.builder().ret();
  }
  ir::verify(*fn);
  return module;
}

void KernelDef::runEager(interp::Grid grid, const std::vector<interp::Arg>& args, const Constants& constants,
                         std::ostream* debugOut, SourceLoc loc) const {
  checkConstants(constants, loc);
  std::vector<ParamInfo> runtime = runtimeParams();
  checkArgs(name_, runtime, args, loc);
  for (int64_t g : grid)
    if (g <= 0) throw Error("the launch grid must be positive in every dimension", detail::toLocation(loc));
  std::unique_ptr<detail::EagerEvaluator> eager = detail::interpreterEvaluator(grid, args, debugOut);
  EagerSource src(params_, args, constants);
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        eager->enterProgram({x, y, z});
        detail::Context ctx(eager.get());
        invoke_(src);
        ctx.checkPendingError();
      }
}

void KernelDef::runInterpreter(interp::Grid grid, const std::vector<interp::Arg>& args, const Constants& constants,
                               std::ostream* debugOut, SourceLoc loc) const {
  checkArgs(name_, runtimeParams(), args, loc);
  std::unique_ptr<ir::Module> m = trace(constants, descriptorTypes(args), loc);
  interp::run(*m->functions()[0], args, grid, debugOut);
}

}  // namespace tessera
