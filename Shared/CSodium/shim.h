#ifndef LOGBOOK_CSODIUM_SHIM_H
#define LOGBOOK_CSODIUM_SHIM_H
#include <sodium.h>
#endif
