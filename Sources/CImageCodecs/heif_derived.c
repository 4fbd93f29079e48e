// The canvas sizes of a HEIF file's derived images (`grid` and `iovl` items), read from the container itself.
// libheif 1.15 allocates a derived image's canvas from the size inside the item's payload, not from its `ispe`,
// and only holds it to its own 32768-per-side limit: an overlay declared 128x128 by `ispe` can still ask for
// gigabytes (the decode fuzzer found one used as the alpha plane of a small image). Every such item in the file is
// checked, whatever its role, before libheif decodes anything.
#include <string.h>

#include "internal.h"

/// Derived items looked at; a file with more is refused (real files have one grid, plus one for alpha at most).
#define MG_HEIF_MAX_DERIVED 64

typedef struct {
    const uint8_t *bytes;
    size_t length;
} span;

static uint64_t read_be(const uint8_t *p, int width) {
    uint64_t value = 0;
    for (int i = 0; i < width; i++) value = value << 8 | p[i];
    return value;
}

/// The payload (after the header) of the first box of `type` among the boxes filling `in`; 0 when absent or when
/// a box header is malformed before it.
static int find_box(span in, const char type[4], span *payload) {
    size_t at = 0;
    while (in.length - at >= 8) {
        uint64_t size = read_be(in.bytes + at, 4);
        size_t header = 8;
        if (size == 1) {
            if (in.length - at < 16) return 0;
            size = read_be(in.bytes + at + 8, 8);
            header = 16;
        } else if (size == 0) {
            size = in.length - at;
        }
        if (size < header || size > in.length - at) return 0;
        if (memcmp(in.bytes + at + 4, type, 4) == 0) {
            *payload = (span){in.bytes + at + header, (size_t)size - header};
            return 1;
        }
        at += (size_t)size;
    }
    return 0;
}

typedef struct {
    uint32_t id;
    int overlay;  // 1: iovl, 0: grid
} derived_item;

/// Lists the grid and iovl items of `iinf`; -1 when there are more than MG_HEIF_MAX_DERIVED.
static int derived_items(span iinf, derived_item *items) {
    if (iinf.length < 6) return 0;
    size_t header = iinf.bytes[0] == 0 ? 6 : 8;  // full box, then a 16- or 32-bit entry count
    if (iinf.length < header) return 0;
    span entries = {iinf.bytes + header, iinf.length - header};
    int count = 0;
    while (entries.length >= 8) {
        span infe;
        if (!find_box(entries, "infe", &infe)) break;
        // Move past this infe: it starts where find_box found it (infe boxes are the only children).
        size_t consumed = (size_t)(infe.bytes + infe.length - entries.bytes);
        entries.bytes += consumed;
        entries.length -= consumed;
        int version = infe.length > 0 ? infe.bytes[0] : 0;
        if (version < 2) continue;  // no item type before version 2
        size_t id_width = version == 2 ? 2 : 4;
        if (infe.length < 4 + id_width + 2 + 4) continue;
        const uint8_t *type = infe.bytes + 4 + id_width + 2;
        int overlay = memcmp(type, "iovl", 4) == 0;
        if (!overlay && memcmp(type, "grid", 4) != 0) continue;
        if (count == MG_HEIF_MAX_DERIVED) return -1;
        items[count++] = (derived_item){(uint32_t)read_be(infe.bytes + 4, (int)id_width), overlay};
    }
    return count;
}

