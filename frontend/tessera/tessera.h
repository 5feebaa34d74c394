// Tessera's kernel DSL. Kernel authors include this one header:
//
//   #include "tessera/tessera.h"
//   using namespace tessera;
//
//   void vector_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, Const<int> BLOCK) {
//     auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
//     auto mask = offs < n;
//     store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
//   }
//
// See docs/DSL.md for the language and docs/IR.md for what it traces into.
#pragma once

#include "ir/Version.h"  // tessera::version()
#include "tessera/Control.h"
#include "tessera/DType.h"
#include "tessera/Kernel.h"
#include "tessera/Language.h"
#include "tessera/Random.h"
#include "tessera/Tensor.h"
