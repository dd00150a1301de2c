/* audio_resample's windowed-sinc resampling on the CPU, bit-identical to the torch spec
 * torch_dali.ops.audio_resample.resample (which stays the specification and the fallback).
 *
 * The spec computes each output as torch does: a float32 position per output (block start in
 * float64, then the float32 step added once per output), each of the 2 * lobes + 3 taps' weight
 * read from the sinc table with linear interpolation (every float op in float32, in the spec's
 * order; built with -ffp-contract=off so nothing is fused), the products sample * weight (masked
 * taps weigh 0 and still multiply their clamped sample, so NaN/inf and the sign of zero carry as
 * in torch), then `.sum(1)` over the taps. torch sums float32 in float32 with a fixed blocked
 * order that depends on the shape and on the width of its SIMD vectors (`width` floats); `sum_taps`
 * reproduces that order for the (taps, channels) layout the spec reduces. The caller picks
 * `width` by checking this kernel against the spec once (ops/fast/cpu_audio.py), so a torch whose
 * order differs only loses the fast path.
 *
 * Speed: 8 outputs run together, one per vector lane, so every step, the sum's included, is the
 * same lane-wise float op the spec does per output. The file is compiled twice (it includes
 * itself): a baseline variant and, on x86-64, an AVX2 one (hardware gathers), picked at run time.
 * The table and its steps are stored as pairs, so one 64-bit gather reads both.
 */
#ifndef AR_VARIANT
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AR_HAVE_AVX2 1
#endif
#pragma GCC diagnostic ignored "-Wpsabi"

#define BLOCK 256 /* outputs whose positions are accumulated from one float64 start */
#define LANES 8   /* outputs computed together, one per vector lane */
#define MAX_WIDTH 64

typedef float vf __attribute__((vector_size(4 * LANES)));
typedef int32_t vi __attribute__((vector_size(4 * LANES)));

struct job {
    const float *x;
    const float *pairs;  /* (table[i], table[i + 1] - table[i]) at 2 i */
    const float *phased; /* the pair of i = r + 32 q at 2 (r * cols + q + pad) */
    const float *pa, *pb; /* the same pairs' halves, each contiguous along q */
    int64_t n, c, taps, lobes, cols, pad; /* pad: phase-table columns before q = 0 */
    float scale, center, top;
    int exact_table; /* the spec's table: 32 points per unit, centred (products' exact lanes) */
    int width, small;
};

static int64_t ceil_log2(int64_t x) {
    if (x <= 2)
        return 1;
    int64_t r = 0;
    for (uint64_t v = (uint64_t)(x - 1); v; v >>= 1)
        r++;
    return r;
}

#define AR_VARIANT 1
#define V(name) name##_base
#define TARGET
#include "audio_resample.c"
#undef V
#undef TARGET
#ifdef AR_HAVE_AVX2
#define AR_AVX2 1
#define V(name) name##_avx2
#define TARGET __attribute__((target("avx2")))
#include "audio_resample.c"
#endif

/* x: (n, c) float32; out: (n_out, c). ratio: input samples per output. table: the sinc table
 * (table_len floats, a zero at each end), read at d * scale + center. width: torch's vector width
 * for float sums. Returns 0, or -1 on bad arguments or no memory. */
