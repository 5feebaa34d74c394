// The fiber context switch for x86-64 SysV (ContextSwitch.h, AsmContextSwitch). A suspended context is its stack
// pointer; the stack holds, from the top down: the resume address, rbp, rbx, r12-r15, then 8 bytes with MXCSR
// (low 4 bytes) and the x87 control word. Caller-saved registers need no saving: the switch is a call.
#if defined(__x86_64__)
        .text

// void tessera_sim_swap_context(void** saveStackPointer, void* resumeStackPointer)
        .globl  tessera_sim_swap_context
        .hidden tessera_sim_swap_context
        .type   tessera_sim_swap_context,@function
        .p2align 4
tessera_sim_swap_context:
        .cfi_startproc
        pushq   %rbp
        pushq   %rbx
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        subq    $8, %rsp
        stmxcsr (%rsp)
        fnstcw  4(%rsp)
        movq    %rsp, (%rdi)
        movq    %rsi, %rsp
        ldmxcsr (%rsp)
        fldcw   4(%rsp)
        addq    $8, %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbx
        popq    %rbp
        ret
        .cfi_endproc
        .size   tessera_sim_swap_context, .-tessera_sim_swap_context

// Where a fresh context starts (AsmContextSwitch::make put the entry in r12 and its argument in r13). The stack
// pointer is 16-byte aligned here, as a call needs. The entry never returns.
        .globl  tessera_sim_context_start
        .hidden tessera_sim_context_start
        .type   tessera_sim_context_start,@function
        .p2align 4
tessera_sim_context_start:
        .cfi_startproc
        .cfi_undefined rip
        movq    %r13, %rdi
        callq   *%r12
        ud2
        .cfi_endproc
        .size   tessera_sim_context_start, .-tessera_sim_context_start
#endif

// No executable stack (the note every architecture's assembler accepts with %progbits).
#if defined(__ELF__)
        .section .note.GNU-stack,"",%progbits
#endif
