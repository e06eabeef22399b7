/* A shared library that is not an mxc GPU plug-in (no entry point). */
#include "mxc/mxc.h"

MXC_API int mxc_not_a_plugin(void);
int mxc_not_a_plugin(void) { return 0; }
