#ifndef MAGPIE_MG_PNG_H
#define MAGPIE_MG_PNG_H

#include "mg_common.h"

#endif
