/* testsuite/unit/test_onnx_weights.c — an imported ONNX model's weights
 * kept in memory (importer/onnx.h's fe_onnx_import_weights, the set of
 * runtime/weight_set.h): the same names and contents as the .npy files the
 * import writes, handed to a run once. */
#include "importer/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "runtime/npy.h"
#include "runtime/weight_set.h"
#include "testsuite/unit/test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* x f32[1, 1, 4, 4] -> Conv(W f32[2, 1, 3, 3], B f32[2], pads 1) -> Relu
 * -> Mul(S f32[1, 2, 1, 1]) -> y, written to path. */
static bool write_model(const char *path)
{
    float w[18], b[2] = {0.5f, -0.25f}, sc[2] = {2.0f, 3.0f};
    for (int i = 0; i < 18; i++)
        w[i] = (float)(i - 9) / 8.0f;
    int64_t wd[] = {2, 1, 3, 3}, bd[] = {2}, sd[] = {1, 2, 1, 1};
    Onnx__TensorProto tw = ONNX__TENSOR_PROTO__INIT, tb = ONNX__TENSOR_PROTO__INIT,
                      ts = ONNX__TENSOR_PROTO__INIT;
    Onnx__TensorProto *inits[] = {&tw, &tb, &ts};
    const char *names[] = {"W", "B", "S"};
    float *data[] = {w, b, sc};
    int64_t *dims[] = {wd, bd, sd};
    size_t ndims[] = {4, 1, 4}, counts[] = {18, 2, 2};
    for (int i = 0; i < 3; i++) {
        inits[i]->name = (char *)names[i];
        inits[i]->has_data_type = 1;
        inits[i]->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        inits[i]->n_dims = ndims[i];
        inits[i]->dims = dims[i];
        inits[i]->n_float_data = counts[i];
        inits[i]->float_data = data[i];
    }
    int64_t pads[] = {1, 1, 1, 1};
    Onnx__AttributeProto ap = ONNX__ATTRIBUTE_PROTO__INIT;
    ap.name = "pads";
    ap.has_type = 1;
    ap.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    ap.n_ints = 4;
    ap.ints = pads;
    Onnx__AttributeProto *attrs[] = {&ap};
    Onnx__NodeProto conv = ONNX__NODE_PROTO__INIT, relu = ONNX__NODE_PROTO__INIT,
                    mul = ONNX__NODE_PROTO__INIT;
    char *conv_in[] = {"x", "W", "B"}, *conv_out[] = {"c"}, *relu_in[] = {"c"},
         *relu_out[] = {"r"}, *mul_in[] = {"r", "S"}, *mul_out[] = {"y"};
    conv.name = "conv";
    conv.op_type = "Conv";
    conv.n_input = 3;
    conv.input = conv_in;
    conv.n_output = 1;
    conv.output = conv_out;
    conv.n_attribute = 1;
    conv.attribute = attrs;
    relu.name = "relu";
    relu.op_type = "Relu";
    relu.n_input = relu.n_output = 1;
    relu.input = relu_in;
    relu.output = relu_out;
    mul.name = "scale";
    mul.op_type = "Mul";
    mul.n_input = 2;
    mul.input = mul_in;
    mul.n_output = 1;
    mul.output = mul_out;
    Onnx__NodeProto *nodes[] = {&conv, &relu, &mul};
    /* the input's and the output's types */
    Onnx__ValueInfoProto vin = ONNX__VALUE_INFO_PROTO__INIT, vout = ONNX__VALUE_INFO_PROTO__INIT;
    Onnx__TypeProto tin = ONNX__TYPE_PROTO__INIT, tout = ONNX__TYPE_PROTO__INIT;
    Onnx__TypeProto__Tensor ttin = ONNX__TYPE_PROTO__TENSOR__INIT,
                            ttout = ONNX__TYPE_PROTO__TENSOR__INIT;
    Onnx__TensorShapeProto sin = ONNX__TENSOR_SHAPE_PROTO__INIT,
                           sout = ONNX__TENSOR_SHAPE_PROTO__INIT;
    Onnx__TensorShapeProto__Dimension din[4], dout[4];
    Onnx__TensorShapeProto__Dimension *pin[4], *pout[4];
    int64_t xin[] = {1, 1, 4, 4}, xout[] = {1, 2, 4, 4};
    for (int i = 0; i < 4; i++) {
        Onnx__TensorShapeProto__Dimension z = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        din[i] = dout[i] = z;
        din[i].value_case = dout[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        din[i].dim_value = xin[i];
        dout[i].dim_value = xout[i];
        pin[i] = &din[i];
        pout[i] = &dout[i];
    }
    sin.n_dim = sout.n_dim = 4;
    sin.dim = pin;
    sout.dim = pout;
    ttin.has_elem_type = ttout.has_elem_type = 1;
    ttin.elem_type = ttout.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    ttin.shape = &sin;
    ttout.shape = &sout;
    tin.value_case = tout.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tin.tensor_type = &ttin;
    tout.tensor_type = &ttout;
    vin.name = "x";
    vin.type = &tin;
    vout.name = "y";
    vout.type = &tout;
    Onnx__ValueInfoProto *ins[] = {&vin}, *outs[] = {&vout};
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "g";
    g.n_node = 3;
    g.node = nodes;
    g.n_initializer = 3;
    g.initializer = inits;
    g.n_input = 1;
    g.input = ins;
    g.n_output = 1;
    g.output = outs;
    Onnx__OperatorSetIdProto op = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    op.domain = "";
    op.has_version = 1;
    op.version = 13;
    Onnx__OperatorSetIdProto *ops[] = {&op};
    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    m.has_ir_version = 1;
    m.ir_version = 7;
    m.n_opset_import = 1;
    m.opset_import = ops;
    m.graph = &g;
    size_t len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(len);
    onnx__model_proto__pack(&m, buf);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(buf, 1, len, f) == len;
    if (f)
        ok &= fclose(f) == 0;
    free(buf);
    return ok;
}

static void test_set(void)
{
    rt_weight_set s = {0};
    char name[32], err[128];
    int64_t one = 1;
    /* many names: the table grows and finds each */
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "layer%d.weight", i);
        rt_tensor *t = rt_tensor_new(IR_F32, 1, &one, err, sizeof err);
        ((float *)t->data)[0] = (float)i;
        CHECK(rt_weight_set_put(&s, name, t));
    }
    CHECK(s.n == 3000);
    bool all = true;
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "layer%d.weight", i);
        const rt_tensor *t = rt_weight_set_find(&s, name);
        all &= t && ((float *)t->data)[0] == (float)i;
    }
    CHECK(all);
    CHECK(!rt_weight_set_find(&s, "layer3000.weight") && !rt_weight_set_find(NULL, "x"));
    /* a name put again: replaced, not added */
    rt_tensor *t = rt_tensor_new(IR_F32, 1, &one, err, sizeof err);
    ((float *)t->data)[0] = -1.0f;
    CHECK(rt_weight_set_put(&s, "layer7.weight", t) && s.n == 3000);
    CHECK(((float *)rt_weight_set_find(&s, "layer7.weight")->data)[0] == -1.0f);
    /* handed over once; a second request and a wrong type are errors */
    diag d;
    diag_init(&d, NULL);
    bool found;
    int64_t two = 2;
    CHECK(!rt_weight_set_take(&s, "layer8.weight", IR_F32, 1, &two, &found, &d) && found &&
          d.nerrors == 1);
    CHECK(!rt_weight_set_take(&s, "layer8.weight", IR_F64, 1, &one, &found, &d) && found &&
          d.nerrors == 2);
    rt_tensor *mine = rt_weight_set_take(&s, "layer8.weight", IR_F32, 1, &one, &found, &d);
    CHECK(mine && found && ((float *)mine->data)[0] == 8.0f && d.nerrors == 2);
    rt_tensor_free(mine);
    CHECK(!rt_weight_set_take(&s, "layer8.weight", IR_F32, 1, &one, &found, &d) && found &&
          d.ninternal == 1);
    CHECK(!rt_weight_set_take(&s, "nothing", IR_F32, 1, &one, &found, &d) && !found);
    diag_fini(&d);
    rt_weight_set_free(&s);
    CHECK(s.n == 0 && !rt_weight_set_find(&s, "layer1.weight"));
}

