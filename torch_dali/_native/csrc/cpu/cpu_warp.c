/* The warp family's resampling on the CPU (rotate, warp_affine, warp_perspective, remap): images
 * (N, H, W, C) read at float32 source points (N, M, 2) given as (x, y), bit-identical to
 * torch_dali.functional.warp.sample, which stays the specification.
 *
 * Why the arithmetic looks the way it does: every float operation is the one the torch spec does,
 * in its order and in float32 (built with -ffp-contract=off, so no fused multiply-add), and the
 * float -> int64 conversion of a coordinate mirrors x86's (NaN and out-of-range give INT64_MIN),
 * which is what torch's CPU kernels give. Indices never leave the image whatever the points are
 * (remap's maps are data), so any float input is memory-safe.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { T_U8 = 0, T_I16 = 1, T_U16 = 2, T_I32 = 3, T_F32 = 4 };
enum { I_NN = 0, I_LINEAR = 1, I_CUBIC = 2 };
enum { B_CONSTANT = 0, B_REPLICATE = 1, B_REFLECT = 2, B_REFLECT_101 = 3, B_WRAP = 4 };

static inline int64_t to_i64(float f) {
    if (!(f >= -9223372036854775808.0f && f < 9223372036854775808.0f))
        return INT64_MIN;
    return (int64_t)f;
}

/* floorf without a libm call (x86-64's baseline has no rounding instruction): exact, -0.0 kept */
static inline float ffloor(float x) {
    if (!(fabsf(x) < 8388608.0f))
        return floorf(x); /* already integral, infinite or NaN */
    float t = (float)(int32_t)x;
    return t > x ? t - 1.0f : copysignf(t, x);
}

