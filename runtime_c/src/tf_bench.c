/* Bench markers and stack painting: see tinyfuse/bench.h. */
#include "tinyfuse/bench.h"

#define TF_PAINT 0xA5C3E10Fu

extern uint32_t __tf_stack_limit[];
static uint32_t *paint_lo, *paint_hi;

__attribute__((noinline)) void tf_bench_begin(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void tf_bench_end(void) { __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) void tf_stack_paint(void)
{
  uintptr_t hi = (tf_sp() - 8u) & ~(uintptr_t)3;       /* this function's frame is above sp */
  uintptr_t lo = (uintptr_t)__tf_stack_limit;
  if (hi - lo > TF_STACK_PAINT_MAX) lo = hi - TF_STACK_PAINT_MAX;
  paint_lo = (uint32_t *)lo;
  paint_hi = (uint32_t *)hi;
  for (volatile uint32_t *p = paint_lo; p < paint_hi; ++p) *p = TF_PAINT;
}

uint32_t tf_stack_used(uintptr_t top)
{
  const volatile uint32_t *p = paint_lo;
  while (p < paint_hi && *p == TF_PAINT) ++p;
  return (uint32_t)(top - (uintptr_t)p);
}
