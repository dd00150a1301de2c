/* Sums in DALI 2.4's CPU order, bit for bit functional/reduce_order.py's plan (which says what the
 * order is): element (r, j) of x is x[rows[r] + cols[j]], r the reduced position (row-major over
 * the merged reduced axes `sizes`, n = prod(sizes)), j one of the m kept positions, so a strided
 * tensor is read in place; out gets the m sums. Each tree node is evaluated for all m columns at
 * once: the adds are the plan's own, a row-vector at a time. Build with -ffp-contract=off (no
 * fused operations; adds only, in the plan's order). */
#include <stdint.h>
#include <stdlib.h>

#define RUN 32 /* DALI's kTreeReduceThreshold */
#define MAX_DEPTH 160

typedef struct {
  int nd;
  int64_t sizes[16], strides[16], m;
  const int64_t *rows, *cols;
} plan_t;

#define DEFINE_SUM(T, NAME)                                                                                  \
  static void NAME##_run(const T* x, const plan_t* p, int64_t off, int64_t stride, int64_t n, T* dst,       \
                         T* scratch) {                                                                       \
    const int64_t m = p->m;                                                                                  \
    if (n > RUN) {                                                                                           \
      const int64_t h = n >> 1;                                                                              \
      NAME##_run(x, p, off, stride, h, dst, scratch);                                                        \
      NAME##_run(x, p, off + h * stride, stride, n - h, scratch, scratch + m);                               \
      for (int64_t j = 0; j < m; ++j) dst[j] = dst[j] + scratch[j];                                          \
      return;                                                                                                \
    }                                                                                                        \
    const int64_t* cols = p->cols;                                                                           \
    const T* row = x + p->rows[off];                                                                         \
    for (int64_t j = 0; j < m; ++j) dst[j] = row[cols[j]];                                                   \
    for (int64_t i = 1; i < n; ++i) {                                                                        \
      row = x + p->rows[off + i * stride];                                                                   \
      for (int64_t j = 0; j < m; ++j) dst[j] = dst[j] + row[cols[j]];                                        \
    }                                                                                                        \
  }                                                                                                          \
  static void NAME##_axis(const T* x, const plan_t* p, int axis, int64_t extent, int64_t off, T* dst,       \
                          T* scratch) {                                                                      \
    const int64_t m = p->m, stride = p->strides[axis];                                                       \
    if (axis == p->nd - 1) {                                                                                 \
      NAME##_run(x, p, off, stride, p->sizes[axis], dst, scratch);                                           \
      return;                                                                                                \
    }                                                                                                        \
    if (extent >= 2 && extent * stride > RUN) {                                                              \
      const int64_t mid = extent / 2;                                                                        \
      NAME##_axis(x, p, axis, mid, off, dst, scratch);                                                       \
      NAME##_axis(x, p, axis, extent - mid, off + mid * stride, scratch, scratch + m);                       \
      for (int64_t j = 0; j < m; ++j) dst[j] = dst[j] + scratch[j];                                          \
      return;                                                                                                \
    }                                                                                                        \
    NAME##_axis(x, p, axis + 1, p->sizes[axis + 1], off, dst, scratch);                                      \
    for (int64_t i = 1; i < extent; ++i) {                                                                   \
      NAME##_axis(x, p, axis + 1, p->sizes[axis + 1], off + i * stride, scratch, scratch + m);               \
      for (int64_t j = 0; j < m; ++j) dst[j] = dst[j] + scratch[j];                                          \
    }                                                                                                        \
  }                                                                                                          \
  int NAME(const T* x, const int64_t* rows, const int64_t* cols, int64_t m, int nd, const int64_t* sizes,   \
           T* out) {                                                                                         \
    plan_t p;                                                                                                \
    if (nd < 1 || nd > 16 || m < 1) return -1;                                                               \
    p.nd = nd;                                                                                               \
    p.m = m;                                                                                                 \
    p.rows = rows;                                                                                           \
    p.cols = cols;                                                                                           \
    int64_t s = 1;                                                                                           \
    for (int k = nd - 1; k >= 0; --k) {                                                                      \
      if (sizes[k] < 1) return -1;                                                                           \
      p.sizes[k] = sizes[k];                                                                                 \
      p.strides[k] = s;                                                                                      \
      s *= sizes[k];                                                                                         \
    }                                                                                                        \
    T* scratch = (T*)malloc((size_t)m * MAX_DEPTH * sizeof(T));                                              \
    if (!scratch) return -1;                                                                                 \
    NAME##_axis(x, &p, 0, p.sizes[0], 0, out, scratch);                                                      \
    free(scratch);                                                                                           \
    return 0;                                                                                                \
  }

DEFINE_SUM(float, td_dali_sum_f32)
DEFINE_SUM(double, td_dali_sum_f64)
