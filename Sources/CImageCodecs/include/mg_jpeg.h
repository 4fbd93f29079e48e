#ifndef MAGPIE_MG_JPEG_H
#define MAGPIE_MG_JPEG_H

#include "mg_common.h"

#endif