/// The first bytes of item `id`'s data, located through `iloc` (in the file or in `idat`); 0 when not found.
static int item_data(span file, span iloc, span idat, uint32_t id, span *out) {
    if (iloc.length < 8) return 0;
    int version = iloc.bytes[0];
    if (version > 2) return 0;
    int offset_size = iloc.bytes[4] >> 4, length_size = iloc.bytes[4] & 15, base_size = iloc.bytes[5] >> 4;
    int index_size = version >= 1 ? iloc.bytes[5] & 15 : 0;
    size_t at = 6;
    size_t count_width = version < 2 ? 2 : 4, id_width = version < 2 ? 2 : 4;
    if (iloc.length < at + count_width) return 0;
    uint64_t items = read_be(iloc.bytes + at, (int)count_width);
    at += count_width;
    for (uint64_t i = 0; i < items; i++) {
        size_t fixed = id_width + (version >= 1 ? 2 : 0) + 2 + (size_t)base_size + 2;
        if (iloc.length - at < fixed) return 0;
        uint32_t item = (uint32_t)read_be(iloc.bytes + at, (int)id_width);
        at += id_width;
        int method = 0;
        if (version >= 1) {
            method = (int)(read_be(iloc.bytes + at, 2) & 15);
            at += 2;
        }
        at += 2;  // data_reference_index
        uint64_t base = read_be(iloc.bytes + at, base_size);
        at += (size_t)base_size;
        uint64_t extents = read_be(iloc.bytes + at, 2);
        at += 2;
        size_t extent_size = (size_t)index_size + (size_t)offset_size + (size_t)length_size;
        if (extents > (iloc.length - at) / (extent_size ? extent_size : 1)) return 0;
        if (item == id) {
            // The first extent holds the size fields of any real file; a description split across extents is
            // left to the caller to refuse.
            if (extents == 0) return 0;
            const uint8_t *extent = iloc.bytes + at + index_size;
            uint64_t offset = base + read_be(extent, offset_size);
            uint64_t length = read_be(extent + offset_size, length_size);
            span source = method == 0 ? file : (method == 1 ? idat : (span){NULL, 0});
            if (!source.bytes || offset >= source.length) return 0;
            uint64_t available = source.length - offset;
            *out = (span){source.bytes + offset, (size_t)(length == 0 || length > available ? available : length)};
            return 1;
        }
        at += (size_t)extents * extent_size;
    }
    return 0;
}

int mg_heif_check_derived(const uint8_t *data, size_t length, const mg_limits *limits, mg_error *err) {
    span file = {data, length}, meta, iinf, iloc, idat = {NULL, 0};
    if (!find_box(file, "meta", &meta) || meta.length < 4) return MG_OK;  // libheif reports what is missing
    span children = {meta.bytes + 4, meta.length - 4};
    if (!find_box(children, "iinf", &iinf)) return MG_OK;
    derived_item items[MG_HEIF_MAX_DERIVED];
    int count = derived_items(iinf, items);
    if (count < 0) return mg_fail(err, MG_ERR_CORRUPT, "more than %d derived images", MG_HEIF_MAX_DERIVED);
    if (count == 0) return MG_OK;
    if (!find_box(children, "iloc", &iloc)) return mg_fail(err, MG_ERR_CORRUPT, "derived images without locations");
    find_box(children, "idat", &idat);
    for (int i = 0; i < count; i++) {
        const char *what = items[i].overlay ? "HEIF overlay image (iovl)" : "HEIF grid image";
        span payload;
        // version, flags, then for iovl four 16-bit fill values; sizes are 16 bits, or 32 when flags bit 0 is set.
        size_t sizes_at = items[i].overlay ? 10 : 4;
        if (!item_data(file, iloc, idat, items[i].id, &payload) || payload.length < sizes_at)
            return mg_fail(err, MG_ERR_CORRUPT, "%s %u has no readable description", what, items[i].id);
        int width = (payload.bytes[1] & 1) ? 4 : 2;
        if (payload.length < sizes_at + 2 * (size_t)width)
            return mg_fail(err, MG_ERR_CORRUPT, "%s %u has no readable description", what, items[i].id);
        uint64_t w = read_be(payload.bytes + sizes_at, width), h = read_be(payload.bytes + sizes_at + width, width);
        int status = mg_check_frame_size(err, limits, w, h, what);
        if (status != MG_OK) return status;
    }
    return MG_OK;
}
