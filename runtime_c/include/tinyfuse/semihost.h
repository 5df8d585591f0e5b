/* SPDX-License-Identifier: Apache-2.0
 * SPDX-FileCopyrightText: the tinyfuse authors (tinyfuse runtime_c; `tinyfuse project` copies this file) */
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
  __asm__ volatile(".option push\n.balign 16\n.option norvc\n" /* aligned with RVC on (relaxation pads with 2-byte nops), then 3 uncompressed insns */
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

/* Open the host file `path` for writing (created or truncated): a handle >= 0, or -1. */
static inline intptr_t tf_sh_open_write(const char *path)
{
  uintptr_t open_args[3] = { (uintptr_t)path, TF_SH_MODE_WB, (uintptr_t)strlen(path) };
  return (intptr_t)tf_sh_call(TF_SH_OPEN, (uintptr_t)open_args);
}

/* Append `n` bytes to the open host file `fd`. Returns 0 when every byte was written. */
static inline int tf_sh_write(intptr_t fd, const void *data, uint32_t n)
{
  uintptr_t write_args[3] = { (uintptr_t)fd, (uintptr_t)data, n };
  return tf_sh_call(TF_SH_WRITE, (uintptr_t)write_args) == 0 ? 0 : -1;   /* returns the bytes NOT written */
}

static inline void tf_sh_close(intptr_t fd)
{
  uintptr_t close_args[1] = { (uintptr_t)fd };
  tf_sh_call(TF_SH_CLOSE, (uintptr_t)close_args);
}

/* Write `n` bytes into the host file `path` (created or truncated). Returns 0 on success. */
static inline int tf_sh_write_file(const char *path, const void *data, uint32_t n)
{
  intptr_t fd = tf_sh_open_write(path);
  int failed;
  if (fd < 0) return -1;
  failed = tf_sh_write(fd, data, n);
  tf_sh_close(fd);
  return failed;
}

static inline __attribute__((noreturn)) void tf_sh_exit(int code)
{
  uintptr_t blk[2] = { TF_SH_APP_EXIT, (uintptr_t)code };   /* SYS_EXIT_EXTENDED: {reason, code} */
  tf_sh_call(TF_SH_EXIT_EXTENDED, (uintptr_t)blk);
  tf_sh_call(TF_SH_EXIT, code ? 0x20023u : TF_SH_APP_EXIT); /* 32-bit fallback: 0 or 1 only */
  for (;;) { }
}

#endif /* TINYFUSE_SEMIHOST_H */
