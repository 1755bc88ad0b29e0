/* amlog_fuzz.c - libFuzzer target for the AutoModel benchmark log reader (src/parse/automodel_log.c).
 *
 * The first byte picks where the input splits into a stdout and a stderr text; both are read
 * apart, then as one merged text.  Whatever the input: no crash, no leak, and the steps of the
 * kept run have strictly increasing iterations, each step time and memory parsed or NAN.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/automodel_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check(const struct np_scan_result *r, const struct np_amlog_summary *s)
{
    if (!s->seen && (r->nsteps || r->steps))
        abort();
    for (size_t i = 0; i < r->nsteps; i++) {
        if (r->steps[i].gen != NP_GEN_AMBENCH || r->steps[i].iteration < 0)
            abort();
        if (i && r->steps[i].iteration <= r->steps[i - 1].iteration)
            abort();
    }
    if (s->warmup_steps < -1 || s->timed_steps < -1 || s->gbs < -1)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t cut = size > 1 ? (size_t)data[0] * (size - 1) / 255 : 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    struct np_scan_result r;
    struct np_amlog_summary s;
    struct np_error e;
    if (np_amlog_buffers(text, cut, text + cut, len - cut, &r, &s, &e) != NP_OK)
        abort();
    fuzz_check(&r, &s);
    np_scan_result_free(&r);
    if (np_amlog_buffers(NULL, 0, text, len, &r, &s, &e) != NP_OK)
        abort();
    fuzz_check(&r, &s);
    np_scan_result_free(&r);
    return 0;
}