static int resample(const float *x, int64_t n, int64_t c, float *out, int64_t n_out, double ratio,
                    const float *table, int64_t table_len, float scale, float center, int lobes, int width,
                    int portable) {
    if (n <= 0 || c <= 0 || n_out < 0 || lobes < 1 || lobes > 64 || table_len < 3 || width < 4 ||
        width > MAX_WIDTH || !(ratio > 0.0) || !(ratio < 1e15)) /* positions stay within int64 */
        return -1;
    /* the phase tables reach `taps` columns past each end: a masked tap's read stays inside */
    const int64_t taps = 2 * (int64_t)lobes + 3, pad = taps, cols = (table_len + 31) / 32 + 2 * taps + 8;
    vf *prod = aligned_alloc(sizeof(vf), sizeof(vf) * (size_t)(taps * c + c));
    float *pairs = malloc(sizeof(float) * 2 * (size_t)(table_len + 64 * cols));
    if (!prod || !pairs) {
        free(prod);
        free(pairs);
        return -1;
    }
    for (int64_t i = 0; i < table_len; ++i) {
        pairs[2 * i] = table[i];
        pairs[2 * i + 1] = i + 1 < table_len ? table[i + 1] - table[i] : 0.0f; /* as the spec subtracts */
    }
    float *phased = pairs + 2 * table_len, *pa = phased + 64 * cols, *pb = pa + 32 * cols;
    for (int64_t r = 0; r < 32; ++r)
        for (int64_t q = -pad; q < cols - pad; ++q) {
            const int64_t i = r + 32 * q, at = 2 * (r * cols + q + pad);
            phased[at] = i >= 0 && i < table_len ? pairs[2 * i] : 0.0f;
            phased[at + 1] = i >= 0 && i < table_len ? pairs[2 * i + 1] : 0.0f;
            pa[at / 2] = phased[at];
            pb[at / 2] = phased[at + 1];
        }
    const int exact_table = scale == 32.0f && center == (float)(32 * lobes + 1) && table_len == 64 * (int64_t)lobes + 3;
    const struct job J = {x, pairs, phased, pa, pb, n, c, taps, lobes, cols, pad, scale, center,
                          (float)(table_len - 2), exact_table, width, (n + taps + 2) * c < ((int64_t)1 << 31)};
#ifdef AR_HAVE_AVX2
    __builtin_cpu_init(); /* idempotent; makes the check valid whenever this library was loaded */
    if (!portable && __builtin_cpu_supports("avx2"))
        run_avx2(&J, out, n_out, ratio, prod);
    else
#endif
        run_base(&J, out, n_out, ratio, prod);
    free(prod);
    free(pairs);
    return 0;
}

int td_audio_resample(const float *x, int64_t n, int64_t c, float *out, int64_t n_out, double ratio,
                      const float *table, int64_t table_len, float scale, float center, int lobes, int width) {
    return resample(x, n, c, out, n_out, ratio, table, table_len, scale, center, lobes, width, 0);
}

/* the same with the baseline variant whatever the CPU has (the tests hold both to the spec) */
int td_audio_resample_portable(const float *x, int64_t n, int64_t c, float *out, int64_t n_out, double ratio,
                               const float *table, int64_t table_len, float scale, float center, int lobes,
                               int width) {
    return resample(x, n, c, out, n_out, ratio, table, table_len, scale, center, lobes, width, 1);
}

#else /* AR_VARIANT: one compiled copy of the kernel, for TARGET */

/* Sequential sums of `rows` columns (column k at in[k * cs], row i at in[i * rs]) over `size`
 * rows, in torch's cascade: running sums restart every 2^lp rows and are folded into the next
 * level, the levels added at the end. Lanes never mix. */
TARGET static inline void V(cascade)(const vf *in, int64_t rs, int64_t cs, int64_t size, int rows, vf *ret) {
    int64_t lp = ceil_log2(size) / 4;
    if (lp < 4)
        lp = 4;
    const int64_t step = (int64_t)1 << lp, mask = step - 1;
    const vf zero = {0};
    if (size < step) { /* one level: a running sum from +0, then the (zero) upper levels added, which
                        * changes nothing: a sum from +0 is never -0 and its NaN is quiet already */
        for (int k = 0; k < rows; ++k) {
            vf a = zero;
            for (int64_t i = 0; i < size; ++i)
                a += in[i * rs + k * cs];
            ret[k] = a;
        }
        return;
    }
    vf acc[4][4];
    memset(acc, 0, sizeof acc);
    int64_t i = 0;
    while (i + step <= size) {
        for (int64_t j = 0; j < step; ++j, ++i)
            for (int k = 0; k < rows; ++k)
                acc[0][k] += in[i * rs + k * cs];
        for (int j = 1; j < 4; ++j) {
            for (int k = 0; k < rows; ++k) {
                acc[j][k] += acc[j - 1][k];
                acc[j - 1][k] = zero;
            }
            if (i & (mask << (j * lp)))
                break;
        }
    }
    for (; i < size; ++i)
        for (int k = 0; k < rows; ++k)
            acc[0][k] += in[i * rs + k * cs];
    for (int j = 1; j < 4; ++j)
        for (int k = 0; k < rows; ++k)
            acc[0][k] += acc[j][k];
    for (int k = 0; k < rows; ++k)
        ret[k] = acc[0][k];
}

