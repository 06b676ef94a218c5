// See include/vips_shim.h. Kept small: option lists in, plain values out.
//
// libvips is opened with dlopen when the first photo needs it, not linked: it brings about
// ninety shared libraries (glib, the image codecs, ...), 16 MiB of every records process's
// memory, and most records processes never see a photo. So this file does not include the
// libvips headers: it declares the few functions it calls and the enum values it passes,
// which libvips 8.x (ABI 42, the soname opened below) keeps stable.
#include "vips_shim.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct VipsImage VipsImage;

// Values from <vips/image.h>, <vips/foreign.h>, <vips/resample.h> and <glib/gmessages.h>.
enum { VIPS_ACCESS_SEQUENTIAL = 1 };
enum { VIPS_FAIL_ON_ERROR = 2 };
enum { VIPS_SIZE_DOWN = 2 };
enum { G_LOG_LEVEL_WARNING = 1 << 4, G_LOG_LEVEL_MESSAGE = 1 << 5, G_LOG_LEVEL_INFO = 1 << 6 };

typedef void (*log_func)(const char *domain, int level, const char *message, void *data);

static struct {
    int (*init)(const char *argv0);
    unsigned (*g_log_set_handler)(const char *domain, int levels, log_func handler, void *data);
    void (*cache_set_max)(int);
    void (*cache_set_max_mem)(size_t);
    void (*cache_set_max_files)(int);
    void (*concurrency_set)(int);
    void (*block_untrusted_set)(int);
    unsigned long (*type_find)(const char *basename, const char *nickname);
    const char *(*foreign_find_load_buffer)(const void *data, size_t size);
    void (*error_clear)(void);
    VipsImage *(*image_new_from_buffer)(const void *buf, size_t len, const char *option_string, ...);
    int (*image_get_width)(const VipsImage *);
    int (*image_get_height)(const VipsImage *);
    int (*image_get_orientation_swap)(VipsImage *);
    void (*g_object_unref)(void *);
    int (*thumbnail_buffer)(void *buf, size_t len, VipsImage **out, int width, ...);
    int (*jpegsave_buffer)(VipsImage *in, void **buf, size_t *len, ...);
    char *(*error_buffer_copy)(void);
    void (*g_free)(void *);
} vips;

/// Why libvips could not be opened (no libvips error buffer exists then).
static char open_error[512];

// libvips also prints its errors as glib warnings ("error in tile 0 x 192"); the caller
// reports them through lb_error, so the duplicates stay out of the service's log.
static void drop_message(const char *domain, int level, const char *message, void *data) {
    (void)domain, (void)level, (void)message, (void)data;
}

static int resolve(void *handle) {
#define RESOLVE(field, symbol)                                                         \
    if ((*(void **)&vips.field = dlsym(handle, symbol)) == NULL) {                    \
        snprintf(open_error, sizeof open_error, "libvips has no %s", symbol);         \
        return -1;                                                                     \
    }
    RESOLVE(init, "vips_init")
    RESOLVE(g_log_set_handler, "g_log_set_handler")
    RESOLVE(cache_set_max, "vips_cache_set_max")
    RESOLVE(cache_set_max_mem, "vips_cache_set_max_mem")
    RESOLVE(cache_set_max_files, "vips_cache_set_max_files")
    RESOLVE(concurrency_set, "vips_concurrency_set")
    RESOLVE(block_untrusted_set, "vips_block_untrusted_set")
    RESOLVE(type_find, "vips_type_find")
    RESOLVE(foreign_find_load_buffer, "vips_foreign_find_load_buffer")
    RESOLVE(error_clear, "vips_error_clear")
    RESOLVE(image_new_from_buffer, "vips_image_new_from_buffer")
    RESOLVE(image_get_width, "vips_image_get_width")
    RESOLVE(image_get_height, "vips_image_get_height")
    RESOLVE(image_get_orientation_swap, "vips_image_get_orientation_swap")
    RESOLVE(g_object_unref, "g_object_unref")
    RESOLVE(thumbnail_buffer, "vips_thumbnail_buffer")
    RESOLVE(jpegsave_buffer, "vips_jpegsave_buffer")
    RESOLVE(error_buffer_copy, "vips_error_buffer_copy")
    RESOLVE(g_free, "g_free")
#undef RESOLVE
    return 0;
}

int lb_start(const char *program, int concurrency) {
    void *handle = dlopen("libvips.so.42", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        snprintf(open_error, sizeof open_error, "cannot open libvips.so.42 (install libvips42): %s", why ? why : "?");
        return -1;
    }
    if (resolve(handle) != 0) return -1;
    if (vips.init(program) != 0) return -1;
    vips.g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, drop_message, NULL);
    // Photos arrive once each: caching operations only holds memory.
    vips.cache_set_max(0);
    vips.cache_set_max_mem(0);
    vips.cache_set_max_files(0);
    if (concurrency > 0) vips.concurrency_set(concurrency);
    // Loaders libvips marks as unfit for untrusted input are refused outright.
    vips.block_untrusted_set(1);
    return 0;
}

int lb_has_operation(const char *nickname) {
    return vips.type_find("VipsOperation", nickname) != 0;
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
    const char *loader = vips.foreign_find_load_buffer(buf, len);
    info->format = format_of(loader);
    if (info->format == LB_FORMAT_OTHER) {
        vips.error_clear();
        return 1;
    }
    // Opening from a buffer reads the header only; pixels are decoded on demand.
    VipsImage *image = vips.image_new_from_buffer(
        buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    if (image == NULL) return -1;
    info->width = vips.image_get_width(image);
    info->height = vips.image_get_height(image);
    int swap = vips.image_get_orientation_swap(image);
    info->display_width = swap ? info->height : info->width;
    info->display_height = swap ? info->width : info->height;
    vips.g_object_unref(image);
    return 0;
}

int lb_thumbnail(const void *buf, size_t len, int size, void **out, size_t *outlen, int *width, int *height) {
    VipsImage *thumb = NULL;
    *out = NULL;
    *outlen = 0;
    if (vips.thumbnail_buffer(
            (void *)buf, len, &thumb, size, "height", size, "size", VIPS_SIZE_DOWN, "option_string",
            "fail_on=error", NULL) != 0)
        return -1;
    void *jpeg = NULL;
    size_t jpeg_len = 0;
    int status = vips.jpegsave_buffer(thumb, &jpeg, &jpeg_len, "Q", 80, "strip", 1, NULL);
    *width = vips.image_get_width(thumb);
    *height = vips.image_get_height(thumb);
    vips.g_object_unref(thumb);
    if (status != 0 || jpeg == NULL) {
        if (jpeg != NULL) vips.g_free(jpeg);
        return -1;
    }
    // handed out with malloc, so lb_free needs no libvips
    *out = malloc(jpeg_len);
    if (*out == NULL) {
        vips.g_free(jpeg);
        return -1;
    }
    memcpy(*out, jpeg, jpeg_len);
    *outlen = jpeg_len;
    vips.g_free(jpeg);
    return 0;
}

char *lb_error(void) {
    if (vips.error_buffer_copy == NULL) return strdup(open_error[0] ? open_error : "libvips is not loaded");
    char *text = vips.error_buffer_copy();
    char *copy = strdup(text ? text : "");
    if (text) vips.g_free(text);
    return copy;
}

void lb_free(void *pointer) {
    free(pointer);
}
