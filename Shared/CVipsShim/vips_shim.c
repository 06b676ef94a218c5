// See include/vips_shim.h. Kept small: option lists in, plain values out.
#include "vips_shim.h"
#include <string.h>
#include <vips/vips.h>

// libvips also prints its errors as glib warnings ("error in tile 0 x 192"); the caller
// reports them through lb_error, so the duplicates stay out of the service's log.
static void drop_message(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain, (void)level, (void)message, (void)data;
}

int lb_start(const char *program, int concurrency) {
    if (VIPS_INIT(program) != 0) return -1;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, drop_message, NULL);
    // Photos arrive once each: caching operations only holds memory.
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    if (concurrency > 0) vips_concurrency_set(concurrency);
    // Loaders libvips marks as unfit for untrusted input are refused outright.
    vips_block_untrusted_set(TRUE);
    return 0;
}

int lb_has_operation(const char *nickname) {
    return vips_type_find("VipsOperation", nickname) != 0;
}

static int format_of(const char *loader) {
    if (loader == NULL) return LB_FORMAT_OTHER;
    if (strstr(loader, "Jpeg") != NULL) return LB_FORMAT_JPEG;
    if (strstr(loader, "Png") != NULL) return LB_FORMAT_PNG;
    if (strstr(loader, "Webp") != NULL) return LB_FORMAT_WEBP;
    if (strstr(loader, "Heif") != NULL) return LB_FORMAT_HEIF;
    return LB_FORMAT_OTHER;
}

int lb_probe(const void *buf, size_t len, lb_image_info *info) {
    memset(info, 0, sizeof(*info));
    const char *loader = vips_foreign_find_load_buffer(buf, len);
    info->format = format_of(loader);
    if (info->format == LB_FORMAT_OTHER) {
        vips_error_clear();
        return 1;
    }
    // Opening from a buffer reads the header only; pixels are decoded on demand.
    VipsImage *image = vips_image_new_from_buffer(
        buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    if (image == NULL) return -1;
    info->width = vips_image_get_width(image);
    info->height = vips_image_get_height(image);
    int swap = vips_image_get_orientation_swap(image);
    info->display_width = swap ? info->height : info->width;
    info->display_height = swap ? info->width : info->height;
    g_object_unref(image);
    return 0;
}

int lb_thumbnail(const void *buf, size_t len, int size, void **out, size_t *outlen, int *width, int *height) {
    VipsImage *thumb = NULL;
    *out = NULL;
    *outlen = 0;
    if (vips_thumbnail_buffer(
            (void *)buf, len, &thumb, size, "height", size, "size", VIPS_SIZE_DOWN, "option_string",
            "fail_on=error", NULL) != 0)
        return -1;
    int status = vips_jpegsave_buffer(thumb, out, outlen, "Q", 80, "strip", TRUE, NULL);
    *width = vips_image_get_width(thumb);
    *height = vips_image_get_height(thumb);
    g_object_unref(thumb);
    return status == 0 ? 0 : -1;
}

char *lb_error(void) {
    return vips_error_buffer_copy();
}

void lb_free(void *pointer) {
    g_free(pointer);
}
