#ifndef GALLEY_CVIPS_SHIM_H
#define GALLEY_CVIPS_SHIM_H
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* libvips, loaded when the first thumbnail is made (dlopen), not linked: linked, it and the
   ~85 libraries it needs (GLib, cairo, pango, librsvg, GnuTLS, HDF5...) were mapped into every
   galley process at start, for 30 ms of start-up and ~50 MB of `galley serve`'s resident memory,
   though only pack and render make thumbnails. So this header declares the 16 functions Galley
   calls, with the types and enum values of libvips 8.14's headers (ABI 42, Debian 12), and looks
   them up in libvips.so.42. libvips's operations take their options as NULL-terminated variadic
   arguments, which Swift cannot call: these wrappers fix the options Galley uses. Only
   ThumbnailMaker.swift imports them. */

typedef struct _VipsImage VipsImage;
typedef struct _VipsSource VipsSource;
typedef struct _VipsArea VipsArea;

enum { GALLEY_VIPS_INTERESTING_CENTRE = 1, GALLEY_VIPS_INTERESTING_ATTENTION = 3 };   /* VipsInteresting */
enum { GALLEY_VIPS_SIZE_BOTH = 0 };                                                  /* VipsSize */
enum { GALLEY_VIPS_INTERPRETATION_sRGB = 22 };                                       /* VipsInterpretation */
enum { GALLEY_VIPS_FOREIGN_SUBSAMPLE_ON = 1 };                                       /* VipsForeignSubsample */

/* The functions, looked up by galley_vips_start; the caller keeps the table. */
struct galley_vips_table {
    int (*init)(const char *);
    void (*cache_set_max)(int);
    void (*concurrency_set)(int);
    VipsSource *(*source_new_from_descriptor)(int);
    int (*thumbnail_source)(VipsSource *, VipsImage **, int, ...);
    int (*colourspace)(VipsImage *, VipsImage **, int, ...);
    int (*image_hasalpha)(VipsImage *);
    VipsArea *(*array_double_new)(const double *, int);
    int (*flatten)(VipsImage *, VipsImage **, ...);
    void (*area_unref)(VipsArea *);
    int (*cast_uchar)(VipsImage *, VipsImage **, ...);
    int (*jpegsave)(VipsImage *, const char *, ...);
    const char *(*error_buffer)(void);
    void (*error_clear)(void);
    void (*object_unref)(void *);
    void (*vector_set_enabled)(int);
    /* libvips's handle from dlopen, for galley_vips_load_heif_module. */
    void *library;
};

/* A GLib log handler that drops the message. */
static void galley_vips_quiet(const char *domain, int level, const char *message, void *data) {
    (void)domain; (void)level; (void)message; (void)data;
}

/* glibc's Dl_info (dlfcn.h declares it and dladdr only under _GNU_SOURCE, which a module's
   header cannot turn on for the system headers it imports); found through dlsym below. */
struct galley_dl_info { const char *dli_fname; void *dli_fbase; const char *dli_sname; void *dli_saddr; };

/* Loads libvips's HEIF module (HEIC and AVIF pictures) from the folder of modules beside the
   libvips.so that `symbol` lies in, as vips_init would. Galley's CLI starts with VIPSHOME set to
   /dev/null (ProcessEnvironment.configureForThumbnails), so vips_init finds no modules: the
   others read formats Galley never hands libvips (ImageMagick's, PDF, OpenSlide, JPEG XL), and
   loading them and their libraries cost 4.6 MB of resident memory (pack of 300 articles of
   photos, 91.4 -> 86.8 MB) and put their parsers within reach of the pictures. When vips_init did load the
   modules (VIPSHOME set by the user, or a program that embeds Galley without the setting),
   g_module_open hands back the module already open. A module that cannot be found or loaded
   leaves HEIF pictures without thumbnails, each reported as libvips's failure to read it.
   It is loaded only once a HEIF picture comes (galley_vips_load_heif_module, from
   ThumbnailMaker): the module and libheif's decoders and encoders (libde265, x265, aom, dav1d)
   are 2.1 MB of resident pages that an issue of JPEG and PNG pictures never uses. */
static inline void galley_vips_load_heif(void *library, const void *symbol) {
    int (*find)(const void *, struct galley_dl_info *);
    int (*version)(int);
    void *(*module_open)(const char *, int);
    *(void **)&find = dlsym(library, "dladdr");
    *(void **)&version = dlsym(library, "vips_version");
    *(void **)&module_open = dlsym(library, "g_module_open");
    struct galley_dl_info info;
    if (find == NULL || version == NULL || module_open == NULL || find(symbol, &info) == 0 || info.dli_fname == NULL) return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash == NULL) return;
    char path[4096];
    int length = snprintf(path, sizeof path, "%.*s/vips-modules-%d.%d/vips-heif.so",
                          (int)(slash - info.dli_fname), info.dli_fname, version(0), version(1));
    if (length <= 0 || (size_t)length >= sizeof path) return;
    (void)module_open(path, 1 << 0 /* G_MODULE_BIND_LAZY, as vips_init opens its modules */);
}

/* Loads and starts libvips once. Pack runs one image per core itself, so each image is made on
   one thread, and nothing is cached (each image is read once). 0 on success; otherwise
   `message` says what is missing. */
