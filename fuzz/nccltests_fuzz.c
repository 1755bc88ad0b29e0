/* nccltests_fuzz.c - libFuzzer target for the nccl-tests result reader (src/parse/nccltests.c).
 *
 * The input is one output of a *_perf binary.  Whatever it is: no crash, no leak, and what callers rely on
 * holds: rows only with a size and a bus bandwidth column, counts never negative but the -1 "N/A" mark, the
 * peak row one of the rows at the largest sizes, the verdict of data errors always FAIL.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "nemoperf/parse/nccltests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct np_nccl_result r;
    if (np_nccltests_parse((const char *)data, size, &r) != NP_OK)
        abort();
    long long max = -1;
    for (size_t i = 0; i < r.nrows; i++) {
        const struct np_nccl_row *w = &r.rows[i];
        if (w->size < 0 || w->count < 0 || w->oop_wrong < -1 || w->ip_wrong < -1 || w->root < -1)
            abort();
        if (w->size > max)
            max = w->size;
    }
    if (r.nnotes < 0 || r.nnotes > NP_NCCL_NOTES || r.wrong_total < 0 || r.nranks < 0)
        abort();
    if (r.peak_index >= 0 && ((size_t)r.peak_index >= r.nrows || r.rows[r.peak_index].size * 4 < max))
        abort();
    char why[160];
    enum np_nccl_verdict v = np_nccl_verdict(&r, 100.0, why, sizeof why);
    if ((r.wrong_total > 0 || r.out_of_bounds > 0) && v != NP_NCCL_FAIL)
        abort();
    np_nccl_result_free(&r);
    return 0;
}
