/* tc_classes.h: instruction classes of Thumb/Thumb-2 (Armv6-M, Armv7-M, Armv8-M Mainline with the DSP,
 * FP and Helium (MVE) extensions) from the encoding alone, for tc_insncount.c's histogram. The
 * encodings follow the Armv7-M ARM (DDI 0403E) A5 "The Thumb Instruction Set Encoding" and the
 * Armv8.1-M ARM (DDI 0553) for the low-overhead branches and MVE. The classes are the rows of
 * the cycle tables in compiler/harness/cycles.py; *_WORDS classes count transferred words (the N of
 * "1+N" timings), BCOND_TAKEN is counted at run time. */
#ifndef TC_CLASSES_H
#define TC_CLASSES_H
#include <stdint.h>

enum {
  CL_ALU, CL_LD, CL_ST, CL_LDST_PIPE, CL_LDM, CL_LDM_PC, CL_LDM_WORDS, CL_STM, CL_STM_WORDS,
  CL_BR, CL_BCOND, CL_BCOND_TAKEN, CL_MUL, CL_MAC, CL_MULL, CL_MACL, CL_DSP, CL_DIV,
  CL_FP, CL_FP_MAC, CL_FP_DIV, CL_FP_LDST, CL_FP_LDST_WORDS, CL_MVE, CL_MVE_LDST, CL_LOB, CL_OTHER, N_CLS
};

static const char *const tc_class_names[N_CLS] = {
  "alu", "ld", "st", "ldst_pipe", "ldm", "ldm_pc", "ldm_words", "stm", "stm_words",
  "br", "bcond", "bcond_taken", "mul", "mac", "mull", "macl", "dsp", "div",
  "fp", "fp_mac", "fp_div", "fp_ldst", "fp_ldst_words", "mve", "mve_ldst", "lob", "other"
};

/* the class that counts the words moved by an instruction of class cls, or -1 */
static inline int tc_words_class(int cls)
{
  if (cls == CL_LDM || cls == CL_LDM_PC) return CL_LDM_WORDS;
  if (cls == CL_STM) return CL_STM_WORDS;
  if (cls == CL_FP_LDST) return CL_FP_LDST_WORDS;
  return -1;
}

static inline unsigned tc_popcount(unsigned x) { return (unsigned)__builtin_popcount(x); }

static int tc_class16(uint16_t hw, unsigned *words)
{
  if (hw < 0x4000) return CL_ALU;
  if (hw < 0x4400) return (hw & 0xFFC0) == 0x4340 ? CL_MUL : CL_ALU;
  if (hw < 0x4800) return ((hw & 0xFF00) == 0x4700 || (hw & 0xFF87) == 0x4687) ? CL_BR : CL_ALU;
  if (hw < 0x5000) return CL_LD;                                        /* LDR literal */
  if (hw < 0x6000) return ((hw >> 9) & 7) < 3 ? CL_ST : CL_LD;          /* register offset */
  if (hw < 0xA000) return (hw & 0x0800) ? CL_LD : CL_ST;                /* immediate, SP-relative */
  if (hw < 0xB000) return CL_ALU;                                       /* ADR, ADD SP */
  if (hw < 0xC000) {
    if ((hw & 0xFE00) == 0xB400) { *words = tc_popcount(hw & 0x1FF); return CL_STM; }      /* PUSH */
    if ((hw & 0xFE00) == 0xBC00) { *words = tc_popcount(hw & 0x1FF); return (hw & 0x100) ? CL_LDM_PC : CL_LDM; }
    if ((hw & 0xF500) == 0xB100) return CL_BCOND;                       /* CBZ, CBNZ */
    if ((hw & 0xFE00) == 0xBE00) return CL_OTHER;                       /* BKPT, IT, hints */
    return CL_ALU;                                                      /* extend, REV, ADD/SUB SP, CPS */
  }
  if (hw < 0xD000) { *words = tc_popcount(hw & 0xFF); return (hw & 0x0800) ? CL_LDM : CL_STM; }
  if (hw < 0xE000) return ((hw >> 8) & 0xF) >= 0xE ? CL_OTHER : CL_BCOND;   /* UDF, SVC; B<c> */
  return CL_BR;                                                         /* B */
}

static int tc_class_vfp(uint16_t hw1, uint16_t hw2)
{
  unsigned opc = (hw1 >> 4) & 0xB;                  /* bits 7, 5, 4 (D masked) */
  if (hw2 & 0x10) return CL_FP;                     /* VMOV core <-> S, VMRS, VMSR */
  if (opc == 0 || opc == 1 || opc == 9 || opc == 10) return CL_FP_MAC;      /* VMLA/VMLS, VNMLA, VFNMA, VFMA */
  if (opc == 8) return CL_FP_DIV;                                           /* VDIV */
  if (opc == 0xB && (hw1 & 0xF) == 1 && (hw2 & 0xC0) == 0xC0) return CL_FP_DIV;   /* VSQRT */
  return CL_FP;
}