/* The set holds what the .npy files hold, name for name. */
static void test_import(void)
{
    char dir[] = "/tmp/tec-onnx-weights-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char model[128], wdir[128];
    snprintf(model, sizeof model, "%s/m.onnx", dir);
    snprintf(wdir, sizeof wdir, "%s/w", dir);
    CHECK(write_model(model));
    fe_onnx_options oo = {.weights_dir = wdir};
    rt_weight_set s = {0};
    diag d;
    diag_init(&d, stderr);
    char *text = fe_onnx_import_weights(model, &oo, &s, &d);
    CHECK(text && d.nerrors == 0);
    /* the same program as without the set */
    char *plain = fe_onnx_import(model, NULL, &d);
    CHECK(plain && text && strcmp(plain, text) == 0);
    free(plain);
    free(text);
    int files = 0;
    DIR *dp = opendir(wdir);
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        size_t n = strlen(e->d_name);
        if (n <= 4 || strcmp(e->d_name + n - 4, ".npy") != 0)
            continue;
        files++;
        char path[512], name[256], err[256];
        snprintf(path, sizeof path, "%s/%s", wdir, e->d_name);
        snprintf(name, sizeof name, "%.*s", (int)(n - 4), e->d_name);
        rt_tensor *f = rt_npy_read(path, err, sizeof err);
        const rt_tensor *m = rt_weight_set_find(&s, name);
        check(f && m && f->dtype == m->dtype && f->ndim == m->ndim &&
                  memcmp(f->shape, m->shape, sizeof(int64_t) * (size_t)f->ndim) == 0 &&
                  f->nbytes == m->nbytes && memcmp(f->data, m->data, f->nbytes) == 0,
              "weights %s: in memory as in the file", name);
        rt_tensor_free(f);
        unlink(path);
    }
    if (dp)
        closedir(dp);
    CHECK(files >= 3 && (size_t)files == s.n);
    /* without a folder, the set alone */
    rt_weight_set only = {0};
    text = fe_onnx_import_weights(model, NULL, &only, &d);
    CHECK(text && only.n == s.n);
    free(text);
    rt_weight_set_free(&only);
    rt_weight_set_free(&s);
    diag_fini(&d);
    rmdir(wdir);
    unlink(model);
    rmdir(dir);
}

int main(void)
{
    test_set();
    test_import();
    return test_exit("test_onnx_weights");
}