/* torch's sum of one strided row: four interleaved cascades, the leftovers, then the four added */
TARGET static inline vf V(row_sum)(const vf *in, int64_t stride, int64_t size) {
    vf p[4];
    const int64_t quads = size / 4;
    V(cascade)(in, 4 * stride, stride, quads, 4, p);
    for (int64_t i = quads * 4; i < size; ++i)
        p[0] += in[i * stride];
    return ((p[0] + p[1]) + p[2]) + p[3];
}

/* out[ch] = the sum over taps of prod[t * c + ch], in torch's order for a (taps, c) reduction */
TARGET static inline void V(sum_taps)(const vf *prod, int64_t taps, int64_t c, int width, vf *out) {
    const vf zero = {0};
    if (c == 1) {
        vf f = zero;
        const int64_t vecs = taps / width, quads = vecs / 4;
        if (taps >= width) { /* `width`-lane vectors of consecutive taps: each lane's row_sum inlined
                              * (quads < 16 for lobes <= 64, width >= 4: one cascade level), added
                              * after the leftover taps */
            for (int64_t k = vecs * width; k < taps; ++k)
                f += prod[k];
            for (int l = 0; l < width; ++l) {
                vf p0 = zero, p1 = zero, p2 = zero, p3 = zero;
                const vf *q = prod + l;
                for (int64_t i = 0; i < quads; ++i, q += 4 * width) {
                    p0 += q[0];
                    p1 += q[width];
                    p2 += q[2 * width];
                    p3 += q[3 * width];
                }
                for (int64_t i = 4 * quads; i < vecs; ++i)
                    p0 += prod[l + i * width];
                f += ((p0 + p1) + p2) + p3;
            }
        } else {
            f = V(row_sum)(prod, 1, taps);
        }
        out[0] = zero + f; /* torch adds into a zero-filled output */
        return;
    }
    /* channels in groups of 4 (of 4 vectors when c >= width) sum their taps in one cascade each,
     * the rest as row sums */
    const int64_t group = c >= width ? 4 * (int64_t)width : 4;
    const int64_t grouped = c / group * group;
    for (int64_t ch = 0; ch < c; ++ch) {
        vf s;
        if (ch < grouped)
            V(cascade)(prod + ch, c, 0, taps, 1, &s);
        else
            s = V(row_sum)(prod + ch, c, taps);
        out[ch] = zero + s;
    }
}

TARGET static inline vf V(gather)(const float *b, vi i) {
#ifdef AR_AVX2
    return (vf)_mm256_i32gather_ps(b, (__m256i)i, 4);
#else
    vf r;
    for (int k = 0; k < LANES; ++k)
        r[k] = b[i[k]];
    return r;
#endif
}

/* (pairs[2 i], pairs[2 i + 1]) for each lane's i */
TARGET static inline void V(gather2)(const float *pairs, vi i, vf *a, vf *b) {
#ifdef AR_AVX2
    const __m256i iv = (__m256i)i;
    const __m256 lo = _mm256_castpd_ps(_mm256_i32gather_pd((const double *)pairs, _mm256_castsi256_si128(iv), 8));
    const __m256 hi = _mm256_castpd_ps(_mm256_i32gather_pd((const double *)pairs, _mm256_extracti128_si256(iv, 1), 8));
    /* lo = a0 b0 a1 b1 | a2 b2 a3 b3, hi = a4 b4 a5 b5 | a6 b6 a7 b7 */
    const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    *a = (vf)_mm256_permutevar8x32_ps(_mm256_shuffle_ps(lo, hi, 0x88), order);
    *b = (vf)_mm256_permutevar8x32_ps(_mm256_shuffle_ps(lo, hi, 0xdd), order);
#else
    for (int k = 0; k < LANES; ++k) {
        (*a)[k] = pairs[2 * (int64_t)i[k]];
        (*b)[k] = pairs[2 * (int64_t)i[k] + 1];
    }
#endif
}

