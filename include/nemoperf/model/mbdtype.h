/* mbdtype.h - Megatron-Bridge's compute dtypes (-c of scripts/performance), shared by launch and parse.
 *
 * Owned by src/model/mbdtype.c.  Names as Megatron-Bridge's argument parser spells them, the published table
 * labels (BF16, FP8, FP8-CS, MXFP8, FP8-MX, NVFP4) accepted as aliases.
 */
#ifndef NEMOPERF_MODEL_MBDTYPE_H
#define NEMOPERF_MODEL_MBDTYPE_H

/* Megatron-Bridge's -c compute dtypes (scripts/performance/argument_parser.py). */
enum np_mb_dtype { NP_MB_DTYPE_NONE = -1, NP_MB_BF16 = 0, NP_MB_FP8_CS, NP_MB_FP8_MX, NP_MB_FP8_SC, NP_MB_NVFP4,
                   NP_MB_NDTYPES };

/* bf16 fp8_cs fp8_mx fp8_sc nvfp4, and the published labels BF16 FP8 FP8-CS MXFP8 FP8-MX NVFP4 (any case). */
enum np_mb_dtype np_mb_dtype_parse(const char *s);
const char *np_mb_dtype_name(enum np_mb_dtype d);  /* "fp8_mx"; "?" for NONE */
const char *np_mb_dtype_label(enum np_mb_dtype d); /* the 26.02+ tables' label: "MXFP8", "FP8", "NVFP4", "BF16" */

#endif
