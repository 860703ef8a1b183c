/* acc data deviceptr (a device address the user allocated, e.g. with
 * acc_malloc) and attach (a pointer member of a struct already present). */
struct buf {
    int n;
    float *p;
};

void use_device_buffer(int n, const float *dbuf, float *a)
{
    #pragma acc data deviceptr(dbuf) copy(a[0:n])
    {
        #pragma omp target teams distribute parallel for
        for (int i = 0; i < n; i++)
            a[i] += dbuf[i];
    }
}

void use_struct(struct buf *s)
{
    int n = s->n;
    float *p = s->p;
    if (p == 0)
        return;
    #pragma acc data copy(p[0:n]) copyin(s[0:1]) attach(s->p)
    {
        #pragma omp target teams distribute parallel for
        for (int i = 0; i < n; i++)
            s->p[i] *= 2.0f;
    }
}
