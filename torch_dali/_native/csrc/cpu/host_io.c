/* Batched host-side helpers: whole-file reads and JPEG/PNG header parsing, one call per batch.
 *
 * Plain C99 + POSIX (no Python, no torch, no libjpeg): loaded with ctypes by
 * torch_dali/io/host_io.py, which builds it with `cc -O2 -shared -fPIC host_io.c`. The
 * point is to do per-sample work of a whole batch in one foreign call, which ctypes makes without
 * the GIL, instead of several Python-level calls per sample.
 *
 * td_image_infos mirrors torch_dali/io/headers.py (jpeg_info, png_info,
 * exif_orientation) branch by branch. It reports status 0 only where its answer is exactly
 * peek_image_info's; anything else (another format, data Python would reject, a value that does
 * not fit) is status 1, and Python decides. Every read is bounds-checked against the buffer
 * length. All functions are reentrant.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* errs[i] of td_read_files when the open file is larger than caps[i] (it grew after the stat) */
#define TD_GREW (-1)
#define TD_INFO_FIELDS 8

/* -- files ---------------------------------------------------------------------------------- */

/* Sizes of regular files (following symlinks); non-regular files get EISDIR, as reading one
 * whole is not meaningful (and a FIFO would block). A failure's size is -1, so `sizes` can be
 * td_read_files' `caps` as is. Returns the number of failures. */
int td_file_sizes(const char *const *paths, int n, int64_t *sizes, int *errs) {
  int bad = 0;
  for (int i = 0; i < n; i++) {
    struct stat st;
    sizes[i] = -1;
    errs[i] = 0;
    if (paths[i] == NULL)
      errs[i] = EFAULT;
    else if (stat(paths[i], &st) != 0)
      errs[i] = errno ? errno : EIO;
    else if (!S_ISREG(st.st_mode))
      errs[i] = EISDIR;
    else
      sizes[i] = (int64_t)st.st_size;
    bad += errs[i] != 0;
  }
  return bad;
}

static int read_one(const char *path, uint8_t *dst, int64_t cap, int64_t *got) {
  int fd, err = 0;
  int64_t n = 0;
  struct stat st;
  *got = 0;
  if (path == NULL) return EFAULT;
  /* O_NONBLOCK: a path swapped for a FIFO after the stat must not hang the caller */
  do fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno ? errno : EIO;
  if (fstat(fd, &st) != 0)
    err = errno ? errno : EIO;
  else if (!S_ISREG(st.st_mode))
    err = EISDIR;
  else if ((int64_t)st.st_size > cap)
    err = TD_GREW; /* grew since the caller's stat: it re-reads this one */
  while (!err && n < cap) {
    int64_t want = cap - n > (1 << 30) ? (1 << 30) : cap - n; /* Linux caps one read at ~2 GiB */
    ssize_t k = read(fd, dst + n, (size_t)want);
    if (k > 0)
      n += k;
    else if (k == 0)
      break; /* EOF: the file shrank; the caller keeps the n bytes read */
    else if (errno != EINTR)
      err = errno ? errno : EIO;
  }
  close(fd);
  *got = n;
  return err;
}

/* Reads file i into buf + offsets[i], at most caps[i] bytes; got[i] = bytes read, errs[i] = errno,
 * TD_GREW, or 0. A negative cap skips the file (got 0, errs 0): the caller's stat already failed.
 * Returns the number of failures. */
int td_read_files(const char *const *paths, int n, uint8_t *buf, const int64_t *offsets,
                  const int64_t *caps, int64_t *got, int *errs) {
  int bad = 0;
  for (int i = 0; i < n; i++) {
    if (caps[i] < 0) {
      got[i] = 0;
      errs[i] = 0;
      continue;
    }
    errs[i] = read_one(paths[i], buf + offsets[i], caps[i], &got[i]);
    bad += errs[i] != 0;
  }
  return bad;
}

/* Reads range i of the open file fd (sizes[i] bytes at src[i]) into buf + dst[i]; got[i] = bytes
 * read (fewer at the file's end: it shrank since the caller's size check). Returns the number of
 * ranges not read in full. pread, never a memory map: a file truncated by another process is a
 * short read here, where a mapped one would end the process with SIGBUS. */
