// Every inline PTX string an NVPTX module of this backend may contain, with the operation it performs: what the
// backend emits itself (nothing yet; wgmma and TMA will be the first) and what it links from libdevice. The
// backend emits inline asm only from this table; the emulator (jit/sim) accepts an inline asm only when its
// string and constraints match an entry exactly and implements the entry's operation, so it never parses asm.
#pragma once

#include <array>
#include <string_view>

namespace tessera::backends::nvptx {

struct InlineAsmEntry {
  std::string_view operation;    // what it does, the name the emulator implements it under ("wgmma.fence", ...)
  std::string_view asmString;    // exactly as given to llvm::InlineAsm::get
  std::string_view constraints;  // likewise
};

inline constexpr std::array<InlineAsmEntry, 2> kInlineAsmTable{{
    // libdevice (__nv_tanhf, __nv_fmodf, ...): the approximate reciprocal, subnormals flushed to zero.
    {"rcp.approx.ftz.f32", "rcp.approx.ftz.f32 $0,$1;", "=f,f"},
    // libdevice (the argument reduction of __nv_sinf, __nv_cosf): {low, high} words of a * b + c, all u32.
    {"mad.wide.u32", "{\n\tmad.lo.cc.u32   $0, $2, $3, $4;\n\tmadc.hi.u32     $1, $2, $3,  0;\n\t}", "=r,=r,r,r,r"},
}};

// The entry with exactly this asm string and these constraints; null when there is none.
inline const InlineAsmEntry* findInlineAsm(std::string_view asmString, std::string_view constraints) {
  for (const InlineAsmEntry& entry : kInlineAsmTable)
    if (entry.asmString == asmString && entry.constraints == constraints) return &entry;
  return nullptr;
}

}  // namespace tessera::backends::nvptx
