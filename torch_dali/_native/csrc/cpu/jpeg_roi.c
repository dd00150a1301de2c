/* Region-of-interest JPEG decoding over the libjpeg(-turbo) API.
 *
 * Plain C (no Python, no torch): loaded with ctypes by torch_dali/io/jpeg_roi.py, which
 * builds it with `cc -O2 -shared -fPIC jpeg_roi.c -ljpeg`.
 *
 * tdj_decode_roi decodes only rows [y, y+h) and columns [x, x+w) of a JPEG held in memory into a
 * caller-provided uint8 buffer (h * w * C, C = 3 for RGB, 1 for gray), with the decompression
 * settings libjpeg defaults to (JDCT_ISLOW, fancy upsampling on) so the pixels equal the same
 * window of a full decode. Columns are limited with jpeg_crop_scanline, rows with
 * jpeg_skip_scanlines. The columns are widened by a margin (one iMCU) where the image allows,
 * because a crop boundary inside the image makes the fancy chroma upsampler replicate the edge
 * sample instead of using its true neighbour; the margin is decoded and dropped, so only the
 * requested pixels are copied out. (Skipped rows need no margin: jpeg_skip_scanlines keeps the
 * upsampler's context rows.)
 *
 * Errors never exit the process: an error manager longjmps back and the functions return a code
 * with libjpeg's message. Warnings (corrupt data, premature end of data, ...) are errors too: the
 * caller then falls back to its reference decoder, which decides. Truncated data is reported
 * wherever the window is (see the end of tdj_decode_roi).
 *
 * Return codes: TDJ_OK, TDJ_ERROR (corrupt / truncated data: see msg), TDJ_UNSUPPORTED (CMYK or
 * YCCK, or a component count other than 1 or 3), TDJ_BAD_ARGS (window outside the image).
 * The functions are reentrant: all state lives on the stack / in the decompressor.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>

#define TDJ_OK 0
#define TDJ_ERROR 1
#define TDJ_UNSUPPORTED 2
#define TDJ_BAD_ARGS 3

typedef struct {
  struct jpeg_error_mgr pub;
  jmp_buf jump;
  char *msg;
  int msg_len;
  int lenient; /* warnings are ignored (as libjpeg's default manager and torchvision do) */
} tdj_error_mgr;

static void tdj_set_msg(tdj_error_mgr *err, const char *text) {
  if (err->msg != NULL && err->msg_len > 0) {
    strncpy(err->msg, text, (size_t)err->msg_len - 1);
    err->msg[err->msg_len - 1] = '\0';
  }
}

static void tdj_error_exit(j_common_ptr cinfo) {
  tdj_error_mgr *err = (tdj_error_mgr *)cinfo->err;
  char buffer[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, buffer);
  tdj_set_msg(err, buffer);
  longjmp(err->jump, 1);
}

static void tdj_emit_message(j_common_ptr cinfo, int msg_level) {
  /* a warning (corrupt data, premature end of data, ...) is an error unless lenient */
  if (msg_level < 0 && !((tdj_error_mgr *)cinfo->err)->lenient) {
    tdj_error_exit(cinfo);
  }
  /* trace messages: ignored */
}

static void tdj_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void tdj_init(struct jpeg_decompress_struct *cinfo, tdj_error_mgr *err, char *msg, int msg_len) {
  cinfo->err = jpeg_std_error(&err->pub);
  err->pub.error_exit = tdj_error_exit;
  err->pub.emit_message = tdj_emit_message;
  err->pub.output_message = tdj_output_message;
  err->msg = msg;
  err->msg_len = msg_len;
  err->lenient = 0;
  if (msg != NULL && msg_len > 0) msg[0] = '\0';
}

/* Header: width, height, components as stored, libjpeg's jpeg_color_space (J_COLOR_SPACE value),
 * progressive flag (1 progressive, 0 sequential). `lenient`: warnings (e.g. extraneous bytes
 * before a marker) do not fail it, which is how decoders that ignore warnings read the header. */