int td_pread_ranges(int fd, int n, const int64_t *src, const int64_t *sizes, uint8_t *buf,
                    const int64_t *dst, int64_t *got) {
  int bad = 0;
  for (int i = 0; i < n; i++) {
    int64_t k = 0;
    while (k < sizes[i]) {
      int64_t want = sizes[i] - k > (1 << 30) ? (1 << 30) : sizes[i] - k;
      ssize_t r = pread(fd, buf + dst[i] + k, (size_t)want, (off_t)(src[i] + k));
      if (r > 0)
        k += r;
      else if (r == 0 || errno != EINTR)
        break;
    }
    got[i] = k;
    bad += k != sizes[i];
  }
  return bad;
}

/* -- image headers (mirrors headers.py) ------------------------------------------------------ */

static uint32_t rd16(const uint8_t *p, int le) {
  return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 : (uint32_t)p[0] << 8 | (uint32_t)p[1];
}

static uint32_t rd32(const uint8_t *p, int le) {
  return le ? rd16(p, 1) | rd16(p + 2, 1) << 16 : rd16(p, 0) << 16 | rd16(p + 2, 0);
}

/* exif_orientation: tag 0x0112 of IFD0 of a TIFF-structured block, its value field's first 16 bits
 * whatever the type (as DALI 2.4 reads it); 1 otherwise */
static int32_t exif_orientation(const uint8_t *t, int64_t len) {
  int le;
  if (len < 8) return 1;
  if (t[0] == 'I' && t[1] == 'I')
    le = 1;
  else if (t[0] == 'M' && t[1] == 'M')
    le = 0;
  else
    return 1;
  uint64_t ifd = rd32(t + 4, le);
  if (ifd + 2 > (uint64_t)len) return 1;
  uint32_t count = rd16(t + ifd, le);
  for (uint32_t k = 0; k < count; k++) {
    uint64_t off = ifd + 2 + 12 * (uint64_t)k;
    if (off + 12 > (uint64_t)len) break;
    if (rd16(t + off, le) == 0x0112) {
      uint32_t v = rd16(t + off + 8, le);
      return v >= 1 && v <= 8 ? (int32_t)v : 1;
    }
  }
  return 1;
}

/* headers.py's _Markers.after, i.e. libjpeg's next_marker: from pos, skips bytes up to a 0xFF,
 * then fill 0xFFs; a 0x00 after them is a stuffed zero (skipped too), anything else the marker
 * code. Returns the code and sets *pos past it, or -1 at the end of the data. */
static int next_marker(const uint8_t *b, int64_t n, int64_t *pos) {
  int64_t p = *pos;
  for (;;) {
    while (p < n && b[p] != 0xFF) p++;
    while (p < n && b[p] == 0xFF) p++;
    if (p >= n) return -1;
    if (b[p] != 0x00) {
      *pos = p + 1;
      return b[p];
    }
    p++;
  }
}

/* headers.py's _first_scan: components of the first SOS from pos, 255 if none; *orientation
 * updated by the APP1 Exif segments on the way */
static int first_scan(const uint8_t *b, int64_t n, int64_t pos, int32_t *orientation) {
  for (;;) {
    int m = next_marker(b, n, &pos);
    if (m < 0) return 255;
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD8)) continue;
    if (m == 0xD9 || pos + 2 > n) return 255;
    int64_t seg = (int64_t)rd16(b + pos, 0);
    if (m == 0xDA) return (seg >= 3 && pos + 2 < n) ? b[pos + 2] : 255;
    if (m == 0xE1 && seg >= 8 && pos + 8 <= n && memcmp(b + pos + 2, "Exif\0\0", 6) == 0) {
      int64_t end = pos + seg > n ? n : pos + seg; /* Python's slice b[pos+8:pos+seg] */
      *orientation = exif_orientation(b + pos + 8, end - (pos + 8));
    }
    pos += seg < 2 ? 2 : seg;
  }
}

/* headers.py's jpeg_info: walks the markers up to the first SOF; 0 and o[1..7] filled, or 1.
 * o[6]: 1 progressive (or arithmetic, lossless), 2 sequential with a first scan that leaves
 * components to later scans (ImageInfo.multi_scan), 0 otherwise. */
