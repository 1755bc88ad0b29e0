/* family.c - the table of recipe families: which family a run is, by the identity its manifest or the
 * options gave it.  NeMo 1.0/2.0 (the dgxc-benchmarking recipes and the NeMo 25.04 tables), AutoModel and DFM are
 * read by parse/run.c's recipe-driven analysis (the recipes folder and the reference tables); Megatron-Bridge
 * by its own (family_mbridge.c), nccl-tests' fabric checks by theirs (family_nccltests.c).  NeMo's row is the last:
 * it takes what no other claims.
 */
#include "nemoperf/parse/family.h"

#include <string.h>

static int family_automodel_claims(const struct np_identity *id, const struct np_parse_opts *o)
{
    (void)o;
    return strcmp(id->family, "automodel") == 0 || strcmp(id->recipe, "automodel") == 0;
}

static int family_dfm_claims(const struct np_identity *id, const struct np_parse_opts *o)
{
    (void)o;
    return strcmp(id->family, "dfm") == 0 || strcmp(id->recipe, "wan2.1") == 0;
}

static int family_nemo_claims(const struct np_identity *id, const struct np_parse_opts *o)
{
    (void)id;
    (void)o;
    return 1;
}

static const struct np_run_family family_automodel = {"automodel", "NeMo AutoModel", 5.0, family_automodel_claims,
                                                      NULL};
static const struct np_run_family family_dfm = {"dfm", "NeMo DFM", 5.0, family_dfm_claims, NULL};
static const struct np_run_family family_nemo = {"nemo", "NeMo", 5.0, family_nemo_claims, NULL};

static const struct np_run_family *const family_table[] = {&np_family_mbridge, &np_family_nccltests,
                                                           &family_automodel, &family_dfm, &family_nemo};
#define FAMILY_N (sizeof family_table / sizeof family_table[0])

const struct np_run_family *np_run_family_of(const struct np_identity *id, const struct np_parse_opts *o)
{
    for (size_t i = 0; i < FAMILY_N; i++)
        if (family_table[i]->claims(id, o))
            return family_table[i];
    return &family_nemo;
}

const struct np_run_family *np_run_family_find(const char *name)
{
    for (size_t i = 0; name && i < FAMILY_N; i++)
        if (strcmp(family_table[i]->name, name) == 0)
            return family_table[i];
    return NULL;
}