static inline int64_t add_wrap(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

static inline int64_t py_mod(int64_t a, int64_t b) { /* b > 0; Python's sign convention */
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

/* functional.warp.border_index for one coordinate (size >= 1). Coordinates inside, or within one
 * image of an edge (nearly every point of a warp), take no division. */
static inline int64_t border_index(int64_t i, int64_t size, int border) {
    if ((uint64_t)i < (uint64_t)size)
        return i;
    int64_t m;
    switch (border) {
    case B_REFLECT:
        if (i < 0 && i >= -size)
            return -1 - i;
        if (i >= size && i < 2 * size)
            return 2 * size - 1 - i;
        m = py_mod(i, 2 * size);
        return m < size ? m : 2 * size - 1 - m;
    case B_REFLECT_101:
        if (size == 1)
            return 0;
        if (i < 0 && i > -size)
            return -i;
        if (i >= size && i <= 2 * size - 2)
            return 2 * size - 2 - i;
        m = py_mod(i, 2 * size - 2);
        return m < size ? m : 2 * size - 2 - m;
    case B_WRAP:
        if (i < 0 && i >= -size)
            return i + size;
        if (i >= size && i < 2 * size)
            return i - size;
        return py_mod(i, size);
    default: /* constant (the caller masks) and replicate clamp */
        return i < 0 ? 0 : size - 1;
    }
}

typedef struct {
    const void *src;
    int type;
    int64_t h, w, c;
    int border;
    const double *fill; /* per channel, in the input's type; NULL: clamp */
} image_t;

/* Where the tap at integer (x, y) reads inside an image (its element offset), or -1 for the fill. */
static inline __attribute__((always_inline)) int64_t tap_index(const image_t *im, int64_t x, int64_t y) {
    if (im->fill && im->border == B_CONSTANT && (x < 0 || x >= im->w || y < 0 || y >= im->h))
        return -1;
    return (border_index(y, im->h, im->border) * im->w + border_index(x, im->w, im->border)) * im->c;
}

static inline __attribute__((always_inline)) float at(const image_t *im, int64_t k);

static inline __attribute__((always_inline)) float load_f(const image_t *im, int64_t base, int64_t idx, int64_t ch) {
    return idx < 0 ? (float)im->fill[ch] : at(im, base + idx + ch);
}

/* functional.crop.convert from float32: round half away from zero (in float32, as torch's
 * sign(x) * floor(|x| + 0.5)), saturate; int32 in float64. Inside the 16-bit ranges |x| + 0.5 is
 * below 2**23, so truncating it is its floor; outside, the clamp decides alone. */
static inline __attribute__((always_inline)) void store(void *dst, int type, int64_t k, float v) {
    if (v != v && type != T_F32) { /* NaN: what torch's CPU conversion gives */
        if (type == T_I32)
            ((int32_t *)dst)[k] = INT32_MIN;
        else if (type == T_I16)
            ((int16_t *)dst)[k] = 0;
        else if (type == T_U16)
            ((uint16_t *)dst)[k] = 0;
        else
            ((uint8_t *)dst)[k] = 0;
        return;
    }
    switch (type) {
    case T_U8:
        ((uint8_t *)dst)[k] = v <= 0.0f ? 0 : (v >= 255.0f ? 255 : (uint8_t)(int32_t)(v + 0.5f));
        return;
    case T_I16:
        ((int16_t *)dst)[k] = v <= -32768.0f ? -32768 : (v >= 32767.0f ? 32767
                              : (int16_t)(v < 0.0f ? -(int32_t)(-v + 0.5f) : (int32_t)(v + 0.5f)));
        return;
    case T_U16:
        ((uint16_t *)dst)[k] = v <= 0.0f ? 0 : (v >= 65535.0f ? 65535 : (uint16_t)(int32_t)(v + 0.5f));
        return;
    case T_I32: {
        double d = copysign(floor(fabs((double)v) + 0.5), (double)v);
        ((int32_t *)dst)[k] = d <= -2147483648.0 ? INT32_MIN : (d >= 2147483647.0 ? INT32_MAX : (int32_t)d);
        return;
    }
    default:
        ((float *)dst)[k] = v;
    }
}

/* One element of the image at k, as float32 (no border: the caller knows k is inside) */
static inline __attribute__((always_inline)) float at(const image_t *im, int64_t k) {
    switch (im->type) {
    case T_U8: return (float)((const uint8_t *)im->src)[k];
    case T_I16: return (float)((const int16_t *)im->src)[k];
    case T_U16: return (float)((const uint16_t *)im->src)[k];
    case T_I32: return (float)((const int32_t *)im->src)[k];
    default: return ((const float *)im->src)[k];
    }
}

/* nn: the tap itself, in the input's type, or converted to float32 output */
static inline void copy_tap(const image_t *im, int64_t base, int64_t idx, int64_t ch, void *dst, int out_type,
                            int64_t k) {
    if (out_type == T_F32) {
        ((float *)dst)[k] = load_f(im, base, idx, ch);
        return;
    }
    if (idx < 0) { /* the fill is already a value of the input (= output) type */
        double f = im->fill[ch];
        switch (out_type) {
        case T_U8: ((uint8_t *)dst)[k] = (uint8_t)f; return;
        case T_I16: ((int16_t *)dst)[k] = (int16_t)f; return;
        case T_U16: ((uint16_t *)dst)[k] = (uint16_t)f; return;
        default: ((int32_t *)dst)[k] = (int32_t)f; return;
        }
    }
    int64_t s = base + idx + ch;
    switch (out_type) {
    case T_U8: ((uint8_t *)dst)[k] = ((const uint8_t *)im->src)[s]; return;
    case T_I16: ((int16_t *)dst)[k] = ((const int16_t *)im->src)[s]; return;
    case T_U16: ((uint16_t *)dst)[k] = ((const uint16_t *)im->src)[s]; return;
    default: ((int32_t *)dst)[k] = ((const int32_t *)im->src)[s]; return;
    }
}

static inline void cubic_weights(float t, float *w) {
    const float a = -0.75f;
    float x0 = t + 1.0f;
    w[0] = ((a * x0 - 5.0f * a) * x0 + 8.0f * a) * x0 - 4.0f * a;
    w[1] = (((a + 2.0f) * t - (a + 3.0f)) * t) * t + 1.0f;
    float u = 1.0f - t;
    w[2] = (((a + 2.0f) * u - (a + 3.0f)) * u) * u + 1.0f;
    w[3] = ((1.0f - w[0]) - w[1]) - w[2];
}

/* One output pixel (its c channels at dst element o) from the point (px, py) of the image at
 * element `base`: functional.warp._sample_points for one point. */
static inline __attribute__((always_inline)) void sample_point(const image_t *im, int64_t base, float px, float py, int interp, int centred,
                                int weight_bits, float step, void *dst, int out_type, int64_t o) {
    const int64_t c = im->c;
    if (interp == I_NN) {
        int64_t ix = to_i64(ffloor(centred ? px + 0.5f : px));
        int64_t iy = to_i64(ffloor(centred ? py + 0.5f : py));
        int64_t idx = tap_index(im, ix, iy);
        for (int64_t ch = 0; ch < c; ch++)
            copy_tap(im, base, idx, ch, dst, out_type, o + ch);
        return;
    }
    if (!centred) {
        px = px - 0.5f;
        py = py - 0.5f;
    }
    float fx = ffloor(px), fy = ffloor(py);
    float qx = px - fx, qy = py - fy;
    int64_t x0 = to_i64(fx), y0 = to_i64(fy);
    if (interp == I_LINEAR) {
        if (weight_bits >= 0) {
            qx = nearbyintf(qx * step) / step;
            qy = nearbyintf(qy * step) / step;
        }
        float rx = 1.0f - qx;
        if (x0 >= 0 && y0 >= 0 && x0 < im->w - 1 && y0 < im->h - 1) { /* all four inside: no border */
            int64_t k00 = base + (y0 * im->w + x0) * c, k01 = k00 + im->w * c;
            for (int64_t ch = 0; ch < c; ch++) {
                float a = at(im, k00 + ch) * rx + at(im, k00 + c + ch) * qx;
                float b = at(im, k01 + ch) * rx + at(im, k01 + c + ch) * qx;
                store(dst, out_type, o + ch, a + (b - a) * qy);
            }
            return;
        }
        int64_t x1 = add_wrap(x0, 1), y1 = add_wrap(y0, 1);
        int64_t i00 = tap_index(im, x0, y0), i10 = tap_index(im, x1, y0);
        int64_t i01 = tap_index(im, x0, y1), i11 = tap_index(im, x1, y1);
        for (int64_t ch = 0; ch < c; ch++) {
            float a = load_f(im, base, i00, ch) * rx + load_f(im, base, i10, ch) * qx;
            float b = load_f(im, base, i01, ch) * rx + load_f(im, base, i11, ch) * qx;
            store(dst, out_type, o + ch, a + (b - a) * qy);
        }
        return;
    }
    float wx[4], wy[4];
    cubic_weights(qx, wx);
    cubic_weights(qy, wy);
    if (x0 >= 1 && y0 >= 1 && x0 < im->w - 2 && y0 < im->h - 2) { /* all 16 inside: no border */
        int64_t k0 = base + ((y0 - 1) * im->w + x0 - 1) * c, row = im->w * c;
        for (int64_t ch = 0; ch < c; ch++) {
            float rows[4];
            for (int r = 0; r < 4; r++) {
                int64_t k = k0 + r * row + ch;
                float acc = at(im, k) * wx[0];
                for (int t = 1; t < 4; t++)
                    acc = acc + at(im, k + t * c) * wx[t];
                rows[r] = acc;
            }
            store(dst, out_type, o + ch, ((rows[0] * wy[0] + rows[1] * wy[1]) + rows[2] * wy[2]) + rows[3] * wy[3]);
        }
        return;
    }
    int64_t idx[4][4];
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 4; k++)
            idx[r][k] = tap_index(im, add_wrap(x0, k - 1), add_wrap(y0, r - 1));
    for (int64_t ch = 0; ch < c; ch++) {
        float rows[4];
        for (int r = 0; r < 4; r++) {
            float acc = load_f(im, base, idx[r][0], ch) * wx[0];
            for (int k = 1; k < 4; k++)
                acc = acc + load_f(im, base, idx[r][k], ch) * wx[k];
            rows[r] = acc;
        }
        store(dst, out_type, o + ch, ((rows[0] * wy[0] + rows[1] * wy[1]) + rows[2] * wy[2]) + rows[3] * wy[3]);
    }
}

/* The source points of output pixels x0 .. x0 + nb - 1 of a row (p1: its y coordinate): the
 * matrix's products and sums in `_apply`'s order, a homography's division after; a loop of its own
 * so that it vectorises (divisions included) apart from the sampling's gathers. */
enum { ROW_BLOCK = 64 };
static void row_points(const float *mm, int rows, int64_t x0, int64_t nb, float p1, int centred, float *X,
                       float *Y) {
    const float b0 = mm[1] * p1, b1 = mm[4] * p1;
    for (int64_t j = 0; j < nb; j++) {
        float p0 = (float)(x0 + j) + 0.5f;
        if (centred)
            p0 = p0 - 0.5f;
        X[j] = mm[0] * p0 + b0 + mm[2];
        Y[j] = mm[3] * p0 + b1 + mm[5];
    }
    if (rows == 3) {
        const float b2 = mm[7] * p1;
        for (int64_t j = 0; j < nb; j++) {
            float p0 = (float)(x0 + j) + 0.5f;
            if (centred)
                p0 = p0 - 0.5f;
            const float Z = mm[6] * p0 + b2 + mm[8];
            X[j] = X[j] / Z;
            Y[j] = Y[j] / Z;
        }
    }
}

/* An affine row as DALI's CPU backend walks it: the row's first pixel centre mapped, then dM/dx
 * added pixel by pixel, the walk restarting every 256 pixels from a point stepped by 256 * dM/dx;
 * float32 throughout, so points on a pixel edge fall on DALI's side of it. s: the tile start
 * (x, y) and the running point (x, y), carried from block to block of a row; the first point sums
 * the translation, then x's term, then y's, as DALI's affine() does. */
enum { STEP_TILE = 256 };
static void affine_row_start(const float *mm, float p1, float *s) {
    s[0] = (mm[2] + mm[0] * 0.5f) + mm[1] * p1; /* DALI's affine(): translation first */
    s[1] = (mm[5] + mm[3] * 0.5f) + mm[4] * p1;
    s[2] = s[0];
    s[3] = s[1];
}
static void affine_row_points(const float *mm, int64_t x0, int64_t nb, float *s, float *X, float *Y) {
    for (int64_t j = 0; j < nb; j++) {
        if (x0 + j > 0 && (x0 + j) % STEP_TILE == 0) {
            s[0] = s[0] + (float)STEP_TILE * mm[0];
            s[1] = s[1] + (float)STEP_TILE * mm[3];
            s[2] = s[0];
            s[3] = s[1];
        }
        X[j] = s[2];
        Y[j] = s[3];
        s[2] = s[2] + mm[0];
        s[3] = s[3] + mm[3];
    }
}

/* The loops, instantiated per input type, interpolation and output (F: float32, else the input's
 * type): constants after inlining, so the per-tap type, filter and store switches fold away. */
#define OUT_TYPE(T, F) ((F) ? T_F32 : (T))
#define SAMPLE_LOOP(T, I, F)                                                                            \
    static void sample_##T##_##I##_##F(const image_t *im, int64_t n, const float *pts, int64_t m, int centred, \
                                       int weight_bits, float step, void *dst) {                        \
        image_t k = *im;                                                                                \
        k.type = T;                                                                                     \
        for (int64_t s = 0; s < n; s++)                                                                 \
            for (int64_t j = 0; j < m; j++)                                                             \
                sample_point(&k, s * k.h * k.w * k.c, pts[(s * m + j) * 2], pts[(s * m + j) * 2 + 1], I,    \
                             centred, weight_bits, step, dst, OUT_TYPE(T, F), (s * m + j) * k.c);       \
    }
