/* A fake libnvidia-ml.so.1: the NVML entry points stackpeel's probe calls.
 *
 *   FAKE_NVML_INIT            nvmlReturn_t of nvmlInit_v2 (default 0; 18 = LIB_RM_VERSION_MISMATCH, 999)
 *   FAKE_NVML_DRIVER          nvmlSystemGetDriverVersion (default "580.159.04")
 *   FAKE_CUDA_DRIVER_VERSION  nvmlSystemGetCudaDriverVersion_v2 (default 13000)
 *   FAKE_NVML_COMPUTE_MODE    nvmlDeviceGetComputeMode of every GPU (default 0, DEFAULT; 3 EXCLUSIVE_PROCESS;
 *                             -1: the call fails with NVML_ERROR_NOT_SUPPORTED)
 *   FAKE_NVML_CLOCK_REASONS   nvmlDeviceGetCurrentClocksEventReasons' mask of every GPU (strtoull: "0x40" or
 *                             decimal; default 0x1, GPU Idle; "-" fails with NVML_ERROR_NOT_SUPPORTED); built with
 *                             -DFAKE_NVML_OLD_CLOCKS only the pre-R535 name ...ThrottleReasons is exported, with
 *                             -DFAKE_NVML_NO_CLOCKS neither
 *   FAKE_NVML_TEMP            nvmlDeviceGetTemperature (default 34 C; -1: NVML_ERROR_NOT_SUPPORTED)
 *   FAKE_NVML_THRESHOLDS      0: nvmlDeviceGetTemperatureThreshold fails (NOT_SUPPORTED); else shutdown 92,
 *                             slowdown 89, mem_max 95, gpu_max 87 C (an H100 SXM's)
 *   FAKE_GPUS                 see fake_gpus.h (NVML ignores CUDA_VISIBLE_DEVICES, like the real one)
 *
 * gcc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o libnvidia-ml.so.580.159.04 fake_nvml.c
 */
#include "fake_gpus.h"

typedef int nvmlReturn_t;
typedef struct fake_gpu *nvmlDevice_t;

static struct fake_gpu gpus[FAKE_MAX_GPUS];
static int n_gpus = -1;

nvmlReturn_t nvmlInit_v2(void) {
    int rc = fake_env_int("FAKE_NVML_INIT", 0);
    if (rc != 0) return rc;
    n_gpus = fake_gpus(gpus);
    return 0;
}

nvmlReturn_t nvmlShutdown(void) { n_gpus = -1; return 0; }

const char *nvmlErrorString(nvmlReturn_t rc) {
    switch (rc) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 9: return "Driver Not Loaded";
    case 18: return "Driver/library version mismatch";
    case 999: return "Unknown Error";
    default: return "Unknown Error";
    }
}

static nvmlReturn_t copy(const char *src, char *dst, unsigned int len) {
    if (strlen(src) + 1 > len) return 7;
    strcpy(dst, src);
    return 0;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len) {
    const char *d = getenv("FAKE_NVML_DRIVER");
    if (n_gpus < 0) return 1;
    return copy(d && *d ? d : "580.159.04", v, len);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len) {
    char buf[96];
    const char *d = getenv("FAKE_NVML_DRIVER");
    if (n_gpus < 0) return 1;
    snprintf(buf, sizeof buf, "13.%s", d && *d ? d : "580.159.04");
    return copy(buf, v, len);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
    if (n_gpus < 0) return 1;
    *v = fake_env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
    return 0;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (n_gpus < 0) return 1;
    *count = (unsigned int)n_gpus;
    return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *dev) {
    if (n_gpus < 0) return 1;
    if (i >= (unsigned int)n_gpus) return 2;
    *dev = &gpus[i];
    return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int len) {
    if (n_gpus < 0) return 1;
    return copy(dev->name, name, len);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int len) {
    char buf[96];
    if (n_gpus < 0) return 1;
    snprintf(buf, sizeof buf, "GPU-fa4e0000-0000-0000-0000-%012d", (int)(dev - gpus));
    return copy(buf, uuid, len);
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t dev, int *mode) {
    (void)dev;
    if (n_gpus < 0) return 1;
    int m = fake_env_int("FAKE_NVML_COMPUTE_MODE", 0);
    if (m < 0) return 3;
    *mode = m;
    return 0;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int *major, int *minor) {
    if (n_gpus < 0) return 1;
    *major = dev->major;
    *minor = dev->minor;
    return 0;
}

static nvmlReturn_t clock_reasons(nvmlDevice_t dev, unsigned long long *reasons) {
    const char *v = getenv("FAKE_NVML_CLOCK_REASONS");
    (void)dev;
    if (n_gpus < 0) return 1;
    if (v && *v == '-') return 3;
    *reasons = v && *v ? strtoull(v, NULL, 0) : 0x1ULL;
    return 0;
}

#ifndef FAKE_NVML_NO_CLOCKS
#ifndef FAKE_NVML_OLD_CLOCKS
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev, unsigned long long *reasons) {
    return clock_reasons(dev, reasons);
}
#endif

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long *reasons) {
    return clock_reasons(dev, reasons);
}
#endif

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned int *temp) {
    int t = fake_env_int("FAKE_NVML_TEMP", 34);
    (void)dev;
    if (n_gpus < 0) return 1;
    if (sensor != 0) return 2;
    if (t < 0) return 3;
    *temp = (unsigned int)t;
    return 0;
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t dev, int which, unsigned int *temp) {
    static const unsigned int h100[] = {92, 89, 95, 87};  /* shutdown, slowdown, mem_max, gpu_max */
    (void)dev;
    if (n_gpus < 0) return 1;
    if (!fake_env_int("FAKE_NVML_THRESHOLDS", 1)) return 3;
    if (which < 0 || which > 3) return 2;
    *temp = h100[which];
    return 0;
}