/* The products of LANES outputs (positions p, block base), any sizes: int64 indices. */
TARGET static void V(products_any)(const struct job *J, const float *p, int64_t base, vf *prod) {
    for (int k = 0; k < LANES; ++k) {
        const int64_t fl = (int64_t)p[k]; /* p >= 0: truncation is floor */
        const int64_t lo = (p[k] > (float)fl ? fl + 1 : fl) - J->lobes, hi = fl + J->lobes;
        const int64_t first = fl - J->lobes - 1;
        for (int64_t t = 0; t < J->taps; ++t) {
            const int64_t rel = first + t, a = base + rel;
            float fi = ((float)rel - p[k]) * J->scale;
            fi = fi + J->center;
            fi = fi < 0.0f ? 0.0f : (fi > J->top ? J->top : fi);
            const int32_t i = (int32_t)fi; /* fi >= 0 */
            const float di = fi - (float)i;
            float w = J->pairs[2 * i] + di * J->pairs[2 * i + 1];
            w = (rel >= lo && rel <= hi && a >= 0 && a < J->n) ? w : 0.0f;
            const int64_t ai = a < 0 ? 0 : (a >= J->n ? J->n - 1 : a);
            for (int64_t ch = 0; ch < J->c; ++ch)
                prod[t * J->c + ch][k] = J->x[ai * J->c + ch] * w;
        }
    }
}

TARGET static inline vi V(imin)(vi a, vi b) { return (a & (a < b)) | (b & ~(a < b)); }

TARGET static inline vi V(imax)(vi a, vi b) { return (a & (a > b)) | (b & ~(a > b)); }

TARGET static inline int V(all)(vi m) {
#ifdef AR_AVX2
    return _mm256_movemask_ps((__m256)m) == 0xff;
#else
    int r = 1;
    for (int k = 0; k < LANES; ++k)
        r &= m[k] != 0;
    return r;
#endif
}

/* x[start + off] for each lane's off (0 .. 7) */
TARGET static inline vf V(window)(const float *x, vi off) {
#ifdef AR_AVX2
    return (vf)_mm256_permutevar8x32_ps(_mm256_loadu_ps(x), (__m256i)off);
#else
    return V(gather)(x, off);
#endif
}

