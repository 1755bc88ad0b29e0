/* input_fuzz.c - libFuzzer target for the readers of other programs' output: packed .npy files, sbatch and
 * squeue output, slurmrestd replies (every API version), SLURMRESTD_URL and Slurm time limits.
 *
 * The first byte picks the reader (and a parameter), the rest is its input.  Besides ASan/UBSan it checks
 * what callers rely on: a failure always says why (err set), a success's numbers are consistent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/npy.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/slurm/rest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_said_why(enum np_status st, const struct np_error *err)
{
    if (st != NP_OK && !err->text[0]) {
        fprintf(stderr, "input_fuzz: a failure (%d) without a message\n", (int)st);
        abort();
    }
}

static void fuzz_jobs_sane(const struct np_job_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (!l->jobs[i].job_id || !l->jobs[i].state)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    const unsigned char *in = data + 1;
    size_t n = size - 1;
    char *text = malloc(n + 1); /* NUL-terminated copy for the readers of C strings */
    if (!text)
        return 0;
    memcpy(text, in, n);
    text[n] = '\0';
    struct np_error err;
    memset(&err, 0, sizeof err);
    size_t napi = 0;
    const struct np_rest_api *apis = np_rest_apis(&napi);
    const struct np_rest_api *api = napi ? &apis[(sel >> 3) % napi] : NULL;
    char *ids[] = {"42", "43", "1453225"};
    switch (sel & 7) {
    case 0: { /* a packed-sequence .npy; gbs from the high bits */
        struct np_pack_stats s;
        int gbs = (int)(sel >> 3);
        enum np_status st = np_npy_pack_stats_mem(in, n, "fuzz.npy", gbs, &s, &err);
        fuzz_said_why(st, &err);
        if (st == NP_OK) {
            if (gbs > 0 && s.packs % (size_t)gbs != 0)
                abort(); /* whole global batches only */
            double t, q;
            np_pack_means(&s, &t, &q);
            (void)t;
            (void)q;
        }
        break;
    }
    case 1: { /* sbatch --parsable */
        char *id = NULL, *cluster = NULL;
        if (np_slurm_parse_parsable(text, &id, &cluster) == 0 && (!id || !*id))
            abort();
        free(id);
        free(cluster);
        (void)np_slurm_cli_ambiguous(text);
        break;
    }
    case 2: { /* squeue lines, plain and tagged */
        struct np_job_list l = {0};
        if (np_slurm_parse_squeue(text, &l) == 0)
            fuzz_jobs_sane(&l);
        np_job_list_free(&l);
        struct np_job_list t = {0};
        if (np_slurm_parse_squeue_tagged(text, "nemoperf-0123456789abcdef", &t) == 0)
            fuzz_jobs_sane(&t);
        np_job_list_free(&t);
        break;
    }
    case 3: /* a ping reply */
        fuzz_said_why(np_rest_parse_ping(api, (sel & 8) ? 200 : 503, text, n, &err), &err);
        break;
    case 4: { /* a submit reply */
        struct np_rest_submit_reply r;
        memset(&r, 0, sizeof r);
        enum np_status st = np_rest_parse_submit((sel & 8) ? 200 : 500, text, n, &r, &err);
        fuzz_said_why(st, &err);
        np_rest_submit_reply_free(&r);
        break;
    }
    case 5: { /* a jobs reply, by id and by tag */
        struct np_job_list l = {0};
        enum np_status st = np_rest_parse_jobs((sel & 8) ? 200 : 404, text, n, ids, 3, &l, &err);
        fuzz_said_why(st, &err);
        if (st == NP_OK)
            fuzz_jobs_sane(&l);
        np_job_list_free(&l);
        memset(&err, 0, sizeof err);
        struct np_job_list t = {0};
        st = np_rest_parse_tagged(200, text, n, "nemoperf-0123456789abcdef", (sel & 16) ? "nemoperf" : NULL, &t, &err);
        fuzz_said_why(st, &err);
        if (st == NP_OK)
            fuzz_jobs_sane(&t);
        np_job_list_free(&t);
        break;
    }
    case 6: { /* SLURMRESTD_URL */
        struct np_rest_url u;
        memset(&u, 0, sizeof u);
        enum np_status st = np_rest_url_parse(text, &u, &err);
        fuzz_said_why(st, &err);
        if (st == NP_OK && (!u.display || (!u.base && !u.socket)))
            abort();
        np_rest_url_free(&u);
        break;
    }
    default: { /* an OpenAPI document's versions; a time limit */
        free(np_rest_openapi_versions(text, n));
        long m = np_rest_time_minutes(text);
        if (m < -1)
            abort();
        break;
    }
    }
    free(text);
    return 0;
}
