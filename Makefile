# tinyfuse: `make run` (the demo, end to end), `make check` (the fast tier: gcc only, a few minutes) and
# `make test` (the whole test suite).
# Both set up what they need on a fresh Debian/Ubuntu machine: python3-venv and gcc (run), plus the cross
# toolchains + qemu (Cortex-M, RISC-V) through apt when missing (sudo when not root), then a .venv
# with the package and its test extra. `make bench`: instructions, flash and RAM per model and target,
# instructions/MAC beside TFLM+CMSIS-NN and X-CUBE-AI, the fusion ablation with measured traffic.
# `make conformance`: the ONNX node tests per op; `make fuzz`: thousands of random graphs vs onnxruntime;
# `make fuzz-parsers`: 10,000 mutated .onnx and .tflite each must compile or give one clear error;
# `make fuzz-tflm`: thousands of random int8 (byte-identical) and float32 TFLite models against TFLite Micro,
# per kernel variant (TFLM_FUZZ_VARIANT=ref|arm_dsp|arm_mve|arm_fpu, or under qemu: TFLM_FUZZ_QEMU=cortex-m4).

PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO    := build/demo
PYTEST_ARGS ?=

.PHONY: setup setup-host run check test sanitize bench conformance fuzz fuzz-tflm fuzz-parsers clean

$(VPY):
	@$(PY) -m venv $(VENV) 2>/dev/null || { \
	  echo "python3 -m venv failed: installing python3-venv with apt"; rm -rf $(VENV); \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq python3-venv && $(PY) -m venv $(VENV); }

$(STAMP): pyproject.toml | $(VPY)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test]'
	@touch $@

setup-host: $(STAMP)
	@command -v gcc >/dev/null || { echo "gcc missing: installing it with apt"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq gcc libc6-dev; }

setup: setup-host
	@command -v clang >/dev/null || { echo "clang missing (the -Wconversion tests build with it): installing it with apt"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang; }
	@{ command -v qemu-system-arm && command -v qemu-system-riscv32 && command -v cmake \
	  && [ -f "$$(arm-none-eabi-gcc -print-file-name=nano.specs)" ] \
	  && [ -f "$$(riscv64-unknown-elf-gcc -print-file-name=picolibc.specs)" ]; } >/dev/null 2>&1 || { \
	  echo "cross toolchains or qemu missing: installing them with apt"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm \
	    gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc cmake; }

run: setup-host
	$(VPY) examples/build_models.py $(DEMO)
	@echo "== fused (default pipeline) =="
	$(VENV)/bin/tinyfuse run $(DEMO)/dscnn_kws.onnx
	@echo "== without fuse_ops =="
	$(VENV)/bin/tinyfuse run $(DEMO)/dscnn_kws.onnx --disable-pass fuse_ops
	@echo "== int8 (quantize_static QDQ, per-channel): every kernel vs real arithmetic, and the fixed-point reference =="
	$(VENV)/bin/tinyfuse run $(DEMO)/dscnn_kws_int8.onnx
	$(VENV)/bin/tinyfuse compile $(DEMO)/dscnn_kws_int8.onnx -o $(DEMO)/c_int8 --report

# the fast tier a newcomer runs first: only gcc needed (no cross toolchains, no qemu), a few minutes
check: setup-host
	$(VPY) -m pytest -q -m "not needs_qemu and not slow" $(PYTEST_ARGS)

test: setup
	$(VPY) -m pytest -q $(PYTEST_ARGS)

# only the sanitizer and guard tests (also part of `make test`): the real models and one model per op
# family under gcc ASan+UBSan with guard regions and gcc/clang -Wconversion, the SIMD family models on qemu
sanitize: setup
	$(VPY) -m pytest -q tests/c/test_sanitizers.py tests/c/test_sanitize_families.py \
	  tests/target/test_sanitize_families_targets.py tests/unit/test_simd_host.py $(PYTEST_ARGS)

bench: setup
	$(VPY) benchmarks/models_host.py
	$(VPY) benchmarks/targets.py $(BENCH_ARGS)
	$(VPY) benchmarks/int8_targets.py
	$(VPY) benchmarks/kernels18.py
	$(VPY) benchmarks/memory.py
	$(VPY) benchmarks/io_buffers.py
	$(VPY) benchmarks/requant_saturation.py
	$(VPY) benchmarks/real_oracle.py
	$(VPY) benchmarks/realtime.py
	$(VPY) benchmarks/tune.py --fresh $(TUNE_ARGS)
	$(VPY) benchmarks/compare_published.py
	$(VPY) benchmarks/fusion_ablation.py

