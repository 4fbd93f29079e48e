// Checks of a HEIF container made before libheif decodes it: item references that lead back to where they started,
// and the canvas sizes of derived images (`grid` and `iovl` items), read from the container itself.
// libheif 1.15 allocates a derived image's canvas from the size inside the item's payload, not from its `ispe`,
// and only holds it to its own 32768-per-side limit: an overlay declared 128x128 by `ispe` can still ask for
// gigabytes (the decode fuzzer found one used as the alpha plane of a small image). Every such item in the file is
// checked, whatever its role, before libheif decodes anything.
#include <stdlib.h>
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

/// References looked at; a file with more is refused (a 48 MP phone grid has under 200 tiles).
#define MG_HEIF_MAX_REFERENCES 4096

/// "Decoding `from` decodes `to`": a derived image needs its inputs (`dimg`), an image its auxiliary images (`auxl`
/// points from the alpha or depth image to the one it belongs to).
typedef struct {
    uint32_t from, to;
} dependency;

static int compare_dependencies(const void *a, const void *b) {
    const dependency *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

static int compare_ids(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/// The first dependency of `id` in `edges` (sorted), or `count` when it has none.
static size_t first_dependency(const dependency *edges, size_t count, uint32_t id) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (edges[middle].from < id) low = middle + 1;
        else high = middle;
    }
    return low;
}

static size_t id_index(const uint32_t *ids, size_t count, uint32_t id) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (ids[middle] < id) low = middle + 1;
        else high = middle;
    }
    return low;
}

/// The dependencies `iref` states; -1 when there are more than `capacity`.
static long dependencies(span iref, dependency *edges, size_t capacity) {
    if (iref.length < 4) return 0;
    size_t id_width = iref.bytes[0] == 0 ? 2 : 4;
    span boxes = {iref.bytes + 4, iref.length - 4};
    size_t at = 0, count = 0;
    while (boxes.length - at >= 8) {
        uint64_t size = read_be(boxes.bytes + at, 4);
        if (size < 8 || size > boxes.length - at) break;
        const uint8_t *type = boxes.bytes + at + 4;
        int inputs = memcmp(type, "dimg", 4) == 0, auxiliary = memcmp(type, "auxl", 4) == 0;
        span body = {boxes.bytes + at + 8, (size_t)size - 8};
        if ((inputs || auxiliary) && body.length >= id_width + 2) {
            uint32_t from = (uint32_t)read_be(body.bytes, (int)id_width);
            uint64_t listed = read_be(body.bytes + id_width, 2);
            uint64_t present = (body.length - id_width - 2) / id_width;
            for (uint64_t i = 0; i < listed && i < present; i++) {
                uint32_t to = (uint32_t)read_be(body.bytes + id_width + 2 + i * id_width, (int)id_width);
                if (count == capacity) return -1;
                edges[count++] = inputs ? (dependency){from, to} : (dependency){to, from};
            }
        }
        at += (size_t)size;
    }
    return (long)count;
}

/// Refuses item references that lead back to where they started (an image that is, through its grid tiles and
/// alpha planes, an input of itself): libheif 1.15 follows them without end, allocating as it goes (the decode
/// fuzzer found a 23 KB file whose grid's alpha plane was a grid of that grid; libheif's own `heif-info` hangs on it).
static int check_reference_cycles(span iref, mg_error *err) {
    dependency *edges = malloc(MG_HEIF_MAX_REFERENCES * sizeof *edges);
    if (!edges) return mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate the HEIF reference table");
    long listed = dependencies(iref, edges, MG_HEIF_MAX_REFERENCES);
    if (listed < 0) {
        free(edges);
        return mg_fail(err, MG_ERR_CORRUPT, "more than %d HEIF item references", MG_HEIF_MAX_REFERENCES);
    }
    size_t count = (size_t)listed;
    if (count == 0) {
        free(edges);
        return MG_OK;
    }
    qsort(edges, count, sizeof *edges, compare_dependencies);
    uint32_t *ids = malloc(2 * count * sizeof *ids);
    uint8_t *state = calloc(2 * count, 1);  // 0 not seen, 1 on the current path, 2 finished
    size_t *path = malloc(2 * count * sizeof *path), *next = malloc(2 * count * sizeof *next);
    int status = MG_OK;
    if (!ids || !state || !path || !next) {
        status = mg_fail(err, MG_ERR_NO_MEMORY, "could not allocate the HEIF reference table");
        goto done;
    }
    size_t nodes = 0;
    for (size_t i = 0; i < count; i++) {
        ids[nodes++] = edges[i].from;
        ids[nodes++] = edges[i].to;
    }
    qsort(ids, nodes, sizeof *ids, compare_ids);
    size_t unique = 0;
    for (size_t i = 0; i < nodes; i++)
        if (unique == 0 || ids[unique - 1] != ids[i]) ids[unique++] = ids[i];
    // Depth-first, without recursion: a hostile file decides the depth.
    for (size_t start = 0; start < unique && status == MG_OK; start++) {
        if (state[start]) continue;
        size_t depth = 1;
        path[0] = start;
        next[0] = first_dependency(edges, count, ids[start]);
        state[start] = 1;
        while (depth > 0 && status == MG_OK) {
            size_t top = depth - 1;
            size_t at = next[top];
            if (at < count && edges[at].from == ids[path[top]]) {
                next[top]++;
                size_t target = id_index(ids, unique, edges[at].to);
                if (state[target] == 1) {
                    status = mg_fail(err, MG_ERR_CORRUPT, "HEIF item %u depends on itself through its references",
                                     edges[at].to);
                } else if (state[target] == 0) {
                    state[target] = 1;
                    path[depth] = target;
                    next[depth] = first_dependency(edges, count, edges[at].to);
                    depth++;
                }
            } else {
                state[path[top]] = 2;
                depth--;
            }
        }
    }
done:
    free(edges);
    free(ids);
    free(state);
    free(path);
    free(next);
    return status;
}

int mg_heif_check_derived(const uint8_t *data, size_t length, const mg_limits *limits, mg_error *err) {
    span file = {data, length}, meta, iinf, iloc, iref, idat = {NULL, 0};
    if (!find_box(file, "meta", &meta) || meta.length < 4) return MG_OK;  // libheif reports what is missing
    span children = {meta.bytes + 4, meta.length - 4};
    if (find_box(children, "iref", &iref)) {
        int status = check_reference_cycles(iref, err);
        if (status != MG_OK) return status;
    }
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
