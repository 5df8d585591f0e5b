/* tc_insncount: QEMU 7.2 TCG plugin (API v1) counting executed guest instructions, exactly
 * (one inline add per instruction; run qemu with -icount shift=0 for a deterministic schedule).
 * Built by the harness with the host compiler: gcc -O2 -shared -fPIC tc_insncount.c -o x.so
 * Hand-written declarations of the few API calls used, so no QEMU header is needed.
 *
 *   -plugin x.so,out=FILE[,lo=ADDR,hi=ADDR][,mark=ADDR]...[,classes=1][,rgn=K:LO:HI]...
 *   lo/hi:   also count, separately, the instructions with lo <= pc < hi ("range")
 *   mark:    each time the instruction at ADDR executes, log "mark ADDR COUNTERS..." with the
 *            counters (all instructions, in range, then the measured ones) before it (at most MAX_LOG lines)
 *   classes: an instruction-class histogram (Thumb/Thumb-2 decoded at translation time, tc_classes.h;
 *            one more inline add per instruction, + words for LDM/STM/PUSH/POP, and a callback per
 *            executed translation block for taken conditional branches)
 *   rgn:     count the bytes loaded and stored by address region K (0..3; the first range that holds
 *            the address wins; region 4 = none of them) through a memory callback per access
 * FILE gets "columns NAME..." (the counters after the mark address), the log lines, then "insns TOTAL",
 * "range IN_RANGE" and "final COUNTERS..." (the counters at exit). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum { INLINE_ADD_U64 = 0 };
enum { CB_NO_REGS = 0 };
enum { MEM_RW = 3 };
typedef void (*udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, void (*)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *, int, void *, uint64_t);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *, udata_cb_t, int, void *);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *, mem_cb_t, int, int, void *);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, void (*)(qemu_plugin_id_t, void *), void *);
void qemu_plugin_outs(const char *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#include "tc_classes.h"

#define MAX_MARKS 4096
#define MAX_LOG 65536
#define MAX_RGN 8
#define N_MEM 10                        /* 5 regions (4 named + other) x (read, write) */
enum { C_INSN, C_RANGE, C_CLS, C_MEM = C_CLS + N_CLS, N_CTR = C_MEM + N_MEM };

static uint64_t ctr[N_CTR];
static uint64_t lo, hi = 0;
static uint64_t marks[MAX_MARKS];
static size_t n_marks, n_log;
static uint64_t *log_;                  /* n_log rows of 1 + N_CTR */
static const char *out_path;
static int classes;
static struct { uint64_t lo, hi; unsigned k; } rgn[MAX_RGN];
static size_t n_rgn;
static uint64_t pending_fall;           /* fall-through address of the conditional branch just executed */

static void on_mark(unsigned int vcpu, void *udata)
{
  (void)vcpu;
  if (!log_) log_ = malloc(sizeof(uint64_t) * (1 + N_CTR) * MAX_LOG);
  if (log_ && n_log < MAX_LOG) {
    uint64_t *row = log_ + n_log * (1 + N_CTR);
    row[0] = marks[(uintptr_t)udata];
    memcpy(row + 1, ctr, sizeof ctr);
    n_log++;
  }
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
  unsigned k = 4;
  (void)vcpu; (void)udata;
  for (size_t i = 0; i < n_rgn; i++)
    if (vaddr >= rgn[i].lo && vaddr < rgn[i].hi) { k = rgn[i].k; break; }
  ctr[C_MEM + 2 * k + (qemu_plugin_mem_is_store(info) ? 1 : 0)] += 1u << qemu_plugin_mem_size_shift(info);
}

static void on_bcond(unsigned int vcpu, void *udata) { (void)vcpu; pending_fall = (uintptr_t)udata; }

static void on_tb_start(unsigned int vcpu, void *udata)
{
  (void)vcpu;
  if (pending_fall) {
    if ((uintptr_t)udata != pending_fall) ctr[C_CLS + CL_BCOND_TAKEN]++;
    pending_fall = 0;
  }
}

