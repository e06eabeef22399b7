/* MXNet's legacy operator names (MXNet 0.x symbolic operators, still
 * aliases in MXNet 1.9, so 0.8-era graph files name them): CamelCase
 * forms of the same-shape and scalar binary operators. Old JSON loads
 * with them and is written back under the current names. */
#include "ops/binary/binary.h"

static const char *const k_legacy[][2] = {
    {"_Plus", "add"},
    {"_Minus", "sub"},
    {"_Mul", "mul"},
    {"_Div", "div"},
    {"_Mod", "mod"},
    {"_Power", "power"},
    {"_Maximum", "maximum"},
    {"_Minimum", "minimum"},
    {"_Hypot", "hypot"},
    {"_Equal", "equal"},
    {"_Not_Equal", "not_equal"},
    {"_Greater", "greater"},
    {"_Greater_Equal", "greater_equal"},
    {"_Lesser", "lesser"},
    {"_Lesser_Equal", "lesser_equal"},
    {"_Logical_And", "logical_and"},
    {"_Logical_Or", "logical_or"},
    {"_Logical_Xor", "logical_xor"},
    {"_PlusScalar", "_plus_scalar"},
    {"_MinusScalar", "_minus_scalar"},
    {"_RMinusScalar", "_rminus_scalar"},
    {"_MulScalar", "_mul_scalar"},
    {"_DivScalar", "_div_scalar"},
    {"_RDivScalar", "_rdiv_scalar"},
    {"_ModScalar", "_mod_scalar"},
    {"_RModScalar", "_rmod_scalar"},
    {"_PowerScalar", "_power_scalar"},
    {"_RPowerScalar", "_rpower_scalar"},
    {"_MaximumScalar", "_maximum_scalar"},
    {"_MinimumScalar", "_minimum_scalar"},
    {"_HypotScalar", "_hypot_scalar"},
    {"_EqualScalar", "_equal_scalar"},
    {"_NotEqualScalar", "_not_equal_scalar"},
    {"_GreaterScalar", "_greater_scalar"},
    {"_GreaterEqualScalar", "_greater_equal_scalar"},
    {"_LesserScalar", "_lesser_scalar"},
    {"_LesserEqualScalar", "_lesser_equal_scalar"},
    {"_LogicalAndScalar", "_logical_and_scalar"},
    {"_LogicalOrScalar", "_logical_or_scalar"},
    {"_LogicalXorScalar", "_logical_xor_scalar"},
};

int mxc__bin_register_legacy(mxc__registry *r) {
  for (size_t i = 0; i < sizeof k_legacy / sizeof k_legacy[0]; ++i) {
    MXC_FORWARD_IF_ERROR(
        mxc__registry_add_alias(r, k_legacy[i][0], k_legacy[i][1]));
  }
  return MXC_OK;
}
