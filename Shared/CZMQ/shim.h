#ifndef LOGBOOK_CZMQ_SHIM_H
#define LOGBOOK_CZMQ_SHIM_H
#include <zmq.h>
#ifdef __linux__
// SocketPump wakes its thread through an eventfd (one descriptor, 8-byte counter).
#include <sys/eventfd.h>
#include <sys/prctl.h>
// SocketPump names its thread (prctl is variadic, which Swift cannot call).
static inline int logbook_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
#endif
#endif
