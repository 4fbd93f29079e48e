#ifndef MAGPIE_MG_GIF_H
#define MAGPIE_MG_GIF_H

#include "mg_common.h"

#endif
