// Platform calls Swift's Glibc/Darwin modules do not export (the I/O loop's wake-up).
#ifndef CPLATFORM_SHIM_H
#define CPLATFORM_SHIM_H

#ifdef __linux__
#include <sys/eventfd.h>
#endif

#endif
