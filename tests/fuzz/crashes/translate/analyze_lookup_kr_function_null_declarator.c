t n{#pragma omp target map(q)
;