/* box_encoder for a padded batch: the matching of anchors to ground-truth boxes with the same float32
 * IoUs as functional/detection.py's iou_planar (build with -ffp-contract=off: each product rounds
 * before its add) and the same choices as match_anchors there: each real box claims its best
 * anchor (the last of equal IoUs) with IoU 2, padding rows count -1, and each anchor takes the
 * last box of the highest IoU. Works sample by sample on a k x M block (k real boxes), where the
 * spec's tensors are B x N x M; the loops run across anchors (planar anchor coordinates) so that
 * they vectorise. Returns 0, -1 for arguments it does not take, or 1 for a coordinate that is not
 * finite or an IoU that is NaN (the spec's NaN rules then apply: the caller runs it). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* one box against every anchor: r[m] = IoU, as iou_planar computes it (0 where the intersection
 * is empty; the division is done for every lane and its result dropped there) */
static void iou_row(const float* box, const float* ax0, const float* ay0, const float* ax1, const float* ay1,
                    const float* vb, int64_t M, float* r) {
  const float x0 = box[0], y0 = box[1], x1 = box[2], y1 = box[3];
  const float va = (x1 - x0) * (y1 - y0);
  for (int64_t m = 0; m < M; ++m) {
    const float ex = (x1 < ax1[m] ? x1 : ax1[m]) - (x0 > ax0[m] ? x0 : ax0[m]);
    const float ey = (y1 < ay1[m] ? y1 : ay1[m]) - (y0 > ay0[m] ? y0 : ay0[m]);
    const float inter = ex * ey;
    const float q = inter / (va + vb[m] - inter);
    r[m] = (ex <= 0 || ey <= 0) ? 0.0f : q;
  }
}

int td_box_match(const float* boxes, const int64_t* counts, int64_t B, int64_t N, const float* anchors, int64_t M,
                 int64_t* best_box, float* best_iou) {
  if (B < 0 || N < 1 || M < 1) return -1;
  float* buf = (float*)malloc((size_t)M * 6 * sizeof(float));
  if (!buf) return -1;
  float *ax0 = buf, *ay0 = buf + M, *ax1 = buf + 2 * M, *ay1 = buf + 3 * M, *vb = buf + 4 * M, *r = buf + 5 * M;
  for (int64_t m = 0; m < 4 * M; ++m)
    if (!isfinite(anchors[m])) {
      free(buf);
      return 1;
    }
  for (int64_t m = 0; m < M; ++m) {
    ax0[m] = anchors[4 * m];
    ay0[m] = anchors[4 * m + 1];
    ax1[m] = anchors[4 * m + 2];
    ay1[m] = anchors[4 * m + 3];
    vb[m] = (ax1[m] - ax0[m]) * (ay1[m] - ay0[m]);
  }
  int status = 0;
  for (int64_t s = 0; s < B && !status; ++s) {
    const int64_t k = counts[s];
    const float* bx = boxes + s * N * 4;
    int64_t* arg = best_box + s * M;
    float* best = best_iou + s * M;
    if (k < 0 || k > N) {
      status = -1;
      break;
    }
    for (int64_t v = 0; v < 4 * k; ++v)
      if (!isfinite(bx[v])) status = 1;
    if (status) break;
    for (int64_t m = 0; m < M; ++m) {
      best[m] = -1.0f; /* a padding row's value; box 0 then takes every anchor (v >= -1) */
      arg[m] = 0;
    }
    for (int64_t n = 0; n < k; ++n) {
      iou_row(bx + n * 4, ax0, ay0, ax1, ay1, vb, M, r);
      int64_t own = 0;
      for (int64_t m = 0; m < M; ++m) {
        if (r[m] != r[m]) status = 1;
        if (r[m] >= r[own]) own = m;
      }
      if (status) break;
      r[own] = 2.0f; /* the box's own anchor */
      for (int64_t m = 0; m < M; ++m) {
        const int take = n == 0 || r[m] >= best[m];
        best[m] = take ? r[m] : best[m];
        arg[m] = take ? n : arg[m];
      }
    }
    if (N > k) /* padding rows (-1) after the real ones: the last of them wins a tie at -1 */
      for (int64_t m = 0; m < M; ++m) {
        const int take = k == 0 || best[m] <= -1.0f;
        best[m] = take ? -1.0f : best[m];
        arg[m] = take ? N - 1 : arg[m];
      }
  }
  free(buf);
  return status;
}

/* td_box_match, then each anchor's encoding as box_encoder_batch computes it in float32: matched
 * anchors (IoU > criteria) get their box's centre and extent, or with `offset` the normalized
 * offsets ((b - a) / a_ext - mean) / std and (log(b_ext / a_ext) - mean) / std, the log taken in
 * double and rounded (as the spec's); the others the anchor's centre and extent, or 0 with
 * `offset`. enc is (B, M, 4); matched (B, M) bytes. params: scale, means[4], stds[4]. */
int td_box_encode(const float* boxes, const int64_t* counts, int64_t B, int64_t N, const float* anchors, int64_t M,
                  float criteria, int offset, const float* params, int64_t* best_box, float* best_iou, float* enc,
                  uint8_t* matched) {
  const int r = td_box_match(boxes, counts, B, N, anchors, M, best_box, best_iou);
  if (r) return r;
  const float s = params[0], *mean = params + 1, *sd = params + 5;
  for (int64_t m = 0; m < M; ++m) {
    const float* a = anchors + 4 * m;
    const float ac[2] = {(a[0] + a[2]) * 0.5f, (a[1] + a[3]) * 0.5f}, ae[2] = {a[2] - a[0], a[3] - a[1]};
    const float acs[2] = {ac[0] * s, ac[1] * s}, aes[2] = {ae[0] * s, ae[1] * s};
    for (int64_t b = 0; b < B; ++b) {
      const int64_t i = b * M + m;
      float* e = enc + 4 * i;
      matched[i] = best_iou[i] > criteria;
      if (!matched[i]) {
        e[0] = offset ? 0.0f : ac[0];
        e[1] = offset ? 0.0f : ac[1];
        e[2] = offset ? 0.0f : ae[0];
        e[3] = offset ? 0.0f : ae[1];
        continue;
      }
      const float* x = boxes + (b * N + best_box[i]) * 4;
      const float bc[2] = {(x[0] + x[2]) * 0.5f, (x[1] + x[3]) * 0.5f}, be[2] = {x[2] - x[0], x[3] - x[1]};
      if (!offset) {
        e[0] = bc[0], e[1] = bc[1], e[2] = be[0], e[3] = be[1];
        continue;
      }
      for (int d = 0; d < 2; ++d) {
        e[d] = ((bc[d] * s - acs[d]) / aes[d] - mean[d]) / sd[d];
        e[2 + d] = ((float)log((double)((be[d] * s) / aes[d])) - mean[2 + d]) / sd[2 + d];
      }
    }
  }
  return 0;
}