static int jpeg_info(const uint8_t *b, int64_t n, int32_t *o) {
  int64_t pos = 2;
  int32_t orientation = 1;
  for (;;) {
    int m = next_marker(b, n, &pos);
    if (m < 0) return 1;
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD8)) continue; /* TEM, RSTn, SOI: no length */
    if (m == 0xDA || m == 0xD9 || pos + 2 > n) return 1; /* a scan or the end before a frame */
    int64_t seg = (int64_t)rd16(b + pos, 0);
    int64_t start = pos + 2, end = pos + seg; /* Python's slice b[pos+2:pos+seg] */
    if (end > n) end = n;
    int64_t blen = end > start ? end - start : 0;
    const uint8_t *body = b + start;
    if (m == 0xE1 && blen >= 6 && memcmp(body, "Exif\0\0", 6) == 0) {
      orientation = exif_orientation(body + 6, blen - 6);
    } else if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      if (blen < 6) return 1;
      int32_t h = (int32_t)rd16(body + 1, 0), w = (int32_t)rd16(body + 3, 0);
      if (h == 0 || w == 0) return 1; /* Python: "declares an empty image" */
      o[1] = 1;
      o[2] = h;
      o[3] = w;
      o[4] = body[5];
      o[6] = m != 0xC0 && m != 0xC1;
      if (first_scan(b, n, pos + (seg < 2 ? 2 : seg), &orientation) < body[5] && !o[6]) o[6] = 2;
      o[5] = orientation;
      o[7] = body[0];
      return 0;
    }
    pos += seg < 2 ? 2 : seg; /* libjpeg reads a length under 2 as no body */
  }
}

/* png_info: IHDR, then chunks up to IEND looking for eXIf; 0 and o[1..7] filled, or 1 */
static int png_info(const uint8_t *b, int64_t n, int32_t *o) {
  int32_t channels;
  if (n < 33 || memcmp(b + 12, "IHDR", 4) != 0) return 1;
  uint32_t w = rd32(b + 16, 0), h = rd32(b + 20, 0);
  if (w == 0 || h == 0) return 1;
  switch (b[25]) {
    case 0: channels = 1; break;
    case 2: case 3: channels = 3; break;
    case 4: channels = 2; break;
    case 6: channels = 4; break;
    default: return 1;
  }
  if (w > INT32_MAX || h > INT32_MAX) return 1; /* valid for Python, but not an int32 */
  int32_t orientation = 1;
  int64_t pos = 33;
  while (pos + 8 <= n) {
    int64_t length = rd32(b + pos, 0);
    if (memcmp(b + pos + 4, "IEND", 4) == 0) break; /* an eXIf after the image data counts too */
    if (memcmp(b + pos + 4, "eXIf", 4) == 0) {
      int64_t end = pos + 8 + length;
      orientation = exif_orientation(b + pos + 8, (end > n ? n : end) - (pos + 8));
      break;
    }
    pos += 12 + length;
  }
  o[1] = 2;
  o[2] = (int32_t)h;
  o[3] = (int32_t)w;
  o[4] = channels;
  o[5] = orientation;
  o[6] = 0;
  o[7] = b[24];
  return 0;
}

/* For each buffer, out[8i..8i+7] = status (0 parsed, 1 left to Python), format (1 jpeg, 2 png),
 * height, width, channels, orientation, progressive (2: sequential, several scans), bit depth.
 * Returns how many were parsed. */
int td_image_infos(const uint8_t *const *datas, const int64_t *lens, int n, int32_t *out) {
  static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  int parsed = 0;
  for (int i = 0; i < n; i++) {
    int32_t *o = out + (int64_t)TD_INFO_FIELDS * i;
    const uint8_t *b = datas[i];
    int64_t len = lens[i];
    memset(o, 0, TD_INFO_FIELDS * sizeof(int32_t));
    o[0] = 1;
    if (b == NULL || len <= 0) continue; /* Python: "the data is empty" */
    if (len >= 2 && b[0] == 0xFF && b[1] == 0xD8)
      o[0] = jpeg_info(b, len, o);
    else if (len >= 8 && memcmp(b, png_sig, 8) == 0)
      o[0] = png_info(b, len, o);
    if (o[0] != 0) memset(o + 1, 0, (TD_INFO_FIELDS - 1) * sizeof(int32_t));
    parsed += o[0] == 0;
  }
  return parsed;
}
