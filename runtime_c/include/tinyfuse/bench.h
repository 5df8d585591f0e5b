/* Measurement helpers for the qemu harness (not needed by the generated model code).
 *
 *   tf_bench_begin() / tf_bench_end(): empty, never-inlined marker functions; the instruction-count
 *     plugin snapshots its counter when their first instruction executes.
 *   tf_stack_paint() / tf_stack_used(top): stack painting. Paint fills the free stack below the
 *     caller with a pattern (at most TF_STACK_PAINT_MAX bytes, never below __tf_stack_limit, the end
 *     of .bss in the board's linker script); used(top) returns top minus the lowest word that no
 *     longer holds the pattern: the high-water mark of everything called in between.
 */
#ifndef TINYFUSE_BENCH_H
#define TINYFUSE_BENCH_H

#include <stdint.h>

#ifndef TF_STACK_PAINT_MAX
#define TF_STACK_PAINT_MAX (256u * 1024u)
#endif

void tf_bench_begin(void);
void tf_bench_end(void);
void tf_stack_paint(void);
uint32_t tf_stack_used(uintptr_t top);

static inline uintptr_t tf_sp(void)
{
  uintptr_t sp;
#if defined(__riscv)
  __asm__ volatile("mv %0, sp" : "=r"(sp));
#else
  __asm__ volatile("mov %0, sp" : "=r"(sp));
#endif
  return sp;
}

#endif /* TINYFUSE_BENCH_H */
