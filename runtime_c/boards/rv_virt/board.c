/* C side of the RV32 'virt' start-up: exit and trap reporting through semihosting. */
#include <stdint.h>
#include "tinyfuse/semihost.h"

void tf_exit(int code);
void tf_trap_report(uint32_t mcause);

void tf_exit(int code) { tf_sh_exit(code); }

void tf_trap_report(uint32_t mcause)
{
  tf_sh_puts("FAULT: mcause ");
  tf_sh_putu(mcause);
  tf_sh_puts("\n");
  tf_sh_exit(0x7f);
}
