/* RV32 bare-metal entry for QEMU 'virt' with -bios none (RAM at 0x80000000): gp, sp, tp (picolibc's
 * errno is thread-local), a trap handler, .bss clear, then exit(main()) through semihosting. */
    .option arch, +zicsr     /* binutils >= 2.38 wants csr* declared */
    .section .text.start, "ax"
    .globl _start
_start:
    .option push
    .option norelax
    la    gp, __global_pointer$
    .option pop
    la    sp, __stack_top
    la    tp, __tls_base
    la    t0, tf_trap
    csrw  mtvec, t0
    la    t0, __bss_start
    la    t1, __bss_end
1:  bgeu  t0, t1, 2f
    sw    zero, 0(t0)
    addi  t0, t0, 4
    j     1b
2:  call  main
    call  tf_exit          /* a0 = main's return value */
3:  j     3b

    .balign 4
tf_trap:                   /* any exception: report mcause, exit 127 */
    csrr  a0, mcause
    call  tf_trap_report
4:  j     4b
