/* runtime/weight_set.c — parameters in memory, by name (see weight_set.h). */
#include "runtime/weight_set.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a. */
static size_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

/* The slot of name, or the free slot where it would go (cap > 0). */
static size_t slot_of(char *const *names, size_t cap, const char *name)
{
    size_t i = hash_name(name) & (cap - 1);
    while (names[i] && strcmp(names[i], name) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

static bool grow(rt_weight_set *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    char **names = calloc(cap, sizeof *names);
    rt_tensor **tensors = calloc(cap, sizeof *tensors);
    if (!names || !tensors) {
        free(names);
        free(tensors);
        return false;
    }
    for (size_t i = 0; i < s->cap; i++)
        if (s->names[i]) {
            size_t k = slot_of(names, cap, s->names[i]);
            names[k] = s->names[i];
            tensors[k] = s->tensors[i];
        }
    free(s->names);
    free(s->tensors);
    s->names = names;
    s->tensors = tensors;
    s->cap = cap;
    return true;
}

bool rt_weight_set_put(rt_weight_set *s, const char *name, rt_tensor *t)
{
    if ((s->n + 1) * 2 > s->cap && !grow(s)) {
        rt_tensor_free(t);
        return false;
    }
    size_t k = slot_of(s->names, s->cap, name);
    if (s->names[k]) {
        rt_tensor_free(s->tensors[k]);
        s->tensors[k] = t;
        return true;
    }
    if (!(s->names[k] = strdup(name))) {
        rt_tensor_free(t);
        return false;
    }
    s->tensors[k] = t;
    s->n++;
    return true;
}

const rt_tensor *rt_weight_set_find(const rt_weight_set *s, const char *name)
{
    if (!s || !s->cap)
        return NULL;
    size_t k = slot_of(s->names, s->cap, name);
    return s->names[k] ? s->tensors[k] : NULL;
}

rt_tensor *rt_weight_set_take(rt_weight_set *s, const char *name, ir_dtype dtype, int ndim,
                              const int64_t *shape, bool *found, diag *d)
{
    *found = false;
    if (!s || !s->cap)
        return NULL;
    size_t k = slot_of(s->names, s->cap, name);
    if (!s->names[k])
        return NULL;
    *found = true;
    rt_tensor *w = s->tensors[k];
    if (!w) {
        diag_internal(d, "run", "parameter %s: its imported weights were handed to a "
                      "run already", name);
        return NULL;
    }
    bool same = w->dtype == dtype && w->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = w->shape[i] == shape[i];
    if (!same) {
        char *want = rt_shape_str(dtype, ndim, shape), *got = rt_shape_str(w->dtype, w->ndim, w->shape);
        diag_error(d, diag_noloc(), "parameter %s: the imported weights are %s but the program "
                   "declares %s", name, got ? got : "?", want ? want : "?");
        free(want);
        free(got);
        return NULL;
    }
    s->tensors[k] = NULL;
    return w;
}

void rt_weight_set_free(rt_weight_set *s)
{
    for (size_t i = 0; i < s->cap; i++)
        if (s->names[i]) {
            free(s->names[i]);
            rt_tensor_free(s->tensors[i]);
        }
    free(s->names);
    free(s->tensors);
    memset(s, 0, sizeof *s);
}
