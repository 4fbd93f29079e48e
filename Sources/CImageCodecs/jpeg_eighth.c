// A decoder for one case that matters: a baseline JPEG read at 1/8 scale, the DCT scale
// every large thumbnail uses. libjpeg-turbo spends almost all of that time walking the
// Huffman-coded data one symbol at a time on one core; here the walk is faster (tables
// that skip one or two whole AC coefficients, code and value bits, in one lookup) and runs
// on two cores.
//
// Two cores without restart markers: the second thread starts in the middle of the data
// at a guessed position. JPEG's Huffman codes resynchronise within a few blocks, so its
// decoding soon follows the true one. It records where each of its MCUs starts; when the
// first thread, decoding from the start, reaches an MCU that starts at a recorded
// position, both decoders are in the same state and the second thread's MCUs from there
// on are the true ones. Only the DC values need a fix: they are coded as differences, so
// each component's values are off by one constant, added before the pixels are made.
// When no MCU matches, the first thread decodes the rest itself.
//
// The output is libjpeg-turbo's, byte for byte: the same 1x1 and 2x2 reduced IDCTs (its
// scaled path reads chroma through a 2x2 IDCT in 4:2:0 files instead of upsampling),
// range limiting and YCbCr tables. Anything else — progressive, arithmetic, restart
// intervals, 12-bit, CMYK, other sampling layouts, damaged data, data after the last
// MCU — returns MG_EIGHTH_UNSUPPORTED and the caller decodes with libjpeg as before, so
// libjpeg's own handling of damaged files is unchanged.
//
// A file on disk is read through a 64 KiB window per thread (pread), so a large file is never held whole; a read
// error also returns MG_EIGHTH_UNSUPPORTED, and libjpeg then reports it.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include "jpeg_eighth.h"

#define LOOKAHEAD 11
#define MAX_BLOCKS 10  // per MCU (libjpeg's D_MAX_BLOCKS_IN_MCU)
#define SKIP_EOB 0x800
#define WINDOW (64 * 1024)  // bytes of a file each reader holds
#define MARGIN 16           // a refill reads at most 8 bytes and their stuffing

typedef struct {
    uint16_t fast[1 << LOOKAHEAD];  // (length << 8) | symbol for codes up to LOOKAHEAD bits, else 0
    uint16_t skip[1 << LOOKAHEAD];  // AC only: bits to drop (code and value) | k advance << 5 | SKIP_EOB, else 0
    uint16_t pair[1 << LOOKAHEAD];  // the same for two coefficients when both fit in the lookahead, else as skip
    int32_t maxcode[18];            // largest code of each length, -1 when none
    int32_t valoffset[17];
    uint8_t huffval[256];
} huff_table;

// Reads the entropy-coded data without its byte stuffing. Positions count bits of the
// unstuffed data from the start of the scan, so two readers that went different ways
// agree on where a bit is.
typedef struct {
    const uint8_t *data;  // the input in memory, or the window of a file; data[0] is at raw offset origin
    size_t pos, end;   // in data; end is the marker that ends the scan, or the window's end
    uint64_t buf;      // next bits, most significant first
    int bits;          // valid bits in buf
    uint64_t loaded;   // unstuffed bytes loaded into buf, zero fill past the end included
    // A file only (in is NULL for memory):
    const mg_input *in;
    uint64_t origin, scan_end;  // raw offsets
    uint8_t *window;
    int failed;  // a read failed: the rest reads as zeros, and the decode is not used
} bit_reader;

typedef struct {
    int comp;        // index in cinfo->comp_info
    int reduced2x2;  // chroma of a 4:2:0 file: libjpeg reads it through its 2x2 IDCT
    const huff_table *dc, *ac;
    int16_t quant[64];  // natural order, as libjpeg's ISLOW multiplier table (short)
    int slot;           // first of its int32 slots in an MCU record
} block_plan;

typedef struct {
    huff_table tables[8];  // DC 0-3, AC 4-7
    block_plan blocks[MAX_BLOCKS];
    int block_count, slots_per_mcu, components;
    int chroma2x2;  // 4:2:0: one chroma value per output pixel
    int h_max, v_max;  // luma's sampling factors (1 or 2)
    uint32_t mcus_x, mcus_y;
    uint64_t mcu_count;
    uint32_t width, height;  // output size
    uint8_t *rgba;
    const mg_input *in;
    size_t start, end;   // raw offsets of the scan's data
    uint64_t total_bits; // unstuffed bits in the scan
} plan;

