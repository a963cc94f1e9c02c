#ifndef GALLEY_CVIPS_SHIM_H
#define GALLEY_CVIPS_SHIM_H
#include <vips/vips.h>
#include <string.h>

/* libvips's operations take their options as NULL-terminated variadic arguments, which Swift
   cannot call: these wrappers fix the options Galley uses. Only ThumbnailMaker.swift imports them. */

/* Starts libvips once. Pack runs one image per core itself, so each image is made on one
   thread, and nothing is cached (each image is read once). 0 on success. */
static inline int galley_vips_start(void) {
    if (VIPS_INIT("galley")) return -1;
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    return 0;
}

/* A size x size JPEG of the picture read from `fd` (streamed: JPEG and WebP shrink while they
   load), scaled to fill the square and cropped to its most interesting part (`attention`) or its
   centre, in sRGB with any transparency flattened onto white, without metadata (no dates, no
   profile), so the same picture and library give the same bytes. 0 on success; on failure,
   `message` holds libvips's words (truncated to `capacity`). */
static inline int galley_vips_square_jpeg(int fd, const char *output, int size, int attention, int quality,
                                          char *message, size_t capacity) {
    VipsSource *source = vips_source_new_from_descriptor(fd);
    VipsImage *thumb = NULL, *srgb = NULL, *flat = NULL, *bytes = NULL;
    int result = -1;
    if (source == NULL) goto done;
    if (vips_thumbnail_source(source, &thumb, size, "height", size,
                              "crop", attention ? VIPS_INTERESTING_ATTENTION : VIPS_INTERESTING_CENTRE,
                              "size", VIPS_SIZE_BOTH, NULL)) goto done;
    if (vips_colourspace(thumb, &srgb, VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    VipsImage *current = srgb;
    if (vips_image_hasalpha(current)) {
        double white[3] = {255, 255, 255};
        VipsArrayDouble *background = vips_array_double_new(white, 3);
        int failed = vips_flatten(current, &flat, "background", background, NULL);
        vips_area_unref(VIPS_AREA(background));
        if (failed) goto done;
        current = flat;
    }
    if (vips_cast_uchar(current, &bytes, NULL)) goto done;
    result = vips_jpegsave(bytes, output, "Q", quality, "strip", TRUE, "optimize_coding", TRUE,
                           "interlace", FALSE, "subsample_mode", VIPS_FOREIGN_SUBSAMPLE_ON, NULL);
done:
    if (result != 0 && message != NULL && capacity > 0) {
        const char *text = vips_error_buffer();
        strncpy(message, text ? text : "libvips failed", capacity - 1);
        message[capacity - 1] = 0;
        vips_error_clear();
    }
    if (bytes) g_object_unref(bytes);
    if (flat) g_object_unref(flat);
    if (srgb) g_object_unref(srgb);
    if (thumb) g_object_unref(thumb);
    if (source) g_object_unref(source);
    return result;
}
#endif
