// Internal: the per-thread state behind the DSL. Not for kernel authors.
//
// Tracing builds SSA from C++ variables in the style of Braun et al. ("Simple and Efficient Construction of
// SSA Form"), specialised to structured control flow: each Tensor variable keeps one definition per open
// scope (function body, loop body, branch). Reading a variable inside a loop body whose definition lies
// outside the loop creates a loop-carried block argument on the fly (an "incomplete phi"); when the loop
// closes, carried values that were never reassigned are trivial and are replaced by their initial value,
// and values assigned in the body without being read first become carried too. Branches turn variables
// assigned in either arm into `if` results.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "ir/Builder.h"
#include "tessera/Tensor.h"

namespace tessera::detail {

class EagerEvaluator;

enum class Mode { Trace, Eager };
enum class FrameKind { Function, Loop, IfThen, IfElse, WhileBefore, WhileAfter };

// A variable carried around a loop: block argument(s) plus the value flowing in.
struct Carried {
  Tensor* var;
  ir::Value* init;
  ir::Value* arg;       // in the loop body (for) or the before region (while)
  ir::Value* afterArg;  // while only: in the after region
};

struct Frame {
  uint64_t id;
  FrameKind kind;
  ir::Op* op;                    // the for/if/while op (null for the function body)
  ir::Block* block;              // where ops are being appended
  std::vector<Tensor*> touched;  // variables with a definition in this frame
  std::vector<Carried> carried;  // Loop/While frames
};

class Context {
 public:
  // Tracing into `block` of `function` (the function body, or a combine region).
  Context(ir::Function* function, ir::Block* block);
  // Eager execution of one program, evaluating ops with `eager`.
  explicit Context(EagerEvaluator* eager);
  ~Context();
  Context(const Context&) = delete;

  static Context& current(const SourceLoc& loc);  // throws if no kernel is being traced or run
  static Context* currentOrNull();

  Mode mode() const { return mode_; }

  // Emits an op (tracing) or evaluates it (eager). Returns its results as Tensors.
  std::vector<Tensor> emit(ir::OpKind kind, const std::vector<Tensor>& operands,
                           const std::vector<ir::Type>& resultTypes, ir::AttrDict attrs, const SourceLoc& loc,
                           const std::function<void(ir::Op*)>& fillRegions = nullptr);
  Tensor emit1(ir::OpKind kind, const std::vector<Tensor>& operands, ir::Type resultType, ir::AttrDict attrs,
               const SourceLoc& loc) {
    return emit(kind, operands, {resultType}, std::move(attrs), loc)[0];
  }

  // ---- tracing: variables and scopes
  ir::Value* read(const Tensor& t, const SourceLoc& loc);
  void write(Tensor& t, ir::Value* v);
  void define(Tensor& t, ir::Value* v) { write(t, v); }
  void forget(Tensor& t);  // the Tensor is being destroyed
  ir::Builder& builder() { return builder_; }
  Frame& top() { return frames_.back(); }
  Frame& pushFrame(FrameKind kind, ir::Op* op, ir::Block* block);
  // Pops the innermost frame, returning its (variable, definition) pairs; the definitions are removed from the
  // variables. Variables defined only inside the frame are marked as escaped.
  std::vector<std::pair<Tensor*, Def>> popFrame();
  void switchWhileToAfterRegion();
  ir::Function* function() const { return function_; }

  // A deferred error (e.g. `break` out of a traced loop), reported at the next DSL call or at the end.
  void setPendingError(const std::string& message, const SourceLoc& loc);
  void checkPendingError();

 private:
  ir::Value* addCarried(Frame& f, Tensor& t, ir::Value* init);

  Mode mode_;
  Context* previous_;
  // tracing
  ir::Function* function_ = nullptr;
  ir::Builder builder_;
  std::vector<Frame> frames_;
  // eager
  EagerEvaluator* eager_ = nullptr;
  std::unique_ptr<Error> pendingError_;
};

uint64_t newFrameId();
tessera::Location toLocation(const SourceLoc& loc);

}  // namespace tessera::detail