#define MATRIX_LOOP(T, I, F)                                                                            \
    static void matrix_##T##_##I##_##F(const image_t *im, int64_t n, const float *mats, int64_t nm, int rows, \
                                       int64_t out_h, int64_t out_w, int centred, int weight_bits, float step, \
                                       void *dst) {                                                     \
        image_t k = *im;                                                                                \
        k.type = T;                                                                                     \
        for (int64_t s = 0; s < n; s++) {                                                               \
            const float *mm = mats + (nm == 1 ? 0 : s) * rows * 3;                                      \
            for (int64_t y = 0; y < out_h; y++) {                                                       \
                float p1 = (float)y + 0.5f, st[4];                                                      \
                if (centred)                                                                            \
                    p1 = p1 - 0.5f;                                                                     \
                if (rows == 2)                                                                          \
                    affine_row_start(mm, p1, st);                                                       \
                for (int64_t x0 = 0; x0 < out_w; x0 += ROW_BLOCK) {                                    \
                    const int64_t nb = out_w - x0 < ROW_BLOCK ? out_w - x0 : ROW_BLOCK;                 \
                    float X[ROW_BLOCK], Y[ROW_BLOCK];                                                   \
                    if (rows == 2)                                                                      \
                        affine_row_points(mm, x0, nb, st, X, Y);                                        \
                    else                                                                                \
                        row_points(mm, rows, x0, nb, p1, centred, X, Y);                                \
                    for (int64_t j = 0; j < nb; j++)                                                    \
                        sample_point(&k, s * k.h * k.w * k.c, X[j], Y[j], I, centred, weight_bits, step, \
                                     dst, OUT_TYPE(T, F), ((s * out_h + y) * out_w + x0 + j) * k.c);   \
                }                                                                                       \
            }                                                                                           \
        }                                                                                               \
    }
