/* codegen/textread.c — see textread.h. */
#include "codegen/textread.h"

#include <stdlib.h>
#include <string.h>

bool cg_read_lit(cg_reader *r, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, s, n) != 0)
        return false;
    r->p += n;
    return true;
}

bool cg_read_num(cg_reader *r, long long lo, long long hi, long long *v)
{
    const char *q = r->p;
    bool neg = q < r->end && *q == '-';
    long long x = 0;
    q += neg;
    if (q >= r->end || *q < '0' || *q > '9')
        return false;
    while (q < r->end && *q >= '0' && *q <= '9') {
        if (x > (1LL << 62) / 10)
            return false;
        x = 10 * x + (*q++ - '0');
    }
    x = neg ? -x : x;
    if (x < lo || x > hi)
        return false;
    r->p = q;
    *v = x;
    return true;
}

char *cg_read_str(cg_reader *r)
{
    cg_reader at = *r;
    long long n;
    if (!cg_read_num(&at, 0, at.end - at.p, &n) || !cg_read_lit(&at, ":") ||
        n > at.end - at.p || memchr(at.p, 0, (size_t)n))
        return NULL;
    char *s = strndup(at.p, (size_t)n);
    if (s)
        r->p = at.p + n;
    return s;
}

bool cg_read_word(cg_reader *r, char *out, size_t n)
{
    size_t k = 0;
    while (r->p + k < r->end && r->p[k] != ' ' && r->p[k] != '\n')
        k++;
    if (k == 0 || k >= n)
        return false;
    memcpy(out, r->p, k);
    out[k] = 0;
    r->p += k;
    return true;
}
