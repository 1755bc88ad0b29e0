/* mbdtype.c - Megatron-Bridge's compute dtype names (-c), their published labels, and parsing.
 *
 * Moved down from parse/mbridge.c so that the launch of a Megatron-Bridge row (launch/config.c) and the parse
 * of its log name dtypes the same way.  Names: MB argument_parser.py -c choices; labels: the performance
 * summary's Precision column.
 */
#include "nemoperf/model/mbdtype.h"

#include <stddef.h>
#include <strings.h>

static const struct {
    const char *name;
    enum np_mb_dtype d;
} mbdtype_names[] = {
    {"bf16", NP_MB_BF16},    {"fp8_cs", NP_MB_FP8_CS}, {"fp8_mx", NP_MB_FP8_MX}, {"fp8_sc", NP_MB_FP8_SC},
    {"nvfp4", NP_MB_NVFP4},  {"fp8", NP_MB_FP8_CS},    {"fp8-cs", NP_MB_FP8_CS}, {"mxfp8", NP_MB_FP8_MX},
    {"fp8-mx", NP_MB_FP8_MX}, {"fp8-sc", NP_MB_FP8_SC},
};

enum np_mb_dtype np_mb_dtype_parse(const char *s)
{
    if (!s)
        return NP_MB_DTYPE_NONE;
    for (size_t i = 0; i < sizeof mbdtype_names / sizeof mbdtype_names[0]; i++)
        if (strcasecmp(s, mbdtype_names[i].name) == 0)
            return mbdtype_names[i].d;
    return NP_MB_DTYPE_NONE;
}

const char *np_mb_dtype_name(enum np_mb_dtype d)
{
    return d >= 0 && d < NP_MB_NDTYPES ? mbdtype_names[d].name : "?";
}

const char *np_mb_dtype_label(enum np_mb_dtype d)
{
    static const char *const labels[NP_MB_NDTYPES] = {"BF16", "FP8", "MXFP8", "FP8-SC", "NVFP4"};
    return d >= 0 && d < NP_MB_NDTYPES ? labels[d] : "?";
}