#define FOR_OUTS(X, T, I) X(T, I, 0) X(T, I, 1)
#define FOR_TYPES(X, I) FOR_OUTS(X, T_U8, I) FOR_OUTS(X, T_I16, I) FOR_OUTS(X, T_U16, I) FOR_OUTS(X, T_I32, I) \
    FOR_OUTS(X, T_F32, I)
#define INSTANTIATE(X) FOR_TYPES(X, I_NN) FOR_TYPES(X, I_LINEAR) FOR_TYPES(X, I_CUBIC)
INSTANTIATE(SAMPLE_LOOP)
INSTANTIATE(MATRIX_LOOP)

typedef void (*sample_fn)(const image_t *, int64_t, const float *, int64_t, int, int, float, void *);
typedef void (*matrix_fn)(const image_t *, int64_t, const float *, int64_t, int, int64_t, int64_t, int, int, float,
                          void *);
#define PAIR(X, T, I) {X##_##T##_##I##_0, X##_##T##_##I##_1}
#define ROW(X, I) {PAIR(X, T_U8, I), PAIR(X, T_I16, I), PAIR(X, T_U16, I), PAIR(X, T_I32, I), PAIR(X, T_F32, I)}
static const sample_fn SAMPLE[3][5][2] = {ROW(sample, I_NN), ROW(sample, I_LINEAR), ROW(sample, I_CUBIC)};
static const matrix_fn MATRIX[3][5][2] = {ROW(matrix, I_NN), ROW(matrix, I_LINEAR), ROW(matrix, I_CUBIC)};