static int tc_class_coproc(uint16_t hw1, uint16_t hw2, unsigned *words)
{
  int vfp = (hw2 & 0x0E00) == 0x0A00;
  if ((hw1 & 0xEE00) == 0xEC00) {                   /* coprocessor load/store, 64-bit transfers */
    if (!vfp) return (hw2 & 0x0E00) == 0x0E00 ? CL_MVE_LDST : CL_OTHER;
    if ((hw1 & 0xFFE0) == 0xEC40) return CL_FP;     /* VMOV two core registers */
    if ((hw1 & 0xFF20) == 0xED00) *words = (hw2 & 0x100) ? 2 : 1;         /* VLDR, VSTR */
    else *words = hw2 & 0xFF;                       /* VLDM, VSTM, VPUSH, VPOP: imm8 words */
    return CL_FP_LDST;
  }
  if ((hw1 & 0xFF00) == 0xEE00 && vfp) return tc_class_vfp(hw1, hw2);
  return CL_MVE;                                    /* the rest of the coprocessor space: Helium */
}

static int tc_class_dp_reg(uint16_t hw1, uint16_t hw2)
{
  if ((hw2 & 0xF000) != 0xF000) return CL_OTHER;
  if (hw1 & 0x80) {
    unsigned op = hw1 & 0xFFF0;
    return (op == 0xFA90 || op == 0xFAB0) ? CL_ALU : CL_DSP;   /* REV*, CLZ; parallel add/sub, QADD, SEL */
  }
  if (hw2 & 0x80) {                                            /* extend (and add) */
    unsigned op = (hw1 >> 4) & 7;
    return (op == 2 || op == 3) ? CL_DSP : CL_ALU;             /* SXT(A)B16, UXT(A)B16 */
  }
  return CL_ALU;                                               /* shift by register */
}

static int tc_class_mul(uint16_t hw1, uint16_t hw2)
{
  unsigned op1 = (hw1 >> 4) & 7, op2 = (hw2 >> 4) & 0xF;
  if ((hw1 & 0xFF80) == 0xFB00) {                              /* 32-bit multiplies, MAC, DSP MAC */
    if (op1) return CL_DSP;
    return (hw2 >> 12) == 0xF ? CL_MUL : CL_MAC;
  }
  if (op1 == 1 || op1 == 3) return CL_DIV;                     /* SDIV, UDIV */
  if ((op1 == 0 || op1 == 2) && op2 == 0) return CL_MULL;      /* SMULL, UMULL */
  if ((op1 == 4 || op1 == 6) && op2 == 0) return CL_MACL;      /* SMLAL, UMLAL */
  return CL_DSP;                                               /* SMLALxy, SMLALD, SMLSLD, UMAAL */
}

static int tc_class32(uint16_t hw1, uint16_t hw2, unsigned *words)
{
  if ((hw1 & 0xEC00) == 0xEC00) return tc_class_coproc(hw1, hw2, words);
  if ((hw1 & 0xFE40) == 0xE800) {                              /* LDM, STM */
    *words = tc_popcount(hw2);
    if (!(hw1 & 0x10)) return CL_STM;
    return (hw2 & 0x8000) ? CL_LDM_PC : CL_LDM;
  }
  if ((hw1 & 0xFE40) == 0xE840) {                              /* LDRD/STRD, exclusives, TBB/TBH */
    if ((hw1 & 0xFFF0) == 0xE8D0 && (hw2 & 0xFFE0) == 0xF000) return CL_BR;
    if (!(hw1 & 0x0120)) return (hw1 & 0x10) ? CL_LD : CL_ST;
    *words = 2;
    return (hw1 & 0x10) ? CL_LDM : CL_STM;
  }
  if ((hw1 & 0xFE00) == 0xEA00) return CL_ALU;                 /* data processing, shifted register */
  if ((hw1 & 0xF800) == 0xF000 && (hw2 & 0x8000)) {            /* branches, misc control */
    if ((hw2 & 0xD001) == 0xC001) return CL_LOB;               /* LE, LETP, WLS, DLS (Armv8.1-M) */
    if ((hw2 & 0x5000) != 0) return (hw2 & 0x1000) ? CL_BR : CL_OTHER;    /* BL, B.W */
    return ((hw1 >> 6) & 0xF) >= 0xE ? CL_OTHER : CL_BCOND;   /* MSR/MRS/barriers; B<c>.W */
  }
  if ((hw1 & 0xF800) == 0xF000) {                              /* data processing, immediate */
    unsigned sat = hw1 & 0xFB50;
    return (sat == 0xF300 || sat == 0xF380) ? CL_DSP : CL_ALU; /* SSAT, USAT (16) */
  }
  if ((hw1 & 0xFE00) == 0xF800) {                              /* load/store single */
    if (!(hw1 & 0x10)) return CL_ST;
    if ((hw2 >> 12) == 0xF) return ((hw1 >> 5) & 3) == 2 ? CL_BR : CL_OTHER;   /* LDR PC; PLD, PLI */
    return CL_LD;
  }
  if ((hw1 & 0xFF00) == 0xFA00) return tc_class_dp_reg(hw1, hw2);
  if ((hw1 & 0xFF00) == 0xFB00) return tc_class_mul(hw1, hw2);
  return CL_OTHER;
}

/* The class of the instruction whose first halfword is hw1 (hw2: the second one of a 32-bit
 * instruction, else ignored); *words gets the words an LDM/STM/PUSH/POP/LDRD/VLDM moves. */
static inline int tc_classify(uint16_t hw1, uint16_t hw2, unsigned *words)
{
  *words = 0;
  return hw1 >= 0xE800 ? tc_class32(hw1, hw2, words) : tc_class16(hw1, words);
}
#endif
