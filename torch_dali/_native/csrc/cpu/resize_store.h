/* cpu_resize.c's stores of its float results into uint8, int16 or uint16, rounded where DALI 2.4's
 * CPU resize rounds each value: half to even in its vector stores, half away from zero in the
 * values it stores one by one (functional/resize.py's to_output and vector_cols). Included by
 * cpu_resize.c after its axis_t, T_* types and to_u8 / to_u8_at. */
#ifndef TD_RESIZE_STORE_H
#define TD_RESIZE_STORE_H

/* float results (rows of w pixels of ch values) into uint8 where a memory row interleaves
 * `row_ch` of the ch values (functional.resize's row_channels: the rest are other frames or
 * planes): value c of pixel x sits at x * row_ch + c % row_ch of a row of w * row_ch; no row rule
 * (half to even throughout) when row_ch does not divide ch. */
static void to_u8_rows(const float* v, int64_t h, int64_t w, int ch, int row_ch, uint8_t* out) {
  const int rule = row_ch > 0 && ch % row_ch == 0;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int c = 0; c < ch; ++c) {
        const int64_t at = (y * w + x) * ch + c;
        out[at] = rule ? to_u8_at(v[at], x * row_ch + c % row_ch, w * row_ch) : to_u8(v[at]);
      }
}

/* resize.py's vector_cols: vec[i] = 1 for the output columns DALI rounds in vector stores (half
 * to even) when its last pass runs along the rows. It computes up to four runs of columns (taps
 * past the start of the pass's input (`width` pixels from `shift`), past both ends, inside, past
 * its end; the first and last swap for a backwards read) `lanes` at a time from each run's
 * start, and the rest of each run one by one (half away from zero). */
static void vector_cols(const axis_t* a, int64_t shift, int64_t width, int lanes, uint8_t* vec) {
  const float o = a->origin - (float)shift;
  const float scale = a->span / (float)a->n_out;
  const float start = o + (((0.5f * scale) - 0.5f) - a->anchor);
  const int n = a->n_out;
#define FIRST(i) ((int64_t)ceilf((float)(i) * scale + start))
  const int back = n > 1 && FIRST(n - 1) < FIRST(0);
  int lo = 0, hi = n; /* past the leading run; the end of the inner one */
  while (lo < n && (back ? FIRST(lo) + a->taps > width : FIRST(lo) < 0)) ++lo;
  while (hi > 0 && (back ? FIRST(hi - 1) < 0 : FIRST(hi - 1) + a->taps > width)) --hi;
#undef FIRST
  const int cut = lo < hi ? lo : hi;
  const int m2 = cut > lo ? cut : lo, m3 = m2 > hi ? m2 : hi;
  const int runs[5] = {0, cut, m2, m3, n};
  memset(vec, 0, (size_t)n);
  for (int r = 0; r < 4; ++r)
    memset(vec + runs[r], 1, (size_t)((runs[r + 1] - runs[r]) / lanes * lanes));
}

/* float results (rows of w pixels of ch values) into uint8: half to even in the columns `vec`
 * marks, half away from zero elsewhere (vector_cols) */
static void to_u8_cols(const float* v, int64_t h, int64_t w, int ch, const uint8_t* vec, uint8_t* out) {
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int c = 0; c < ch; ++c) {
        const int64_t at = (y * w + x) * ch + c;
        out[at] = vec[x] ? to_u8(v[at]) : to_u8_at(v[at], 1, 1);
      }
}

/* one float result into int16 / uint16 as DALI rounds it: in a vector store (`vec`) half to even,
 * int16's [-0.5, 0) becoming -1 there (measured on DALI 2.4); stored one by one, half away from
 * zero; saturated */
static float round_16(float v, int vec, int type) {
  const float lo = type == T_I16 ? -32768.0f : 0.0f, hi = type == T_I16 ? 32767.0f : 65535.0f;
  float r = rintf(v);
  if (vec && type == T_I16 && r == 0.0f && v < 0.0f) r = -1.0f;
  if (!vec && fabsf(v - truncf(v)) == 0.5f) r = truncf(v) + (v < 0.0f ? -1.0f : 1.0f);
  return r < lo ? lo : (r > hi ? hi : (r == r ? r : 0.0f));
}

/* float results (rows of w pixels of ch values) into int16 / uint16: after a last pass along the
 * rows the columns `vec` marks are vector-rounded (vector_cols); else each memory row of w *
 * row_ch values (to_u8_rows) is, but for its last row % 8 (no row rule: all of them) */
static void to_16(const float* v, int64_t h, int64_t w, int ch, int row_ch, const uint8_t* vec, int type,
                  void* out) {
  const int rule = !vec && row_ch > 0 && ch % row_ch == 0;
  const int64_t row = w * row_ch, tail = rule ? row - row % 8 : 0;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int c = 0; c < ch; ++c) {
        const int64_t at = (y * w + x) * ch + c;
        const float r = round_16(v[at], vec ? vec[x] : (!rule || x * row_ch + c % row_ch < tail), type);
        if (type == T_I16)
          ((int16_t*)out)[at] = (int16_t)r;
        else
          ((uint16_t*)out)[at] = (uint16_t)r;
      }
}

#endif