/* rows[k][j] -> rows[j][k] */
TARGET static inline void V(transpose)(vf *rows) {
#ifdef AR_AVX2
    __m256 t[8], u[8];
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps((__m256)rows[k], (__m256)rows[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps((__m256)rows[k], (__m256)rows[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
        u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xee);
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xee);
    }
    for (int k = 0; k < 4; ++k) {
        rows[k] = (vf)_mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
        rows[k + 4] = (vf)_mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
    }
#else
    for (int k = 0; k < LANES; ++k)
        for (int j = k + 1; j < LANES; ++j) {
            const float v = rows[k][j];
            rows[k][j] = rows[j][k];
            rows[j][k] = v;
        }
#endif
}

/* x[2 i] and x[2 i + 1] for i = 0 .. 7: a stereo frame's two channels */
TARGET static inline void V(frames2)(const float *x, vf *l, vf *r) {
#ifdef AR_AVX2
    const __m256 lo = _mm256_loadu_ps(x), hi = _mm256_loadu_ps(x + 8);
    const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    *l = (vf)_mm256_permutevar8x32_ps(_mm256_shuffle_ps(lo, hi, 0x88), order);
    *r = (vf)_mm256_permutevar8x32_ps(_mm256_shuffle_ps(lo, hi, 0xdd), order);
#else
    for (int k = 0; k < LANES; ++k) {
        (*l)[k] = x[2 * k];
        (*r)[k] = x[2 * k + 1];
    }
#endif
}

/* Mono or stereo, every lane exact (see products) and its taps, rounded up to whole vectors,
 * inside the signal: each output's weights and samples are contiguous loads along its taps, and
 * each 8 x 8 block of products is transposed into the one-output-a-lane layout (no gathers). */
TARGET static void V(products_rows)(const struct job *J, vi s0, vi F, vf di, vi tlo, vf *prod) {
    const int32_t T = (int32_t)J->taps, c = (int32_t)J->c;
    const vi iota = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int32_t t0 = 0; t0 < T; t0 += LANES) {
        vf rows[2][LANES];
        const vi t = iota + t0;
        const int edge = t0 == 0 || t0 + LANES > T - 2;
        for (int k = 0; k < LANES; ++k) {
            vf a, b;
            memcpy(&a, J->pa + F[k] + t0, sizeof a);
            memcpy(&b, J->pb + F[k] + t0, sizeof b);
            vf w = a + di[k] * b;
            if (edge) /* inside the signal taps tlo .. T - 2 are weighted */
                w = (vf)((vi)w & ((t >= tlo[k]) & (t <= T - 2)));
            if (c == 1) {
                vf xs;
                memcpy(&xs, J->x + s0[k] + t0, sizeof xs);
                rows[0][k] = xs * w;
            } else {
                vf xl, xr;
                V(frames2)(J->x + 2 * (int64_t)(s0[k] + t0), &xl, &xr);
                rows[0][k] = xl * w;
                rows[1][k] = xr * w;
            }
        }
        for (int ch = 0; ch < c; ++ch) {
            V(transpose)(rows[ch]);
            for (int j = 0; j < LANES && t0 + j < T; ++j)
                prod[(t0 + j) * c + ch] = rows[ch][j];
        }
    }
}

/* The same for positions below 2^23 and (n + taps) * c below 2^31: float and int32 lanes.
 * A lane is exact when p = m 2^(e-23) (m < 2^24, e >= 0) has lobes < 2^(e+1) and its top weighted
 * tap's (rel - p) * 32 + center = 64 lobes + 1 - 32 frac(p) < 2^(e+6): then every weighted tap's
 * rel - p (|.| <= lobes, a multiple of 2^(e-23)) is exact, and so is (rel - p) * 32 + center (a
 * multiple of 2^(e-18) in [1, 2^(e+6))): consecutive taps read the table 32 apart at one fraction,
 * and their values come from the phase tables without recomputing the index. */