static int bad_args(int in_type, int out_type, int64_t n, int64_t h, int64_t w, int64_t c, int interp, int border,
                    int weight_bits) {
    return in_type < T_U8 || in_type > T_F32 || (out_type != in_type && out_type != T_F32) || h < 1 || w < 1
        || c < 1 || n < 0 || interp < I_NN || interp > I_CUBIC || border < B_CONSTANT || border > B_WRAP
        || weight_bits > 30;
}

/* Samples n images (n, h, w, c) of `in_type` at points (n, m, 2) into dst (n, m, c) of `out_type`
 * (the input's type or float32). fill: c values in the input's type, or NULL; centred: pixel i is
 * at i (else its corner is); weight_bits >= 0 rounds the linear weights to 2**-bits steps.
 * Returns 0, or -1 for arguments it does not take (the caller runs the spec). */
int td_warp_sample(const void *src, int in_type, int64_t n, int64_t h, int64_t w, int64_t c, const float *pts,
                   int64_t m, int interp, int border, const double *fill, int centred, int weight_bits,
                   void *dst, int out_type) {
    if (bad_args(in_type, out_type, n, h, w, c, interp, border, weight_bits) || m < 0)
        return -1;
    image_t im = {src, in_type, h, w, c, border, fill};
    SAMPLE[interp][in_type][out_type == T_F32](&im, n, pts, m, centred, weight_bits,
                                               weight_bits >= 0 ? (float)(1 << weight_bits) : 0.0f, dst);
    return 0;
}

/* functional.warp.warp_matrix: n images warped into (n, out_h, out_w, c), output pixel (x, y)
 * reading the point its matrix maps (x + 0.5, y + 0.5) to (with `centred`, (x, y) and pixel i at
 * i). mats: nm (1 or n) row-major float32 matrices of `rows` rows and 3 columns: 2 (affine) or 3
 * (a homography: x and y divided by the third row). Products and sums in `_apply`'s order; an
 * affine row's points stepped as DALI's CPU backend steps them (`affine_row_points`). */
