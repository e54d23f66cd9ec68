# Every allocation site and every write site of a whole run (compile from
# a warm cache, load, run, profile, report, save the outputs) made to fail
# once, by testsuite/faults/run.sh: each run ends with the right outputs
# or with exit status 1 and an error, and leaves no partial file.  (Found
# before: a failed allocation of the cache directory's name ended the run
# with status 0 and no outputs, a failed write left half a JSON report,
# out of memory was an internal error, flex exited with status 2.)
# `make check-faults` does the same over ResNet-18.  In an ASan build,
# LeakSanitizer checks at the end of every one of those runs that it
# leaked nothing (a leak is exit status 23: a finding).
. "$srcdir/testsuite/cli/lib.inc"
TEC=$TEC bash "$srcdir/testsuite/faults/run.sh" "$PWD/faults" "$srcdir/examples/conv.te" >log 2>&1 ||
    { cat log; fail "fault injection"; }
grep -q '^faults: [1-9][0-9]* allocation sites and [1-9][0-9]* write sites of conv.te failed once each: 0 findings$' log ||
    { cat log; fail "summary"; }
