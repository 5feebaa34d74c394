// expand-descriptor-loads keeps desc_load's and desc_store's meaning: the interpreter runs each kernel as traced
// (desc_load and desc_store run directly) and after the pass (desc_field, pointer arithmetic and a masked load or
// store), and the two agree element for element on blocks of rank 1 to 3 at offsets inside the tensor, across its
// edges and before its start; a store writes nothing outside the tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backends/interpreter/Interpreter.h"
#include "ir/Builder.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"

namespace tessera {
namespace {

using ir::Type;

// With `store` false, out[0 : n] = desc_load(desc, offsets...), flattened (n: the block's elements); with it true,
// desc_store(desc, offsets..., out[0 : n] as a block).
std::unique_ptr<ir::Module> blockKernel(const std::vector<int64_t>& block, Type element, bool store) {
  std::vector<Type> params{Type::tensorDesc(block, element), Type::ptr(element)};
  params.insert(params.end(), block.size(), Type::i32());
  auto m = std::make_unique<ir::Module>();
  ir::Function* f = m->addFunction(std::make_unique<ir::Function>(store ? "store" : "copy", params));
  ir::Builder b(f->body());
  std::vector<ir::Value*> offsets;
  for (size_t d = 0; d < block.size(); ++d) offsets.push_back(f->argument(static_cast<unsigned>(2 + d)));
  int64_t n = 1;
  for (int64_t d : block) n *= d;
  ir::Value* iota = b.arange(0, n);
  ir::Value* ptrs = b.addptr(b.splat(f->argument(1), {n}), iota);
  if (store) {
    ir::Value* flat = b.load(ptrs);
    b.descStore(f->argument(0), offsets, block.size() == 1 ? flat : b.reshape(flat, block));
  } else {
    ir::Value* tile = b.descLoad(f->argument(0), offsets);
    b.store(ptrs, block.size() == 1 ? tile : b.reshape(tile, {n}));
  }
  b.ret();
  return m;
}

// A copy of `traced` after expand-descriptor-loads, which leaves no `op` and reads the descriptor's fields.
std::unique_ptr<ir::Module> expand(const ir::Module& traced, const std::string& op) {
  std::unique_ptr<ir::Module> expanded = ir::parseModule(ir::print(traced));
  transforms::PassManager pm;
  pm.add("expand-descriptor-loads");
  pm.run(*expanded);
  const std::string text = ir::print(*expanded);
  EXPECT_EQ(text.find(op + " "), std::string::npos) << text;
  EXPECT_NE(text.find("desc_field"), std::string::npos) << text;
  return expanded;
}

std::vector<uint8_t> run(const ir::Function& f, const interp::TensorDesc& desc, int64_t outBytes,
                         const std::vector<int64_t>& offsets) {
  std::vector<uint8_t> out(static_cast<size_t>(outBytes), 0xee);
  std::vector<interp::Arg> args{desc, interp::Buffer{out.data(), out.size()}};
  args.insert(args.end(), offsets.begin(), offsets.end());
  interp::run(f, args, {1, 1, 1});
  return out;
}

struct Case {
  std::vector<int64_t> shape, strides, block;
  Type element;
  std::vector<std::vector<int64_t>> offsets;
};

TEST(ExpandDescriptorLoads, TheExpandedLoadReadsWhatDescLoadReads) {
  const Case cases[] = {
      {{100}, {1}, {64}, Type::f32(), {{0}, {40}, {-30}, {99}, {100}}},
      {{21, 37}, {40, 1}, {8, 16}, Type::f16(), {{0, 0}, {16, 32}, {-3, -9}, {20, 30}, {-8, 40}}},
      {{3, 5, 12}, {96, 16, 1}, {2, 4, 4}, Type::f32(), {{0, 0, 0}, {2, 3, 10}, {-1, -2, -3}, {1, 4, 8}}},
  };
  for (const Case& c : cases) {
    const int64_t bytes = c.element.storageBytes();
    std::vector<uint8_t> tensor(static_cast<size_t>(c.shape[0] * c.strides[0] * bytes));
    for (size_t i = 0; i < tensor.size(); ++i) tensor[i] = static_cast<uint8_t>(i * 37 + 11);
    const interp::TensorDesc desc{{tensor.data(), tensor.size()}, c.shape, c.strides, c.block};
    int64_t outBytes = bytes;
    for (int64_t d : c.block) outBytes *= d;

    std::unique_ptr<ir::Module> traced = blockKernel(c.block, c.element, /*store=*/false);
    std::unique_ptr<ir::Module> expanded = expand(*traced, "desc_load");

    for (const std::vector<int64_t>& at : c.offsets) {
      const std::vector<uint8_t> direct = run(*traced->functions()[0], desc, outBytes, at);
      EXPECT_EQ(run(*expanded->functions()[0], desc, outBytes, at), direct)
          << c.element.str() << " block of rank " << c.block.size() << " at offset " << at[0];
      // Spot check of the meaning: the block's first element, zero outside the tensor.
      bool inside = true;
      int64_t first = 0;
      for (size_t d = 0; d < at.size(); ++d) {
        inside = inside && at[d] >= 0 && at[d] < c.shape[d];
        first += at[d] * c.strides[d];
      }
      const std::vector<uint8_t> expected =
          inside ? std::vector<uint8_t>(tensor.begin() + first * bytes, tensor.begin() + (first + 1) * bytes)
                 : std::vector<uint8_t>(static_cast<size_t>(bytes), 0);
      EXPECT_EQ(std::vector<uint8_t>(direct.begin(), direct.begin() + bytes), expected) << "offset " << at[0];
    }
  }
}

// The tensor's bytes after storing `src` as the block at `at` (the interpreter checks every write's bounds).
std::vector<uint8_t> runStore(const ir::Function& f, const Case& c, std::vector<uint8_t> src,
                              const std::vector<int64_t>& at) {
  const int64_t bytes = c.element.storageBytes();
  std::vector<uint8_t> tensor(static_cast<size_t>(c.shape[0] * c.strides[0] * bytes), 0xee);
  std::vector<interp::Arg> args{interp::TensorDesc{{tensor.data(), tensor.size()}, c.shape, c.strides, c.block},
                                interp::Buffer{src.data(), src.size()}};
  args.insert(args.end(), at.begin(), at.end());
  interp::run(f, args, {1, 1, 1});
  return tensor;
}

TEST(ExpandDescriptorLoads, TheExpandedStoreWritesWhatDescStoreWrites) {
  const Case cases[] = {
      {{100}, {1}, {64}, Type::f32(), {{0}, {40}, {-30}, {99}, {100}}},
      {{21, 37}, {40, 1}, {8, 16}, Type::f16(), {{0, 0}, {16, 32}, {-3, -9}, {20, 30}, {-8, 40}}},
      {{3, 5, 12}, {96, 16, 1}, {2, 4, 4}, Type::f32(), {{0, 0, 0}, {2, 3, 10}, {-1, -2, -3}, {1, 4, 8}}},
  };
  for (const Case& c : cases) {
    const int64_t bytes = c.element.storageBytes();
    int64_t elements = 1;
    for (int64_t d : c.block) elements *= d;
    std::vector<uint8_t> src(static_cast<size_t>(elements * bytes));
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 13 + 5);
    // Each element's top byte makes it a normal number, which loads and stores keep bit for bit (NaN payloads
    // need not survive the interpreter's canonical values).
    for (size_t i = bytes - 1; i < src.size(); i += bytes) src[i] = c.element == Type::f16() ? 0x3c : 0x3f;

    std::unique_ptr<ir::Module> traced = blockKernel(c.block, c.element, /*store=*/true);
    std::unique_ptr<ir::Module> expanded = expand(*traced, "desc_store");

    for (const std::vector<int64_t>& at : c.offsets) {
      const std::vector<uint8_t> direct = runStore(*traced->functions()[0], c, src, at);
      EXPECT_EQ(runStore(*expanded->functions()[0], c, src, at), direct)
          << c.element.str() << " block of rank " << c.block.size() << " at offset " << at[0];
      // The meaning: element e of the tensor holds the block's element at e - at inside the block, else 0xee.
      std::vector<uint8_t> expected(direct.size(), 0xee);
      std::vector<int64_t> index(c.block.size(), 0);
      for (int64_t i = 0; i < elements; ++i) {
        bool inside = true;
        int64_t e = 0;
        for (size_t d = 0; d < c.block.size(); ++d) {
          const int64_t coord = at[d] + index[d];
          inside = inside && coord >= 0 && coord < c.shape[d];
          e += coord * c.strides[d];
        }
        if (inside) std::memcpy(&expected[static_cast<size_t>(e * bytes)], &src[static_cast<size_t>(i * bytes)], bytes);
        for (size_t d = c.block.size(); d-- > 0 && ++index[d] == c.block[d];) index[d] = 0;
      }
      EXPECT_EQ(direct, expected) << c.element.str() << " block of rank " << c.block.size() << " at offset " << at[0];
    }
  }
}

}  // namespace
}  // namespace tessera