int td_warp_matrix(const void *src, int in_type, int64_t n, int64_t h, int64_t w, int64_t c, const float *mats,
                   int64_t nm, int rows, int64_t out_h, int64_t out_w, int interp, int border, const double *fill,
                   int centred, int weight_bits, void *dst, int out_type) {
    if (bad_args(in_type, out_type, n, h, w, c, interp, border, weight_bits) || (nm != 1 && nm != n)
        || (rows != 2 && rows != 3) || (rows == 2 && centred) || out_h < 0 || out_w < 0)
        return -1;
    image_t im = {src, in_type, h, w, c, border, fill};
    MATRIX[interp][in_type][out_type == T_F32](&im, n, mats, nm, rows, out_h, out_w, centred, weight_bits,
                                               weight_bits >= 0 ? (float)(1 << weight_bits) : 0.0f, dst);
    return 0;
}

/* functional/distort.py's sample (water, sphere, jitter): n images (n, h, w, c) of uint8 or float32
 * read at float32 points px, py of (np, oh, ow) (np 1: every image the same points) into out (n,
 * oh, ow, c) of the input's type. Nearest: the pixel at (floor(py), floor(px)) or the fill.
 * Linear: the four pixels around (px - 0.5, py - 0.5) (the fill outside), blended as the spec
 * does, top = a + (b - a) * fx, bottom likewise, top + (bottom - top) * fy, in float32, then
 * rounded half away from zero and saturated for uint8. Any point is memory-safe (NaN, infinities
 * and huge values read the fill). Returns 0, or -1 for arguments it does not take. */
int td_distort_sample(const void *src, int in_type, int64_t n, int64_t h, int64_t w, int64_t c, const float *px,
                      const float *py, int64_t np, int64_t oh, int64_t ow, int linear, double fill, void *dst) {
    if ((in_type != T_U8 && in_type != T_F32) || n < 0 || h < 1 || w < 1 || c < 1 || (np != 1 && np != n)
        || oh < 0 || ow < 0)
        return -1;
    const int64_t m = oh * ow;
    const float fillf = (float)fill;
    for (int64_t s = 0; s < n; s++) {
        const float *qx = px + (np == 1 ? 0 : s) * m, *qy = py + (np == 1 ? 0 : s) * m;
        const int64_t base = s * h * w * c;
        for (int64_t j = 0; j < m; j++) {
            const int64_t o = (s * m + j) * c;
            if (!linear) {
                const int64_t ix = to_i64(ffloor(qx[j])), iy = to_i64(ffloor(qy[j]));
                const int in = ix >= 0 && ix < w && iy >= 0 && iy < h;
                const int64_t k = in ? base + (iy * w + ix) * c : 0; /* only inside: no overflow */
                for (int64_t ch = 0; ch < c; ch++) {
                    if (in_type == T_U8)
                        ((uint8_t *)dst)[o + ch] = in ? ((const uint8_t *)src)[k + ch] : (uint8_t)fill;
                    else
                        ((float *)dst)[o + ch] = in ? ((const float *)src)[k + ch] : fillf;
                }
                continue;
            }
            const float X = qx[j] - 0.5f, Y = qy[j] - 0.5f;
            const float x0 = ffloor(X), y0 = ffloor(Y);
            const float fx = X - x0, fy = Y - y0;
            const int64_t x0i = to_i64(x0), y0i = to_i64(y0);
            const int64_t xs[2] = {x0i, add_wrap(x0i, 1)}, ys[2] = {y0i, add_wrap(y0i, 1)};
            int64_t k[4];
            for (int t = 0; t < 4; t++) {
                const int64_t xx = xs[t & 1], yy = ys[t >> 1];
                k[t] = xx >= 0 && xx < w && yy >= 0 && yy < h ? base + (yy * w + xx) * c : -1;
            }
            for (int64_t ch = 0; ch < c; ch++) {
                float v[4];
                for (int t = 0; t < 4; t++)
                    v[t] = k[t] < 0 ? fillf
                         : in_type == T_U8 ? (float)((const uint8_t *)src)[k[t] + ch] : ((const float *)src)[k[t] + ch];
                const float top = v[0] + (v[1] - v[0]) * fx;
                const float bottom = v[2] + (v[3] - v[2]) * fx;
                store(dst, in_type, o + ch, top + (bottom - top) * fy);
            }
        }
    }
    return 0;
}
