/*
 * libregcheck.so's `dlsym`, `dlvsym` and `dlopen` (linked into the shared library only, see
 * build.rs; src/ffi/dl.rs says why and how).
 *
 * glibc's own functions use their caller's return address (RTLD_NEXT searches after the
 * caller's object; dlopen searches the caller's RUNPATH and namespace). So each stub asks
 * regcheck first (regcheck_dl_*_pre, given the caller's return address), and unless regcheck
 * answers itself, jumps to glibc's function with the original arguments and the original
 * return address on the stack: glibc sees the application's caller, never regcheck.
 */
#if defined(__x86_64__)
        .text

        .globl  dlsym
        .type   dlsym, @function
dlsym:
        pushq   %rdi
        pushq   %rsi
        subq    $8, %rsp
        movq    24(%rsp), %rdx
        call    regcheck_dl_sym_pre@PLT
        addq    $8, %rsp
        popq    %rsi
        popq    %rdi
        testq   %rax, %rax
        jnz     1f
        movq    regcheck_dl_next@GOTPCREL(%rip), %rax
        jmp     *0(%rax)
1:      ret
        .size   dlsym, .-dlsym

        .globl  dlvsym
        .type   dlvsym, @function
dlvsym:
        pushq   %rdi
        pushq   %rsi
        pushq   %rdx
        movq    24(%rsp), %rcx
        call    regcheck_dl_vsym_pre@PLT
        popq    %rdx
        popq    %rsi
        popq    %rdi
        testq   %rax, %rax
        jnz     1f
        movq    regcheck_dl_next@GOTPCREL(%rip), %rax
        jmp     *8(%rax)
1:      ret
        .size   dlvsym, .-dlvsym

        .globl  dlopen
        .type   dlopen, @function
dlopen:
        pushq   %rdi
        pushq   %rsi
        subq    $8, %rsp
        movq    24(%rsp), %rdx
        call    regcheck_dl_open_pre@PLT
        addq    $8, %rsp
        popq    %rsi
        popq    %rdi
        testq   %rax, %rax
        jnz     1f
        movq    regcheck_dl_next@GOTPCREL(%rip), %rax
        jmp     *16(%rax)
1:      ret
        .size   dlopen, .-dlopen

#elif defined(__aarch64__)
        .text

        .globl  dlsym
        .type   dlsym, %function
dlsym:
        stp     x29, x30, [sp, #-32]!
        mov     x29, sp
        stp     x0, x1, [sp, #16]
        mov     x2, x30
        bl      regcheck_dl_sym_pre
        mov     x9, x0
        ldp     x0, x1, [sp, #16]
        ldp     x29, x30, [sp], #32
        cbnz    x9, 1f
        adrp    x16, :got:regcheck_dl_next
        ldr     x16, [x16, #:got_lo12:regcheck_dl_next]
        ldr     x16, [x16, #0]
        br      x16
1:      mov     x0, x9
        ret
        .size   dlsym, .-dlsym

        .globl  dlvsym
        .type   dlvsym, %function
dlvsym:
        stp     x29, x30, [sp, #-48]!
        mov     x29, sp
        stp     x0, x1, [sp, #16]
        str     x2, [sp, #32]
        mov     x3, x30
        bl      regcheck_dl_vsym_pre
        mov     x9, x0
        ldp     x0, x1, [sp, #16]
        ldr     x2, [sp, #32]
        ldp     x29, x30, [sp], #48
        cbnz    x9, 1f
        adrp    x16, :got:regcheck_dl_next
        ldr     x16, [x16, #:got_lo12:regcheck_dl_next]
        ldr     x16, [x16, #8]
        br      x16
1:      mov     x0, x9
        ret
        .size   dlvsym, .-dlvsym

        .globl  dlopen
        .type   dlopen, %function
dlopen:
        stp     x29, x30, [sp, #-32]!
        mov     x29, sp
        stp     x0, x1, [sp, #16]
        mov     x2, x30
        bl      regcheck_dl_open_pre
        mov     x9, x0
        ldp     x0, x1, [sp, #16]
        ldp     x29, x30, [sp], #32
        cbnz    x9, 1f
        adrp    x16, :got:regcheck_dl_next
        ldr     x16, [x16, #:got_lo12:regcheck_dl_next]
        ldr     x16, [x16, #16]
        br      x16
1:      mov     x0, x9
        ret
        .size   dlopen, .-dlopen
#endif

        .section .note.GNU-stack,"",%progbits