static inline int galley_vips_start(struct galley_vips_table *table, char *message, size_t capacity) {
    void *library = dlopen("libvips.so.42", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) library = dlopen("libvips.so", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        strncpy(message, why ? why : "libvips.so.42 not found", capacity - 1);
        message[capacity - 1] = 0;
        return -1;
    }
#define GALLEY_VIPS_FIND(field, name) \
    if ((*(void **)&table->field = dlsym(library, name)) == NULL) { \
        strncpy(message, "libvips lacks " name, capacity - 1); message[capacity - 1] = 0; return -1; }
    GALLEY_VIPS_FIND(init, "vips_init")
    GALLEY_VIPS_FIND(cache_set_max, "vips_cache_set_max")
    GALLEY_VIPS_FIND(concurrency_set, "vips_concurrency_set")
    GALLEY_VIPS_FIND(source_new_from_descriptor, "vips_source_new_from_descriptor")
    GALLEY_VIPS_FIND(thumbnail_source, "vips_thumbnail_source")
    GALLEY_VIPS_FIND(colourspace, "vips_colourspace")
    GALLEY_VIPS_FIND(image_hasalpha, "vips_image_hasalpha")
    GALLEY_VIPS_FIND(array_double_new, "vips_array_double_new")
    GALLEY_VIPS_FIND(flatten, "vips_flatten")
    GALLEY_VIPS_FIND(area_unref, "vips_area_unref")
    GALLEY_VIPS_FIND(cast_uchar, "vips_cast_uchar")
    GALLEY_VIPS_FIND(jpegsave, "vips_jpegsave")
    GALLEY_VIPS_FIND(error_buffer, "vips_error_buffer")
    GALLEY_VIPS_FIND(error_clear, "vips_error_clear")
    GALLEY_VIPS_FIND(object_unref, "g_object_unref")
    GALLEY_VIPS_FIND(vector_set_enabled, "vips_vector_set_enabled")
#undef GALLEY_VIPS_FIND
    if (table->init("galley")) {
        strncpy(message, "vips_init failed", capacity - 1);
        message[capacity - 1] = 0;
        return -1;
    }
    table->cache_set_max(0);
    table->concurrency_set(1);
    table->library = library;
    /* No run-time generated vector code (liborc): with the cache off, each thumbnail's resize
       compiles its ORC programs anew, and two thumbnails made at once on pack's two threads
       crashed inside liborc 0.4.33 (SIGSEGV, found by scripts/fuzz.py sources, 2026-11-27).
       libvips then takes its plain C paths: the same pictures to the eye, not to the byte (the
       example's zip changed), and 10-15% more CPU for thumbnails. */
    table->vector_set_enabled(0);
    /* libvips logs what its loaders put up with ("Corrupt JPEG data: 490 extraneous bytes") as
       GLib warnings straight to standard error, thousands of lines on a big issue, outside
       Galley's findings and its --json. Failures still come back through vips_error_buffer.
       (GLib comes with libvips, so dlsym on its handle finds g_log_set_handler.) */
    unsigned (*set_handler)(const char *, int, void (*)(const char *, int, const char *, void *), void *);
    *(void **)&set_handler = dlsym(library, "g_log_set_handler");
    if (set_handler) set_handler("VIPS", 1 << 4 /* G_LOG_LEVEL_WARNING */, galley_vips_quiet, NULL);
    return 0;
}

/* galley_vips_load_heif for a table galley_vips_start filled. Registers the module's loaders
   with GLib's type system: the caller makes sure no thumbnail is under way meanwhile. */
static inline void galley_vips_load_heif_module(const struct galley_vips_table *table) {
    galley_vips_load_heif(table->library, (const void *)table->init);
}

/* A size x size JPEG of the picture read from `fd` (streamed: JPEG and WebP shrink while they
   load), scaled to fill the square and cropped to its most interesting part (`attention`) or its
   centre, in sRGB with any transparency flattened onto white, without metadata (no dates, no
   profile), so the same picture and library give the same bytes. 0 on success; on failure,
   `message` holds libvips's words (truncated to `capacity`). `vips`: a table galley_vips_start filled. */
static inline int galley_vips_square_jpeg(const struct galley_vips_table *vips, int fd, const char *output, int size, int attention, int quality,
                                          char *message, size_t capacity) {
    VipsSource *source = vips->source_new_from_descriptor(fd);
    VipsImage *thumb = NULL, *srgb = NULL, *flat = NULL, *bytes = NULL;
    int result = -1;
    if (source == NULL) goto done;
    if (vips->thumbnail_source(source, &thumb, size, "height", size,
                                     "crop", attention ? GALLEY_VIPS_INTERESTING_ATTENTION : GALLEY_VIPS_INTERESTING_CENTRE,
                                     "size", GALLEY_VIPS_SIZE_BOTH, NULL)) goto done;
    if (vips->colourspace(thumb, &srgb, GALLEY_VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    VipsImage *current = srgb;
    if (vips->image_hasalpha(current)) {
        double white[3] = {255, 255, 255};
        VipsArea *background = vips->array_double_new(white, 3);
        int failed = vips->flatten(current, &flat, "background", background, NULL);
        vips->area_unref(background);
        if (failed) goto done;
        current = flat;
    }
    if (vips->cast_uchar(current, &bytes, NULL)) goto done;
    result = vips->jpegsave(bytes, output, "Q", quality, "strip", 1, "optimize_coding", 1,
                                  "interlace", 0, "subsample_mode", GALLEY_VIPS_FOREIGN_SUBSAMPLE_ON, NULL);
done:
    if (result != 0 && message != NULL && capacity > 0) {
        const char *text = vips->error_buffer();
        strncpy(message, text ? text : "libvips failed", capacity - 1);
        message[capacity - 1] = 0;
        vips->error_clear();
    }
    if (bytes) vips->object_unref(bytes);
    if (flat) vips->object_unref(flat);
    if (srgb) vips->object_unref(srgb);
    if (thumb) vips->object_unref(thumb);
    if (source) vips->object_unref(source);
    return result;
}
#endif
