// Umbrella header of the C target. Only stdint/stddef types appear in these
// headers: the codec libraries' own headers stay inside the .c files
// (jpeglib.h, for one, does not compile without <stdio.h> first).
#ifndef MAGPIE_CIMAGECODECS_H
#define MAGPIE_CIMAGECODECS_H

#include "mg_common.h"
#include "mg_jpeg.h"
#include "mg_png.h"
#include "mg_gif.h"
#include "mg_webp.h"
#include "mg_avif.h"
#include "mg_heif.h"
#include "mg_tiff.h"
#include "mg_jxl.h"
#include "mg_color.h"
#include "mg_svg.h"
#include "mg_faces.h"

#endif
