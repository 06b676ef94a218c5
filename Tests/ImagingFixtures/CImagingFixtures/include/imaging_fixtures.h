// Images generated through libvips for tests and benchmarks (Tests/ImagingFixtures). Formats
// are vips_shim.h's LB_FORMAT_* codes; results are released with lb_fixture_free.
#ifndef IMAGING_FIXTURES_H
#define IMAGING_FIXTURES_H

#include <stddef.h>

/// A generated test image (noise and gradients) saved as `format`; `orientation` 1–8 is
/// written as EXIF orientation (JPEG), 0 writes none. Returns 0 or -1.
int lb_make_test_image(int width, int height, int format, int orientation, void **out, size_t *outlen);
/// A flat grey image of any size, which compresses to almost nothing: what a hostile upload
/// declaring huge dimensions in a small file looks like.
int lb_make_flat_image(int width, int height, int format, void **out, size_t *outlen);

/// Releases an image made here (glib's allocator, unlike the shim's buffers).
void lb_fixture_free(void *pointer);

#endif
