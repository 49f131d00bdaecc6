/* A fake libcuda.so.1: the handful of driver-API entry points stackpeel's probe calls.
 *
 *   FAKE_CUDA_INIT            CUresult cuInit returns (default 0; e.g. 999, 100, 803, 804)
 *   FAKE_CUDA_DRIVER_VERSION  what cuDriverGetVersion reports (default 13000)
 *   FAKE_GPUS                 see fake_gpus.h
 *   CUDA_VISIBLE_DEVICES      honoured like the real driver (580) for plain ordinals: unset =
 *                             all, "" = none (cuInit -> 100), stops at the first invalid or
 *                             out-of-range entry, a repeated entry -> cuInit 101.
 *
 * gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o libcuda.so.580.159.04 fake_libcuda.c
 */
#include "fake_gpus.h"

typedef int CUresult;
typedef int CUdevice;

static struct fake_gpu gpus[FAKE_MAX_GPUS];
static int visible[FAKE_MAX_GPUS];
static int n_visible = -1;

static int parse_visible(int n) {
    const char *var = getenv("CUDA_VISIBLE_DEVICES");
    int count = 0;
    if (!var) {
        for (int i = 0; i < n; i++) visible[i] = i;
        return n;
    }
    char buf[512];
    strncpy(buf, var, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    char *p = buf;
    while (p && *p) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= n || count >= FAKE_MAX_GPUS) break;
        for (int j = 0; j < count; j++) if (visible[j] == v) return -1;
        visible[count++] = (int)v;
        p = comma ? comma + 1 : NULL;
    }
    return count;
}

CUresult cuDriverGetVersion(int *v) {
    if (!v) return 1;
    *v = fake_env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
    return 0;
}

CUresult cuInit(unsigned int flags) {
    int rc = fake_env_int("FAKE_CUDA_INIT", 0);
    if (flags != 0) return 1;
    if (rc != 0) return rc;
    int n = fake_gpus(gpus);
    n_visible = parse_visible(n);
    if (n_visible < 0) {  /* a repeated ordinal: driver 580 answers 101 (measured on an H200) */
        n_visible = -1;
        return 101;
    }
    return n_visible > 0 ? 0 : 100;
}

CUresult cuDeviceGetCount(int *count) {
    if (n_visible < 0) return 3;
    *count = n_visible;
    return 0;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal) {
    if (n_visible < 0) return 3;
    if (ordinal < 0 || ordinal >= n_visible) return 101;
    *dev = ordinal;
    return 0;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
    if (n_visible < 0) return 3;
    if (dev < 0 || dev >= n_visible || len <= 0) return 101;
    strncpy(name, gpus[visible[dev]].name, len - 1);
    name[len - 1] = 0;
    return 0;
}

CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev) {
    if (n_visible < 0) return 3;
    if (dev < 0 || dev >= n_visible) return 101;
    if (attrib == 75) { *pi = gpus[visible[dev]].major; return 0; }
    if (attrib == 76) { *pi = gpus[visible[dev]].minor; return 0; }
    return 1;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
    if (n_visible < 0) return 3;
    if (dev < 0 || dev >= n_visible) return 101;
    *bytes = (size_t)143771 * 1024 * 1024;
    return 0;
}

static const struct { int code; const char *name, *text; } ERRORS[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult lookup(CUresult code, const char **out, int want_name) {
    for (size_t i = 0; i < sizeof ERRORS / sizeof ERRORS[0]; i++) {
        if (ERRORS[i].code == code) {
            *out = want_name ? ERRORS[i].name : ERRORS[i].text;
            return 0;
        }
    }
    *out = NULL;
    return 1;
}

CUresult cuGetErrorName(CUresult code, const char **name) { return lookup(code, name, 1); }
CUresult cuGetErrorString(CUresult code, const char **text) { return lookup(code, text, 0); }