// What the second thread leaves behind.
typedef struct {
    const plan *p;
    size_t raw_start;
    uint64_t unstuffed_start;  // unstuffed bytes before raw_start
    // slots_per_mcu per MCU, in 16 bits to halve the memory: a DC value only matters modulo 2^16 (libjpeg keeps
    // it in a short), and a q value that does not fit counts as a decoding error (real files stay far below).
    int16_t *records;
    uint32_t *positions;       // start of each MCU, and one more: where the last one ended
    uint64_t capacity, count;
    uint64_t clean_from;       // first record after its last restart
    int failed;                // its reader could not read the file
} speculation;

// libjpeg's post-IDCT range limit: the value wraps at 1024, then clamps around 128.
static uint8_t idct_limit[1024];
static int16_t cr_r[256], cb_b[256];
static int32_t cr_g[256], cb_g[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
// Decodes on this thread that used the second thread's MCUs and succeeded (tests check that the split happens, not
// only that pixels match: a decode this file declines still gets libjpeg's pixels). Per calling thread, so that a
// test counts its own decodes, not those of tests running beside it.
static _Thread_local uint64_t split_decodes;

uint64_t mg_jpeg_eighth_split_count(void) { return split_decodes; }

static void build_tables(void) {
    for (int x = 0; x < 1024; x++) {
        int v = x < 512 ? x : x - 1024;
        v += 128;
        idct_limit[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    // jdcolor.c's tables (16-bit fixed point)
    for (int i = 0; i < 256; i++) {
        int64_t x = i - 128;
        cr_r[i] = (int16_t)((91881 * x + 32768) >> 16);   // FIX(1.40200)
        cb_b[i] = (int16_t)((116130 * x + 32768) >> 16);  // FIX(1.77200)
        cr_g[i] = (int32_t)(-46802 * x);                  // -FIX(0.71414)
        cb_g[i] = (int32_t)(-22554 * x + 32768);          // -FIX(0.34414), with the rounding half
    }
}

static inline uint8_t clamp255(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

// --- Huffman tables

static int build_table(huff_table *t, const JHUFF_TBL *src, int is_dc) {
    if (!src) return 0;
    memset(t, 0, sizeof *t);
    int count = 0;
    for (int l = 1; l <= 16; l++) count += src->bits[l];
    if (count > 256) return 0;
    memcpy(t->huffval, src->huffval, (size_t)count);
    // Canonical codes, checked as libjpeg checks them (a code that does not fit its length is a bad table).
    int32_t code = 0;
    int index = 0;
    uint16_t lengths[256];
    int32_t codes[256];
    for (int l = 1; l <= 16; l++) {
        int n = src->bits[l];
        t->valoffset[l] = index - code;
        for (int i = 0; i < n; i++) {
            lengths[index] = (uint16_t)l;
            codes[index++] = code++;
        }
        if (code >= (1 << l)) return 0;  // no code may be all ones
        t->maxcode[l] = n ? code - 1 : -1;
        code <<= 1;
    }
    t->maxcode[17] = 0x7FFFFFFF;
    for (int i = 0; i < count; i++) {
        if (is_dc && t->huffval[i] > 15) return 0;
        int l = lengths[i];
        if (l > LOOKAHEAD) continue;
        int shift = LOOKAHEAD - l;
        for (int32_t p = codes[i] << shift, e = (codes[i] + 1) << shift; p < e; p++) {
            t->fast[p] = (uint16_t)(l << 8 | t->huffval[i]);
            if (is_dc) continue;
            int r = t->huffval[i] >> 4, s = t->huffval[i] & 15;
            if (s == 0) {
                t->skip[p] = (uint16_t)(r == 15 ? l | 16 << 5 : l | SKIP_EOB);
            } else if (l + s <= LOOKAHEAD) {
                t->skip[p] = (uint16_t)((l + s) | (r + 1) << 5);
            }
        }
    }
    if (!is_dc) {
        // A second coefficient whose code and value bits fit in what the first leaves of the lookahead: the
        // symbol-to-symbol chain (a table load per step) is what bounds the speed, and this halves it where it fits.
        for (int p = 0; p < (1 << LOOKAHEAD); p++) {
            uint16_t first = t->skip[p];
            t->pair[p] = first;
            int used = first & 31;
            if (!first || (first & SKIP_EOB)) continue;
            uint16_t second = t->skip[(p << used) & ((1 << LOOKAHEAD) - 1)];
            int more = second & 31;
            if (!second || used + more > LOOKAHEAD) continue;
            t->pair[p] = (uint16_t)((used + more) | ((first >> 5 & 63) + (second >> 5 & 63)) << 5 | (second & SKIP_EOB));
        }
    }
    return 1;
}

// --- Bit reading

static inline uint64_t reader_position(const bit_reader *b) { return b->loaded * 8 - (uint64_t)b->bits; }

// A reader from raw offset `raw` (unstuffed byte `unstuffed` of the scan) to the scan's end. For a file it takes
// its window from `window` (WINDOW bytes), loaded at the first refill.
static void reader_start(bit_reader *b, const plan *p, size_t raw, uint64_t unstuffed, uint8_t *window) {
    memset(b, 0, sizeof *b);
    b->loaded = unstuffed;
    if (p->in->data) {
        b->data = p->in->data;
        b->pos = raw;
        b->end = p->end;
        return;
    }
    b->in = p->in;
    b->data = window;
    b->window = window;
    b->origin = raw;
    b->scan_end = p->end;
}

// Moves a file's window to start at the next unread byte, so that a refill finds what it may read in it.
static void slide(bit_reader *b) {
    if (b->failed || b->origin + b->end >= b->scan_end) return;  // the window already reaches the scan's end
    uint64_t at = b->origin + b->pos;
    size_t want = b->scan_end - at < WINDOW ? (size_t)(b->scan_end - at) : WINDOW;
    if (mg_input_read(b->in, at, b->window, want) != (ptrdiff_t)want) {
        b->failed = 1;
        b->pos = b->end;  // zeros from here on
        return;
    }
    b->data = b->window;
    b->origin = at;
    b->pos = 0;
    b->end = want;
}

static inline void refill(bit_reader *b) {
    if (__builtin_expect(b->pos + MARGIN > b->end, 0) && b->in) slide(b);
    if (b->pos + 8 <= b->end) {
        uint64_t w;
        memcpy(&w, b->data + b->pos, 8);
        uint64_t n = ~w;
        if (!((n - 0x0101010101010101ULL) & ~n & 0x8080808080808080ULL)) {  // no 0xFF byte: no stuffing
            int take = (63 - b->bits) >> 3;
            b->buf |= __builtin_bswap64(w) >> b->bits;
            b->bits += take * 8;
            b->buf &= ~0ULL << (64 - b->bits);
            b->pos += (size_t)take;
            b->loaded += (uint64_t)take;
            return;
        }
    }
    while (b->bits <= 56) {
        uint64_t byte = 0;
        if (b->pos < b->end) {
            byte = b->data[b->pos];
            b->pos += byte == 0xFF ? 2 : 1;  // inside the scan, 0xFF is always followed by a stuffed 0x00
        }
        b->loaded++;
        b->buf |= byte << (56 - b->bits);
        b->bits += 8;
    }
}

#define PEEK(b, n) ((uint32_t)((b)->buf >> (64 - (n))))
#define DROP(b, n) ((b)->buf <<= (n), (b)->bits -= (n))

static inline int extend(int v, int s) { return v < (1 << (s - 1)) ? v - (1 << s) + 1 : v; }

static int decode_long(bit_reader *b, const huff_table *t) {
    for (int l = LOOKAHEAD + 1; l <= 16; l++) {
        int32_t code = (int32_t)PEEK(b, l);
        if (code <= t->maxcode[l]) {
            DROP(b, l);
            return t->huffval[(code + t->valoffset[l]) & 0xFF];
        }
    }
    return -1;
}

static inline int decode_symbol(bit_reader *b, const huff_table *t) {
    uint32_t e = t->fast[PEEK(b, LOOKAHEAD)];
    if (e) {
        DROP(b, e >> 8);
        return (int)(e & 0xFF);
    }
    return decode_long(b, t);
}

// The DC difference; -1 for a code no table has (the caller then gives up).
static inline int decode_dc(bit_reader *b, const huff_table *t, int *diff) {
    if (b->bits < 32) refill(b);
    int s = decode_symbol(b, t);
    if (s < 0) return -1;
    *diff = 0;
    if (s) {
        *diff = extend((int)PEEK(b, s), s);
        DROP(b, s);
    }
    return 0;
}

// Walks past a block's AC coefficients.
static inline int skip_ac(bit_reader *b, const huff_table *t) {
    for (int k = 1; k < 64;) {
        if (b->bits < 32) refill(b);
        // Two coefficients at once only while they cannot run past 63 (each advances k by at most 16): a block
        // that ends there must not eat the next block's first code.
        uint32_t e = (k < 32 ? t->pair : t->skip)[PEEK(b, LOOKAHEAD)];
        if (e) {
            DROP(b, e & 31);
            if (e & SKIP_EOB) return 0;
            k += (int)(e >> 5 & 63);
            continue;
        }
        int rs = decode_symbol(b, t);
        if (rs < 0) return -1;
        int r = rs >> 4, s = rs & 15;
        if (s) {
            DROP(b, s);
            k += r + 1;
        } else {
            if (r != 15) return 0;
            k += 16;
        }
    }
    return 0;
}

// Reads a block's AC coefficients into natural order, as libjpeg does (an index past 63 lands on 63).
static const uint8_t natural_order[80] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13,
    6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31,
    39, 46, 53, 60, 61, 54, 47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63};

static inline int read_ac(bit_reader *b, const huff_table *t, int16_t *block) {
    for (int k = 1; k < 64; k++) {
        if (b->bits < 32) refill(b);
        int rs = decode_symbol(b, t);
        if (rs < 0) return -1;
        int r = rs >> 4, s = rs & 15;
        if (s) {
            k += r;
            block[natural_order[k]] = (int16_t)extend((int)PEEK(b, s), s);
            DROP(b, s);
        } else {
            if (r != 15) return 0;
            k += 15;
        }
    }
    return 0;
}

// libjpeg's 2x2 reduced IDCT (jidctred.c) with the DC term left out. The DC term only
// enters column 0 of the first pass, where it adds exactly 4 * dequantised DC (a multiple
// of the rounding unit), so the outputs are limit[(dcq + q[i] + 4) >> 3] with q[i] the
// rest of the sum shifted down by 17 bits (see reduced_pixel). Keeping only q lets the
// second thread finish its blocks before their DC values are known.
static void idct_2x2_without_dc(const int16_t *c, const int16_t *quant, int32_t q[4]) {
    int64_t ws[2][8];
    static const int columns[5] = {0, 1, 3, 5, 7};
    for (int i = 0; i < 5; i++) {
        int col = columns[i];
        int64_t z0 = col == 0 ? 0 : (int64_t)c[col] * quant[col];
        int64_t tmp10 = z0 * (1 << 15);
        int64_t tmp0 = (int64_t)c[8 * 7 + col] * quant[8 * 7 + col] * -5906 +
                       (int64_t)c[8 * 5 + col] * quant[8 * 5 + col] * 6967 +
                       (int64_t)c[8 * 3 + col] * quant[8 * 3 + col] * -10426 +
                       (int64_t)c[8 * 1 + col] * quant[8 * 1 + col] * 29692;
        ws[0][col] = (int32_t)((tmp10 + tmp0 + 4096) >> 13);  // libjpeg keeps the work array in int
        ws[1][col] = (int32_t)((tmp10 - tmp0 + 4096) >> 13);
    }
    for (int r = 0; r < 2; r++) {
        int64_t tmp10 = ws[r][0] * (1 << 15);
        int64_t tmp0 = ws[r][7] * -5906 + ws[r][5] * 6967 + ws[r][3] * -10426 + ws[r][1] * 29692;
        q[r * 2] = (int32_t)((tmp10 + tmp0) >> 17);
        q[r * 2 + 1] = (int32_t)((tmp10 - tmp0) >> 17);
    }
}

static inline uint8_t reduced_pixel(int32_t dc, const int16_t *quant, int32_t q) {
    int32_t dcq = (int32_t)(int16_t)dc * quant[0];
    return idct_limit[(uint32_t)((dcq + q + 4) >> 3) & 1023];
}

// One MCU into its record: per block the DC value (predictor running), and for 2x2 blocks four q values.
static int decode_mcu(const plan *p, bit_reader *b, int32_t pred[4], int32_t *record) {
    for (int i = 0; i < p->block_count; i++) {
        const block_plan *bp = &p->blocks[i];
        int diff;
        if (decode_dc(b, bp->dc, &diff) < 0) return -1;
        pred[bp->comp] = (int32_t)((uint32_t)pred[bp->comp] + (uint32_t)diff);
        record[bp->slot] = pred[bp->comp];
        if (!bp->reduced2x2) {
            if (skip_ac(b, bp->ac) < 0) return -1;
        } else {
            int16_t block[64];
            memset(block, 0, sizeof block);
            if (read_ac(b, bp->ac, block) < 0) return -1;
            idct_2x2_without_dc(block, bp->quant, record + bp->slot + 1);
        }
    }
    return 0;
}

// An MCU's pixels; offsets turn the record's DC values into the true ones.
static void put_mcu(const plan *p, const int32_t *record, const int32_t offsets[4], uint64_t index) {
    uint32_t mx = (uint32_t)(index % p->mcus_x), my = (uint32_t)(index / p->mcus_x);
    uint32_t x0 = mx * (uint32_t)p->h_max, y0 = my * (uint32_t)p->v_max;
    uint8_t luma[4], cb[4], cr[4];
    int luma_blocks = 0;
    for (int i = 0; i < p->block_count; i++) {
        const block_plan *bp = &p->blocks[i];
        int32_t dc = (int32_t)((uint32_t)record[bp->slot] + (uint32_t)offsets[bp->comp]);
        if (bp->comp == 0) {
            luma[luma_blocks++] = reduced_pixel(dc, bp->quant, 0);
            continue;
        }
        uint8_t *out = bp->comp == 1 ? cb : cr;
        if (bp->reduced2x2) {
            for (int k = 0; k < 4; k++) out[k] = reduced_pixel(dc, bp->quant, record[bp->slot + 1 + k]);
        } else {
            out[0] = out[1] = out[2] = out[3] = reduced_pixel(dc, bp->quant, 0);
        }
    }
    for (int dy = 0; dy < p->v_max; dy++) {
        uint32_t y = y0 + (uint32_t)dy;
        if (y >= p->height) break;
        uint8_t *row = p->rgba + (size_t)y * p->width * 4;
        for (int dx = 0; dx < p->h_max; dx++) {
            uint32_t x = x0 + (uint32_t)dx;
            if (x >= p->width) break;
            int k = dy * p->h_max + dx;
            int yv = luma[k];
            uint8_t *px = row + (size_t)x * 4;
            if (p->components == 1) {
                px[0] = px[1] = px[2] = (uint8_t)yv;
            } else {
                // 2x2 chroma has one value per output pixel; 1x1 chroma repeats its one value.
                int c = p->chroma2x2 ? k : 0;
                px[0] = clamp255(yv + cr_r[cr[c]]);
                px[1] = clamp255(yv + (int)((cb_g[cb[c]] + cr_g[cr[c]]) >> 16));
                px[2] = clamp255(yv + cb_b[cb[c]]);
            }
            px[3] = 255;
        }
    }
}

// --- The second thread

static int pack_record(const plan *p, const int32_t *record, int16_t *packed) {
    for (int i = 0; i < p->block_count; i++) {
        const block_plan *bp = &p->blocks[i];
        packed[bp->slot] = (int16_t)(uint16_t)(uint32_t)record[bp->slot];
        if (!bp->reduced2x2) continue;
        for (int k = 1; k <= 4; k++) {
            int32_t q = record[bp->slot + k];
            if (q < INT16_MIN || q > INT16_MAX) return 0;
            packed[bp->slot + k] = (int16_t)q;
        }
    }
    return 1;
}

static void unpack_record(const plan *p, const int16_t *packed, int32_t *record) {
    for (int i = 0; i < p->slots_per_mcu; i++) record[i] = packed[i];
}

static void *speculate(void *arg) {
    speculation *s = arg;
    const plan *p = s->p;
    uint8_t *window = p->in->data ? NULL : malloc(WINDOW);
    if (!p->in->data && !window) {
        s->failed = 1;
        return NULL;
    }
    bit_reader b;
    reader_start(&b, p, s->raw_start, s->unstuffed_start, window);
    int32_t pred[4] = {0, 0, 0, 0};
    s->count = 0;
    s->clean_from = 0;
    while (s->count < s->capacity) {
        uint64_t at = reader_position(&b);
        if (at >= p->total_bits) break;
        s->positions[s->count] = (uint32_t)at;
        int32_t record[5 * MAX_BLOCKS];
        int16_t *packed = s->records + s->count * (uint64_t)p->slots_per_mcu;
        if (decode_mcu(p, &b, pred, record) < 0 || !pack_record(p, record, packed)) {
            // Not in step yet and hit a code no table has (or a q beyond 16 bits): start again at the next unread
            // byte. Records before this point are never used once it is past them (clean_from).
            b.buf = 0;
            b.bits = 0;
            s->clean_from = s->count;
            continue;
        }
        if (reader_position(&b) > p->total_bits) break;  // ran past the data: not a real MCU
        s->count++;
    }
    // positions[count] is where the last MCU ended: set above unless the records ran out.
    if (s->count == s->capacity) s->positions[s->count] = (uint32_t)reader_position(&b);
    s->failed = b.failed;
    free(window);
    return NULL;
}

// --- Setting up

static int plan_scan(plan *p, j_decompress_ptr cinfo) {
    if (cinfo->progressive_mode || cinfo->arith_code || cinfo->data_precision != 8 || cinfo->restart_interval)
        return 0;
    if (cinfo->Ss != 0 || cinfo->Se != 63 || cinfo->Ah != 0 || cinfo->Al != 0) return 0;
    if (cinfo->scale_num != 1 || cinfo->scale_denom != 8) return 0;
    if (cinfo->out_color_space != JCS_EXT_RGBA) return 0;
    int n = cinfo->num_components;
    if (cinfo->comps_in_scan != n) return 0;  // one interleaved scan with every component
    if (n == 1) {
        if (cinfo->jpeg_color_space != JCS_GRAYSCALE) return 0;
    } else if (n == 3) {
        if (cinfo->jpeg_color_space != JCS_YCbCr) return 0;
    } else {
        return 0;
    }
    jpeg_component_info *luma = &cinfo->comp_info[0];
    int h = luma->h_samp_factor, v = luma->v_samp_factor;
    if (n == 1) {
        h = v = 1;  // a single-component scan has one block per MCU whatever the factors say
    } else {
        if (h < 1 || h > 2 || v < 1 || v > 2) return 0;
        for (int c = 1; c < 3; c++)
            if (cinfo->comp_info[c].h_samp_factor != 1 || cinfo->comp_info[c].v_samp_factor != 1) return 0;
    }
    p->h_max = h;
    p->v_max = v;
    p->components = n;
    p->width = cinfo->output_width;
    p->height = cinfo->output_height;
    if (n == 1) {
        p->mcus_x = (cinfo->image_width + 7) / 8;
        p->mcus_y = (cinfo->image_height + 7) / 8;
    } else {
        p->mcus_x = (cinfo->image_width + 8 * (uint32_t)h - 1) / (8 * (uint32_t)h);
        p->mcus_y = (cinfo->image_height + 8 * (uint32_t)v - 1) / (8 * (uint32_t)v);
    }
    p->mcu_count = (uint64_t)p->mcus_x * p->mcus_y;
    if ((uint64_t)p->mcus_x * (uint64_t)h < p->width || (uint64_t)p->mcus_y * (uint64_t)v < p->height) return 0;
    int slot = 0;
    p->block_count = 0;
    for (int i = 0; i < cinfo->comps_in_scan; i++) {
        jpeg_component_info *comp = cinfo->cur_comp_info[i];
        int index = (int)(comp - cinfo->comp_info);
        if (index < 0 || index >= n) return 0;
        if (comp->dc_tbl_no < 0 || comp->dc_tbl_no > 3 || comp->ac_tbl_no < 0 || comp->ac_tbl_no > 3) return 0;
        if (comp->quant_tbl_no < 0 || comp->quant_tbl_no >= NUM_QUANT_TBLS) return 0;
        JQUANT_TBL *quant = cinfo->quant_tbl_ptrs[comp->quant_tbl_no];
        if (!quant) return 0;
        huff_table *dc = &p->tables[comp->dc_tbl_no], *ac = &p->tables[4 + comp->ac_tbl_no];
        if (!build_table(dc, cinfo->dc_huff_tbl_ptrs[comp->dc_tbl_no], 1)) return 0;
        if (!build_table(ac, cinfo->ac_huff_tbl_ptrs[comp->ac_tbl_no], 0)) return 0;
        int blocks = index == 0 ? h * v : 1;
        int reduced = index != 0 && h == 2 && v == 2;
        for (int k = 0; k < blocks; k++) {
            block_plan *bp = &p->blocks[p->block_count++];
            bp->comp = index;
            bp->reduced2x2 = reduced;
            bp->dc = dc;
            bp->ac = ac;
            for (int q = 0; q < 64; q++) bp->quant[q] = (int16_t)quant->quantval[q];
            bp->slot = slot;
            slot += reduced ? 5 : 1;
        }
    }
    p->slots_per_mcu = slot;
    p->chroma2x2 = n == 3 && h == 2 && v == 2;
    return 1;
}

// Where the scan's data ends before `length` (its first marker, else `length`), and how many stuffed bytes come
// before that; SIZE_MAX when the file cannot be read.
static size_t scan_end(const mg_input *in, size_t start, size_t length, uint64_t *stuffed, uint8_t *scratch) {
    size_t i = start;
    *stuffed = 0;
    while (i < length) {
        // A chunk and the byte after it, so that a 0xFF at the chunk's end can be told from stuffing.
        size_t chunk = length - i < WINDOW ? length - i : WINDOW;
        size_t viewed = chunk + (i + chunk < length);
        const uint8_t *bytes = mg_input_view(in, i, viewed, scratch);
        if (!bytes) return SIZE_MAX;
        size_t j = 0;
        for (;;) {
            const uint8_t *ff = j < chunk ? memchr(bytes + j, 0xFF, chunk - j) : NULL;
            if (!ff) break;
            j = (size_t)(ff - bytes);
            if (j + 1 >= viewed || bytes[j + 1] != 0x00) return i + j;
            (*stuffed)++;
            j += 2;
        }
        i += j > chunk ? j : chunk;  // a stuffed pair may end one byte into the next chunk
    }
    return length;
}

static int input_byte(const mg_input *in, uint64_t offset) {
    uint8_t byte;
    return mg_input_read(in, offset, &byte, 1) == 1 ? byte : -1;
}

int mg_jpeg_decode_eighth(j_decompress_ptr cinfo, const mg_input *in, uint64_t scan_start, uint8_t *rgba,
                          int threads) {
    pthread_once(&tables_once, build_tables);
    if (!cinfo->src || cinfo->unread_marker) return MG_EIGHTH_UNSUPPORTED;
    if (scan_start > in->length || in->length > SIZE_MAX - 1) return MG_EIGHTH_UNSUPPORTED;
    size_t length = (size_t)in->length;
    plan *p = calloc(1, sizeof *p);
    if (!p) return MG_EIGHTH_UNSUPPORTED;
    int result = MG_EIGHTH_UNSUPPORTED;
    speculation s = {0};
    pthread_t thread;
    int started = 0;
    // A file's scratch: scan_end's chunks and the first thread's window.
    uint8_t *window = in->data ? NULL : malloc(WINDOW + 1);
    if (!plan_scan(p, cinfo) || (!in->data && !window)) goto done;
    p->rgba = rgba;
    p->in = in;
    p->start = (size_t)scan_start;
    uint64_t stuffed_total = 0;
    p->end = scan_end(in, p->start, length, &stuffed_total, window);
    if (p->end == SIZE_MAX || p->end + 1 >= length || input_byte(in, p->end + 1) != 0xD9) goto done;  // must end at EOI
    p->total_bits = ((uint64_t)(p->end - p->start) - stuffed_total) * 8;
    // The second thread starts halfway through the scan (phones append a second image after EOI: not the file's
    // middle), not on a stuffed 0x00.
    size_t split = p->start + (p->end - p->start) / 2;
    if (split > p->start && input_byte(in, split - 1) == 0xFF) split++;
    uint64_t stuffed = 0;  // before the split: the second thread's positions count unstuffed bits from the start
    if (scan_end(in, p->start, split, &stuffed, window) == SIZE_MAX) goto done;

    if (threads > 1 && p->end - p->start >= (1u << 16) && split < p->end && p->total_bits < UINT32_MAX) {
        s.p = p;
        s.raw_start = split;
        s.unstuffed_start = (uint64_t)(split - p->start) - stuffed;
        s.capacity = p->mcu_count;
        s.records = malloc((size_t)s.capacity * (size_t)p->slots_per_mcu * sizeof(int16_t));
        s.positions = malloc((size_t)(s.capacity + 1) * sizeof(uint32_t));
        if (s.records && s.positions && pthread_create(&thread, NULL, speculate, &s) == 0) started = 1;
    }
    uint64_t split_bits = started ? s.unstuffed_start * 8 : UINT64_MAX;

    bit_reader b;
    reader_start(&b, p, p->start, 0, window);
    int32_t pred[4] = {0, 0, 0, 0}, zero[4] = {0, 0, 0, 0};
    int32_t record[5 * MAX_BLOCKS];
    uint64_t m = 0, candidate = 0, end_position = 0;
    int joined = 0, used_split = 0;
    for (;;) {
        for (; m < p->mcu_count; m++) {
            uint64_t at = reader_position(&b);
            if (at >= split_bits) {
                if (!joined) {
                    pthread_join(thread, NULL);
                    joined = 1;
                }
                while (candidate < s.count && s.positions[candidate] < at) candidate++;
                if (s.failed) split_bits = UINT64_MAX;  // its records may be of zeros read past a failure
                if (candidate < s.count && s.positions[candidate] == at && !s.failed) break;  // in step with it
                if (candidate >= s.count) split_bits = UINT64_MAX;              // nothing left to meet
            }
            if (decode_mcu(p, &b, pred, record) < 0) goto done;
            put_mcu(p, record, zero, m);
        }
        if (m == p->mcu_count) {
            end_position = reader_position(&b);
            break;
        }
        // The same position at an MCU start means the same decoding from there on. The records used must come after
        // the second thread's last restart, and it must have reached the end; if not, this thread goes on alone.
        uint64_t need = p->mcu_count - m;
        if (candidate >= s.clean_from && candidate + need <= s.count) {
            int32_t offsets[4] = {0, 0, 0, 0};
            if (candidate > 0) {
                const int16_t *before = s.records + (candidate - 1) * (uint64_t)p->slots_per_mcu;
                for (int i = 0; i < p->block_count; i++) {
                    int c = p->blocks[i].comp;
                    offsets[c] = (int32_t)((uint32_t)pred[c] - (uint32_t)(int32_t)before[p->blocks[i].slot]);
                }
            } else {
                for (int c = 0; c < 4; c++) offsets[c] = pred[c];
            }
            for (uint64_t i = 0; i < need; i++) {
                unpack_record(p, s.records + (candidate + i) * (uint64_t)p->slots_per_mcu, record);
                put_mcu(p, record, offsets, m + i);
            }
            end_position = s.positions[candidate + need];
            used_split = 1;
            break;
        }
        split_bits = UINT64_MAX;
    }
    // Only the padding of the last byte may follow; more data (or less) is libjpeg's to report.
    if (end_position <= p->total_bits && p->total_bits - end_position < 8 && !b.failed) {
        result = MG_EIGHTH_DONE;
        split_decodes += (uint64_t)used_split;
    }

done:
    if (started) {
        if (!joined) pthread_join(thread, NULL);
    }
    free(s.records);
    free(s.positions);
    free(window);
    free(p);
    return result;
}
