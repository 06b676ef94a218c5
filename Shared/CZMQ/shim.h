#ifndef LOGBOOK_CZMQ_SHIM_H
#define LOGBOOK_CZMQ_SHIM_H
#include <zmq.h>
#endif
