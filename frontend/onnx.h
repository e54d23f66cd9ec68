/* frontend/onnx.h — the ONNX importer moved to importer/ (importer/onnx.h);
 * this name stays for the files that include it here (frontend/driver.c)
 * until they include importer/onnx.h. */
#include "importer/onnx.h"
