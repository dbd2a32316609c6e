// nghttp2 as Swift sees it. Debian 12 ships 1.52, so the library is used through the
// ssize_t APIs (nghttp2_session_mem_send/mem_recv, nghttp2_data_provider); a newer
// library keeps those, so no version switch is needed here yet.
#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H

#include <nghttp2/nghttp2.h>

#endif
