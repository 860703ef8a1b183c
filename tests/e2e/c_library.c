/* The C library in device code: <math.h>'s float and double forms, glibc's
 * isinf/isnan/signbit, <tgmath.h>'s generic names, memcpy/memset, the string
 * functions, malloc and free, printf, fprintf to stderr, fflush, puts, and a
 * struct with a flexible array
 * member read through a mapped byte buffer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

struct buf {
    int n;
    double d[];
};

static double total(const struct buf *b)
{
    double s = 0;
    for (int i = 0; i < b->n; i++)
        s += b->d[i];
    return s;
}

int main(void)
{
    int n = 10;
    size_t bytes = sizeof(struct buf) + n * sizeof(double);
    struct buf *b = malloc(bytes);
    b->n = n;
    for (int i = 0; i < n; i++)
        b->d[i] = i;
    char *raw = (char *)b;
    double out[64];
    #pragma omp target teams distribute parallel for map(to: raw[0:bytes]) map(from: out[0:64])
    for (int i = 0; i < 64; i++) {
        float f = sqrtf(4.0f) + fabsf(-1.0f) + floorf(1.5f) + fmaxf(1.0f, 2.0f) + expf(0.0f) + powf(2.0f, 2.0f);
        double d = sqrt(16.0) + fma(1.0, 2.0, 3.0) + hypot(3.0, 4.0) + (isinf(1.0) != 0) + (isnan(0.0) != 0) + (signbit(-1.0) != 0);
        float g = 9.0f;
        double tg = sqrt(g) + exp(0.0) + fmax(1.0, 2.0); /* <tgmath.h>: sqrtf on a float */
        double tmp[4], src[4] = {1, 2, 3, 4};
        memset(tmp, 0, sizeof tmp);
        memcpy(tmp, src, sizeof src);
        char str[16], cp[8];
        strcpy(str, "abcde");
        strncpy(cp, str, sizeof cp);
        memmove(str + 1, str, 3);
        int sf = (int)strlen(str) + (strcmp(cp, "abcde") == 0) + (strncmp(str, "aab", 3) == 0) +
                 (memcmp(cp, "ab", 2) == 0); /* 5 + 1 + 1 + 1 */
        int *heap = malloc(4 * sizeof(int));
        heap[0] = i;
        int h = heap[0];
        free(heap);
        if (i == 0) {
            printf("c_library: printf on the device or host\n");
            fprintf(stderr, "c_library: fprintf(stderr) too (printf on the device)\n");
            fflush(stderr);
            puts("c_library: puts");
        }
        out[i] = f + d + tg + tmp[3] + h + total((const struct buf *)raw) + sf;
    }
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += fabs(out[i] - (11.0 + 15.0 + 6.0 + 4 + i + 45 + 8)) > 1e-5;
    printf("%s\n", bad ? "FAIL" : "PASS");
    free(b);
    return bad != 0;
}
