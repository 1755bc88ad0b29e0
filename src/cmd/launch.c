/* launch.c - nemoperf-launch front end (placeholder until the launch pipeline lands).
 *
 * Prints its usage; the real program is tracked in the issues.
 */
#include <stdio.h>
#include <string.h>

#include "nemoperf/diag.h"

int main(int argc, char **argv)
{
    np_set_progname(argv[0]);
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: nemoperf-launch [--help]\n");
        return 0;
    }
    np_errorf("not implemented yet; see --help");
    return 1;
}