TARGET static int V(products)(const struct job *J, const float *p, int64_t base, vf *prod) {
    const int64_t T = J->taps, n = J->n, c = J->c;
    if (base > ((int64_t)1 << 30))
        return 0;
    vf pv;
    memcpy(&pv, p, sizeof pv);
    const vi fl = __builtin_convertvector(pv, vi); /* p >= 0: truncation is floor */
    const vi first = fl - (int32_t)(J->lobes + 1), s0 = first + (int32_t)base;
    const vi izero = first - first, a = izero - s0, b = izero + (int32_t)(n - 1) - s0;
    if (!V(all)((s0 >= izero - (int32_t)T) & (s0 <= izero + (int32_t)n)))
        return 0; /* past the signal's ends: products_any's int64 indices */
    const vi lo = (izero + 1) - (pv > __builtin_convertvector(fl, vf)); /* 2 when p is fractional */
    const vi tlo = V(imax)(lo, V(imin)(a, izero + (int32_t)T));
    const vi thi = V(imin)(izero + (int32_t)(T - 2), V(imax)(b, izero - 1));
    const int interior = V(all)((s0 >= izero) & (b >= izero + (int32_t)(T - 1)));
    const vi e = ((vi)pv >> 23) - 127, e0 = V(imax)(e, izero), L = izero + (int32_t)J->lobes;
    const vf frac32 = (pv - __builtin_convertvector(fl, vf)) * 32.0f;
    const vi top_ok = __builtin_convertvector(L * 64 + 1 - (1 << V(imin)(e0 + 6, izero + 30)), vf) < frac32;
    const int exact = J->exact_table && V(all)((e >= izero) & ((1 << V(imin)(e0 + 1, izero + 30)) > L) & top_ok &
                                              (tlo <= thi));
    vf relf = __builtin_convertvector(first, vf), di = {0};
    vi F = izero;
    if (exact) { /* the first weighted tap's index and fraction, as the spec computes them */
        vf fi = (__builtin_convertvector(first + tlo, vf) - pv) * J->scale;
        fi = fi + J->center;
        const vi i = __builtin_convertvector(fi, vi);
        di = fi - __builtin_convertvector(i, vf);
        F = (i & 31) * (int32_t)J->cols + (i >> 5) + (int32_t)J->pad - tlo;
    }
    const int32_t whole = (int32_t)((T + LANES - 1) / LANES * LANES);
    if (exact && c <= 2 && V(all)((s0 >= izero) & (s0 <= izero + (int32_t)(n - whole)))) {
        V(products_rows)(J, s0, F, di, tlo, prod);
        return 1;
    }
    /* one load and a permute read the 8 lanes' samples when they lie within 8 of each other */
    const int windowed = c == 1 && interior && s0[LANES - 1] - s0[0] < 8 && s0[0] + T + 7 <= n;
    const vi off = s0 - s0[0];
    const vf zero = {0}, top = zero + J->top, scale = zero + J->scale, center = zero + J->center;
    const vi last = izero + (int32_t)(n - 1);
    for (int32_t t = 0; t < T; ++t, relf += 1.0f) {
        vf w;
        if (exact) {
            vf a, b;
            V(gather2)(J->phased, F + t, &a, &b);
            w = a + di * b;
        } else {
            vf fi = (relf - pv) * scale;
            fi = fi + center;
            const vi below = fi < zero, above = fi > top;
            fi = (vf)((((vi)fi & ~below) & ~above) | ((vi)top & above));
            const vi i = __builtin_convertvector(fi, vi);
            const vf d = fi - __builtin_convertvector(i, vf);
            vf a, b;
            V(gather2)(J->pairs, i, &a, &b);
            w = a + d * b;
        }
        if (!interior || t < 2 || t > T - 3) /* inside the signal taps 2 .. T - 3 are all weighted */
            w = (vf)((vi)w & ((t >= tlo) & (t <= thi)));
        vi ix = s0 + t;
        if (!interior) {
            ix = ix & ~(ix < izero);
            const vi past = ix > last;
            ix = (ix & ~past) | (last & past);
        }
        if (windowed) {
            prod[t] = V(window)(J->x + s0[0] + t, off) * w;
        } else if (c == 1) {
            prod[t] = V(gather)(J->x, ix) * w;
        } else {
            ix = ix * (int32_t)c;
            for (int64_t ch = 0; ch < c; ++ch)
                prod[t * c + ch] = V(gather)(J->x + ch, ix) * w;
        }
    }
    return 1;
}

TARGET static void V(run)(const struct job *J, float *out, int64_t n_out, double ratio, vf *prod) {
    const int64_t c = J->c;
    vf *sums = prod + J->taps * c;
    const float step = (float)ratio;
    for (int64_t blk = 0; blk < n_out; blk += BLOCK) {
        const double start = (double)blk * ratio, based = floor(start);
        const int64_t end = blk + BLOCK < n_out ? blk + BLOCK : n_out;
        float p = (float)(start - based), pl[LANES];
        for (int64_t o = blk; o < end; o += LANES) {
            const int live = end - o < LANES ? (int)(end - o) : LANES;
            for (int k = 0; k < LANES; ++k) { /* spare lanes repeat the last output */
                pl[k] = p;
                if (k + 1 < live)
                    p = p + step;
            }
            p = p + step;
            if (!(J->small && pl[LANES - 1] < 8388608.0f && V(products)(J, pl, (int64_t)based, prod)))
                V(products_any)(J, pl, (int64_t)based, prod);
            V(sum_taps)(prod, J->taps, c, J->width, sums);
            for (int k = 0; k < live; ++k)
                for (int64_t ch = 0; ch < c; ++ch)
                    out[(o + k) * c + ch] = sums[ch][k];
        }
    }
}

#undef AR_AVX2
#endif /* AR_VARIANT */
