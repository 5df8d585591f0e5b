/* A camera feeding a tinyfuse model by rows (compiled with `tinyfuse compile MODEL -o DIR --name model
 * --input-rows N`): the application never holds the input frame. camera_rows() stands for the sensor's
 * DMA: it writes the next few rows (ROWS_AT_A_TIME <= MODEL_ROWS_PER_CALL) into a small line buffer,
 * model_push_rows() copies them into the ring inside the arena and computes what they complete, and the
 * push of the frame's last row runs the rest of the network and returns 1 with the output written.
 *
 * Built with -DWHOLE_FRAME against the same model compiled without --input-rows, the same program fills
 * a whole frame and calls model_invoke() (the arena then holds the frame): both print the same output.
 * The pixels are a fixed pattern (int8 input); the output bytes print as hex, one line "output: ..".
 * Host: gcc main.c DIR/model.c DIR/model_weights.c -IDIR; Cortex-M: semihosting (tinyfuse/semihost.h). */
#include <stdint.h>
#include <string.h>
#include "model.h"
#if defined(__arm__) || defined(__riscv)
#include "tinyfuse/semihost.h"
#define PUTS(s) tf_sh_puts(s)
#else
#include <stdio.h>
#define PUTS(s) fputs((s), stdout)
#endif

#ifndef ROWS_AT_A_TIME
#define ROWS_AT_A_TIME 3
#endif

static uint8_t arena[MODEL_ARENA_SIZE] __attribute__((aligned(16)));
static int8_t output[MODEL_OUTPUT0_BYTES] __attribute__((aligned(16)));

/* The pixel pattern of the whole frame at byte i (row-major NHWC). */
static int8_t pixel(uint32_t i)
{
  return (int8_t)((int32_t)((i * 37u) % 251u) - 125);
}

#ifdef WHOLE_FRAME
static int8_t frame[MODEL_INPUT0_BYTES] __attribute__((aligned(16)));

static int infer(void)
{
  uint32_t i;
  for (i = 0; i < MODEL_INPUT0_BYTES; ++i)
    frame[i] = pixel(i);
  return model_invoke(frame, output, arena);
}
#else
static int8_t lines[ROWS_AT_A_TIME * MODEL_ROW_BYTES] __attribute__((aligned(16)));

/* The sensor: rows r0 .. r0 + n - 1 of the frame into `lines`. */
static void camera_rows(uint32_t r0, uint32_t n)
{
  uint32_t i;
  for (i = 0; i < n * MODEL_ROW_BYTES; ++i)
    lines[i] = pixel(r0 * MODEL_ROW_BYTES + i);
}

static int infer(void)
{
  uint32_t r = 0;
  int status = 0;
  while (status == 0) {
    const uint32_t n = MODEL_INPUT_ROWS - r < ROWS_AT_A_TIME ? MODEL_INPUT_ROWS - r : ROWS_AT_A_TIME;
    camera_rows(r, n);
    status = model_push_rows(arena, lines, (int)n, output);   /* 0: more rows, 1: output ready */
    r += n;
  }
  return status == 1 && r == MODEL_INPUT_ROWS ? 0 : 1;
}
#endif

int main(void)
{
  static const char hex[] = "0123456789abcdef";
  char b[4] = { 0, 0, ' ', 0 };
  uint32_t i;
  if (infer() != 0) {
    PUTS("error\n");
    return 1;
  }
  PUTS("output: ");
  for (i = 0; i < MODEL_OUTPUT0_BYTES; ++i) {
    b[0] = hex[(uint8_t)output[i] >> 4];
    b[1] = hex[(uint8_t)output[i] & 15u];
    PUTS(b);
  }
  PUTS("\n");
  return 0;
}
