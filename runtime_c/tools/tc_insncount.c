/* tc_insncount: QEMU 7.2 TCG plugin (API v1) counting executed guest instructions, exactly
 * (one inline add per instruction; run qemu with -icount shift=0 for a deterministic schedule).
 * Built by the harness with the host compiler: gcc -O2 -shared -fPIC tc_insncount.c -o x.so
 * Hand-written declarations of the few API calls used, so no QEMU header is needed.
 *
 *   -plugin x.so,out=FILE[,lo=ADDR,hi=ADDR][,mark=ADDR]...
 *   lo/hi:  also count, separately, the instructions with lo <= pc < hi ("range")
 *   mark:   each time the instruction at ADDR executes, log "mark ADDR COUNT RANGE" with the
 *           numbers of instructions (all, in range) executed before it (at most MAX_LOG lines)
 * FILE gets the log lines, then "insns TOTAL" and "range IN_RANGE". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum { INLINE_ADD_U64 = 0 };
enum { CB_NO_REGS = 0 };
typedef void (*udata_cb_t)(unsigned int vcpu_index, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, void (*)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *, int, void *, uint64_t);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *, udata_cb_t, int, void *);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, void (*)(qemu_plugin_id_t, void *), void *);
void qemu_plugin_outs(const char *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_MARKS 4096
#define MAX_LOG 65536
static uint64_t count, range_count, lo, hi = 0;
static uint64_t marks[MAX_MARKS];
static size_t n_marks, n_log;
static struct { uint64_t addr, count, range; } log_[MAX_LOG];
static const char *out_path;

static void on_mark(unsigned int vcpu, void *udata)
{
  (void)vcpu;
  if (n_log < MAX_LOG) {
    log_[n_log].addr = marks[(uintptr_t)udata];
    log_[n_log].count = count;
    log_[n_log].range = range_count;
    n_log++;
  }
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
  size_t n = qemu_plugin_tb_n_insns(tb);
  (void)id;
  for (size_t i = 0; i < n; i++) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    uint64_t pc = qemu_plugin_insn_vaddr(insn);
    for (size_t m = 0; m < n_marks; m++)   /* registered first: sees the count before this insn */
      if (marks[m] == pc) qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, CB_NO_REGS, (void *)(uintptr_t)m);
    qemu_plugin_register_vcpu_insn_exec_inline(insn, INLINE_ADD_U64, &count, 1);
    if (pc >= lo && pc < hi) qemu_plugin_register_vcpu_insn_exec_inline(insn, INLINE_ADD_U64, &range_count, 1);
  }
}

static void on_exit_cb(qemu_plugin_id_t id, void *p)
{
  FILE *f;
  (void)id; (void)p;
  if (!out_path || !(f = fopen(out_path, "w"))) {
    char line[48];
    snprintf(line, sizeof line, "insns %llu\n", (unsigned long long)count);
    qemu_plugin_outs(line);
    return;
  }
  for (size_t i = 0; i < n_log; i++)
    fprintf(f, "mark 0x%llx %llu %llu\n", (unsigned long long)log_[i].addr, (unsigned long long)log_[i].count,
            (unsigned long long)log_[i].range);
  fprintf(f, "insns %llu\nrange %llu\n", (unsigned long long)count, (unsigned long long)range_count);
  fclose(f);
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
    else if (!strcmp(a, "mode=insn")) { }            /* always per instruction */
    else { fprintf(stderr, "tc_insncount: bad arg %s\n", a); return -1; }
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
  qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
  return 0;
}