int tdj_header(const unsigned char *data, size_t len, int *width, int *height, int *components,
               int *colorspace, int *progressive, char *msg, int msg_len, int lenient) {
  struct jpeg_decompress_struct cinfo;
  tdj_error_mgr err;
  memset(&cinfo, 0, sizeof(cinfo));
  tdj_init(&cinfo, &err, msg, msg_len);
  err.lenient = lenient;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return TDJ_ERROR;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, (unsigned long)len);
  jpeg_read_header(&cinfo, TRUE);
  *width = (int)cinfo.image_width;
  *height = (int)cinfo.image_height;
  *components = cinfo.num_components;
  *colorspace = (int)cinfo.jpeg_color_space;
  *progressive = jpeg_has_multiple_scans(&cinfo) ? 1 : 0;
  jpeg_destroy_decompress(&cinfo);
  return TDJ_OK;
}

/* Decodes rows [y, y+h), columns [x, x+w) into out (h rows of w*C bytes, C = gray ? 1 : 3).
 * h <= 0 or w <= 0 means the whole image (y, x ignored). fast != 0 selects libjpeg's JDCT_IFAST
 * (DALI's use_fast_idct) instead of the default JDCT_ISLOW. */
int tdj_decode_roi_dct(const unsigned char *data, size_t len, int y, int x, int h, int w, int gray,
                       unsigned char *out, size_t out_len, char *msg, int msg_len, int fast) {
  struct jpeg_decompress_struct cinfo;
  tdj_error_mgr err;
  /* volatile: read after a longjmp */
  volatile int code = TDJ_OK;
  memset(&cinfo, 0, sizeof(cinfo));
  tdj_init(&cinfo, &err, msg, msg_len);
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return code == TDJ_OK ? TDJ_ERROR : code;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, (unsigned long)len);
  jpeg_read_header(&cinfo, TRUE);

  if ((cinfo.num_components != 1 && cinfo.num_components != 3) ||
      cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    tdj_set_msg(&err, "unsupported JPEG color space (CMYK/YCCK or unusual component count)");
    jpeg_destroy_decompress(&cinfo);
    return TDJ_UNSUPPORTED;
  }
  const int W = (int)cinfo.image_width, H = (int)cinfo.image_height;
  if (h <= 0 || w <= 0) {
    y = 0; x = 0; h = H; w = W;
  }
  /* y + h > H would overflow for windows near INT_MAX (and let them through): compare differences */
  if (y < 0 || x < 0 || h > H || w > W || y > H - h || x > W - w) {
    tdj_set_msg(&err, "crop window is outside the image");
    jpeg_destroy_decompress(&cinfo);
    return TDJ_BAD_ARGS;
  }
  const int C = gray ? 1 : 3;
  if (out_len < (size_t)h * (size_t)w * (size_t)C) {
    tdj_set_msg(&err, "output buffer too small");
    jpeg_destroy_decompress(&cinfo);
    return TDJ_BAD_ARGS;
  }

  cinfo.out_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  cinfo.dct_method = fast ? JDCT_IFAST : JDCT_ISLOW;
  cinfo.do_fancy_upsampling = TRUE;
  cinfo.do_block_smoothing = TRUE; /* libjpeg's default (progressive images only) */
  cinfo.quantize_colors = FALSE;
  cinfo.scale_num = 1;
  cinfo.scale_denom = 1;

  jpeg_start_decompress(&cinfo);

  /* One iMCU of column margin on each side of the window (where the image has room). */
  const int imcu_w = cinfo.max_h_samp_factor * DCTSIZE;
  int cx0 = x - imcu_w, cx1 = x + w + imcu_w;
  if (cx0 < 0) cx0 = 0;
  if (cx1 > W) cx1 = W;
  JDIMENSION crop_x = (JDIMENSION)cx0, crop_w = (JDIMENSION)(cx1 - cx0);
  if (crop_x != 0 || crop_w != (JDIMENSION)W) {
    jpeg_crop_scanline(&cinfo, &crop_x, &crop_w); /* may widen to iMCU boundaries */
  }
  const int col0 = x - (int)crop_x; /* first wanted column within a decoded row */
  const int row_bytes = (int)cinfo.output_width * cinfo.output_components;
  if (cinfo.output_components != C || col0 < 0 || col0 + w > (int)cinfo.output_width) {
    tdj_set_msg(&err, "internal error: unexpected crop geometry");
    code = TDJ_ERROR;
    longjmp(err.jump, 1);
  }

  /* Rows: libjpeg-turbo's jpeg_skip_scanlines keeps the upsampler's context rows, so skipping
   * straight to y is exact (checked against full decodes in tests/test_jpeg_roi.py). */
  if (y > 0) {
    JDIMENSION skipped = jpeg_skip_scanlines(&cinfo, (JDIMENSION)y);
    if ((int)skipped != y) {
      tdj_set_msg(&err, "internal error: jpeg_skip_scanlines skipped too few rows");
      code = TDJ_ERROR;
      longjmp(err.jump, 1);
    }
  }

  JSAMPARRAY row = (*cinfo.mem->alloc_sarray)((j_common_ptr)&cinfo, JPOOL_IMAGE, (JDIMENSION)row_bytes, 1);
  const int direct = (col0 == 0 && (int)cinfo.output_width == w);
  while ((int)cinfo.output_scanline < y + h) {
    const int r = (int)cinfo.output_scanline;
    JSAMPROW target = row[0];
    if (direct && r >= y) target = out + (size_t)(r - y) * (size_t)w * (size_t)C;
    JSAMPROW rows[1];
    rows[0] = target;
    if (jpeg_read_scanlines(&cinfo, rows, 1) != 1) {
      tdj_set_msg(&err, "Premature end of JPEG data");
      code = TDJ_ERROR;
      longjmp(err.jump, 1);
    }
    if (r >= y && target == row[0]) {
      memcpy(out + (size_t)(r - y) * (size_t)w * (size_t)C, row[0] + (size_t)col0 * (size_t)C,
             (size_t)w * (size_t)C);
    }
  }
  /* Entropy-decode the rest so that truncated or corrupt data below the window is reported. */
  /* The rows below the window. Their pixels cannot change the window's, so data that ends with an
   * EOI marker (which entropy-coded bytes cannot contain) is not read further. Otherwise the data
   * may be truncated: entropy-decode the rest (jpeg_skip_scanlines short-circuits a skip to the
   * very end, hence the last row is read) so that a premature end is reported as for a full decode. */
  const int has_eoi = len >= 2 && data[len - 2] == 0xFF && data[len - 1] == 0xD9;
  if (has_eoi) {
    jpeg_abort_decompress(&cinfo);
  } else {
    if (cinfo.output_scanline + 1 < cinfo.output_height) {
      jpeg_skip_scanlines(&cinfo, cinfo.output_height - cinfo.output_scanline - 1);
    }
    while (cinfo.output_scanline < cinfo.output_height) {
      if (jpeg_read_scanlines(&cinfo, row, 1) != 1) {
        tdj_set_msg(&err, "Premature end of JPEG data");
        code = TDJ_ERROR;
        longjmp(err.jump, 1);
      }
    }
    jpeg_finish_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  return TDJ_OK;
}

