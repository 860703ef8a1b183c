// EXPECT: 3: syntax error
t n{#pragma omp target map(q)
;
