/* Shared by the fake libcuda and libnvidia-ml: the GPUs this fake "machine" has.
 *
 * FAKE_GPUS="NVIDIA H200:9.0;NVIDIA GB10:12.1" (default: one NVIDIA H200 of cc 9.0).
 * Stand-ins for hardware this test machine lacks; the probes load them with ctypes
 * exactly as they load the real libraries on a GPU host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX_GPUS 16

struct fake_gpu { char name[96]; int major; int minor; };

static int fake_gpus(struct fake_gpu *out) {
    const char *spec = getenv("FAKE_GPUS");
    char buf[1024];
    int n = 0;
    if (!spec) spec = "NVIDIA H200:9.0";
    strncpy(buf, spec, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ";", &save); tok && n < FAKE_MAX_GPUS;
         tok = strtok_r(NULL, ";", &save)) {
        char *colon = strrchr(tok, ':');
        if (!colon) continue;
        *colon = 0;
        strncpy(out[n].name, tok, sizeof out[n].name - 1);
        out[n].name[sizeof out[n].name - 1] = 0;
        if (sscanf(colon + 1, "%d.%d", &out[n].major, &out[n].minor) != 2) continue;
        n++;
    }
    return n;
}

static int fake_env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}
