#ifndef LOGBOOK_CZMQ_SHIM_H
#define LOGBOOK_CZMQ_SHIM_H
#include <zmq.h>
#ifdef __linux__
// SocketPump wakes its thread through an eventfd (one descriptor, 8-byte counter).
#include <sys/eventfd.h>
#endif
#endif
