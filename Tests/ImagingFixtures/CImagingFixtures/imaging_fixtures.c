// See include/imaging_fixtures.h: images made for tests and benchmarks, never linked into a
// service (Shared/CVipsShim holds only what the services call).
#include "imaging_fixtures.h"
#include "vips_shim.h"
#include <vips/vips.h>

int lb_make_test_image(int width, int height, int format, int orientation, void **out, size_t *outlen) {
    *out = NULL;
    *outlen = 0;
    // Every intermediate image belongs to `scope` and goes with it.
    VipsObject *scope = VIPS_OBJECT(vips_image_new());
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 10);
    int status = -1;
    if (vips_gaussnoise(&t[0], width, height, "mean", 128.0, "sigma", 30.0, NULL) ||
        vips_xyz(&t[1], width, height, NULL) ||
        vips_extract_band(t[1], &t[2], 0, NULL) ||
        vips_extract_band(t[1], &t[3], 1, NULL) ||
        vips_linear1(t[2], &t[4], 255.0 / width, 0.0, NULL) ||
        vips_linear1(t[3], &t[5], 255.0 / height, 0.0, NULL) ||
        vips_bandjoin((VipsImage *[]){t[0], t[4], t[5]}, &t[6], 3, NULL) ||
        vips_cast_uchar(t[6], &t[7], NULL) ||
        vips_copy(t[7], &t[8], "interpretation", VIPS_INTERPRETATION_sRGB, NULL))
        goto done;
    if (orientation > 0) vips_image_set_int(t[8], VIPS_META_ORIENTATION, orientation);
    switch (format) {
    case LB_FORMAT_JPEG: status = vips_jpegsave_buffer(t[8], out, outlen, "Q", 90, NULL); break;
    case LB_FORMAT_PNG: status = vips_pngsave_buffer(t[8], out, outlen, "compression", 1, NULL); break;
    case LB_FORMAT_WEBP: status = vips_webpsave_buffer(t[8], out, outlen, "Q", 80, NULL); break;
    case LB_FORMAT_HEIF: status = vips_heifsave_buffer(t[8], out, outlen, "Q", 50, NULL); break;
    default: vips_error("lb_make_test_image", "unknown format %d", format); break;
    }
done:
    g_object_unref(scope);
    return status == 0 ? 0 : -1;
}

int lb_make_flat_image(int width, int height, int format, void **out, size_t *outlen) {
    *out = NULL;
    *outlen = 0;
    VipsObject *scope = VIPS_OBJECT(vips_image_new());
    VipsImage **t = (VipsImage **)vips_object_local_array(scope, 4);
    int status = -1;
    if (vips_black(&t[0], width, height, "bands", 3, NULL) ||
        vips_linear1(t[0], &t[1], 1.0, 128.0, NULL) ||
        vips_cast_uchar(t[1], &t[2], NULL) ||
        vips_copy(t[2], &t[3], "interpretation", VIPS_INTERPRETATION_sRGB, NULL))
        goto done;
    switch (format) {
    case LB_FORMAT_JPEG: status = vips_jpegsave_buffer(t[3], out, outlen, "Q", 50, NULL); break;
    case LB_FORMAT_PNG: status = vips_pngsave_buffer(t[3], out, outlen, "compression", 9, NULL); break;
    default: vips_error("lb_make_flat_image", "unsupported format %d", format); break;
    }
done:
    g_object_unref(scope);
    return status == 0 ? 0 : -1;
}

void lb_fixture_free(void *pointer) {
    g_free(pointer);
}
