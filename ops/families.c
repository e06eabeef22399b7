/* The table of operator families (ops/families.bzl), handed to the
 * registry when the library loads. The registry builds itself from it on
 * first use (core/op/registry.h). A constructor, not a call from the C
 * API, so that tests and programs linking the internal libraries get the
 * same operators as the shared library. */
#include "ops/families.h"

#define MXC__OP_FAMILY_ROW(name) {#name, mxc__ops_register_##name},
static const mxc__op_family k_families[] = {
    MXC__OP_FAMILIES(MXC__OP_FAMILY_ROW)};
#undef MXC__OP_FAMILY_ROW

__attribute__((constructor)) static void families_install(void) {
  mxc__registry_set_families(k_families,
                             (int)(sizeof k_families / sizeof k_families[0]));
}