static void instrument_classes(struct qemu_plugin_insn *insn, uint64_t pc, int *prev)
{
  const uint8_t *b = qemu_plugin_insn_data(insn);
  size_t size = qemu_plugin_insn_size(insn);
  uint16_t hw1 = (uint16_t)(b[0] | b[1] << 8), hw2 = size >= 4 ? (uint16_t)(b[2] | b[3] << 8) : 0;
  unsigned words = 0;
  int cls = tc_classify(hw1, hw2, &words);
  if ((cls == CL_LD || cls == CL_ST) && (*prev == CL_LD || *prev == CL_ST || *prev == CL_LDST_PIPE))
    cls = CL_LDST_PIPE;                 /* neighbouring single loads/stores pipeline */
  *prev = cls;
  qemu_plugin_register_vcpu_insn_exec_inline(insn, INLINE_ADD_U64, &ctr[C_CLS + cls], 1);
  if (words && tc_words_class(cls) >= 0)
    qemu_plugin_register_vcpu_insn_exec_inline(insn, INLINE_ADD_U64, &ctr[C_CLS + tc_words_class(cls)], words);
  if (cls == CL_BCOND)
    qemu_plugin_register_vcpu_insn_exec_cb(insn, on_bcond, CB_NO_REGS, (void *)(uintptr_t)(pc + size));
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
  size_t n = qemu_plugin_tb_n_insns(tb);
  int prev = CL_OTHER;
  (void)id;
  for (size_t i = 0; i < n; i++) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    uint64_t pc = qemu_plugin_insn_vaddr(insn);
    if (classes && i == 0)                 /* before the marks: a taken branch counts where it ran */
      qemu_plugin_register_vcpu_insn_exec_cb(insn, on_tb_start, CB_NO_REGS, (void *)(uintptr_t)pc);
    for (size_t m = 0; m < n_marks; m++)   /* registered first: sees the count before this insn */
      if (marks[m] == pc) qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, CB_NO_REGS, (void *)(uintptr_t)m);
    qemu_plugin_register_vcpu_insn_exec_inline(insn, INLINE_ADD_U64, &ctr[C_INSN], 1);
    if (pc >= lo && pc < hi) qemu_plugin_register_vcpu_insn_exec_inline(insn, INLINE_ADD_U64, &ctr[C_RANGE], 1);
    if (classes) instrument_classes(insn, pc, &prev);
    if (n_rgn) qemu_plugin_register_vcpu_mem_cb(insn, on_mem, CB_NO_REGS, MEM_RW, NULL);
  }
}

static void print_row(FILE *f, const uint64_t *c)
{
  for (int i = 0; i < N_CTR; i++) fprintf(f, " %llu", (unsigned long long)c[i]);
  fputc('\n', f);
}

static void on_exit_cb(qemu_plugin_id_t id, void *p)
{
  FILE *f;
  (void)id; (void)p;
  if (!out_path || !(f = fopen(out_path, "w"))) {
    char line[48];
    snprintf(line, sizeof line, "insns %llu\n", (unsigned long long)ctr[C_INSN]);
    qemu_plugin_outs(line);
    return;
  }
  fprintf(f, "columns insns range");
  for (int i = 0; i < N_CLS; i++) fprintf(f, " %s", tc_class_names[i]);
  for (int i = 0; i < N_MEM; i++) fprintf(f, " mem%d_%s", i / 2, i % 2 ? "w" : "r");
  fputc('\n', f);
  for (size_t i = 0; i < n_log; i++) {
    const uint64_t *row = log_ + i * (1 + N_CTR);
    fprintf(f, "mark 0x%llx", (unsigned long long)row[0]);
    print_row(f, row + 1);
  }
  fprintf(f, "insns %llu\nrange %llu\nfinal", (unsigned long long)ctr[C_INSN], (unsigned long long)ctr[C_RANGE]);
  print_row(f, ctr);
  fclose(f);
}

static int parse_rgn(const char *s)
{
  char *end;
  unsigned long k = strtoul(s, &end, 0);
  if (*end != ':' || k > 3 || n_rgn >= MAX_RGN) return -1;
  rgn[n_rgn].k = (unsigned)k;
  rgn[n_rgn].lo = strtoull(end + 1, &end, 0);
  if (*end != ':') return -1;
  rgn[n_rgn].hi = strtoull(end + 1, &end, 0);
  n_rgn++;
  return *end ? -1 : 0;
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv)
{
  (void)info;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!strncmp(a, "out=", 4)) out_path = strdup(a + 4);
    else if (!strncmp(a, "lo=", 3)) lo = strtoull(a + 3, NULL, 0);
    else if (!strncmp(a, "hi=", 3)) hi = strtoull(a + 3, NULL, 0);
    else if (!strncmp(a, "mark=", 5) && n_marks < MAX_MARKS) marks[n_marks++] = strtoull(a + 5, NULL, 0);
    else if (!strcmp(a, "classes=1")) classes = 1;
    else if (!strncmp(a, "rgn=", 4) && !parse_rgn(a + 4)) { }
    else if (!strcmp(a, "mode=insn")) { }            /* always per instruction */
    else { fprintf(stderr, "tc_insncount: bad arg %s\n", a); return -1; }
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
  qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
  return 0;
}