int tdj_decode_roi(const unsigned char *data, size_t len, int y, int x, int h, int w, int gray,
                   unsigned char *out, size_t out_len, char *msg, int msg_len) {
  return tdj_decode_roi_dct(data, len, y, x, h, w, gray, out, out_len, msg, msg_len, 0);
}

/* The libjpeg version the library was built against (e.g. 62 or 80). */
int tdj_jpeg_lib_version(void) { return JPEG_LIB_VERSION; }

/* Windows of a batch: samples first, first + step, ... of n, each decoded as tdj_decode_roi does
 * into out + offsets[i] (windows[4i..4i+3] = y, x, h, w; whole images need h, w > 0 given by the
 * caller). codes[i] gets each sample's return code; the count of samples not TDJ_OK is returned.
 * Several threads call it with the same arrays and different `first`: one call per thread per batch
 * instead of one per image. */
int tdj_decode_roi_batch(int n, const unsigned char *const *datas, const size_t *lens, const int64_t *windows,
                         int gray, unsigned char *out, const int64_t *offsets, int first, int step, int *codes) {
  char msg[256];
  int failed = 0;
  const size_t C = gray ? 1 : 3;
  if (step < 1) step = 1;
  for (int i = first; i < n; i += step) {
    const int64_t *w = windows + 4 * (size_t)i;
    if (w[2] <= 0 || w[3] <= 0 || w[0] < 0 || w[1] < 0 || w[0] > INT32_MAX || w[1] > INT32_MAX ||
        w[2] > INT32_MAX || w[3] > INT32_MAX) {
      codes[i] = TDJ_BAD_ARGS;
      ++failed;
      continue;
    }
    codes[i] = tdj_decode_roi(datas[i], lens[i], (int)w[0], (int)w[1], (int)w[2], (int)w[3], gray,
                              out + offsets[i], (size_t)w[2] * (size_t)w[3] * C, msg, (int)sizeof(msg));
    if (codes[i] != TDJ_OK) ++failed;
  }
  return failed;
}
