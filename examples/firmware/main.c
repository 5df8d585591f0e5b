/* A bare-metal application embedding a tinyfuse model: any float model with one input and one
 * output, compiled with `tinyfuse compile MODEL.onnx -o DIR --name model ...` (see Makefile).
 *
 * The model needs no heap and no runtime: one arena the application owns (placed by
 * MODEL_ARENA_ATTR in the section given by --arena-section), constants in flash (--weights-section),
 * and model_invoke() (the same call when the model is compiled with --io-buffers caller: then the
 * arena holds only the activations and the model reads `input` and writes `output` directly). This
 * example fills the input with a fixed pattern, runs one inference and prints the best class and every score (as IEEE-754 bits, exact) through semihosting. */
#include <stdint.h>
#include <string.h>
#include "model.h"
#include "tinyfuse/semihost.h"

#define N_IN (MODEL_INPUT_SIZE / sizeof(float))
#define N_OUT (MODEL_OUTPUT_SIZE / sizeof(float))

static uint8_t arena[MODEL_ARENA_SIZE] MODEL_ARENA_ATTR;
/* aligned like the arena: with --io-buffers caller the model reads and writes these buffers directly */
static float input[N_IN] __attribute__((aligned(16)));
static float output[N_OUT] __attribute__((aligned(16)));

static void put_hex(uint32_t v)
{
  char b[9];
  for (int i = 7; i >= 0; --i, v >>= 4) b[i] = "0123456789abcdef"[v & 15u];
  b[8] = 0;
  tf_sh_puts(b);
}

int main(void)
{
  uint32_t best = 0, bits;
  for (uint32_t i = 0; i < N_IN; ++i) input[i] = (float)((i * 37u) % 11u) / 5.0f - 1.0f;
  if (model_invoke(input, output, arena) != 0) return 1;
  for (uint32_t i = 1; i < N_OUT; ++i)
    if (output[i] > output[best]) best = i;
  tf_sh_puts("model " MODEL_MODEL_HASH ": class ");
  tf_sh_putu(best);
  tf_sh_puts("\nscores:");
  for (uint32_t i = 0; i < N_OUT; ++i) {
    memcpy(&bits, &output[i], 4);
    tf_sh_puts(" ");
    put_hex(bits);
  }
  tf_sh_puts("\n");
  return 0;
}
