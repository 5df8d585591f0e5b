/* Semihosting calls for the qemu boards: Arm M-profile BKPT 0xAB, RISC-V "slli; ebreak; srai".
 * QEMU serves them with -semihosting-config enable=on,target=native: text goes to QEMU's stderr
 * (or a chardev), files are opened relative to QEMU's working directory, and the exit code of
 * tf_sh_exit reaches the shell. Not for production firmware: it stops a real core without a debugger. */
#ifndef TINYFUSE_SEMIHOST_H
#define TINYFUSE_SEMIHOST_H

#include <stdint.h>
#include <string.h>

enum {
  TF_SH_OPEN = 0x01, TF_SH_CLOSE = 0x02, TF_SH_WRITE0 = 0x04, TF_SH_WRITE = 0x05,
  TF_SH_EXIT = 0x18, TF_SH_EXIT_EXTENDED = 0x20
};
#define TF_SH_APP_EXIT 0x20026u /* ADP_Stopped_ApplicationExit */
#define TF_SH_MODE_WB 5u        /* fopen mode "wb" */

static inline uintptr_t tf_sh_call(uintptr_t op, uintptr_t arg)
{
#if defined(__riscv)
  register uintptr_t a0 __asm__("a0") = op;
  register uintptr_t a1 __asm__("a1") = arg;
  __asm__ volatile(".option push\n.option norvc\n.balign 16\n" /* must stay 3 uncompressed insns */
                   "slli x0, x0, 0x1f\nebreak\nsrai x0, x0, 7\n.option pop" : "+r"(a0) : "r"(a1) : "memory");
  return a0;
#else
  register uintptr_t r0 __asm__("r0") = op;
  register uintptr_t r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
#endif
}

static inline void tf_sh_puts(const char *s) { tf_sh_call(TF_SH_WRITE0, (uintptr_t)s); }

static inline void tf_sh_putu(uint32_t v)
{
  char b[12];
  int i = 11;
  b[i] = 0;
  do { b[--i] = (char)('0' + v % 10u); v /= 10u; } while (v);
  tf_sh_puts(&b[i]);
}

/* Write `n` bytes into the host file `path` (created or truncated). Returns 0 on success. */
static inline int tf_sh_write_file(const char *path, const void *data, uint32_t n)
{
  uintptr_t open_args[3] = { (uintptr_t)path, TF_SH_MODE_WB, (uintptr_t)strlen(path) };
  intptr_t fd = (intptr_t)tf_sh_call(TF_SH_OPEN, (uintptr_t)open_args);
  uintptr_t write_args[3], close_args[1];
  uintptr_t left;
  if (fd < 0) return -1;
  write_args[0] = (uintptr_t)fd; write_args[1] = (uintptr_t)data; write_args[2] = n;
  left = tf_sh_call(TF_SH_WRITE, (uintptr_t)write_args);   /* bytes NOT written */
  close_args[0] = (uintptr_t)fd;
  tf_sh_call(TF_SH_CLOSE, (uintptr_t)close_args);
  return left == 0 ? 0 : -1;
}

static inline __attribute__((noreturn)) void tf_sh_exit(int code)
{
  uintptr_t blk[2] = { TF_SH_APP_EXIT, (uintptr_t)code };   /* SYS_EXIT_EXTENDED: {reason, code} */
  tf_sh_call(TF_SH_EXIT_EXTENDED, (uintptr_t)blk);
  tf_sh_call(TF_SH_EXIT, code ? 0x20023u : TF_SH_APP_EXIT); /* 32-bit fallback: 0 or 1 only */
  for (;;) { }
}

#endif /* TINYFUSE_SEMIHOST_H */
