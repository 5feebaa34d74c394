// Tutorial 5: fused attention forward with an online softmax, causal and not, on f16 and bf16 inputs. See
// 05_attention.md.
#include "ir/FloatFormats.h"
#include "tessera/kernels/attention.h"
#include "tutorials/TutorialSupport.h"

namespace {

using namespace tutorials;
using namespace tessera::kernels;
using tessera::interp::Arg;
using tessera::interp::Buffer;

// [BATCH, HEADS, SEQ, HEAD_DIM], contiguous. SEQ is a multiple of neither block: the last query and key blocks
// are masked.
constexpr int64_t BATCH = 1, HEADS = 2, SEQ = 75, HEAD_DIM = 64;
constexpr int BM = 32, BN = 16;

// One input type: how to round a float to it and read it back.
struct InputType {
  const char* name;
  tessera::KernelDef (*kernel)();
  tessera::KernelDef (*descKernel)();  // the same through tensor descriptors (attention_fwd_desc)
  uint16_t (*encode)(double);
  double (*decode)(uint16_t);
  double atol, rtol;  // P and the output are rounded to the input type: its precision sets the tolerance
};

// softmax(Q K^T * scale) V per (batch, head), in double precision over the rounded inputs.
std::vector<double> reference(const std::vector<double>& q, const std::vector<double>& k,
                              const std::vector<double>& v, double scale, bool causal) {
  std::vector<double> out(q.size(), 0.0), scores(SEQ);
  for (int64_t bh = 0; bh < BATCH * HEADS; ++bh) {
    const int64_t base = bh * SEQ * HEAD_DIM;
    for (int64_t i = 0; i < SEQ; ++i) {
      const int64_t keys = causal ? i + 1 : SEQ;
      double rowMax = -INFINITY, rowSum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        double s = 0;
        for (int64_t d = 0; d < HEAD_DIM; ++d) s += q[base + i * HEAD_DIM + d] * k[base + j * HEAD_DIM + d];
        scores[j] = s * scale;
        rowMax = std::max(rowMax, scores[j]);
      }
      for (int64_t j = 0; j < keys; ++j) rowSum += scores[j] = std::exp(scores[j] - rowMax);
      for (int64_t j = 0; j < keys; ++j)
        for (int64_t d = 0; d < HEAD_DIM; ++d) out[base + i * HEAD_DIM + d] += scores[j] / rowSum * v[base + j * HEAD_DIM + d];
    }
  }
  return out;
}

void checkType(Report& report, const InputType& type) {
  const size_t n = BATCH * HEADS * SEQ * HEAD_DIM;
  std::vector<uint16_t> bits[3];
  std::vector<double> values[3];
  for (int t = 0; t < 3; ++t) {
    std::vector<float> f = randomFloats(n, 50 + t);
    for (float x : f) {
      bits[t].push_back(type.encode(x));
      values[t].push_back(type.decode(bits[t].back()));
    }
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(HEAD_DIM));
  const tessera::KernelDef kernel = type.kernel();
  const int64_t sb = HEADS * SEQ * HEAD_DIM, sh = SEQ * HEAD_DIM, sm = HEAD_DIM;  // strides, in elements
  for (int causal : {0, 1}) {
    const tessera::Constants constants{{"BM", BM}, {"BN", BN}, {"HEAD_DIM", HEAD_DIM}, {"CAUSAL", causal}};
    const std::string what = std::string(type.name) + (causal ? " causal" : " non-causal");
    report.check(what + ": trace, verify, print, parse, print", checkRoundTrip(*kernel.trace(constants)));
    const std::vector<double> want = reference(values[0], values[1], values[2], scale, causal);
    for (Backend backend : availableBackends()) {
      std::vector<uint16_t> out(n, 0x7fff);  // NaN in both f16 and bf16 until written
      std::vector<Arg> args{Buffer{bits[0].data(), n * 2}, Buffer{bits[1].data(), n * 2}, Buffer{bits[2].data(), n * 2},
                            Buffer{out.data(), n * 2}, scale, HEADS, SEQ};
      for (int tensor = 0; tensor < 4; ++tensor) args.insert(args.end(), {sb, sh, sm});
      runOn(backend, kernel, {(SEQ + BM - 1) / BM, BATCH * HEADS, 1}, args, constants);
      std::vector<float> got(n);
      for (size_t i = 0; i < n; ++i) got[i] = static_cast<float>(type.decode(out[i]));
      const double err = worstError(got, want, type.atol, type.rtol);
      report.check(what + ", " + backendName(backend) + " matches C++", err <= 1, fmtError(err));
    }
    // Through tensor descriptors over the [BATCH * HEADS, SEQ, HEAD_DIM] tensors: blocks of BM (Q, out) or BN (K, V)
    // rows, zero past SEQ; the output block's rows past SEQ are not written.
    namespace ir = tessera::ir;
    const ir::Type element = ir::Type::scalar(std::string(type.name) == "f16" ? ir::ScalarKind::F16 : ir::ScalarKind::BF16);
    const tessera::KernelDef descKernel = type.descKernel();
    const tessera::DescriptorTypes blocks{{"q", ir::Type::tensorDesc({1, BM, HEAD_DIM}, element)},
                                          {"k", ir::Type::tensorDesc({1, BN, HEAD_DIM}, element)},
                                          {"v", ir::Type::tensorDesc({1, BN, HEAD_DIM}, element)},
                                          {"out", ir::Type::tensorDesc({1, BM, HEAD_DIM}, element)}};
    report.check(what + " through descriptors: trace, verify, print, parse, print",
                 checkRoundTrip(*descKernel.trace(constants, blocks)));
    for (Backend backend : availableBackends()) {
      std::vector<uint16_t> out(n, 0x7fff);
      auto desc = [&](uint16_t* data, int64_t rows) {
        return tessera::interp::TensorDesc{Buffer{data, n * 2}, {BATCH * HEADS, SEQ, HEAD_DIM}, {sh, sm, 1},
                                           {1, rows, HEAD_DIM}};
      };
      runOn(backend, descKernel, {(SEQ + BM - 1) / BM, BATCH * HEADS, 1},
            {desc(bits[0].data(), BM), desc(bits[1].data(), BN), desc(bits[2].data(), BN), desc(out.data(), BM), scale,
             SEQ},
            constants);
      std::vector<float> got(n);
      for (size_t i = 0; i < n; ++i) got[i] = static_cast<float>(type.decode(out[i]));
      const double err = worstError(got, want, type.atol, type.rtol);
      report.check(what + " through descriptors, " + backendName(backend) + " matches C++", err <= 1, fmtError(err));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  tutorials::configure(argc, argv);
  Report report{"05 attention"};
  checkType(report, {"f16", attention_fwd_kernel, attention_fwd_desc_kernel, tessera::ir::encodeF16,
                     tessera::ir::decodeF16, 5e-4, 5e-4});
  checkType(report, {"bf16", attention_fwd_bf16_kernel, attention_fwd_desc_bf16_kernel, tessera::ir::encodeBF16,
                     tessera::ir::decodeBF16, 4e-3, 4e-3});
  return report.finish();
}
