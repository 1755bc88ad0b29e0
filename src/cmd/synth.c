/* synth.c - nemoperf-synth: the synthetic workload's front door (src/job/synthetic.c).
 *
 * Run under srun (one task per "GPU") by `launch WORKLOAD=synthetic`.
 */
#include "nemoperf/job/synthetic.h"

int main(int argc, char **argv)
{
    return np_synth_main(argc, argv);
}
