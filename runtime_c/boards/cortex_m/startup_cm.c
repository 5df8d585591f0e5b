/* SPDX-License-Identifier: Apache-2.0
 * SPDX-FileCopyrightText: the tinyfuse authors (tinyfuse runtime_c; `tinyfuse project` copies this file) */
/* Cortex-M start-up for the qemu boards: vector table, FPU/MVE enable, .data copy, .bss clear,
 * exit(main()) through semihosting. A fault prints "FAULT: exception N" and exits with 127. */
#include <stdint.h>
#include "tinyfuse/semihost.h"

extern uint32_t __stack_top[], __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
int main(void);
void Reset_Handler(void);
void Fault_Handler(void);

__attribute__((used, section(".vectors"))) void (*const tf_vectors[16])(void) = {
  (void (*)(void))(uintptr_t)__stack_top, Reset_Handler,
  Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, /* NMI HardF MemM BusF UsageF */
  Fault_Handler, 0, 0, 0, Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler
};                         /* SecureFault, -, -, -, SVC, DebugMon, -, PendSV, SysTick */

void Fault_Handler(void)
{
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  tf_sh_puts("FAULT: exception ");
  tf_sh_putu(ipsr);
  tf_sh_puts("\n");
  tf_sh_exit(0x7f);
}

/* FPU/MVE must be enabled before any FP/MVE instruction runs; the optimize() attribute stops GCC
 * from turning the loops into memcpy/memset calls or (at -O3 for M55) into MVE code. */
__attribute__((noreturn, optimize("no-tree-loop-distribute-patterns", "no-tree-vectorize")))
void Reset_Handler(void)
{
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10+CP11 full access */
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
#if !defined(__ARM_ARCH_6M__)
  *(volatile uint32_t *)0xE000ED08u = (uint32_t)(uintptr_t)tf_vectors; /* VTOR */
#endif
  for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
  for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
  tf_sh_exit(main());
}

__attribute__((weak)) void _init(void) {} /* newlib's __libc_{init,fini}_array need these */
__attribute__((weak)) void _fini(void) {} /* when linking with -nostartfiles */
