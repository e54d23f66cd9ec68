# How the threads of a parallel loop share its iterations (the preamble's
# tec_loop_start / tec_loop_take, doc/codegen.md "Threads"): every
# iteration runs exactly once, for empty, short and long loops and for more
# threads than the preamble has shares; a thread done with its own share
# takes over the rest of a slower thread's instead of waiting for it; and a
# loop of more than 2^32 iterations is split into units without losing any.
# The helpers are taken from tec's own emitted C and driven by a small
# OpenMP program.
. "$srcdir/testsuite/cli/lib.inc"
cat >chain.te <<'TE'
import "nn.te"
input x: f32[16, 256]
h = linear(x, 256) as "fc1"
y = relu(h) as "act1"
output y
TE
expect_status 0 "$TEC" -O2 --emit=c chain.te -o k.c
grep -q 'tec_loop_take' k.c || fail "no parallel loop taking its shares in the emitted C"
sed -n '1,/^\/\* @/p' k.c | sed '$d' >shares.c
cat >>shares.c <<'C'
#include <stdio.h>
#include <time.h>
static int runs[4096];
static void nap(void) { struct timespec t = {0, 2000000}; nanosleep(&t, NULL); }
/* Runs lo..hi on n threads, thread `slow` napping after each claim; fails
 * unless each iteration ran once; returns the iterations the slow one ran. */
static long share_loop(int64_t lo, int64_t hi, int n, int slow)
{
    long by_slow = 0, bad = 0;
    memset(runs, 0, sizeof runs);
    tec_num_threads = n;
    tec_loop l;
    if (tec_loop_start(&l, lo, hi))
#pragma omp parallel num_threads(n) reduction(+:by_slow, bad)
    {
        int t = omp_get_thread_num();
        int64_t first, end;
        while (tec_loop_take(&l, t, omp_get_num_threads(), &first, &end)) {
            if (first < lo || end > hi || first >= end)
                bad++;
            for (int64_t i = first; i < end && !bad; i++)
                __atomic_add_fetch(&runs[i - lo], 1, __ATOMIC_RELAXED);
            if (t == slow) {
                by_slow += (long)(end - first);
                nap();
            }
        }
    }
    for (int64_t i = lo; i < hi; i++)
        bad += runs[i - lo] != 1;
    if (bad) {
        printf("FAIL: %lld..%lld on %d threads: %ld iterations not run once\n",
               (long long)lo, (long long)hi, n, bad);
        exit(1);
    }
    return by_slow;
}
int main(void)
{
    static const int64_t sizes[] = {0, 1, 2, 3, 5, 9, 16, 57, 1000, 4096};
    for (int n = 1; n <= 40; n += n < 4 ? 1 : 36)
        for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; k++)
            share_loop(-7, -7 + sizes[k], n, -1);
    long slow = share_loop(0, 64, 2, 1);
    if (slow > 24) {
        printf("FAIL: the napping thread of 2 ran %ld of 64 iterations\n", slow);
        return 1;
    }
    /* 2^33 + 5 iterations, counted in units of several, on a team of one
     * where the preamble planned three shares (OpenMP gave fewer threads):
     * the one thread's claims cover the range exactly once. */
    static int64_t claim[4096][2];
    int nclaims = 0;
    tec_num_threads = 3;
    tec_loop l;
    int64_t lo = -((int64_t)1 << 32), hi = lo + ((int64_t)1 << 33) + 5, first, end;
    tec_loop_start(&l, lo, hi);
    while (nclaims < 4096 && tec_loop_take(&l, 0, 1, &first, &end)) {
        claim[nclaims][0] = first;
        claim[nclaims++][1] = end;
    }
    for (int64_t next = lo; ; ) {   /* the claims, in order, tile lo..hi */
        int k = 0;
        while (k < nclaims && claim[k][0] != next)
            k++;
        if (k == nclaims || claim[k][1] <= next) {
            printf("FAIL: no claim of %d starts at %lld\n", nclaims, (long long)next);
            return 1;
        }
        next = claim[k][1];
        if (next == hi)
            break;
    }
    printf("ok\n");
    return 0;
}
C
${CC:-cc} -std=gnu11 -O2 -fopenmp shares.c -o shares >cc.out 2>&1 || { cat cc.out; fail "the shares program does not build"; }
./shares >run.out 2>&1 || { cat run.out; fail "loop shares"; }
exit 0
