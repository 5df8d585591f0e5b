"""Speech samples for the MLPerf Tiny keyword-spotting models (DS-CNN, ../shared/models/*/kws_ref_model*):
the ten keywords and other words spoken by espeak-ng (Debian package ``espeak-ng``) in several voices,
speeds and pitches, plus background noise for "silence", turned into the model's input features.

The features follow the MLPerf Tiny KWS front end (benchmark/training/keyword_spotting, TensorFlow's
tf.signal): 1 s at 16 kHz, the clip scaled to a peak of 1, 30 ms periodic Hann frames every 20 ms
(49 frames), |FFT| with 512 points, 40 HTK-mel triangular bands from 20 to 4000 Hz (the construction
of tf.signal.linear_to_mel_weight_matrix: band edges equally spaced in mel, weights from the mel
distance, the DC bin left out), log(mel + 1e-6), DCT-II scaled by sqrt(2 / 40) (tf.signal's
mfccs_from_log_mel_spectrograms), the first 10 coefficients: float32 [N, 49, 10, 1]. A silent clip gives
c0 = sqrt(2/40) * 40 * log(1e-6) = -123.6, the low end of the int8 model's input range [-123.4, 25.7].

    python examples/kws_samples.py OUT.npz [--per-word 6] [--seed 0]
      -> OUT.npz: input_1 (float32 [N, 1, 49, 10, 1]), labels (int64 [N]); and OUT.labels.txt

Labels (TFDS speech_commands order, the model's 12 outputs): down, go, left, no, off, on, right, stop,
up, yes, _silence_, _unknown_. Synthetic speech is not the Speech Commands recordings: these are
calibration and smoke-test samples with the features' real structure (time-correlated frames, the
per-coefficient ranges), not an accuracy benchmark.
"""
from __future__ import annotations

import argparse
import io
import subprocess
import wave
from pathlib import Path

import numpy as np

LABELS = ["down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes", "_silence_", "_unknown_"]
UNKNOWN = ["bed", "bird", "cat", "dog", "happy", "house", "marvin", "sheila", "tree", "wow", "seven", "zero"]
VOICES = ["en-us", "en", "en-gb-scotland", "en+f3", "en-us+m3", "en+f2", "en-029", "en-gb-x-rp"]
RATE, FRAME, STEP, FFT, MELS, COEFFS = 16000, 480, 320, 512, 40, 10


def speak(word: str, voice: str, speed: int, pitch: int) -> np.ndarray:
    """espeak-ng's rendering of ``word`` resampled to 16 kHz float (its native rate is 22050 Hz)."""
    wav = subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout", word],
                         check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(wav)) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float64) / 32768
        rate = w.getframerate()
    t = np.arange(int(len(x) * RATE / rate)) / RATE
    return np.interp(t, np.arange(len(x)) / rate, x)


def clip(x: np.ndarray, rng, noise: float) -> np.ndarray:
    """One second: ``x`` at a random offset (trimmed if longer), plus white noise of RMS ``noise``."""
    out = np.zeros(RATE)
    x = x[:RATE]
    start = rng.integers(0, RATE - len(x) + 1)
    out[start:start + len(x)] = x
    return out + noise * rng.standard_normal(RATE)


def mel_matrix() -> np.ndarray:
    """[FFT/2 + 1, MELS] triangular HTK-mel weights (the DC row zero), as tf.signal builds them."""
    def mel(f):
        return 1127.0 * np.log1p(np.asarray(f) / 700.0)
    bins = mel(np.linspace(0, RATE / 2, FFT // 2 + 1)[1:])[:, None]
    edges = np.linspace(mel(20.0), mel(4000.0), MELS + 2)
    lo, center, hi = edges[:-2], edges[1:-1], edges[2:]
    w = np.maximum(0, np.minimum((bins - lo) / (center - lo), (hi - bins) / (hi - center)))
    return np.vstack([np.zeros((1, MELS)), w])


def mfcc(audio: np.ndarray) -> np.ndarray:
    """[49, 10] features of one second of audio (module doc)."""
    audio = audio / max(np.max(np.abs(audio)), 1e-12)
    n = 1 + (len(audio) - FRAME) // STEP
    frames = np.stack([audio[i * STEP:i * STEP + FRAME] for i in range(n)])
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(FRAME) / FRAME)          # periodic
    spectrum = np.abs(np.fft.rfft(frames * hann, FFT))
    log_mel = np.log(spectrum @ mel_matrix() + 1e-6)
    k, j = np.arange(COEFFS)[:, None], np.arange(MELS)[None, :]
    dct = 2 * np.cos(np.pi * k * (2 * j + 1) / (2 * MELS)) / np.sqrt(2 * MELS)
    return log_mel @ dct.T


def samples(per_word: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(features [N, 1, 49, 10, 1] float32, labels [N]): ``per_word`` renderings of each keyword and
    of unknown words, and ``per_word`` noise-only clips."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for label, word in [(i, w) for i, w in enumerate(LABELS[:10])] + [(11, w) for w in UNKNOWN[:per_word]]:
        for k in range(per_word if label < 10 else 1):
            voice = VOICES[(k + label) % len(VOICES)]
            audio = speak(word, voice, int(rng.integers(120, 200)), int(rng.integers(25, 75)))
            xs.append(mfcc(clip(audio, rng, float(rng.uniform(0.0005, 0.01)))))
            ys.append(label)
    for _ in range(per_word):
        xs.append(mfcc(clip(np.zeros(0), rng, float(rng.uniform(0.001, 0.05)))))
        ys.append(10)
    return np.stack(xs).astype(np.float32)[:, None, :, :, None], np.array(ys, np.int64)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the .npz to write (input_1, labels) and <out>.labels.txt")
    ap.add_argument("--per-word", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    x, y = samples(args.per_word, args.seed)
    out = Path(args.out)
    np.savez(out, input_1=x, labels=y)
    np.save(out.with_suffix(".y.npy"), y)
    out.with_suffix(".labels.txt").write_text("\n".join(LABELS) + "\n")
    print(f"wrote {out} ({len(x)} samples, features in [{x.min():.1f}, {x.max():.1f}]), "
          f"{out.with_suffix('.y.npy')}, {out.with_suffix('.labels.txt')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
