/* rng.py's SampleRNG in C, for the helpers that reproduce its draws (crop_windows.c, bbox_crop.c):
 * splitmix64's finalizer keyed by (seed, iteration, sample), a counter per draw, 53-bit uniforms.
 * build.py's hash covers this header in the sources that include it. */
#ifndef TD_SAMPLE_RNG_H
#define TD_SAMPLE_RNG_H
#include <stdint.h>

static uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

typedef struct {
  uint64_t key, n;
} rng_t;

/* the key of iteration `iteration` of an op seeded `seed`; a sample's is mix(base ^ sample) */
static uint64_t rng_base(uint64_t seed, uint64_t iteration) { return mix(mix(0x243F6A8885A308D3ULL ^ seed) ^ iteration); }

static double uniform01(rng_t* r) {
  r->n += 1;
  const uint64_t bits = mix(r->key ^ mix(r->n));
  return (double)(bits >> 11) * (1.0 / 9007199254740992.0); /* 2^-53 */
}

static double uniform(rng_t* r, double lo, double hi) { return lo + (hi - lo) * uniform01(r); }

static int64_t randint(rng_t* r, int64_t lo, int64_t hi) {
  return lo + (int64_t)(uniform01(r) * (double)(hi - lo + 1));
}
#endif
