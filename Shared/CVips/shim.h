#ifndef LOGBOOK_CVIPS_SHIM_H
#define LOGBOOK_CVIPS_SHIM_H
#include <vips/vips.h>
#endif
