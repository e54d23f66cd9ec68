# testsuite/models/common.sh — sourced by run-models.sh and check-torch.sh:
# where things are, the PASS/FAIL lines, and the fields of a meta.json.
#
# Sets here (this folder), srcdir, builddir, TEC and PYTHON from the
# environment or their defaults (the tree this file is in, its tec,
# /usr/bin/python3), and the counters behind `report` and `summary`.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=$(cd "${srcdir:-$here/../..}" && pwd)
builddir=$(cd "${builddir:-$srcdir}" && pwd)
TEC=${TEC:-$builddir/tec}
if [ -z "${PYTHON:-}" ]; then
    if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

passed=0
failed=0

# report NAME STATUS LOGFILE: one PASS/FAIL line (a failure shows the log).
report() {
    if [ "$2" = 0 ]; then
        passed=$((passed + 1))
        echo "PASS: $1"
    else
        failed=$((failed + 1))
        echo "FAIL: $1"
        sed -e 's/^/    | /' "$3" | head -40
    fi
}

# summary: the last line, and the exit status (1 if any test failed).
summary() {
    echo "$passed passed, $failed failed"
    [ "$failed" = 0 ]
}

# meta_fields META: the model, its model file (or an empty line), the
# program, then the recorded tec options, one per line; files made absolute
# against srcdir.
meta_fields() {
    "$PYTHON" - "$1" "$srcdir" <<'EOF'
import json, os, sys
m = json.load(open(sys.argv[1]))
top = sys.argv[2]
print(m["model"])
print(os.path.join(top, m["model_file"]) if m.get("model_file") else "")
print(os.path.join(top, m["program"]))
for a in m.get("tec_args", []):
    if "\n" in a:
        sys.exit("%s: a tec argument contains a newline" % sys.argv[1])
    print(a)
EOF
}
