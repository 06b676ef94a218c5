// Non-variadic wrappers around the libvips calls Logbook uses: Swift cannot call C
// variadic functions (vips_thumbnail_buffer and friends take NULL-terminated option lists).
// libvips itself is opened by lb_start (dlopen), not linked. Every buffer handed back is
// allocated with malloc: release it with lb_free.
#ifndef LOGBOOK_VIPS_SHIM_H
#define LOGBOOK_VIPS_SHIM_H
#include <stddef.h>

/// Image formats the shim tells apart (0 = anything else).
enum {
    LB_FORMAT_OTHER = 0,
    LB_FORMAT_JPEG = 1,
    LB_FORMAT_PNG = 2,
    LB_FORMAT_WEBP = 3,
    LB_FORMAT_HEIF = 4,
};

typedef struct {
    int format;
    /// As stored in the file.
    int width;
    int height;
    /// As displayed: swapped when the EXIF orientation turns the image a quarter.
    int display_width;
    int display_height;
} lb_image_info;

/// Opens and starts libvips once per process: no operation cache, `concurrency` worker
/// threads per pipeline, untrusted loaders blocked. Returns 0, or -1 (see lb_error). Call it
/// before any other function here.
int lb_start(const char *program, int concurrency);

/// The loader for these bytes is compiled into this libvips ("heifload_buffer", ...).
int lb_has_operation(const char *nickname);

/// Reads only the header: format and dimensions, without decoding pixels.
/// Returns 0; 1 when the bytes are no format libvips knows; -1 when the header is damaged.
int lb_probe(const void *buf, size_t len, lb_image_info *info);

/// A JPEG thumbnail (quality 80, metadata stripped) fitting in size×size, never enlarged,
/// turned upright by the EXIF orientation. Decoding stops at the first error or
/// truncation. Returns 0 or -1.
int lb_thumbnail(const void *buf, size_t len, int size, void **out, size_t *outlen, int *width, int *height);

/// The accumulated libvips error text (a copy; release with lb_free), and clears it.
char *lb_error(void);

void lb_free(void *pointer);

#endif
