/* bb_flip and bbox_paste over a batch of float32 boxes (4 values each), bit-identical to
 * torch_dali.functional.detection's bb_flip_batch and bbox_paste_batch: the same float32
 * operations in the same order (built without fused multiply-add).
 * Each sample s is `counts[s]` contiguous boxes at address `ptrs[s]`; `out` receives all the
 * batch's boxes, sample after sample. */
#include <stdint.h>

/* flags: flip x, flip y per sample; ltrb: boxes are [l, t, r, b], else [x, y, w, h]
 * (read as lo, hi = lo + wh and written back as lo, hi - lo). */
int td_bb_flip(int64_t n, const int64_t *ptrs, const int64_t *counts, const uint8_t *flags, int ltrb,
               float *out) {
    for (int64_t s = 0; s < n; s++) {
        const float *b = (const float *)(intptr_t)ptrs[s];
        const int flip[2] = {flags[2 * s] != 0, flags[2 * s + 1] != 0};
        for (int64_t i = 0; i < counts[s]; i++, b += 4, out += 4) {
            for (int d = 0; d < 2; d++) {
                const float lo = b[d], hi = ltrb ? b[2 + d] : b[d] + b[2 + d];
                const float nlo = flip[d] ? 1.0f - hi : lo, nhi = flip[d] ? 1.0f - lo : hi;
                out[d] = nlo;
                out[2 + d] = ltrb ? nhi : nhi - nlo;
            }
        }
    }
    return 0;
}

/* rows: per sample [scale, offset of each of the 4 values]; each value becomes v * scale + offset. */
int td_bbox_paste(int64_t n, const int64_t *ptrs, const int64_t *counts, const float *rows, float *out) {
    for (int64_t s = 0; s < n; s++) {
        const float *b = (const float *)(intptr_t)ptrs[s];
        const float *r = rows + 5 * s;
        for (int64_t i = 0; i < 4 * counts[s]; i++) {
            const float v = b[i] * r[0];
            out[i] = v + r[1 + (i & 3)];
        }
        out += 4 * counts[s];
    }
    return 0;
}
