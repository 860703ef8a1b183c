/* OpenMP's device API from host code and in regions: device numbers,
 * omp_target_alloc / omp_target_memcpy / omp_target_memcpy_rect with
 * is_device_ptr regions on every device (the host included),
 * omp_target_associate_ptr, omp_set_default_device, device(expr). Self-checking;
 * passes host-only and with GPUs. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000

static int errors;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        errors++;
    }
}

/* x[i] = 2 * x[i] + dev on device dev, through device memory only. */
static void on_device(int dev)
{
    int h = omp_get_initial_device();
    static double host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = i;
    double *p = omp_target_alloc(N * sizeof(double), dev);
    check(p != NULL, "omp_target_alloc");
    if (!p)
        return;
    check(omp_target_memcpy(p, host, sizeof host, 0, 0, dev, h) == 0, "omp_target_memcpy to");
    int where = -1, initial = -1, ndev = -1, idev = -1;
    #pragma omp target teams distribute parallel for is_device_ptr(p) device(dev)
    for (int i = 0; i < N; i++)
        p[i] = 2 * p[i] + dev;
    #pragma omp target device(dev) map(from: where, initial, ndev, idev)
    {
        where = omp_get_device_num();
        initial = omp_is_initial_device();
        ndev = omp_get_num_devices();
        idev = omp_get_initial_device();
    }
    check(where == dev, "omp_get_device_num in a region");
    check(initial == (dev == h), "omp_is_initial_device in a region");
    check(ndev == h && idev == h, "omp_get_num_devices, omp_get_initial_device in a region");
    check(omp_target_memcpy(back, p, sizeof back, 0, 0, h, dev) == 0, "omp_target_memcpy from");
    for (int i = 0; i < N; i++)
        if (back[i] != 2.0 * i + dev) {
            check(0, "values through device memory");
            break;
        }
    /* a 4x5 block of a 10x20 array, at (3, 7), through the device */
    static double a[10][20], b[4][5];
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 20; j++)
            a[i][j] = 100 * i + j;
    size_t vol[2] = {4, 5}, aoff[2] = {3, 7}, zero[2] = {0, 0}, adim[2] = {10, 20}, bdim[2] = {4, 5};
    check(omp_target_memcpy_rect(p, a, sizeof(double), 2, vol, zero, aoff, bdim, adim, dev, h) == 0,
          "omp_target_memcpy_rect to");
    check(omp_target_memcpy_rect(b, p, sizeof(double), 2, vol, zero, zero, bdim, bdim, h, dev) == 0,
          "omp_target_memcpy_rect from");
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++)
            if (b[i][j] != 100 * (3 + i) + 7 + j)
                check(0, "omp_target_memcpy_rect values");
    omp_target_free(p, dev);
}

int main(void)
{
    int n = omp_get_num_devices(), h = omp_get_initial_device();
    check(h == n, "the initial device is numbered after the GPUs");
    check(omp_is_initial_device(), "host code runs on the initial device");
    check(omp_get_device_num() == h, "omp_get_device_num on the host");
    int def = omp_get_default_device();
    check(def >= 0 && def <= h, "a default device");
    check(omp_target_alloc(8, h + 1) == NULL, "no device past the host");
    check(omp_target_memcpy(&n, &h, sizeof n, 0, 0, h + 1, h) != 0, "memcpy to no device");
    check(omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, h, h) > 2,
          "omp_target_memcpy_rect: dimensions supported");

    for (int dev = 0; dev <= n; dev++)
        on_device(dev);

    /* present and mapped pointers follow data constructs */
    static double x[N];
    for (int i = 0; i < N; i++)
        x[i] = i;
    #pragma omp target enter data map(to: x)
    check(omp_target_is_present(x, def), "present after enter data");
    check(omp_get_mapped_ptr(x, def) != NULL, "mapped after enter data");
    #pragma omp target exit data map(release: x)
    check(def == h || !omp_target_is_present(x, def), "absent after exit data");
    check(omp_target_is_present(x, h), "everything is present on the host");
    check(omp_get_mapped_ptr(x, h) == (void *)x, "the host's mapped pointer is the pointer");

    /* a host array associated with device memory: maps use it and copy
     * nothing (infinite reference count) */
    if (def != h) {
        double *buf = omp_target_alloc(sizeof x, def);
        check(omp_target_memcpy(buf, x, sizeof x, 0, 0, def, h) == 0, "memcpy before associate");
        check(omp_target_associate_ptr(x, buf, sizeof x, 0, def) == 0, "omp_target_associate_ptr");
        check(omp_get_mapped_ptr(x, def) == (void *)buf, "the associated pointer");
        #pragma omp target teams distribute parallel for map(tofrom: x[0:N])
        for (int i = 0; i < N; i++)
            x[i] += 1;
        check(x[5] == 5, "associated: nothing copied back");
        check(omp_target_disassociate_ptr(x, def) == 0, "omp_target_disassociate_ptr");
        check(omp_target_memcpy(x, buf, sizeof x, 0, 0, h, def) == 0, "memcpy after disassociate");
        check(x[5] == 6, "associated: the region wrote the device buffer");
        omp_target_free(buf, def);
    } else {
        check(omp_target_associate_ptr(x, x, sizeof x, 0, h) != 0, "nothing to associate on the host");
    }

    /* omp_set_default_device moves regions without a device clause */
    int where = -2;
    omp_set_default_device(h);
    check(omp_get_default_device() == h, "omp_set_default_device");
    #pragma omp target map(from: where)
    where = omp_is_initial_device();
    check(where == 1, "default device set to the host: region on the host");
    omp_set_default_device(def);

    /* device(expr): a variable that sounds like a device kind is a device number */
    int gpu = def;
    where = -2;
    #pragma omp target device(gpu) map(from: where)
    where = omp_get_device_num();
    check(where == def, "device(gpu) with an int gpu");

    /* device(expr): OpenMP 5.2's omp_initial_device (-1) is the host */
    int initial = -1;
    where = -2;
    #pragma omp target device(initial) map(from: where)
    where = omp_is_initial_device();
    check(where == 1, "device(-1) runs on the host");

    if (errors)
        return 1;
    printf("omp_device_api: ok (%d GPU%s)\n", n, n == 1 ? "" : "s");
    return 0;
}