# ONNX backend node tests (mcu preset, node + pytorch-converted) end to end: pass/fail per op, total;
# fails on a case outside tests/conformance/expected_failures.txt or an expected failure that passes.
# CONFORMANCE_ARGS="--preset all --json build/conformance_all.json": the whole suite (every op, dtype and
# _expanded body; node, pytorch-converted, pytorch-operator, simple): pass / clear error / fail per op
conformance: setup
	$(VPY) -m tests.conformance.runner $(CONFORMANCE_ARGS)

# differential fuzzing: FUZZ_COUNT random graphs (float and int8 QDQ) vs onnxruntime and the numpy
# reference; failures are minimised and logged to build/fuzz/failures.jsonl. FUZZ_TARGET=cortex-m4
# (arm_dsp, arm_fpu) or cortex-m55 (arm_mve) compiles for that target and builds its SIMD kernels on the
# host through runtime_c/include/tinyfuse/simd_host.h (the portable stand-ins of the intrinsics)
FUZZ_COUNT  ?= 3000
FUZZ_SEED   ?= 1000
FUZZ_TARGET ?= host
fuzz: setup
	$(VPY) -m tests.fuzz.generator --count $(FUZZ_COUNT) --seed $(FUZZ_SEED) --target $(FUZZ_TARGET) $(FUZZ_ARGS)

# TFLM twins (tests/fuzz/tflm_twin.py): TFLM_FUZZ_COUNT random int8 one-op (and chain) TFLite models and
# float32 conv/depthwise/FC/chain models, compiled → built → run and compared with TFLite Micro (int8 byte
# for byte, float within the rounding bound of tests/fuzz/twin_draw_float.py).
#   TFLM_FUZZ_VARIANT=ref      every op, compiled for the host (portable kernels)
#   TFLM_FUZZ_VARIANT=arm_dsp  the SIMD draws (width/height-1 images, channels 1-67, 1xK/Kx1 kernels,
#                              residual epilogues, FC rows, conv>dw>conv chains, extreme scales) compiled
#                              for cortex-m4; arm_mve: cortex-m55; arm_fpu: the float draws, cortex-m4;
#                              built on the host through simd_host.h, 24 models per program
#   TFLM_FUZZ_QEMU=cortex-m4   compiled for that target (cortex-m55, ...) and run under qemu (about 1 s a model)
# prints op | models | exact | tflm wraps | tflm refused | tf refused | failures | used <variant> | seconds and a
# coverage table per shape class; failures (seed, op, variants, parameters) are logged to
# build/fuzz/tflm_twin_failures.jsonl and make the target fail. benchmarks/fuzz_variants.py reruns the
# recorded campaigns (benchmarks/data/fuzz_variants.md)
TFLM_FUZZ_COUNT   ?= 2000
TFLM_FUZZ_SEED    ?= 0
TFLM_FUZZ_VARIANT ?= ref
TFLM_FUZZ_QEMU    ?=
fuzz-tflm: $(if $(TFLM_FUZZ_QEMU),setup,setup-host)
	$(VPY) -m tests.fuzz.tflm_twin --count $(TFLM_FUZZ_COUNT) --seed $(TFLM_FUZZ_SEED) --variant $(TFLM_FUZZ_VARIANT) \
	  $(if $(TFLM_FUZZ_QEMU),--qemu $(TFLM_FUZZ_QEMU)) $(TFLM_FUZZ_ARGS)

# parser fuzzing (tests/fuzz/parsers.py): PARSER_FUZZ_COUNT hypothesis-drawn mutants of .onnx and of .tflite
# through compile_model and PARSER_FUZZ_CLI of each through `python -m tinyfuse compile`; one summary line
# per format (tried, clear error, compiled, other); fails when any outcome is "other" (crash, hang > 30 s,
# multi-line error, partial output)
PARSER_FUZZ_COUNT ?= 10000
PARSER_FUZZ_CLI   ?= 150
PARSER_FUZZ_SEED  ?= 0
fuzz-parsers: setup-host
	$(VPY) -m tests.fuzz.parsers --count $(PARSER_FUZZ_COUNT) --cli $(PARSER_FUZZ_CLI) --seed $(PARSER_FUZZ_SEED) $(PARSER_FUZZ_ARGS)

clean:
	rm -rf build .pytest_cache
