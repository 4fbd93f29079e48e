#ifndef MAGPIE_MG_WEBP_H
#define MAGPIE_MG_WEBP_H

#include "mg_common.h"

#endif
